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

void advisor_destroy(struct advisor *a)
{
	if (!a)
		return;
	free(a->pin_sum);
	free(a->candidate_sum);
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
