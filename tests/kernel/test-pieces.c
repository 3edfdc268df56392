/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-pieces: the tables of a volume whose extents are split into pieces,
 * as dmtable builds them, for tests/vm/cases/pieces-kernel.sh to load on
 * the real kernel and check with the data.
 *
 * The volume: 16 extents of 1 MiB on the HDD (pe i for le i), pieces of
 * 16 KiB (64 to an extent), containers at SSD pe 0 and 1.  Two rounds of
 * moves, each a batch table (mirrors) and then the table after it:
 *   round 1: 24 scattered pieces (and a run of 3 next to each other) go to
 *            slots, in the order the slots are handed out;
 *   round 2: every other piece out goes home, the rest to another slot.
 *
 * Usage: test-pieces HDD-MAJ:MIN SSD-MAJ:MIN STEP, STEP one of
 *   plain     the table before any piece moved
 *   moving1   round 1's batch        split1   the table after round 1
 *   moving2   round 2's batch        split2   the table after round 2
 *   pieces1   "le piece ssd-byte-offset" of each piece out after round 1
 *   pieces2   the same after round 2
 * Tables are printed as `dmsetup table` prints them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmtable.h"
#include "extmap.h"
#include "piecemap.h"

#define NR_EXTENTS 16u
#define EXTENT_SECTORS 2048u /* 1 MiB */
#define PIECES 64u           /* 16 KiB pieces */
#define REGION 1024u

static struct dmtable_dev devs[2];
static struct extmap map;
static struct piecemap pieces;

static void parse_dev(struct dmtable_dev *d, const char *text)
{
	if (sscanf(text, "%" SCNu32 ":%" SCNu32, &d->major, &d->minor) != 2) {
		fprintf(stderr, "test-pieces: '%s' is not MAJ:MIN\n", text);
		exit(2);
	}
}

static void print_table(const struct dmtable *t)
{
	char *text;

	CHECK_OK(dmtable_format(t, &text));
	fputs(text, stdout);
	free(text);
	dmtable_destroy((struct dmtable *)t);
}

/* Round 1's pieces: scattered over every extent, and pieces 10-12 of le 5 in a row. */
static size_t round1(struct dmtable_piece_move *mv)
{
	size_t nr = 0;

	for (uint32_t i = 0; i < 24; i++) {
		uint32_t le = i * 7 % NR_EXTENTS, idx = i * 37 % PIECES;

		if (le == 5 && idx >= 10 && idx <= 12)
			continue;
		mv[nr++] = (struct dmtable_piece_move){ .le = le, .idx = idx };
	}
	for (uint32_t idx = 10; idx <= 12; idx++)
		mv[nr++] = (struct dmtable_piece_move){ .le = 5, .idx = idx };
	return nr;
}

static int move_cmp(const void *a, const void *b)
{
	const struct dmtable_piece_move *x = a, *y = b;

	if (x->le != y->le)
		return x->le < y->le ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Destinations for round 1 (slots, as handed out) in le order, as a batch sorts them. */
static size_t plan_round1(struct dmtable_piece_move *mv)
{
	size_t nr = round1(mv);

	qsort(mv, nr, sizeof(*mv), move_cmp);
	for (size_t i = 0; i < nr; i++) {
		uint16_t slot;

		CHECK_OK(piecemap_alloc_slot(&pieces, 1, &mv[i].container, &slot));
		mv[i].slot = slot;
	}
	return nr;
}

/* Round 2: every other piece out goes home, the others to a new slot. */
static size_t plan_round2(struct dmtable_piece_move *mv)
{
	size_t nr = 0;

	for (uint32_t i = 0; i < pieces.nr_pieces; i++) {
		const struct piecemap_piece *p = &pieces.pieces[i];

		mv[nr] = (struct dmtable_piece_move){ .le = p->le, .idx = p->idx,
						      .container = PIECEMAP_NO_CONTAINER };
		if (i % 2) {
			uint16_t slot;

			CHECK_OK(piecemap_alloc_slot(&pieces, 1, &mv[nr].container, &slot));
			mv[nr].slot = slot;
		}
		nr++;
	}
	return nr;
}

/* The moves of a batch committed: the in-memory step of a commit. */
static void commit(const struct dmtable_piece_move *mv, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (mv[i].container == PIECEMAP_NO_CONTAINER)
			CHECK_OK(piecemap_return(&pieces, mv[i].le, mv[i].idx));
		else
			CHECK_OK(piecemap_place(&pieces, mv[i].le, mv[i].idx, mv[i].container,
						mv[i].slot));
	}
	CHECK_OK(piecemap_check(&pieces, NULL));
}

static void print_pieces(void)
{
	for (uint32_t i = 0; i < pieces.nr_pieces; i++) {
		const struct piecemap_piece *p = &pieces.pieces[i];
		const struct piecemap_container *c = &pieces.containers[p->container];
		uint64_t at = ((uint64_t)c->pe * EXTENT_SECTORS +
			       (uint64_t)p->slot * (EXTENT_SECTORS / PIECES)) * 512;

		printf("%" PRIu32 " %u %" PRIu64 "\n", p->le, (unsigned)p->idx, at);
	}
}

int main(int argc, char **argv)
{
	struct dmtable_piece_move mv[64];
	struct dmtable t;
	const char *step;
	size_t nr;

	if (argc != 4) {
		fprintf(stderr, "usage: test-pieces HDD-MAJ:MIN SSD-MAJ:MIN STEP\n");
		return 2;
	}
	parse_dev(&devs[0], argv[1]);
	parse_dev(&devs[1], argv[2]);
	step = argv[3];
	CHECK_OK(extmap_init(&map, NR_EXTENTS));
	CHECK_OK(extmap_add_dev(&map, 32, NULL));
	CHECK_OK(extmap_add_dev(&map, 8, NULL));
	CHECK_INT(extmap_fill_linear(&map, 0), NR_EXTENTS);
	CHECK_OK(piecemap_init(&pieces, PIECES));
	for (uint32_t pe = 0; pe < 2; pe++) {
		CHECK_OK(extmap_claim(&map, 1, pe));
		CHECK_OK(piecemap_add_container(&pieces, 1, pe, NULL));
	}

	if (!strcmp(step, "plain")) {
		CHECK_OK(dmtable_build_split(&t, &map, &pieces, devs, EXTENT_SECTORS));
		print_table(&t);
		return 0;
	}
	nr = plan_round1(mv);
	if (!strcmp(step, "moving1")) {
		CHECK_OK(dmtable_build_moving_split(&t, &map, &pieces, devs, EXTENT_SECTORS, NULL, 0,
						    mv, nr, REGION));
		print_table(&t);
		return 0;
	}
	commit(mv, nr);
	if (!strcmp(step, "split1") || !strcmp(step, "pieces1")) {
		if (step[0] == 'p') {
			print_pieces();
			return 0;
		}
		CHECK_OK(dmtable_build_split(&t, &map, &pieces, devs, EXTENT_SECTORS));
		print_table(&t);
		return 0;
	}
	nr = plan_round2(mv);
	if (!strcmp(step, "moving2")) {
		CHECK_OK(dmtable_build_moving_split(&t, &map, &pieces, devs, EXTENT_SECTORS, NULL, 0,
						    mv, nr, REGION));
		print_table(&t);
		return 0;
	}
	commit(mv, nr);
	if (!strcmp(step, "pieces2")) {
		print_pieces();
		return 0;
	}
	if (!strcmp(step, "split2")) {
		CHECK_OK(dmtable_build_split(&t, &map, &pieces, devs, EXTENT_SECTORS));
		print_table(&t);
		return 0;
	}
	fprintf(stderr, "test-pieces: unknown step '%s'\n", step);
	return 2;
}
