/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "planner.h"

#include <errno.h>
#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every queue of the planner (pins to promote, candidates to promote,
 * victims to demote) is a binary max-heap of 64-bit keys that hold the
 * whole ranking: heat (31 bits, the bit pattern of a non-negative float
 * orders like its value), then unwritten, then the complement of le, so
 * ties go to unwritten extents, then to the lower le.  Comparing keys
 * instead of extents keeps the heap in 8 bytes an entry and out of the
 * extent array, which matters at millions of candidates.
 *
 * Building a heap is O(n) and each move pops O(log n), so a run costs
 * O(nr + moves log nr): a cheap pass over the extents when few move.
 */

#define PLANNER_LE_BITS 32
#define PLANNER_UNWRITTEN_BIT (UINT64_C(1) << PLANNER_LE_BITS)
#define PLANNER_HEAT_SHIFT (PLANNER_LE_BITS + 1)
#define PLANNER_HEAT_MASK UINT32_C(0x7fffffff)

struct planner_heap {
	uint64_t *key;
	size_t nr;
};

static uint32_t planner_heat_bits(float heat)
{
	uint32_t bits;

	/* -0.0 has the sign bit set: adding +0.0 makes it +0.0. */
	heat += 0.0f;
	memcpy(&bits, &heat, sizeof(bits));
	return bits & PLANNER_HEAT_MASK;
}

/* hottest: rank the hottest first; otherwise the coldest. */
static uint64_t planner_key(const struct planner_extent *e, uint32_t le, bool hottest)
{
	uint32_t heat = planner_heat_bits(e->heat);

	if (!hottest)
		heat = ~heat & PLANNER_HEAT_MASK;
	return (uint64_t)heat << PLANNER_HEAT_SHIFT | (e->unwritten ? PLANNER_UNWRITTEN_BIT : 0) |
	       (uint32_t)~le;
}

static uint32_t planner_key_le(uint64_t key)
{
	return ~(uint32_t)key;
}

static void planner_sift_down(struct planner_heap *h, size_t k)
{
	uint64_t moving = h->key[k];

	for (;;) {
		size_t child = 2 * k + 1;

		if (child >= h->nr)
			break;
		if (child + 1 < h->nr && h->key[child + 1] > h->key[child])
			child++;
		if (h->key[child] <= moving)
			break;
		h->key[k] = h->key[child];
		k = child;
	}
	h->key[k] = moving;
}

static void planner_heapify(struct planner_heap *h)
{
	for (size_t k = h->nr / 2; k-- > 0;)
		planner_sift_down(h, k);
}

static void planner_swap_keys(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* Heapsort of key[lo, hi), highest first: the slow but sure way out of a bad quickselect. */
static void planner_sort_range(uint64_t *key, size_t lo, size_t hi)
{
	struct planner_heap h = { key + lo, hi - lo };

	/* A max-heap sorts ascending; reversing costs less than a second comparator. */
	planner_heapify(&h);
	for (size_t n = h.nr; n > 1; n--) {
		planner_swap_keys(&h.key[0], &h.key[n - 1]);
		h.nr = n - 1;
		planner_sift_down(&h, 0);
	}
	for (size_t i = lo, j = hi; i + 1 < j; i++, j--)
		planner_swap_keys(&key[i], &key[j - 1]);
}

/*
 * Keep the k highest keys (keys are distinct: each holds its le).  A run
 * moves at most k candidates, often far fewer than there are, and popping
 * from a heap of k is cheaper than from one of millions.  Quickselect,
 * O(n); it falls back to sorting a range that refuses to shrink, so no
 * input makes it quadratic.
 */
static void planner_heap_keep_top(struct planner_heap *h, size_t k)
{
	uint64_t *key = h->key;
	size_t lo = 0, hi = h->nr, depth = 0;

	if (k >= h->nr)
		return;
	h->nr = k;
	if (!k)
		return;
	for (size_t n = hi; n; n >>= 1)
		depth += 2;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, store = lo;

		if (!depth--) {
			planner_sort_range(key, lo, hi);
			break;
		}
		/* Median of three as the pivot, parked at the end. */
		if (key[lo] > key[mid])
			planner_swap_keys(&key[lo], &key[mid]);
		if (key[mid] > key[hi - 1])
			planner_swap_keys(&key[mid], &key[hi - 1]);
		if (key[lo] > key[mid])
			planner_swap_keys(&key[lo], &key[mid]);
		planner_swap_keys(&key[mid], &key[hi - 1]);
		for (size_t i = lo; i < hi - 1; i++)
			if (key[i] > key[hi - 1])
				planner_swap_keys(&key[i], &key[store++]);
		planner_swap_keys(&key[store], &key[hi - 1]);
		/* key[lo, store) are above the pivot, now at store, and the rest below. */
		if (store == k || store + 1 == k)
			break;
		if (store < k)
			lo = store + 1;
		else
			hi = store;
	}
}

static bool planner_heap_empty(const struct planner_heap *h)
{
	return h->nr == 0;
}

static uint32_t planner_heap_top(const struct planner_heap *h)
{
	return planner_key_le(h->key[0]);
}

static uint32_t planner_heap_pop(struct planner_heap *h)
{
	uint32_t le = planner_heap_top(h);

	h->key[0] = h->key[--h->nr];
	if (h->nr)
		planner_sift_down(h, 0);
	return le;
}

static size_t planner_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* What an extent left out of a list is, when it is mapped at all. */
static const struct planner_extent planner_plain = { .tier = PLANNER_HDD };

/* Extent le as the input describes it, listed or not. */
static const struct planner_extent *planner_ext(const struct planner_input *in, uint32_t le)
{
	size_t lo = 0, hi = in->nr_list;

	if (in->ext)
		return &in->ext[le];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->list[mid].le < le)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->nr_list && in->list[lo].le == le ? &in->list[lo].e : &planner_plain;
}

/* Extents the input describes one by one: all of them, or those listed. */
static uint32_t planner_nr_entries(const struct planner_input *in)
{
	return in->ext ? in->nr : in->nr_list;
}

static const struct planner_extent *planner_entry(const struct planner_input *in, uint32_t i,
						  uint32_t *le)
{
	if (in->ext) {
		*le = i;
		return &in->ext[i];
	}
	*le = in->list[i].le;
	return &in->list[i].e;
}

/* The state of one planning run: free space and budget as the moves so far leave them. */
struct planner_run {
	const struct planner_input *in;
	const struct policy *policy;
	struct plan *plan;
	/* 64 bits: promotions add to hdd_free, whatever it started at. */
	uint64_t ssd_free, hdd_free;
	uint64_t moves_left;
	/* The budget ran out: a plan ends at its first move that does not fit. */
	bool exhausted;
	double ssd_heat;
	uint32_t ssd_mapped;
	/*
	 * With a limit on the volume's table: the targets the plan may still
	 * add, counted as an upper bound (planner.h), and the extents it moves,
	 * as le + 1 in an open-addressing set (0: empty).
	 */
	bool table_limited;
	uint64_t table_room;
	uint32_t *moved;
	size_t moved_mask;
};

#define PLANNER_NO_LE UINT32_MAX

static size_t planner_moved_slot(const struct planner_run *run, uint32_t le)
{
	size_t i = (uint32_t)(le * UINT32_C(2654435761)) & run->moved_mask;

	while (run->moved[i] && run->moved[i] != le + 1)
		i = (i + 1) & run->moved_mask;
	return i;
}

static bool planner_moved(const struct planner_run *run, uint32_t le)
{
	return run->moved[planner_moved_slot(run, le)] != 0;
}

/*
 * Targets moving le can add at most: one per boundary beside it that joins
 * two extents now, unless a move of the plan touched it already. also_moved:
 * an extent taken as moved before le (the first half of a pair), or
 * PLANNER_NO_LE.
 */
static uint32_t planner_table_cost(const struct planner_run *run, uint32_t le,
				   uint32_t also_moved)
{
	const struct planner_input *in = run->in;
	uint32_t cost = 0;

	if (le > 0 && le - 1 != also_moved && !planner_moved(run, le - 1) &&
	    !(planner_ext(in, le)->flags & PLANNER_STARTS_RUN))
		cost++;
	if (le + 1 < in->nr && le + 1 != also_moved && !planner_moved(run, le + 1) &&
	    !(planner_ext(in, le + 1)->flags & PLANNER_STARTS_RUN))
		cost++;
	return cost;
}

/*
 * Whether moving a, then b (PLANNER_NO_LE: none), keeps the table within its
 * limit; if so their targets are taken from the room. Call it after the
 * move budget said yes and just before emitting the moves.
 */
static bool planner_table_take(struct planner_run *run, uint32_t a, uint32_t b)
{
	uint64_t cost;

	if (!run->table_limited)
		return true;
	cost = planner_table_cost(run, a, PLANNER_NO_LE);
	if (b != PLANNER_NO_LE)
		cost += planner_table_cost(run, b, a);
	if (cost > run->table_room)
		return false;
	run->table_room -= cost;
	return true;
}

/*
 * Room in the budget for n more moves (a swap asks for both at once, so
 * that half of one is never planned).
 */
static bool planner_budget(struct planner_run *run, uint64_t n)
{
	if (run->moves_left < n)
		run->exhausted = true;
	return !run->exhausted;
}

static void planner_emit(struct planner_run *run, uint32_t le, uint8_t to)
{
	struct plan *p = run->plan;
	double heat = planner_ext(run->in, le)->heat;

	p->moves[p->nr++] = (struct planner_move){ .le = le, .to = to };
	run->moves_left--;
	if (run->table_limited)
		run->moved[planner_moved_slot(run, le)] = le + 1;
	if (to == PLANNER_SSD) {
		run->ssd_free--;
		run->hdd_free++;
		run->ssd_heat += heat;
		run->ssd_mapped++;
		p->promote_extents++;
		p->promote_bytes += run->in->extent_bytes;
	} else {
		run->hdd_free--;
		run->ssd_free++;
		run->ssd_heat -= heat;
		run->ssd_mapped--;
		p->demote_extents++;
		p->demote_bytes += run->in->extent_bytes;
	}
}

/* Emit a move of le unless it could take the table past its limit: then it is passed over. */
static void planner_emit_fitting(struct planner_run *run, uint32_t le, uint8_t to)
{
	if (planner_table_take(run, le, PLANNER_NO_LE))
		planner_emit(run, le, to);
	else
		run->plan->table_skipped++;
}

/* Long enough in place to move again (min_residency); an extent never moved always is. */
static bool planner_settled(const struct planner_run *run, const struct planner_extent *e)
{
	uint32_t min = run->policy->min_residency_s;

	/* A move stamped in the future (the clock went back) counts as just now. */
	return !min || !e->moved_at ||
	       (run->in->now >= e->moved_at && run->in->now - e->moved_at >= min);
}

/*
 * The coldest victim that may move, dropping those that may not: only
 * pins displace recently moved extents, and their turn is over when this
 * is called.
 */
static bool planner_next_victim(struct planner_run *run, struct planner_heap *victims,
				uint32_t *le)
{
	while (!planner_heap_empty(victims)) {
		*le = planner_heap_top(victims);
		if (planner_settled(run, planner_ext(run->in, *le)))
			return true;
		planner_heap_pop(victims);
	}
	return false;
}

/*
 * Extents pinned to the HDD that sit on the SSD, from *next on. Without HDD
 * room a pin trades places with an unpinned HDD extent, the hottest first and
 * a candidate before any other (its promotion was due anyway): a pin beats
 * heat and residency, as on the SSD side. Only a policy that never promotes
 * leaves the pin waiting for room. Without fillers, no trades.
 */
static void planner_pins_to_hdd(struct planner_run *run, const uint32_t *pins, size_t nr,
				size_t *next, struct planner_heap *candidates,
				struct planner_heap *fillers)
{
	struct planner_heap none = { 0 };

	if (!fillers)
		candidates = fillers = &none;
	for (; *next < nr; ++*next) {
		struct planner_heap *room = planner_heap_empty(candidates) ? fillers : candidates;

		if (run->hdd_free) {
			if (!planner_budget(run, 1))
				return;
			planner_emit_fitting(run, pins[*next], PLANNER_HDD);
			continue;
		}
		if (run->policy->promote == POLICY_PROMOTE_NONE || planner_heap_empty(room) ||
		    !run->ssd_free || !planner_budget(run, 2))
			return;
		if (!planner_table_take(run, planner_heap_top(room), pins[*next])) {
			run->plan->table_skipped++;
			continue;
		}
		planner_emit(run, planner_heap_pop(room), PLANNER_SSD);
		planner_emit(run, pins[*next], PLANNER_HDD);
	}
}

/* Hottest pins first, so that when they outnumber the SSD the ones that matter most get on. */
static void planner_pins_to_ssd(struct planner_run *run, struct planner_heap *pins,
				struct planner_heap *victims)
{
	while (!planner_heap_empty(pins)) {
		if (run->ssd_free) {
			if (!planner_budget(run, 1))
				return;
			planner_emit_fitting(run, planner_heap_pop(pins), PLANNER_SSD);
			continue;
		}
		/* A pin beats heat and residency: any unpinned extent makes room. */
		if (planner_heap_empty(victims) || !run->hdd_free || !planner_budget(run, 2))
			return;
		if (!planner_table_take(run, planner_heap_top(victims), planner_heap_top(pins))) {
			planner_heap_pop(pins);
			run->plan->table_skipped++;
			continue;
		}
		planner_emit(run, planner_heap_pop(victims), PLANNER_HDD);
		planner_emit(run, planner_heap_pop(pins), PLANNER_SSD);
	}
}

/* Down to the policy's free SSD space (pins may have eaten into it), coldest first. */
static void planner_restore_headroom(struct planner_run *run, struct planner_heap *victims,
				     uint64_t headroom)
{
	uint32_t le;

	while (run->ssd_free < headroom && run->hdd_free &&
	       planner_next_victim(run, victims, &le) && planner_budget(run, 1)) {
		planner_heap_pop(victims);
		planner_emit_fitting(run, le, PLANNER_HDD);
	}
}

/* promote = none, demote = all: coldest first, so the hottest keep the SSD longest. */
static void planner_demote_all(struct planner_run *run, struct planner_heap *victims)
{
	uint32_t le;

	while (run->hdd_free && planner_next_victim(run, victims, &le) && planner_budget(run, 1)) {
		planner_heap_pop(victims);
		planner_emit_fitting(run, le, PLANNER_HDD);
	}
}

/*
 * Free SSD space above the headroom takes the hottest candidates, no
 * questions asked but the table's: one that would pass its limit gives
 * its turn to the next, which may cost fewer targets.
 */
static void planner_fill(struct planner_run *run, struct planner_heap *candidates,
			 uint64_t headroom)
{
	while (run->ssd_free > headroom && !planner_heap_empty(candidates) &&
	       planner_budget(run, 1))
		planner_emit_fitting(run, planner_heap_pop(candidates), PLANNER_SSD);
}

/*
 * The hottest candidate against the coldest victim: once that pair is not
 * worth a swap, no other pair is.  Hysteresis keeps two extents of about
 * the same heat from trading places every run.
 */
static void planner_swap(struct planner_run *run, struct planner_heap *candidates,
			 struct planner_heap *victims)
{
	uint32_t victim;

	while (!planner_heap_empty(candidates) && planner_next_victim(run, victims, &victim)) {
		uint32_t candidate = planner_heap_top(candidates);

		if (!((double)planner_ext(run->in, candidate)->heat >
		      run->policy->hysteresis * planner_ext(run->in, victim)->heat))
			return;
		/* Either order leaves free space as it was; the first move must fit now. */
		if ((!run->hdd_free && !run->ssd_free) || !planner_budget(run, 2))
			return;
		if (run->hdd_free ? !planner_table_take(run, victim, candidate) :
				    !planner_table_take(run, candidate, victim)) {
			/* Without the half that costs more, the other may pair with the next. */
			if (planner_table_cost(run, candidate, PLANNER_NO_LE) >=
			    planner_table_cost(run, victim, PLANNER_NO_LE)) {
				planner_heap_pop(candidates);
				run->plan->table_skipped++;
			} else {
				planner_heap_pop(victims);
			}
			continue;
		}
		planner_heap_pop(candidates);
		planner_heap_pop(victims);
		if (run->hdd_free) {
			planner_emit(run, victim, PLANNER_HDD);
			planner_emit(run, candidate, PLANNER_SSD);
		} else {
			planner_emit(run, candidate, PLANNER_SSD);
			planner_emit(run, victim, PLANNER_HDD);
		}
	}
}

/* The extents sorted into the queues each step takes from. */
struct planner_queues {
	uint32_t *pins_to_hdd; /* in le order */
	size_t nr_pins_to_hdd;
	struct planner_heap pins_to_ssd, candidates; /* hottest first */
	struct planner_heap victims;                 /* coldest first */
	/* Unpinned HDD extents that are no candidate, hottest first: room for HDD pins. */
	struct planner_heap fillers;
};

static bool planner_candidate(const struct planner_run *run, const struct planner_extent *e)
{
	const struct policy *p = run->policy;

	if (e->tier != PLANNER_HDD || e->pin != PLANNER_NONE || p->promote == POLICY_PROMOTE_NONE)
		return false;
	if (!((double)e->heat >= policy_promote_min_heat(p)))
		return false;
	return planner_settled(run, e);
}

struct planner_counts {
	size_t pins_to_hdd, pins_to_ssd, candidates, victims, fillers;
	/* Of the extents not listed: as candidates, or else as fillers. */
	size_t unlisted_candidates, unlisted_fillers;
	uint32_t ssd_mapped, mapped;
	double heat, ssd_heat;
};

/* One pass: reject bad extents and size the queues. */
static int planner_count(const struct planner_run *run, struct planner_counts *c)
{
	const struct planner_input *in = run->in;
	uint32_t le, prev = 0;

	*c = (struct planner_counts){ 0 };
	for (uint32_t i = 0; i < planner_nr_entries(in); i++) {
		const struct planner_extent *e = planner_entry(in, i, &le);

		if (e->tier > PLANNER_SSD || e->pin > PLANNER_SSD || !(e->heat >= 0) ||
		    (e->flags & ~PLANNER_STARTS_RUN) ||
		    e->heat > FLT_MAX || le >= in->nr || (i && le <= prev))
			return -EINVAL;
		prev = le;
		if (e->tier == PLANNER_NONE)
			continue;
		c->mapped++;
		c->heat += e->heat;
		if (e->tier == PLANNER_SSD) {
			c->ssd_mapped++;
			c->ssd_heat += e->heat;
			if (e->pin == PLANNER_HDD)
				c->pins_to_hdd++;
			else if (e->pin == PLANNER_NONE)
				c->victims++;
		} else if (e->pin == PLANNER_SSD) {
			c->pins_to_ssd++;
		} else if (planner_candidate(run, e)) {
			c->candidates++;
		} else if (e->pin == PLANNER_NONE) {
			c->fillers++;
		}
	}
	/* Only counted against the plain HDD extents the list left out: their number is given. */
	if (in->nr_unlisted_hdd > in->nr - planner_nr_entries(in))
		return -EINVAL;
	c->mapped += in->nr_unlisted_hdd;
	if (planner_candidate(run, &planner_plain))
		c->unlisted_candidates = in->nr_unlisted_hdd;
	else
		c->unlisted_fillers = in->nr_unlisted_hdd;
	return 0;
}

/*
 * The lowest n unlisted HDD extents into heap h: as plain as each other, so
 * in le order they rank as the planner would rank them all.
 */
static int planner_add_unlisted(const struct planner_run *run, struct planner_heap *h, size_t n)
{
	const struct planner_input *in = run->in;
	uint32_t *le, got;

	if (!n)
		return 0;
	le = malloc(n * sizeof(*le));
	if (!le)
		return -ENOMEM;
	got = in->unlisted_hdd(in->unlisted_ctx, le, (uint32_t)n);
	for (uint32_t i = 0; i < got && i < n; i++) {
		/* A name the list holds, or out of order, would move an extent twice. */
		if (le[i] >= in->nr || (i && le[i] <= le[i - 1]) ||
		    planner_ext(in, le[i]) != &planner_plain) {
			free(le);
			return -EINVAL;
		}
		h->key[h->nr++] = planner_key(&planner_plain, le[i], true);
	}
	free(le);
	return 0;
}

/*
 * max_candidates: more candidates than that cannot be promoted by one run;
 * keep: how many of the hottest to queue (more when the table's limit may
 * pass over some).
 */
static int planner_fill_queues(const struct planner_run *run, struct planner_queues *q,
			       size_t max_candidates, size_t keep, const struct planner_counts *c)
{
	const struct planner_input *in = run->in;
	uint32_t le;
	int r;

	for (uint32_t i = 0; i < planner_nr_entries(in); i++) {
		const struct planner_extent *e = planner_entry(in, i, &le);

		if (e->tier == PLANNER_SSD) {
			if (e->pin == PLANNER_HDD)
				q->pins_to_hdd[q->nr_pins_to_hdd++] = le;
			else if (e->pin == PLANNER_NONE)
				q->victims.key[q->victims.nr++] = planner_key(e, le, false);
		} else if (e->tier == PLANNER_HDD) {
			if (e->pin == PLANNER_SSD)
				q->pins_to_ssd.key[q->pins_to_ssd.nr++] = planner_key(e, le, true);
			else if (planner_candidate(run, e))
				q->candidates.key[q->candidates.nr++] = planner_key(e, le, true);
			else if (e->pin == PLANNER_NONE && q->fillers.key)
				q->fillers.key[q->fillers.nr++] = planner_key(e, le, true);
		}
	}
	r = planner_add_unlisted(run, &q->candidates, planner_min(c->unlisted_candidates,
								    max_candidates));
	if (r == 0 && q->fillers.key)
		r = planner_add_unlisted(run, &q->fillers, planner_min(c->unlisted_fillers,
									 q->nr_pins_to_hdd));
	if (r < 0)
		return r;
	planner_heap_keep_top(&q->candidates, keep);
	planner_heap_keep_top(&q->fillers, q->nr_pins_to_hdd);
	planner_heapify(&q->fillers);
	planner_heapify(&q->pins_to_ssd);
	planner_heapify(&q->candidates);
	planner_heapify(&q->victims);
	return 0;
}

static void planner_queues_destroy(struct planner_queues *q)
{
	free(q->pins_to_hdd);
	free(q->pins_to_ssd.key);
	free(q->candidates.key);
	free(q->victims.key);
	free(q->fillers.key);
}

/* malloc that treats 0 as "nothing needed" rather than as a failure. */
static int planner_alloc(void **p, size_t nr, size_t size)
{
	*p = NULL;
	if (!nr)
		return 0;
	*p = malloc(nr * size);
	return *p ? 0 : -ENOMEM;
}

static void planner_steps(struct planner_run *run, struct planner_queues *q)
{
	const struct policy *p = run->policy;
	/* Rounded down: a small SSD keeps every extent it can. */
	uint64_t headroom = (uint64_t)(p->ssd_headroom * run->in->ssd_capacity);
	size_t next_pin_to_hdd = 0;

	/* HDD pins first: the SSD space they free may be what the SSD pins need. */
	planner_pins_to_hdd(run, q->pins_to_hdd, q->nr_pins_to_hdd, &next_pin_to_hdd, NULL, NULL);
	planner_pins_to_ssd(run, &q->pins_to_ssd, &q->victims);
	/*
	 * Promotions may have freed the HDD room that HDD pins were waiting for;
	 * the pins still waiting then trade places with unpinned HDD extents.
	 */
	planner_pins_to_hdd(run, q->pins_to_hdd, q->nr_pins_to_hdd, &next_pin_to_hdd,
			    &q->candidates, &q->fillers);

	if (p->demote == POLICY_DEMOTE_ALL) {
		planner_demote_all(run, &q->victims);
		return;
	}
	planner_restore_headroom(run, &q->victims, headroom);
	if (p->promote == POLICY_PROMOTE_NONE)
		return;
	planner_fill(run, &q->candidates, headroom);
	planner_swap(run, &q->candidates, &q->victims);
}

static int planner_input_valid(const struct planner_input *in)
{
	if (!in || (!in->ext && !in->list && in->nr) || (in->ext && in->list) ||
	    (in->nr_unlisted_hdd && !in->unlisted_hdd) || !in->extent_bytes ||
	    in->ssd_free > in->ssd_capacity || policy_valid(in->policy) < 0)
		return -EINVAL;
	return 0;
}

int planner_plan(const struct planner_input *in, struct plan *out)
{
	struct planner_queues q = { 0 };
	struct planner_counts c;
	struct planner_run run;
	uint64_t max_moves, max_candidates, keep;
	bool budget_cut = false;
	int r;

	if (!out)
		return -EINVAL;
	*out = (struct plan){ 0 };
	r = planner_input_valid(in);
	if (r < 0)
		return r;
	run = (struct planner_run){
		.in = in,
		.policy = in->policy,
		.plan = out,
		.ssd_free = in->ssd_free,
		.hdd_free = in->hdd_free,
		.moves_left = in->max_bytes ? in->max_bytes / in->extent_bytes : UINT64_MAX,
	};
	r = planner_count(&run, &c);
	if (r < 0)
		return r;
	if (c.ssd_mapped > in->ssd_capacity - in->ssd_free)
		return -EINVAL;
	run.ssd_heat = c.ssd_heat;
	run.ssd_mapped = c.ssd_mapped;
	out->ssd_share_before = c.heat > 0 ? c.ssd_heat / c.heat : 0;
	out->ssd_share_after = out->ssd_share_before;
	if (!in->ssd_capacity)
		return 0;

	/*
	 * Each extent moves at most once, a promotion needs a free SSD extent
	 * and a demotion frees one: at most ssd_free + 2 * ssd_mapped moves.
	 */
	max_moves = (uint64_t)in->ssd_free + 2 * (uint64_t)c.ssd_mapped;
	if (max_moves > c.mapped)
		max_moves = c.mapped;
	if (max_moves > run.moves_left)
		max_moves = run.moves_left;

	r = planner_alloc((void **)&q.pins_to_hdd, c.pins_to_hdd, sizeof(*q.pins_to_hdd));
	if (r == 0)
		r = planner_alloc((void **)&q.pins_to_ssd.key, c.pins_to_ssd, sizeof(uint64_t));
	/* Each promotion takes free SSD space: free now or freed by a demotion. */
	max_candidates = (uint64_t)in->ssd_free + c.victims + c.pins_to_hdd;
	if (max_candidates > run.moves_left) {
		/* The budget, not the room, leaves candidates out: they wait for a later run. */
		budget_cut = c.candidates + c.unlisted_candidates > run.moves_left;
		max_candidates = run.moves_left;
	}
	/*
	 * A limit that may bind (each move adds two targets at most) passes
	 * over candidates that cost too much: every listed one stays queued,
	 * so that cheaper ones further down get their turn.
	 */
	keep = max_candidates;
	if (in->max_table_targets &&
	    (uint64_t)in->table_targets + 2 * max_moves > in->max_table_targets)
		keep = c.candidates + planner_min(c.unlisted_candidates, max_candidates);
	/*
	 * Of the plain extents, only the lowest that can be taken; fillers
	 * only make room for HDD pins, so without any none are gathered.
	 */
	if (r == 0)
		r = planner_alloc((void **)&q.candidates.key,
				  c.candidates + planner_min(c.unlisted_candidates, max_candidates),
				  sizeof(uint64_t));
	if (r == 0)
		r = planner_alloc((void **)&q.victims.key, c.victims, sizeof(uint64_t));
	if (r == 0 && c.pins_to_hdd)
		r = planner_alloc((void **)&q.fillers.key,
				  c.fillers + planner_min(c.unlisted_fillers, c.pins_to_hdd),
				  sizeof(uint64_t));
	if (r == 0)
		r = planner_alloc((void **)&out->moves, (size_t)max_moves, sizeof(*out->moves));
	if (r == 0 && in->max_table_targets) {
		size_t slots = 16;

		/* At most half full: probes stay short. */
		while (slots < 2 * max_moves)
			slots *= 2;
		run.moved = calloc(slots, sizeof(*run.moved));
		r = run.moved ? 0 : -ENOMEM;
		run.moved_mask = slots - 1;
		run.table_limited = true;
		run.table_room = in->max_table_targets > in->table_targets ?
			in->max_table_targets - in->table_targets : 0;
	}
	if (r == 0)
		r = planner_fill_queues(&run, &q, (size_t)max_candidates, (size_t)keep, &c);
	if (r < 0)
		goto out;
	planner_steps(&run, &q);
	out->budget_exhausted = run.exhausted || budget_cut;
	/* Summed and subtracted heat can leave dust where nothing is left. */
	if (run.ssd_mapped && c.heat > 0 && run.ssd_heat > 0)
		out->ssd_share_after = run.ssd_heat >= c.heat ? 1 : run.ssd_heat / c.heat;
	else
		out->ssd_share_after = 0;
out:
	planner_queues_destroy(&q);
	free(run.moved);
	if (r < 0)
		plan_destroy(out);
	return r;
}

void plan_destroy(struct plan *p)
{
	if (!p)
		return;
	free(p->moves);
	*p = (struct plan){ 0 };
}
