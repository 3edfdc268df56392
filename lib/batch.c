/* SPDX-License-Identifier: GPL-2.0-or-later */
/* batch: the moves that start together in the next migration batch. */
#include "batch.h"

bool batch_pending(const struct batch_move *moves, size_t nr, size_t *first_waiting)
{
	while (*first_waiting < nr && moves[*first_waiting].state != BATCH_WAITING)
		++*first_waiting;
	return *first_waiting < nr;
}

/* Where le maps once the first n items of the batch commit. */
static struct extmap_loc batch_loc(const struct extmap *map, const struct batch_item *items,
				   size_t n, uint32_t le)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].le == le)
			return (struct extmap_loc){ .dev = (uint16_t)items[i].dev, .pe = items[i].pe };
	return extmap_get(map, le);
}

/*
 * How many targets the table gains (or loses, < 0) when items[n] commits
 * after the n before it: only the two boundaries beside its le can change.
 */
static long batch_targets_delta(const struct extmap *map, const struct batch_item *items, size_t n)
{
	uint32_t le = items[n].le;
	long delta = 0;

	for (uint32_t b = le ? le - 1 : 0; b <= le && b + 1 < map->nr_logical; b++) {
		delta += !extmap_loc_follows(batch_loc(map, items, n + 1, b),
					     batch_loc(map, items, n + 1, b + 1));
		delta -= !extmap_loc_follows(batch_loc(map, items, n, b),
					     batch_loc(map, items, n, b + 1));
	}
	return delta;
}

size_t batch_next(struct extmap *map, struct batch_move *moves, size_t nr, size_t *first_waiting,
		  const uint32_t *reserve, struct batch_table *table, size_t max, size_t lookahead,
		  struct batch_item *items, size_t *started)
{
	size_t n = 0, looked = 0, marked = 0;

	batch_pending(moves, nr, first_waiting);
	for (size_t i = *first_waiting; i < nr && n < max && looked < lookahead; i++) {
		struct batch_move *m = &moves[i];
		uint32_t pe;

		if (m->state != BATCH_WAITING)
			continue;
		looked++;
		if (extmap_get(map, m->le).dev == m->dev) {
			m->state = BATCH_STARTED;
			marked++;
			continue;
		}
		/* Strictly more than the reserve: the reserve itself stays free. */
		if (m->dev >= map->nr_devs || map->nr_free[m->dev] <= reserve[m->dev] ||
		    extmap_alloc(map, m->dev, &pe) < 0)
			continue;
		/* The commit's remap, and its undo, must not fail for memory: le's page comes now. */
		if (extmap_hold(map, m->le) < 0) {
			extmap_release(map, m->dev, pe);
			continue;
		}
		items[n] = (struct batch_item){ .le = m->le, .dev = m->dev, .pe = pe };
		if (table) {
			long delta = batch_targets_delta(map, items, n);

			if (delta > 0 && table->max_targets &&
			    (uint64_t)table->targets + (uint64_t)delta > table->max_targets) {
				extmap_release(map, m->dev, pe);
				table->held++;
				continue;
			}
			table->targets = (uint32_t)((long)table->targets + delta);
		}
		n++;
		m->state = BATCH_STARTED;
		marked++;
	}
	batch_pending(moves, nr, first_waiting);
	if (started)
		*started += marked;
	return n;
}

size_t batch_waiting(const struct batch_move *moves, size_t nr, size_t first_waiting)
{
	size_t left = 0;

	for (size_t i = first_waiting; i < nr; i++)
		left += moves[i].state == BATCH_WAITING;
	return left;
}

uint64_t batch_held_target(uint64_t stall_ns, uint64_t copy_ns, uint64_t floor_ns,
			   unsigned share)
{
	uint64_t rest = stall_ns > copy_ns ? stall_ns - copy_ns : 0;

	if (!share || rest / share <= floor_ns)
		return floor_ns;
	return rest / share;
}

size_t batch_held_pieces(size_t cur, size_t copied, uint64_t copy_ns, uint64_t target_ns,
			 size_t lo, size_t hi)
{
	double fits;
	size_t next;

	if (!copied)
		return cur < lo ? lo : cur > hi ? hi : cur;
	/*
	 * A few pieces (a job's last) well within the target: their time is
	 * mostly what any copy costs (a round trip to the devices, the ring's
	 * start), so their rate would shrink the next batch for nothing, and
	 * the batches after it would have to grow back, each with a stall of
	 * its own. Near the target, the rate says more than that cost.
	 */
	if (copied < cur / 4 && copy_ns <= target_ns / 2)
		return cur < lo ? lo : cur > hi ? hi : cur;
	/* A copy too quick to time fits everything. */
	fits = copy_ns ? (double)copied * (double)target_ns / (double)copy_ns : (double)hi;
	next = fits >= (double)hi ? hi : (size_t)fits;
	if (next > cur && next > 2 * copied)
		next = cur > 2 * copied ? cur : 2 * copied;
	return next < lo ? lo : next > hi ? hi : next;
}
