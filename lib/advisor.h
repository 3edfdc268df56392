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
 * The smallest capacity that holds every pin and every candidate: the
 * largest share any SSD can have (advisor_share of it).
 */
uint64_t advisor_capacity_for_all(const struct advisor *a);

#endif
