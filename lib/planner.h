/* SPDX-License-Identifier: GPL-2.0-or-later */
/* planner: which extents a tiering run moves, and in what order. */
#ifndef TIERD_PLANNER_H
#define TIERD_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/*
 * Pure: the daemon describes the logical extents of a pool (where each
 * lives, how hot it is, when it last moved, whether it is pinned) and the
 * free space of each tier; the planner answers with a list of moves.
 * docs/policies.md describes the algorithm.
 *
 * Either every extent (ext, indexed by le) or a list of some (list, by
 * increasing le): on a large pool most extents are on the HDD, cold, never
 * moved and not pinned, and the list leaves those out.  It gives only how
 * many of them there are and, when the plan needs some (a policy that
 * promotes cold extents, room for HDD pins), the lowest of them: a run
 * then costs the extents listed and the moves, not the pool's size.
 */

enum planner_tier { PLANNER_NONE = 0, PLANNER_HDD = 1, PLANNER_SSD = 2 };

struct planner_extent {
	float heat;         /* finite, >= 0 (heat.h) */
	uint32_t moved_at;  /* unix seconds of the extent's last move, 0: never */
	uint8_t tier;       /* where it is; PLANNER_NONE: unmapped, never moved */
	uint8_t pin;        /* PLANNER_NONE, or the tier it must stay on */
	uint8_t unwritten;  /* 1: never written since the pool was made; preferred among equals */
	uint8_t flags;      /* PLANNER_STARTS_RUN */
};

/*
 * The volume's table has a target boundary before this extent: its location
 * does not continue that of le - 1 (extmap_loc_follows). Unset, the planner
 * assumes it does, which can only overestimate what a move adds to the table.
 */
#define PLANNER_STARTS_RUN 1

_Static_assert(sizeof(struct planner_extent) == 12, "four million extents in 48 MB");

struct planner_listed {
	uint32_t le;
	struct planner_extent e;
};

/*
 * The unlisted extents on the HDD, lowest first: the first min(max, their
 * number) into out; returns how many it wrote.
 */
typedef uint32_t planner_unlisted_fn(const void *ctx, uint32_t *out, uint32_t max);

struct planner_input {
	const struct planner_extent *ext; /* indexed by logical extent; NULL with list */
	/* Or: extents by increasing le (< nr); every other one is unmapped or plain HDD. */
	const struct planner_listed *list;
	uint32_t nr_list;
	/* With list: how many of the others are on the HDD (heat 0, never moved, no pin, written). */
	uint32_t nr_unlisted_hdd;
	planner_unlisted_fn *unlisted_hdd;
	const void *unlisted_ctx;
	uint32_t nr; /* logical extents of the volume */
	uint32_t ssd_capacity; /* SSD tier's physical extents usable for data; 0: no SSD tier */
	uint32_t ssd_free;     /* of those, free now */
	uint32_t hdd_free;     /* free physical extents of the HDD tier usable by moves */
	uint64_t extent_bytes;
	uint64_t max_bytes;    /* bytes one run may move, both ways together; 0: no limit */
	/*
	 * The volume's table: its targets now, and the most the plan may
	 * leave it (0: no limit). A move counts for at most one target per
	 * boundary beside it that no earlier move touched and that joins two
	 * extents now (PLANNER_STARTS_RUN): an upper bound, so that a plan
	 * within it is one the job's exact count (lib/batch.h) never holds.
	 */
	uint32_t table_targets, max_table_targets;
	uint32_t now;          /* unix seconds */
	const struct policy *policy;
};

struct planner_move {
	uint32_t le;
	uint8_t to; /* PLANNER_HDD or PLANNER_SSD */
};

struct plan {
	struct planner_move *moves;
	size_t nr;
	uint64_t promote_extents, demote_extents, promote_bytes, demote_bytes;
	/* Share of the total heat on SSD extents: the share of I/O the SSD can expect to serve. */
	double ssd_share_before, ssd_share_after;
	/*
	 * Extents passed over because moving them could take the table past its
	 * limit, pins among them: each had its turn while there was room for it
	 * on its tier, though not all of them would have fitted.
	 */
	uint64_t table_skipped;
	/*
	 * The byte budget stopped the plan: a move was due that did not fit in
	 * it, or candidates were left out for it (a later plan may find they
	 * would not have moved after all).
	 */
	bool budget_exhausted;
};

/*
 * Moves must run in the order given: a move may use space that earlier
 * moves free (a swap on a full SSD is a demotion, then a promotion), and
 * never more than that.  No extent appears twice.
 *
 * Returns 0, -EINVAL (a NULL pointer, both ext and list, a list not in
 * increasing order or past nr, unlisted HDD extents without a list or a
 * function to name them, an invalid policy, extent_bytes 0, ssd_free above
 * ssd_capacity, more SSD extents than used SSD space, a tier or pin out of
 * range, a flag unknown, heat negative or not finite) or -ENOMEM.
 * On error *out is an empty plan.
 */
int planner_plan(const struct planner_input *in, struct plan *out);

/* Frees the moves and empties *p.  Accepts NULL and a zeroed or already destroyed plan. */
void plan_destroy(struct plan *p);

#endif
