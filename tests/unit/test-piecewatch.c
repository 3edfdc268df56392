/* SPDX-License-Identifier: GPL-2.0-or-later */
/* piecewatch: the piece windows go round the hottest extents, unknown ones first. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "piecewatch.h"

static int watching(const struct piecewatch *w, uint32_t le)
{
	for (uint32_t i = 0; i < w->nr_windows; i++)
		if (w->le[i] == le)
			return 1;
	return 0;
}

static void test_init(void)
{
	struct piecewatch w;

	CHECK_INT(piecewatch_init(&w, 0, 1, 8), -EINVAL);
	CHECK_INT(piecewatch_init(&w, 2, 0, 8), -EINVAL);
	CHECK_INT(piecewatch_init(&w, 2, 1, 0), -EINVAL);
	CHECK_OK(piecewatch_init(&w, 2, 1, 8));
	CHECK_UINT(piecewatch_busy(&w), 0);
	CHECK_INT(piecewatch_choose(&w, NULL, NULL, 1, (uint8_t[2]){ 0 }), -EINVAL);
	piecewatch_destroy(&w);
	piecewatch_destroy(&w);
	piecewatch_destroy(NULL);
}

/* Idle windows take the hottest extents whose shares are not known, before known ones. */
static void test_unknown_first(void)
{
	struct piecewatch w;
	uint32_t cand[] = { 10, 20, 30, 40 };
	uint8_t known[] = { 1, 0, 1, 0 }, changed[3];

	CHECK_OK(piecewatch_init(&w, 3, 2, 16));
	CHECK_INT(piecewatch_choose(&w, cand, known, 4, changed), 3);
	CHECK(watching(&w, 20) && watching(&w, 40) && watching(&w, 10));
	CHECK(!watching(&w, 30));
	CHECK(changed[0] && changed[1] && changed[2]);
	piecewatch_destroy(&w);
}

/* A window stays dwell choices, then goes round; none moves for want of a candidate. */
static void test_dwell_and_round(void)
{
	struct piecewatch w;
	uint32_t cand[] = { 1, 2, 3, 4, 5 };
	uint8_t known[5] = { 0 }, changed[2];

	CHECK_OK(piecewatch_init(&w, 2, 2, 16));
	CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 2);
	CHECK(watching(&w, 1) && watching(&w, 2));
	/* One choice later: still within their dwell. */
	CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 0);
	CHECK(!changed[0] && !changed[1]);
	/* Two: both move on, to the next hottest not watched lately. */
	CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 2);
	CHECK(watching(&w, 3) && watching(&w, 4));
	CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 0);
	/* One candidate left: the window there longest moves, the other stays. */
	CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 1);
	CHECK(watching(&w, 5));
	CHECK_UINT(piecewatch_busy(&w), 2);
	/* All five watched lately: nothing to go to, so no region is remade. */
	for (int i = 0; i < 4; i++)
		CHECK_INT(piecewatch_choose(&w, cand, known, 5, changed), 0);
	CHECK_UINT(w.moves, 5);
	piecewatch_destroy(&w);
}

/* The memory of extents watched is bounded: the oldest may be watched again. */
static void test_recent_ring(void)
{
	struct piecewatch w;
	uint32_t cand[] = { 1, 2, 3 };
	uint8_t known[] = { 1, 1, 1 }, changed[1];

	CHECK_OK(piecewatch_init(&w, 1, 1, 1));
	CHECK_INT(piecewatch_choose(&w, cand, known, 3, changed), 1);
	CHECK_UINT(w.le[0], 1);
	CHECK_INT(piecewatch_choose(&w, cand, known, 3, changed), 1);
	CHECK_UINT(w.le[0], 2);
	CHECK_INT(piecewatch_choose(&w, cand, known, 3, changed), 1);
	CHECK_UINT(w.le[0], 3);
	/* Only 2 is remembered: the round starts again at 1. */
	CHECK_INT(piecewatch_choose(&w, cand, known, 3, changed), 1);
	CHECK_UINT(w.le[0], 1);
	piecewatch_destroy(&w);
}

/* A window whose region could not be made is idle and tries another extent next. */
static void test_idle(void)
{
	struct piecewatch w;
	uint32_t cand[] = { 7, 8 };
	uint8_t known[] = { 0, 0 }, changed[1];

	CHECK_OK(piecewatch_init(&w, 1, 5, 8));
	CHECK_INT(piecewatch_choose(&w, cand, known, 2, changed), 1);
	CHECK_UINT(w.le[0], 7);
	piecewatch_idle(&w, 0);
	piecewatch_idle(&w, 9);
	CHECK_UINT(piecewatch_busy(&w), 0);
	CHECK_INT(piecewatch_choose(&w, cand, known, 2, changed), 1);
	CHECK_UINT(w.le[0], 8);
	piecewatch_destroy(&w);
}

/*
 * Random rounds: no extent is watched by two windows, only candidates are
 * watched, a window moves only after its dwell, and what changed is what
 * the flags say.
 */
static void test_random(void)
{
	srand(7);
	for (int round = 0; round < 200; round++) {
		struct piecewatch w;
		uint32_t nw = 1 + (uint32_t)rand() % 8, dwell = 1 + (uint32_t)rand() % 3;
		uint32_t cand[64], before[8], age[8];
		uint8_t known[64], changed[8];

		CHECK_OK(piecewatch_init(&w, nw, dwell, 1 + (uint32_t)rand() % 40));
		for (int step = 0; step < 30; step++) {
			uint32_t nc = (uint32_t)rand() % 64;

			for (uint32_t c = 0; c < nc; c++) {
				cand[c] = (uint32_t)rand() % 100;
				known[c] = (uint8_t)(rand() % 2);
			}
			memcpy(before, w.le, nw * sizeof(*before));
			memcpy(age, w.age, nw * sizeof(*age));
			int n = piecewatch_choose(&w, cand, known, nc, changed), seen = 0;

			CHECK(n >= 0);
			for (uint32_t i = 0; i < nw; i++) {
				int in = 0;

				seen += changed[i];
				CHECK(changed[i] == (w.le[i] != before[i]));
				if (changed[i])
					CHECK(before[i] == PIECEWATCH_IDLE || age[i] + 1 >= dwell);
				for (uint32_t c = 0; c < nc; c++)
					in |= cand[c] == w.le[i];
				CHECK(!changed[i] || in);
				for (uint32_t j = i + 1; j < nw; j++)
					CHECK(w.le[i] == PIECEWATCH_IDLE || w.le[i] != w.le[j]);
			}
			CHECK_INT(seen, n);
		}
		piecewatch_destroy(&w);
	}
}

int main(void)
{
	test_init();
	test_unknown_first();
	test_dwell_and_round();
	test_recent_ring();
	test_idle();
	test_random();
	return 0;
}
