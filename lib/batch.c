/* SPDX-License-Identifier: GPL-2.0-or-later */
/* batch: the moves that start together in the next migration batch. */
#include "batch.h"

bool batch_pending(const struct batch_move *moves, size_t nr, size_t *first_waiting)
{
	while (*first_waiting < nr && moves[*first_waiting].state != BATCH_WAITING)
		++*first_waiting;
	return *first_waiting < nr;
}

size_t batch_next(struct extmap *map, struct batch_move *moves, size_t nr, size_t *first_waiting,
		  const uint32_t *reserve, size_t max, size_t lookahead, struct batch_item *items,
		  size_t *started)
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
		items[n++] = (struct batch_item){ .le = m->le, .dev = m->dev, .pe = pe };
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
