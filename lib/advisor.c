/* SPDX-License-Identifier: GPL-2.0-or-later */
/* advisor: the share of I/O an SSD tier of a given size would serve, from the pool's heat. */
#include "advisor.h"

#include <errno.h>
#include <stdlib.h>

static int hotter_first(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* v[0..n) sorted hottest first, turned into prefix sums of n + 1 entries (v has room). */
static void prefix_sums(double *v, size_t n)
{
	double prev = 0;

	qsort(v, n, sizeof(*v), hotter_first);
	for (size_t i = 0; i < n; i++) {
		double h = v[i];

		v[i] = prev;
		prev += h;
	}
	v[n] = prev;
}

static int candidate(const struct planner_extent *e, const struct policy *p)
{
	if (e->pin != PLANNER_NONE || !(e->heat > 0))
		return 0;
	if (p->promote == POLICY_PROMOTE_HEAT)
		return (double)e->heat >= p->min_heat;
	return p->promote == POLICY_PROMOTE_ALL;
}

int advisor_init(struct advisor *out, const struct planner_extent *ext, uint32_t nr,
		 const struct policy *policy)
{
	size_t pins = 0, cands = 0;

	if (!out)
		return -EINVAL;
	*out = (struct advisor){ 0 };
	if ((!ext && nr) || !policy || policy_valid(policy) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		const struct planner_extent *e = &ext[i];

		if (e->tier > PLANNER_SSD || e->pin > PLANNER_SSD || !(e->heat >= 0) ||
		    e->heat > 3.4e38f)
			return -EINVAL;
		if (e->tier == PLANNER_NONE)
			continue;
		pins += e->pin == PLANNER_SSD;
		cands += candidate(e, policy);
	}
	out->pin_sum = malloc((pins + 1) * sizeof(double));
	out->candidate_sum = malloc((cands + 1) * sizeof(double));
	if (!out->pin_sum || !out->candidate_sum) {
		advisor_destroy(out);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nr; i++) {
		const struct planner_extent *e = &ext[i];

		if (e->tier == PLANNER_NONE)
			continue;
		out->total_heat += e->heat;
		if (e->pin == PLANNER_SSD)
			out->pin_sum[out->nr_pins++] = e->heat;
		else if (candidate(e, policy))
			out->candidate_sum[out->nr_candidates++] = e->heat;
	}
	prefix_sums(out->pin_sum, out->nr_pins);
	prefix_sums(out->candidate_sum, out->nr_candidates);
	out->headroom = policy->promote == POLICY_PROMOTE_NONE ? 0 : policy->ssd_headroom;
	return 0;
}

/* Back to whole extents only. */
static void advisor_drop_pieces(struct advisor *a)
{
	free(a->run_heat);
	free(a->run_pieces_sum);
	free(a->run_heat_sum);
	a->run_heat = NULL;
	a->run_pieces_sum = NULL;
	a->run_heat_sum = NULL;
	a->pieces_per_extent = 0;
	a->nr_runs = 0;
}

void advisor_destroy(struct advisor *a)
{
	if (!a)
		return;
	free(a->pin_sum);
	free(a->candidate_sum);
	advisor_drop_pieces(a);
	*a = (struct advisor){ 0 };
}

uint64_t advisor_slots(const struct advisor *a, uint64_t capacity)
{
	/* As the planner does: the headroom rounded down, so a small SSD keeps what it can. */
	return capacity - (uint64_t)(a->headroom * (double)capacity);
}

double advisor_share(const struct advisor *a, uint64_t capacity)
{
	uint64_t slots = advisor_slots(a, capacity), pins, rest;
	double held;

	if (!(a->total_heat > 0))
		return 0;
	/* Pins go first and may crowd out hotter data: a pin beats heat (docs/policies.md). */
	pins = slots < a->nr_pins ? slots : a->nr_pins;
	rest = slots - pins < a->nr_candidates ? slots - pins : a->nr_candidates;
	held = a->pin_sum[pins] + a->candidate_sum[rest];
	return held >= a->total_heat ? 1 : held / a->total_heat;
}

uint64_t advisor_capacity_for_all(const struct advisor *a)
{
	uint64_t n = (uint64_t)a->nr_pins + a->nr_candidates;
	uint64_t c = (uint64_t)((double)n / (1 - a->headroom));

	c = c > 2 ? c - 2 : 0;
	while (advisor_slots(a, c) < n)
		c++;
	return c;
}

/* A run of pieces of equal heat, for the sort. */
struct advisor_run {
	double heat;    /* of each piece */
	uint64_t count;
};

static int run_hotter_first(const void *a, const void *b)
{
	const struct advisor_run *x = a, *y = b;

	return x->heat < y->heat ? 1 : x->heat > y->heat ? -1 : 0;
}

/*
 * A candidate is a run of pieces_per_extent pieces of equal heat where its
 * shares are not known, and a run per piece where they are: the memory of
 * pieces grows with the extents whose pieces are watched, not with all.
 */
int advisor_add_pieces(struct advisor *a, const struct planner_extent *ext, uint32_t nr,
		       const struct policy *policy, uint32_t pieces_per_extent,
		       advisor_shares_fn *shares, void *ctx)
{
	struct advisor_run *runs = NULL;
	size_t nr_runs = 0, cap = 0, cands = 0;
	double *share = NULL;
	int r = -ENOMEM;

	if (!a || (!ext && nr) || !policy || !shares || pieces_per_extent < 2 ||
	    (pieces_per_extent & (pieces_per_extent - 1)) || policy_valid(policy) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++)
		cands += ext[i].tier != PLANNER_NONE && candidate(&ext[i], policy);
	if (cands != a->nr_candidates)
		return -EINVAL;
	share = malloc(pieces_per_extent * sizeof(*share));
	if (!share)
		goto out;
	for (uint32_t i = 0; i < nr; i++) {
		const struct planner_extent *e = &ext[i];
		int known;

		if (e->tier == PLANNER_NONE || !candidate(e, policy))
			continue;
		known = shares(ctx, i, share);
		if (nr_runs + pieces_per_extent > cap) {
			size_t grown_cap = cap ? cap * 2 : 1024;
			struct advisor_run *grown;

			while (grown_cap < nr_runs + pieces_per_extent)
				grown_cap *= 2;
			grown = realloc(runs, grown_cap * sizeof(*runs));
			if (!grown)
				goto out;
			runs = grown;
			cap = grown_cap;
		}
		if (!known) {
			runs[nr_runs++] = (struct advisor_run){ e->heat / pieces_per_extent,
								pieces_per_extent };
			continue;
		}
		for (uint32_t k = 0; k < pieces_per_extent; k++)
			if (share[k] > 0)
				runs[nr_runs++] = (struct advisor_run){ e->heat * share[k], 1 };
	}
	qsort(runs, nr_runs, sizeof(*runs), run_hotter_first);
	advisor_drop_pieces(a);
	a->run_heat = malloc((nr_runs + 1) * sizeof(*a->run_heat));
	a->run_pieces_sum = malloc((nr_runs + 1) * sizeof(*a->run_pieces_sum));
	a->run_heat_sum = malloc((nr_runs + 1) * sizeof(*a->run_heat_sum));
	if (!a->run_heat || !a->run_pieces_sum || !a->run_heat_sum) {
		advisor_drop_pieces(a);
		goto out;
	}
	a->run_pieces_sum[0] = 0;
	a->run_heat_sum[0] = 0;
	for (size_t i = 0; i < nr_runs; i++) {
		a->run_heat[i] = runs[i].heat;
		a->run_pieces_sum[i + 1] = a->run_pieces_sum[i] + runs[i].count;
		a->run_heat_sum[i + 1] = a->run_heat_sum[i] + runs[i].heat * (double)runs[i].count;
	}
	a->nr_runs = nr_runs;
	a->pieces_per_extent = pieces_per_extent;
	r = 0;
out:
	free(share);
	free(runs);
	return r;
}

double advisor_share_pieces(const struct advisor *a, uint64_t capacity)
{
	uint64_t slots = advisor_slots(a, capacity), pins, room;
	size_t lo = 0, hi;
	double held;

	if (!a->pieces_per_extent)
		return advisor_share(a, capacity);
	if (!(a->total_heat > 0))
		return 0;
	pins = slots < a->nr_pins ? slots : a->nr_pins;
	room = (slots - pins) * a->pieces_per_extent;
	/* The last run that starts within the room: whole runs before it, part of it. */
	hi = a->nr_runs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (a->run_pieces_sum[mid] <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	held = a->pin_sum[pins] + a->run_heat_sum[lo];
	if (lo < a->nr_runs)
		held += a->run_heat[lo] * (double)(room - a->run_pieces_sum[lo]);
	return held >= a->total_heat ? 1 : held / a->total_heat;
}
