/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "pagedir.h"

#define L PAGEDIR_LEAF

static char pages[16];

static void check_against(const struct pagedir *d, void *const *model, uint32_t nr)
{
	CHECK_UINT(d->nr, nr);
	for (uint32_t i = 0; i < nr; i++)
		CHECK(pagedir_get(d, i) == model[i]);
	CHECK(pagedir_get(d, nr) == NULL);
	for (unsigned k = 0; k < 300; k++) {
		uint32_t from = (uint32_t)rand() % (nr + 1), end = from + (uint32_t)rand() % (nr - from + 1);
		uint32_t want = end;

		for (uint32_t i = from; i < end; i++)
			if (model[i]) {
				want = i;
				break;
			}
		CHECK_UINT(pagedir_next(d, from, end), want);
	}
}

/* Random sets and clears, growing and shrinking, against a plain array. */
static void test_random(void)
{
	uint32_t nr = 3 * L + 17, cap = 8 * L;
	void **model = calloc(cap, sizeof(*model));
	struct pagedir d;

	CHECK(model != NULL);
	srand(11);
	CHECK_OK(pagedir_init(&d, nr));
	for (unsigned step = 0; step < 4000; step++) {
		uint32_t i = nr ? (uint32_t)rand() % nr : 0;
		int op = rand() % 20;

		if (op < 10 && nr) {
			void *pg = rand() % 3 ? &pages[rand() % 16] : NULL;

			CHECK_OK(pagedir_set(&d, i, pg));
			model[i] = pg;
		} else if (op < 12 && nr) {
			CHECK_OK(pagedir_hold(&d, i));
		} else if (op == 12) {
			uint32_t to = (uint32_t)rand() % cap;

			/* A shrink takes the pages past the end first: the caller's part. */
			for (uint32_t j = to; j < nr; j++) {
				CHECK_OK(pagedir_set(&d, j, NULL));
				model[j] = NULL;
			}
			CHECK_OK(pagedir_resize(&d, to));
			nr = to;
		}
		if (step % 400 == 0)
			check_against(&d, model, nr);
	}
	check_against(&d, model, nr);
	CHECK_INT(pagedir_set(&d, nr, &pages[0]), -EINVAL);
	pagedir_destroy(&d);
	pagedir_destroy(&d);
	pagedir_destroy(NULL);
	free(model);
}

/* Leaves only where pages are: 200 TiB of 4 MiB extents in 64-extent pages. */
static void test_memory(void)
{
	const uint32_t nr = 1600 * L;
	struct pagedir d;

	CHECK_OK(pagedir_init(&d, nr));
	CHECK_UINT(pagedir_bytes(&d), 1600 * sizeof(void *));
	CHECK_UINT(pagedir_next(&d, 0, nr), nr);
	CHECK_OK(pagedir_set(&d, 5 * L + 3, &pages[1]));
	CHECK_OK(pagedir_set(&d, 5 * L + 4, &pages[2]));
	CHECK_UINT(d.nr_made, 1);
	CHECK_UINT(pagedir_bytes(&d), 1600 * sizeof(void *) + L * sizeof(void *));
	CHECK_UINT(pagedir_next(&d, 0, nr), 5 * L + 3);
	CHECK_UINT(pagedir_next(&d, 5 * L + 4, nr), 5 * L + 4);
	CHECK_UINT(pagedir_next(&d, 5 * L + 5, nr), nr);
	/* Taking a page back keeps its leaf: it can be set again without memory. */
	CHECK_OK(pagedir_set(&d, 5 * L + 3, NULL));
	CHECK_UINT(d.nr_made, 1);
	/* NULL into a leaf not made makes none. */
	CHECK_OK(pagedir_set(&d, 9 * L, NULL));
	CHECK_UINT(d.nr_made, 1);
	CHECK_OK(pagedir_set(&d, 5 * L + 4, NULL));
	CHECK_OK(pagedir_resize(&d, 2 * L));
	CHECK_UINT(d.nr_made, 0);
	CHECK_UINT(pagedir_bytes(&d), 2 * sizeof(void *));
	CHECK_OK(pagedir_resize(&d, 0));
	CHECK(d.leaf == NULL);
	pagedir_destroy(&d);
}

int main(void)
{
	test_random();
	test_memory();
	return 0;
}
