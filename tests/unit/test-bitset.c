/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "bitset.h"
#include "check.h"

#define L BITSET_LEAF_BITS

/* Every query of b against a plain array of bools. */
static void check_against(const struct bitset *b, const bool *model, uint32_t nr)
{
	uint64_t n = 0;

	CHECK(bitset_valid(b));
	for (uint32_t i = 0; i < nr; i++) {
		CHECK_INT(bitset_test(b, i), model[i]);
		n += model[i];
	}
	CHECK(!bitset_test(b, nr));
	CHECK_UINT(bitset_count(b), n);
	for (unsigned k = 0; k < 200; k++) {
		uint32_t from = (uint32_t)rand() % (nr + 2), want = UINT32_MAX;

		for (uint32_t i = from; i < nr; i++)
			if (!model[i]) {
				want = i;
				break;
			}
		CHECK_UINT(bitset_next_clear(b, from), want);
	}
	for (unsigned k = 0; k < 200; k++) {
		uint32_t from = (uint32_t)rand() % (nr + 2), end = from + (uint32_t)rand() % (nr + 2);
		uint32_t want = end < nr ? end : nr;

		for (uint32_t i = from; i < want; i++)
			if (model[i]) {
				want = i;
				break;
			}
		CHECK_UINT(bitset_next_set(b, from, end), want);
	}
	for (unsigned k = 0; k < 200; k++) {
		uint32_t i = (uint32_t)rand() % nr, count = (uint32_t)rand() % (nr - i + 1);
		bool all_set = true, all_clear = true;

		for (uint32_t j = i; j < i + count; j++) {
			all_set &= model[j];
			all_clear &= !model[j];
		}
		CHECK_INT(bitset_all(b, i, count, true), all_set);
		CHECK_INT(bitset_all(b, i, count, false), all_clear);
	}
}

/* Random sets, clears and ranges, across leaves, with a last leaf cut short. */
static void test_random(void)
{
	const uint32_t nr = 4 * L + 1234;
	bool *model = calloc(nr, sizeof(*model));
	struct bitset b;

	CHECK(model != NULL);
	srand(7);
	CHECK_OK(bitset_init(&b, nr));
	check_against(&b, model, nr);
	for (unsigned step = 0; step < 3000; step++) {
		uint32_t i = (uint32_t)rand() % nr;

		switch (rand() % 4) {
		case 0:
			CHECK_OK(bitset_set(&b, i));
			model[i] = true;
			break;
		case 1:
			CHECK_OK(bitset_clear(&b, i));
			model[i] = false;
			break;
		case 2: {
			/* Mostly short, now and then whole leaves. */
			uint32_t count = rand() % 8 ? (uint32_t)rand() % 100 :
						      (uint32_t)rand() % (2 * L + 5);

			if (count > nr - i)
				count = nr - i;
			CHECK_OK(bitset_set_range(&b, i, count));
			for (uint32_t j = i; j < i + count; j++)
				model[j] = true;
			break;
		}
		default:
			CHECK_OK(bitset_hold(&b, i));
			break;
		}
		if (step % 500 == 0)
			check_against(&b, model, nr);
	}
	check_against(&b, model, nr);
	CHECK_INT(bitset_set(&b, nr), -EINVAL);
	CHECK_INT(bitset_set_range(&b, nr - 1, 2), -EINVAL);
	bitset_destroy(&b);
	bitset_destroy(&b);
	bitset_destroy(NULL);
	free(model);
}

/* A device all used or all free holds no leaf; a change makes one, and only one. */
static void test_memory(void)
{
	const uint32_t nr = 1600 * L; /* 200 TiB of 4 MiB extents */
	struct bitset b;

	CHECK_OK(bitset_init(&b, nr));
	CHECK_UINT(bitset_bytes(&b), 1600 * sizeof(void *));
	CHECK_OK(bitset_set_range(&b, 0, nr));
	CHECK_UINT(b.nr_allocated, 0);
	CHECK_UINT(bitset_count(&b), nr);
	CHECK(bitset_all(&b, 0, nr, true));
	CHECK_UINT(bitset_next_clear(&b, 0), UINT32_MAX);
	CHECK_OK(bitset_clear(&b, 5 * L + 3));
	CHECK_UINT(b.nr_allocated, 1);
	CHECK_UINT(bitset_bytes(&b), 1600 * sizeof(void *) + L / 8);
	CHECK_UINT(bitset_next_clear(&b, 0), 5 * L + 3);
	CHECK_UINT(bitset_count(&b), nr - 1);
	/* Setting what is set, or clearing what is clear, makes nothing. */
	CHECK_OK(bitset_set(&b, 9 * L));
	CHECK_UINT(b.nr_allocated, 1);
	/* A range that ends inside a leaf makes that leaf only. */
	bitset_destroy(&b);
	CHECK_OK(bitset_init(&b, nr));
	CHECK_OK(bitset_clear(&b, 77));
	CHECK_UINT(b.nr_allocated, 0);
	CHECK_OK(bitset_set_range(&b, L / 2, 3 * L));
	CHECK_UINT(b.nr_allocated, 2);
	CHECK(bitset_all(&b, L / 2, 3 * L, true));
	CHECK(bitset_all(&b, 0, L / 2, false));
	CHECK_UINT(bitset_next_clear(&b, L / 2), 3 * L + L / 2);
	bitset_destroy(&b);
}

/* A leaf made stays: a bit in it then changes without memory. */
static void test_hold(void)
{
	struct bitset b;

	CHECK_OK(bitset_init(&b, 3 * L));
	CHECK_OK(bitset_set_range(&b, 0, 3 * L));
	CHECK_OK(bitset_hold(&b, L + 1));
	CHECK_UINT(b.nr_allocated, 1);
	CHECK(bitset_all(&b, L, L, true));
	CHECK_OK(bitset_clear(&b, L + 1));
	CHECK_OK(bitset_set(&b, L + 1));
	CHECK_UINT(b.nr_allocated, 1);
	CHECK(bitset_all(&b, 0, 3 * L, true));
	CHECK_INT(bitset_hold(&b, 3 * L), -EINVAL);
	bitset_destroy(&b);
	/* A bit past the end in a made leaf is corruption. */
	CHECK_OK(bitset_init(&b, L + 10));
	CHECK_OK(bitset_hold(&b, L));
	CHECK(bitset_valid(&b));
	b.leaf[1][0] |= UINT64_C(1) << 10;
	CHECK(!bitset_valid(&b));
	bitset_destroy(&b);
}

/* Ranges that start and end at and beside the edges of leaves, on an empty set and a mixed one. */
static void test_edges(void)
{
	const uint32_t nr = 3 * L + 5, at[] = { 0, 1, L - 1, L, L + 1, 2 * L - 1, 2 * L, 2 * L + 1, nr };
	bool *model = calloc(nr, sizeof(*model));

	CHECK(model != NULL);
	for (unsigned mixed = 0; mixed < 2; mixed++)
		for (unsigned a = 0; a < sizeof(at) / sizeof(at[0]); a++)
			for (unsigned z = a; z < sizeof(at) / sizeof(at[0]); z++) {
				struct bitset b;

				CHECK_OK(bitset_init(&b, nr));
				for (uint32_t i = 0; i < nr; i++)
					model[i] = false;
				if (mixed) {
					/* A leaf all set, a leaf made, a leaf left empty. */
					CHECK_OK(bitset_set_range(&b, 0, L));
					CHECK_OK(bitset_set(&b, L + 7));
					for (uint32_t i = 0; i < L; i++)
						model[i] = true;
					model[L + 7] = true;
				}
				CHECK_OK(bitset_set_range(&b, at[a], at[z] - at[a]));
				for (uint32_t i = at[a]; i < at[z]; i++)
					model[i] = true;
				check_against(&b, model, nr);
				bitset_destroy(&b);
			}
	free(model);
}

int main(void)
{
	test_edges();
	test_random();
	test_memory();
	test_hold();
	return 0;
}
