/* SPDX-License-Identifier: GPL-2.0-or-later */
/* advisor: the what-if curve on canned heat, and against what the planner reaches. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "advisor.h"
#include "check.h"
#include "planner.h"
#include "policy.h"

#define NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-9)

static struct planner_extent *extents(uint32_t nr)
{
	struct planner_extent *e = calloc(nr, sizeof(*e));

	CHECK(e != NULL);
	for (uint32_t i = 0; i < nr; i++)
		e[i].tier = PLANNER_HDD;
	return e;
}

/* Heat 10, 20, ..., 100 in scattered order; auto's headroom and min_heat. */
static void test_curve(void)
{
	static const float heat[10] = { 30, 100, 10, 50, 90, 20, 70, 40, 80, 60 };
	struct planner_extent *e = extents(12);
	struct policy pol;
	struct advisor a;

	policy_default(&pol);
	pol.ssd_headroom = 0;
	for (int i = 0; i < 10; i++)
		e[i].heat = heat[i];
	e[10].heat = 0.5f; /* below min_heat 1: never promoted, still I/O */
	e[11].tier = PLANNER_NONE;
	e[11].heat = 1000; /* unmapped: not part of the volume's I/O */
	CHECK_OK(advisor_init(&a, e, 12, &pol));
	NEAR(a.total_heat, 550.5);
	CHECK_UINT(a.nr_candidates, 10);
	NEAR(advisor_share(&a, 0), 0);
	NEAR(advisor_share(&a, 1), 100 / 550.5);
	NEAR(advisor_share(&a, 3), 270 / 550.5);
	NEAR(advisor_share(&a, 10), 550 / 550.5);
	NEAR(advisor_share(&a, 1000), 550 / 550.5);
	CHECK_UINT(advisor_capacity_for_all(&a), 10);
	advisor_destroy(&a);

	/* A 10% headroom rounded down, as the planner does: 10 extents hold 9. */
	pol.ssd_headroom = 0.1;
	CHECK_OK(advisor_init(&a, e, 12, &pol));
	CHECK_UINT(advisor_slots(&a, 10), 9);
	CHECK_UINT(advisor_slots(&a, 9), 9);
	NEAR(advisor_share(&a, 10), 540 / 550.5);
	CHECK_UINT(advisor_slots(&a, 11), 10);
	CHECK_UINT(advisor_capacity_for_all(&a), 11);
	advisor_destroy(&a);
	free(e);
}

/* Pins to the SSD go first, even cold; pins to the HDD never count; "none" promotes pins only. */
static void test_pins(void)
{
	struct planner_extent *e = extents(4);
	struct policy pol;
	struct advisor a;

	policy_default(&pol);
	pol.ssd_headroom = 0;
	e[0].heat = 100;
	e[0].pin = PLANNER_HDD;
	e[1].heat = 50;
	e[2].heat = 0;
	e[2].pin = PLANNER_SSD;
	e[3].heat = 25;
	e[3].pin = PLANNER_SSD;
	CHECK_OK(advisor_init(&a, e, 4, &pol));
	NEAR(advisor_share(&a, 1), 25 / 175.0);
	NEAR(advisor_share(&a, 2), 25 / 175.0);
	NEAR(advisor_share(&a, 3), 75 / 175.0);
	NEAR(advisor_share(&a, 4), 75 / 175.0);
	CHECK_UINT(advisor_capacity_for_all(&a), 3);
	advisor_destroy(&a);

	pol.promote = POLICY_PROMOTE_NONE;
	pol.demote = POLICY_DEMOTE_ALL;
	pol.ssd_headroom = 0.5;
	CHECK_OK(advisor_init(&a, e, 4, &pol));
	NEAR(advisor_share(&a, 4), 25 / 175.0);
	CHECK_UINT(advisor_capacity_for_all(&a), 2);
	advisor_destroy(&a);
	free(e);
}

static void test_empty_and_invalid(void)
{
	struct planner_extent *e = extents(2);
	struct policy pol;
	struct advisor a;

	policy_default(&pol);
	CHECK_OK(advisor_init(&a, NULL, 0, &pol));
	NEAR(advisor_share(&a, 100), 0);
	CHECK_UINT(advisor_capacity_for_all(&a), 0);
	advisor_destroy(&a);
	advisor_destroy(&a);
	advisor_destroy(NULL);
	CHECK_OK(advisor_init(&a, e, 2, &pol)); /* no heat at all */
	NEAR(advisor_share(&a, 2), 0);
	advisor_destroy(&a);
	e[1].heat = -1;
	CHECK_INT(advisor_init(&a, e, 2, &pol), -EINVAL);
	e[1].heat = NAN;
	CHECK_INT(advisor_init(&a, e, 2, &pol), -EINVAL);
	e[1].heat = 1;
	e[1].tier = 7;
	CHECK_INT(advisor_init(&a, e, 2, &pol), -EINVAL);
	e[1].tier = PLANNER_HDD;
	CHECK_INT(advisor_init(&a, NULL, 2, &pol), -EINVAL);
	pol.ssd_headroom = 0.9;
	CHECK_INT(advisor_init(&a, e, 2, &pol), -EINVAL);
	free(e);
}

/*
 * The prediction is what a run reaches: for random heat and SSD sizes, a
 * plan from an all-HDD pool ends at the share the advisor gives that size.
 */
static void test_matches_planner(void)
{
	uint32_t nr = 500;
	unsigned seed = 42;

	for (int round = 0; round < 40; round++) {
		struct planner_extent *e = extents(nr);
		uint32_t capacity = (uint32_t)(rand_r(&seed) % 300);
		struct planner_input in = { 0 };
		struct policy pol;
		struct advisor a;
		struct plan plan;

		policy_default(&pol);
		if (round % 2)
			pol.promote = POLICY_PROMOTE_ALL;
		for (uint32_t i = 0; i < nr; i++) {
			/* A few hot extents, many lukewarm, some cold, some under min_heat. */
			uint32_t r = (uint32_t)rand_r(&seed) % 100;

			e[i].heat = r < 5 ? 1000.0f + (float)r : r < 50 ? (float)r : r < 60 ? 0.5f : 0;
			if (r == 99 && round % 4 == 0)
				e[i].pin = rand_r(&seed) % 2 ? PLANNER_SSD : PLANNER_HDD;
		}
		in = (struct planner_input){
			.ext = e, .nr = nr, .ssd_capacity = capacity, .ssd_free = capacity,
			.hdd_free = 0, .extent_bytes = 1, .now = 1700000000u, .policy = &pol,
		};
		CHECK_OK(planner_plan(&in, &plan));
		CHECK_OK(advisor_init(&a, e, nr, &pol));
		CHECK(fabs(advisor_share(&a, capacity) - plan.ssd_share_after) < 1e-6);
		plan_destroy(&plan);
		advisor_destroy(&a);
		free(e);
	}
}

/*
 * What tier advise relies on: the extents the planner's list leaves out
 * (cold on the HDD and never moved, unpinned or pinned to the HDD;
 * unmapped and not pinned to the SSD) change no share, whatever the policy.
 */
static void test_list_is_enough(void)
{
	enum { NR = 5000 };
	static const enum policy_promote promote[] = { POLICY_PROMOTE_HEAT, POLICY_PROMOTE_ALL,
						       POLICY_PROMOTE_NONE };

	srand(3);
	for (unsigned round = 0; round < 30; round++) {
		struct planner_extent *e = extents(NR), *listed = calloc(NR, sizeof(*listed));
		struct advisor dense, sparse;
		struct policy pol;
		uint32_t n = 0;

		CHECK(listed != NULL);
		policy_default(&pol);
		pol.promote = promote[round % 3];
		for (uint32_t i = 0; i < NR; i++) {
			int r = rand() % 100;

			e[i].tier = r < 10 ? PLANNER_SSD : r < 12 ? PLANNER_NONE : PLANNER_HDD;
			e[i].heat = rand() % 4 ? 0 : (float)(rand() % 1000) / 10;
			e[i].moved_at = rand() % 10 ? 0 : 1000;
			e[i].pin = rand() % 20 ? PLANNER_NONE : rand() % 2 ? PLANNER_SSD : PLANNER_HDD;
			/* The list's rule (pool_planner_list): what has heat, moved, is on or pinned to the SSD. */
			if (e[i].tier == PLANNER_SSD || e[i].pin == PLANNER_SSD ||
			    (e[i].tier == PLANNER_HDD && (e[i].heat > 0 || e[i].moved_at)))
				listed[n++] = e[i];
		}
		CHECK(n < NR);
		CHECK_OK(advisor_init(&dense, e, NR, &pol));
		CHECK_OK(advisor_init(&sparse, listed, n, &pol));
		CHECK_UINT(advisor_capacity_for_all(&sparse), advisor_capacity_for_all(&dense));
		for (uint64_t cap = 0; cap <= NR; cap += 97)
			NEAR(advisor_share(&sparse, cap), advisor_share(&dense, cap));
		advisor_destroy(&dense);
		advisor_destroy(&sparse);
		free(listed);
		free(e);
	}
}

/* Shares for test_pieces: extent 0's heat in piece 0 (90%) and 1; the others unknown. */
static int two_pieces(void *ctx, uint32_t i, double *out)
{
	(void)ctx;
	if (i != 0)
		return 0;
	out[0] = 0.9;
	out[1] = 0.1;
	out[2] = out[3] = 0;
	return 1;
}

/* Random shares: a few hot pieces over a cold rest, or unknown. */
static int random_pieces(void *ctx, uint32_t i, double *out)
{
	uint32_t *seed = ctx, ppe = 16, hot = 1 + i % 3;
	double sum = 0;

	*seed = *seed * 1103515245u + 12345u;
	if (*seed >> 28 < 4)
		return 0;
	for (uint32_t k = 0; k < ppe; k++) {
		out[k] = k < hot ? 10.0 + k : 0.1 * (k % 2);
		sum += out[k];
	}
	for (uint32_t k = 0; k < ppe; k++)
		out[k] /= sum;
	return 1;
}

/*
 * Pieces: the room for candidates goes to their hottest pieces, pins stay
 * whole, and no size does worse than whole extents.
 */
static void test_pieces(void)
{
	struct planner_extent *e = extents(4);
	struct policy pol;
	struct advisor a;
	uint32_t seed = 7;

	policy_default(&pol);
	pol.ssd_headroom = 0;
	e[0].heat = 100;
	e[1].heat = 60;
	e[2].heat = 20;
	e[3].heat = 5;
	e[3].pin = PLANNER_SSD;
	CHECK_OK(advisor_init(&a, e, 4, &pol));
	NEAR(advisor_share_pieces(&a, 2), advisor_share(&a, 2)); /* none added: whole */
	CHECK_INT(advisor_add_pieces(&a, e, 2, &pol, 4, two_pieces, NULL), -EINVAL);
	CHECK_INT(advisor_add_pieces(&a, e, 4, &pol, 3, two_pieces, NULL), -EINVAL);
	CHECK_INT(advisor_add_pieces(&a, e, 4, &pol, 4, NULL, NULL), -EINVAL);
	CHECK_OK(advisor_add_pieces(&a, e, 4, &pol, 4, two_pieces, NULL));
	/* One extent: the pin. Two: the pin, then 4 pieces: 90, 15, 15, 15. */
	NEAR(advisor_share_pieces(&a, 1), 5 / 185.0);
	NEAR(advisor_share(&a, 2), 105 / 185.0);
	NEAR(advisor_share_pieces(&a, 2), (5 + 90 + 45) / 185.0);
	/* Three: 90, 15 x 4, 10, 5 x 2 (extent 2's even 5s). */
	NEAR(advisor_share_pieces(&a, 3), (5 + 90 + 60 + 10 + 10) / 185.0);
	NEAR(advisor_share_pieces(&a, 4), 185 / 185.0);
	NEAR(advisor_share_pieces(&a, 100), 1);
	NEAR(advisor_share_pieces(&a, 0), 0);
	advisor_destroy(&a);
	free(e);

	/* Random pools: pieces never do worse than whole extents, and grow with the size. */
	e = extents(300);
	for (uint32_t i = 0; i < 300; i++) {
		e[i].heat = (float)(1 + (i * 37) % 101);
		e[i].pin = i % 50 == 0 ? PLANNER_SSD : PLANNER_NONE;
	}
	pol.ssd_headroom = 0.1;
	CHECK_OK(advisor_init(&a, e, 300, &pol));
	CHECK_OK(advisor_add_pieces(&a, e, 300, &pol, 16, random_pieces, &seed));
	for (uint64_t c = 0, was = 0; c <= 320; c++) {
		double pieces = advisor_share_pieces(&a, c);

		CHECK(pieces >= advisor_share(&a, c) - 1e-12);
		CHECK(pieces >= (double)was / 1e12 - 1e-12);
		was = (uint64_t)(pieces * 1e12);
	}
	NEAR(advisor_share_pieces(&a, 400), 1);
	advisor_destroy(&a);
	free(e);
}

int main(void)
{
	test_pieces();
	test_list_is_enough();
	test_curve();
	test_pins();
	test_empty_and_invalid();
	test_matches_planner();
	return 0;
}
