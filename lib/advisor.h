/* SPDX-License-Identifier: GPL-2.0-or-later */
/* advisor: the share of I/O an SSD tier of a given size would serve, from the pool's heat. */
#ifndef TIERD_ADVISOR_H
#define TIERD_ADVISOR_H

#include <stddef.h>
#include <stdint.h>

#include "planner.h"
#include "policy.h"

/*
 * Pure. The what-if behind "tierctl advise" (docs/heat.md, "How big an
 * SSD"): an SSD of a given size holds, in the steady state a run reaches,
 * the extents pinned to it (hottest first) and then the hottest extents the
 * policy would promote, up to its capacity less the policy's headroom. Its
 * share of the I/O is its share of the heat, as the planner's
 * ssd_share_after is. Residency and hysteresis only delay that state, so
 * they are left out.
 */

struct advisor {
	double total_heat;      /* of every mapped extent */
	size_t nr_pins;         /* extents pinned to the SSD */
	size_t nr_candidates;   /* unpinned extents the policy would promote, heat > 0 */
	double *pin_sum;        /* [i]: heat of the i hottest SSD pins, 0..nr_pins */
	double *candidate_sum;  /* [i]: heat of the i hottest candidates, 0..nr_candidates */
	double headroom;        /* the policy's share of the SSD kept free */
	/*
	 * With pieces (advisor_add_pieces): the candidates' heat in runs of
	 * pieces of equal heat, hottest first, and prefix sums over them.
	 */
	uint32_t pieces_per_extent;     /* 0: whole extents only */
	size_t nr_runs;
	double *run_heat;               /* [i]: heat of one piece of run i */
	uint64_t *run_pieces_sum;       /* [i]: pieces of runs before i, 0..nr_runs */
	double *run_heat_sum;           /* [i]: heat of runs before i, 0..nr_runs */
};

/*
 * Rank ext[0..nr) as policy would. 0, -EINVAL (NULL pointer with nr, an
 * invalid policy, a tier or pin out of range, heat negative or not finite)
 * or -ENOMEM; on error *out is empty.
 */
int advisor_init(struct advisor *out, const struct planner_extent *ext, uint32_t nr,
		 const struct policy *policy);
/* Accepts NULL and an emptied advisor. */
void advisor_destroy(struct advisor *a);

/* Extents an SSD tier with capacity extents for data (its swap reserve left out) fills. */
uint64_t advisor_slots(const struct advisor *a, uint64_t capacity);

/* Share of the heat (0..1) an SSD tier with capacity extents for data would hold. */
double advisor_share(const struct advisor *a, uint64_t capacity);

/*
 * How a candidate's heat divides among its pieces: out[0..pieces_per_extent)
 * gets shares that add up to 1, and the function returns 1; or it returns 0
 * where that is not known, and the heat is taken as even.  i indexes the
 * ext[] advisor_init() had.
 */
typedef int advisor_shares_fn(void *ctx, uint32_t i, double *out);
/*
 * The what-if of placement finer than an extent (docs/design.md, "Placement
 * finer than an extent"): after advisor_init() with the same ext[], the
 * candidates' room on the SSD goes to the hottest pieces of
 * 1/pieces_per_extent of an extent, not to whole extents, each piece its
 * extent's heat times its share; pins stay whole.  A whole extent is all
 * its pieces, so the share at any size is at least advisor_share()'s.  The
 * table's limit is left out: the answer is the bound pieces could reach.
 * 0, -EINVAL (pieces_per_extent not a power of two from 2, ext[] with
 * another count of candidates than init's, shares NULL) or -ENOMEM (then
 * advisor_share_pieces() may answer for whole extents only).
 */
int advisor_add_pieces(struct advisor *a, const struct planner_extent *ext, uint32_t nr,
		       const struct policy *policy, uint32_t pieces_per_extent,
		       advisor_shares_fn *shares, void *ctx);
/* advisor_share() with pieces; without advisor_add_pieces(), advisor_share(). */
double advisor_share_pieces(const struct advisor *a, uint64_t capacity);

/*
 * The smallest capacity that holds every pin and every candidate: the
 * largest share any SSD can have (advisor_share of it).
 */
uint64_t advisor_capacity_for_all(const struct advisor *a);

#endif
