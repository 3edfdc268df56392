/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pieceheat.h"

#define PPE 16u
#define SEC UINT64_C(1000000000)

static struct heat_params params;

/* n reads of 4 KiB on piece idx, unmerged: random I/O. */
static void reads(struct statsparse_area *a, uint32_t idx, uint32_t n)
{
	a[idx].reads += n;
	a[idx].sectors_read += 8ull * n;
}

/* n reads of 4 KiB, each on a piece of 256 drawn from the generator's state *x. */
static void random_reads(struct statsparse_area *a, uint32_t n, uint32_t *x)
{
	for (uint32_t i = 0; i < n; i++) {
		*x = *x * 1664525 + 1013904223;
		reads(a, *x >> 24, 1);
	}
}

static void test_init(void)
{
	struct pieceheat ph;

	CHECK_INT(pieceheat_init(&ph, 3, 10), -EINVAL);
	CHECK_INT(pieceheat_init(&ph, 1, 10), -EINVAL);
	CHECK_INT(pieceheat_init(&ph, 16, 0), -EINVAL);
	CHECK_INT(pieceheat_init(NULL, 16, 1), -EINVAL);
	CHECK_OK(pieceheat_init(&ph, 16, 1));
	CHECK_INT(pieceheat_known(&ph, 0), 0);
	CHECK(pieceheat_share(&ph, 0, 0) == 0);
	CHECK_INT(pieceheat_forget(&ph, 0), -ENOENT);
	CHECK_INT(pieceheat_sample_begin(&ph, &params, 0), -EINVAL);
	CHECK_OK(pieceheat_sample_begin(&ph, &params, 10 * SEC));
	CHECK_INT(pieceheat_sample_begin(&ph, &params, 9 * SEC), -EINVAL);
	pieceheat_destroy(&ph);
	pieceheat_destroy(&ph);
	pieceheat_destroy(NULL);
}

/* Where the reads went, in shares; the hottest pieces first, ties by lower index. */
static void test_shares(void)
{
	struct statsparse_area a[PPE] = { 0 };
	uint32_t idx[4];
	double share[4];
	struct pieceheat ph;

	CHECK_OK(pieceheat_init(&ph, PPE, 8));
	CHECK_OK(pieceheat_sample_begin(&ph, &params, SEC));
	CHECK_OK(pieceheat_apply(&ph, &params, 7, a)); /* no I/O: not watched */
	CHECK_INT(pieceheat_known(&ph, 7), 0);
	CHECK_UINT(ph.nr, 0);
	reads(a, 3, 60);
	reads(a, 9, 20);
	reads(a, 12, 20);
	CHECK_OK(pieceheat_apply(&ph, &params, 7, a));
	CHECK_INT(pieceheat_known(&ph, 7), 1);
	CHECK_NEAR(pieceheat_share(&ph, 7, 3), 0.6, 1e-6);
	CHECK_NEAR(pieceheat_share(&ph, 7, 9), 0.2, 1e-6);
	CHECK(pieceheat_share(&ph, 7, 0) == 0);
	CHECK(pieceheat_share(&ph, 7, PPE) == 0);
	CHECK(pieceheat_share(&ph, 8, 3) == 0);
	{
		double total = -1;
		const float *w = pieceheat_weights(&ph, 7, &total);

		CHECK(w != NULL);
		if (w) {
			CHECK_NEAR(w[3] / total, 0.6, 1e-6);
			CHECK_NEAR(w[12] / total, 0.2, 1e-6);
			CHECK(w[0] == 0);
		}
		CHECK(pieceheat_weights(&ph, 8, &total) == NULL);
	}
	CHECK_UINT(pieceheat_hottest(&ph, 7, 4, idx, share), 3);
	CHECK_UINT(idx[0], 3);
	CHECK_UINT(idx[1], 9);
	CHECK_UINT(idx[2], 12);
	CHECK_NEAR(share[0], 0.6, 1e-6);
	CHECK_UINT(pieceheat_hottest(&ph, 7, 2, idx, NULL), 2);
	CHECK_UINT(idx[1], 9);
	CHECK_UINT(pieceheat_hottest(&ph, 8, 2, idx, NULL), 0);
	/* 60 + 20 + 20: one piece holds half, two 80%, three all of it. */
	CHECK_UINT(pieceheat_pieces_for(&ph, 7, 0.5), 1);
	CHECK_UINT(pieceheat_pieces_for(&ph, 7, 0.8), 2);
	CHECK_UINT(pieceheat_pieces_for(&ph, 7, 0.9), 3);
	CHECK_UINT(pieceheat_pieces_for(&ph, 7, 1.0), 3);
	CHECK_UINT(pieceheat_pieces_for(&ph, 8, 0.9), 0);

	/* A stream of merged reads over every piece barely shifts the shares. */
	memset(a, 0, sizeof(a));
	for (uint32_t k = 0; k < PPE; k++) {
		a[k].reads = 100;
		a[k].reads_merged = 100;
		a[k].sectors_read = 100 * 32;
	}
	CHECK_OK(pieceheat_apply(&ph, &params, 7, a));
	CHECK(pieceheat_share(&ph, 7, 3) > 0.4);
	CHECK_UINT(pieceheat_pieces_for(&ph, 7, 0.9), 3);
	/* Random 4 KiB reads spread evenly: nine in ten pieces for nine tenths. */
	memset(a, 0, sizeof(a));
	for (uint32_t k = 0; k < PPE; k++)
		reads(a, k, 10);
	CHECK_OK(pieceheat_apply(&ph, &params, 9, a));
	CHECK_UINT(pieceheat_pieces_for(&ph, 9, 0.9), 15); /* 14.4 pieces' worth: 15 */
	CHECK_OK(pieceheat_forget(&ph, 7));
	CHECK_INT(pieceheat_known(&ph, 7), 0);
	pieceheat_destroy(&ph);
}

/*
 * Shares for a plan: even reads leave even shares, however the counts
 * fell; reads that stand out leave the reads' shares; a young extent
 * still measured with nothing beyond chance waits.
 */
static void test_plan_shares(void)
{
	enum { N = 256 };
	struct statsparse_area a[N];
	double out[N], sum = 0;
	struct pieceheat ph;
	uint32_t x = 12345, uneven = 0;

	CHECK_OK(pieceheat_init(&ph, N, 64));
	CHECK_OK(pieceheat_sample_begin(&ph, &params, SEC));
	CHECK_INT(pieceheat_plan_shares(&ph, 1, true, out), 0);
	/* 40 extents, 900 random reads each over their 256 pieces. */
	for (uint32_t le = 0; le < 40; le++) {
		memset(a, 0, sizeof(a));
		random_reads(a, 900, &x);
		CHECK_OK(pieceheat_apply(&ph, &params, le, a));
		CHECK_INT(pieceheat_plan_shares(&ph, le, true, out), 1);
		sum = 0;
		for (uint32_t k = 0; k < N; k++)
			sum += out[k];
		CHECK_NEAR(sum, 1, 1e-9);
		uneven += out[0] != 1.0 / N || out[100] != 1.0 / N;
	}
	/* About one extent in 50 has a piece beyond chance: never one in each. */
	CHECK(uneven <= 3);
	/* Two hot blocks among 300 reads spread over the rest: the reads' shares. */
	memset(a, 0, sizeof(a));
	random_reads(a, 300, &x);
	reads(a, 10, 400);
	reads(a, 200, 300);
	CHECK_OK(pieceheat_apply(&ph, &params, 50, a));
	CHECK_INT(pieceheat_plan_shares(&ph, 50, true, out), 1);
	sum = 0;
	for (uint32_t k = 0; k < N; k++) {
		CHECK_NEAR(out[k], pieceheat_share(&ph, 50, k), 1e-12);
		sum += out[k];
	}
	CHECK_NEAR(sum, 1, 1e-9);
	CHECK(out[10] > 0.4 && out[10] < 0.41);
	/*
	 * Young heat, fewer reads than pieces. A block read 6 times in 6
	 * reads is beyond chance: the reads' shares, measured or not.
	 */
	memset(a, 0, sizeof(a));
	reads(a, 7, 6);
	CHECK_OK(pieceheat_apply(&ph, &params, 60, a));
	CHECK_INT(pieceheat_plan_shares(&ph, 60, true, out), 1);
	CHECK_NEAR(out[7], 1, 1e-9);
	CHECK(out[8] == 0);
	CHECK_INT(pieceheat_plan_shares(&ph, 60, false, out), 1);
	CHECK_NEAR(out[7], 1, 1e-9);
	/*
	 * Two reads of a block and one of another: nothing beyond chance.
	 * Still measured, it waits; measured no more, it is even.
	 */
	memset(a, 0, sizeof(a));
	reads(a, 7, 2);
	reads(a, 9, 1);
	CHECK_OK(pieceheat_apply(&ph, &params, 62, a));
	CHECK_INT(pieceheat_plan_shares(&ph, 62, true, out), 2);
	for (uint32_t k = 0; k < N; k++)
		CHECK(out[k] == 0);
	CHECK_INT(pieceheat_plan_shares(&ph, 62, false, out), 1);
	CHECK_NEAR(out[7], 1.0 / N, 1e-12);
	CHECK_NEAR(out[100], 1.0 / N, 1e-12);
	/* 100 reads spread evenly: waits, then even once the reads outnumber the pieces. */
	memset(a, 0, sizeof(a));
	random_reads(a, 100, &x);
	CHECK_OK(pieceheat_apply(&ph, &params, 63, a));
	CHECK_INT(pieceheat_plan_shares(&ph, 63, true, out), 2);
	memset(a, 0, sizeof(a));
	random_reads(a, 300, &x);
	CHECK_OK(pieceheat_apply(&ph, &params, 63, a));
	CHECK_INT(pieceheat_plan_shares(&ph, 63, true, out), 1);
	CHECK_NEAR(out[33], 1.0 / N, 1e-12);
	pieceheat_destroy(&ph);
}

/* Older weight decays with the half-life: what came a half-life ago counts half. */
static void test_decay(void)
{
	struct statsparse_area a[PPE] = { 0 }, b[PPE] = { 0 };
	struct pieceheat ph;
	uint64_t t = SEC;

	CHECK_OK(pieceheat_init(&ph, PPE, 4));
	reads(a, 1, 100);
	reads(b, 2, 100);
	CHECK_OK(pieceheat_sample_begin(&ph, &params, t));
	CHECK_OK(pieceheat_apply(&ph, &params, 5, a));
	t += (uint64_t)params.half_life_s * SEC;
	CHECK_OK(pieceheat_sample_begin(&ph, &params, t));
	CHECK_OK(pieceheat_apply(&ph, &params, 5, b));
	CHECK_NEAR(pieceheat_share(&ph, 5, 1), 1.0 / 3, 1e-6);
	CHECK_NEAR(pieceheat_share(&ph, 5, 2), 2.0 / 3, 1e-6);

	/* A hundred half-lives later the scale was brought back, and shares held. */
	for (int i = 0; i < 100; i++) {
		t += (uint64_t)params.half_life_s * SEC;
		CHECK_OK(pieceheat_sample_begin(&ph, &params, t));
	}
	CHECK(ph.scale < 1e13);
	CHECK_NEAR(pieceheat_share(&ph, 5, 2), 2.0 / 3, 1e-3);
	CHECK_OK(pieceheat_apply(&ph, &params, 5, a));
	CHECK(pieceheat_share(&ph, 5, 1) > 0.999);
	pieceheat_destroy(&ph);
}

/* At max_extents, the least weight gives way to more; less is dropped and counted. */
static void test_room(void)
{
	struct statsparse_area a[PPE] = { 0 };
	struct pieceheat ph;

	CHECK_OK(pieceheat_init(&ph, PPE, 2));
	CHECK_OK(pieceheat_sample_begin(&ph, &params, SEC));
	reads(a, 0, 10);
	CHECK_OK(pieceheat_apply(&ph, &params, 30, a));
	reads(a, 0, 10);
	CHECK_OK(pieceheat_apply(&ph, &params, 10, a)); /* 20 */
	memset(a, 0, sizeof(a));
	reads(a, 4, 5);
	CHECK_OK(pieceheat_apply(&ph, &params, 20, a)); /* 5: less than either */
	CHECK_UINT(ph.dropped, 1);
	CHECK_INT(pieceheat_known(&ph, 20), 0);
	reads(a, 4, 10);
	CHECK_OK(pieceheat_apply(&ph, &params, 20, a)); /* 15: more than le 30's 10 */
	CHECK_INT(pieceheat_known(&ph, 30), 0);
	CHECK_INT(pieceheat_known(&ph, 20), 1);
	CHECK_INT(pieceheat_known(&ph, 10), 1);
	CHECK_UINT(ph.v[0].le, 10);
	CHECK_UINT(ph.v[1].le, 20);
	/* Watched extents take more without asking for room. */
	CHECK_OK(pieceheat_apply(&ph, &params, 10, a));
	CHECK_UINT(ph.nr, 2);
	CHECK(pieceheat_bytes(&ph) >= 2 * PPE * sizeof(float));
	pieceheat_destroy(&ph);
}

/*
 * Weights carried over a restart: added as they were, at the scale of the
 * moment, and what I/O comes after adds to them; a weight that is not a
 * weight is refused.
 */
static void test_add(void)
{
	struct statsparse_area a[PPE] = { 0 };
	uint16_t idx[2] = { 3, 9 };
	float w[2] = { 3, 1 };
	struct pieceheat ph;
	uint64_t t = SEC;

	CHECK_OK(pieceheat_init(&ph, PPE, 4));
	CHECK_OK(pieceheat_sample_begin(&ph, &params, t));
	t += (uint64_t)params.half_life_s * SEC; /* scale 2 */
	CHECK_OK(pieceheat_sample_begin(&ph, &params, t));
	CHECK_OK(pieceheat_add(&ph, 7, idx, w, 2));
	CHECK_INT(pieceheat_known(&ph, 7), 1);
	CHECK_NEAR(pieceheat_share(&ph, 7, 3), 0.75, 1e-6);
	CHECK_NEAR(pieceheat_weight(&ph, 7, 3), 3, 1e-6);
	CHECK_NEAR(pieceheat_weight(&ph, 7, 9), 1, 1e-6);
	CHECK(pieceheat_weight(&ph, 7, 4) == 0);
	CHECK(pieceheat_weight(&ph, 8, 3) == 0);
	/* Reads of piece 4 worth the weight of 4: half of it now. */
	reads(a, 4, 1);
	CHECK_OK(pieceheat_apply(&ph, &params, 7, a));
	CHECK_NEAR(pieceheat_share(&ph, 7, 3) / pieceheat_share(&ph, 7, 9), 3, 1e-5);
	CHECK(pieceheat_share(&ph, 7, 4) > 0);
	/* Nothing of weight: not watched. */
	w[0] = w[1] = 0;
	CHECK_OK(pieceheat_add(&ph, 8, idx, w, 2));
	CHECK_INT(pieceheat_known(&ph, 8), 0);
	w[0] = -1;
	CHECK_INT(pieceheat_add(&ph, 8, idx, w, 2), -EINVAL);
	w[0] = 1;
	idx[0] = PPE;
	CHECK_INT(pieceheat_add(&ph, 8, idx, w, 2), -EINVAL);
	CHECK_INT(pieceheat_add(NULL, 8, idx, w, 2), -EINVAL);
	CHECK_UINT(ph.nr, 1);
	pieceheat_destroy(&ph);
}

/* Over a heat restart: what is past a smaller volume goes, then the least weight. */
static void test_resize(void)
{
	struct statsparse_area a[PPE] = { 0 };
	struct pieceheat ph;
	uint64_t changes;

	CHECK_OK(pieceheat_init(&ph, PPE, 3));
	CHECK_OK(pieceheat_sample_begin(&ph, &params, SEC));
	for (uint32_t le = 10; le <= 30; le += 10) {
		memset(a, 0, sizeof(a));
		reads(a, le / 10, le * 2);
		CHECK_OK(pieceheat_apply(&ph, &params, le, a)); /* 20, 40 and 60 reads */
	}
	CHECK_UINT(ph.nr, 3);
	/* Growing keeps everything, and room for more. */
	CHECK_OK(pieceheat_resize(&ph, 5, 100, NULL, 0));
	CHECK_UINT(ph.nr, 3);
	CHECK_UINT(ph.max_extents, 5);
	memset(a, 0, sizeof(a));
	reads(a, 5, 50);
	CHECK_OK(pieceheat_apply(&ph, &params, 50, a));
	CHECK_UINT(ph.nr, 4);
	CHECK_NEAR(pieceheat_share(&ph, 30, 3), 1, 1e-6);
	CHECK_NEAR(pieceheat_weight(&ph, 30, 3), 60, 1e-3);
	/* A volume of 40 extents and room for 2: 50 goes, then the least weight, 10. */
	changes = ph.changes;
	CHECK_OK(pieceheat_resize(&ph, 2, 40, NULL, 0));
	CHECK_UINT(ph.nr, 2);
	CHECK_UINT(ph.v[0].le, 20);
	CHECK_UINT(ph.v[1].le, 30);
	CHECK_INT(pieceheat_known(&ph, 10), 0);
	CHECK_INT(pieceheat_known(&ph, 50), 0);
	CHECK(ph.changes == changes + 2);
	CHECK_NEAR(pieceheat_weight(&ph, 20, 2), 40, 1e-3);
	/*
	 * Room for 1, 20 with pieces out: 30 goes although it weighs more
	 * (20's pieces out would else be taken to hold its heat).
	 */
	{
		static const uint32_t keep[] = { 5, 20, 90 };

		CHECK_OK(pieceheat_resize(&ph, 1, 40, keep, 3));
		CHECK_UINT(ph.nr, 1);
		CHECK_UINT(ph.v[0].le, 20);
		CHECK_INT(pieceheat_resize(&ph, 1, 40, NULL, 1), -EINVAL);
	}
	/* 10, 20 and 30 again, 10 and 30 to keep: 20 goes, then the lighter of those, 10. */
	{
		static const uint32_t keep[] = { 10, 30 };

		CHECK_OK(pieceheat_resize(&ph, 3, 40, NULL, 0));
		for (uint32_t le = 10; le <= 30; le += 20) {
			memset(a, 0, sizeof(a));
			reads(a, le / 10, le * 2);
			CHECK_OK(pieceheat_apply(&ph, &params, le, a));
		}
		CHECK_UINT(ph.nr, 3);
		CHECK_OK(pieceheat_resize(&ph, 1, 40, keep, 2));
		CHECK_UINT(ph.nr, 1);
		CHECK_UINT(ph.v[0].le, 30);
	}
	CHECK_INT(pieceheat_resize(&ph, 0, 40, NULL, 0), -EINVAL);
	CHECK_INT(pieceheat_resize(NULL, 2, 40, NULL, 0), -EINVAL);
	pieceheat_destroy(&ph);
	CHECK_INT(pieceheat_resize(&ph, 2, 40, NULL, 0), -EINVAL);
}

int main(void)
{
	heat_params_default(&params);
	test_init();
	test_shares();
	test_plan_shares();
	test_decay();
	test_room();
	test_add();
	test_resize();
	return 0;
}
