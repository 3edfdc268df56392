/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zone: the layout under a budget, the choice of fine zones, a zone's sample into the heat. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "zone.h"

#define MIB (UINT64_C(1) << 20)
#define AREA 328 /* bytes of one area with two possible CPUs */

/* The rules zone_layout_plan() must meet for a zone size (zone.h). */
static int layout_fits(uint32_t nr, uint32_t ze, uint64_t area, uint64_t budget)
{
	uint64_t coarse = ((uint64_t)nr + ze - 1) / ze * area;

	return coarse * ZONE_COARSE_SHARE <= budget && coarse + (uint64_t)ze * area <= budget;
}

/* Fine zones of size ze that fit beside the coarse region, capped as zone.h says. */
static uint32_t fine_fits(uint32_t nr, uint32_t ze, uint64_t area, uint64_t budget)
{
	uint64_t nz = ((uint64_t)nr + ze - 1) / ze, fine = (budget - nz * area) / (ze * area);

	if (fine > ZONE_MAX_FINE)
		fine = ZONE_MAX_FINE;
	return (uint32_t)(fine < nz ? fine : nz);
}

static void check_layout(uint32_t nr, uint64_t area, uint64_t budget)
{
	struct zone_layout l;
	uint32_t first, n, total = 0;
	int r = zone_layout_plan(&l, nr, area, budget);

	CHECK_UINT(l.nr_extents, nr);
	CHECK_UINT(l.area_bytes, area);
	CHECK_UINT(l.budget_bytes, budget);
	if (r == -ENOSPC) {
		for (uint32_t ze = 2; ze <= ZONE_MAX_EXTENTS; ze *= 2)
			CHECK(!layout_fits(nr, ze, area, budget));
		return;
	}
	CHECK_OK(r);
	if ((uint64_t)nr * area <= budget) {
		CHECK_UINT(l.zone_extents, 1);
		CHECK_UINT(l.nr_zones, nr);
		CHECK_UINT(l.max_fine, 0);
		return;
	}
	/* A power of two that meets both rules; no smaller one covers as much. */
	CHECK(l.zone_extents >= 2 && l.zone_extents <= ZONE_MAX_EXTENTS);
	CHECK_UINT(l.zone_extents & (l.zone_extents - 1), 0);
	CHECK(layout_fits(nr, l.zone_extents, area, budget));
	for (uint32_t ze = 2; ze < l.zone_extents; ze *= 2)
		CHECK(!layout_fits(nr, ze, area, budget) ||
		      (uint64_t)fine_fits(nr, ze, area, budget) * ze <
			      (uint64_t)l.max_fine * l.zone_extents);
	CHECK_UINT(l.nr_zones, ((uint64_t)nr + l.zone_extents - 1) / l.zone_extents);
	/* As many fine zones as the rest of the budget holds, at least one, at most the cap. */
	CHECK(l.max_fine >= 1 && l.max_fine <= l.nr_zones && l.max_fine <= ZONE_MAX_FINE);
	CHECK_UINT(l.max_fine, fine_fits(nr, l.zone_extents, area, budget));
	CHECK(zone_coarse_bytes(&l) + zone_fine_bytes(&l, l.max_fine) <= budget);
	/* The zones cover every extent once, in order. */
	for (uint32_t z = 0; z < l.nr_zones; z++) {
		n = zone_extents_of(&l, z, &first);
		CHECK_UINT(first, total);
		CHECK(n >= 1 && n <= l.zone_extents);
		if (z + 1 < l.nr_zones)
			CHECK_UINT(n, l.zone_extents);
		total += n;
	}
	CHECK_UINT(total, nr);
}

static void test_layout(void)
{
	struct zone_layout l;
	uint32_t first = 0;

	/* Full resolution while an area per extent fits, to the byte. */
	CHECK_OK(zone_layout_plan(&l, 1000, AREA, 1000 * AREA));
	CHECK_UINT(l.zone_extents, 1);
	CHECK_UINT(l.nr_zones, 1000);
	CHECK_UINT(l.max_fine, 0);
	CHECK_UINT(zone_coarse_bytes(&l), 1000 * AREA);
	CHECK_UINT(zone_fine_bytes(&l, 5), 0);
	CHECK_UINT(zone_extents_of(&l, 999, &first), 1);
	CHECK_UINT(first, 999);
	CHECK_OK(zone_layout_plan(&l, 0, AREA, 0));
	CHECK_UINT(l.nr_zones, 0);
	CHECK_UINT(l.max_fine, 0);

	/*
	 * One byte short: zones of 16 fit (8 would make a coarse region over 1/8
	 * of the budget) but the cap of 32 fine zones binds; zones of 32 put 30
	 * of them, 960 extents, at extent resolution.
	 */
	CHECK_OK(zone_layout_plan(&l, 1000, AREA, 1000 * AREA - 1));
	CHECK_UINT(l.zone_extents, 32);
	CHECK_UINT(l.nr_zones, 32);
	CHECK_UINT(zone_coarse_bytes(&l), 32 * AREA);
	CHECK_UINT(zone_fine_bytes(&l, 2), 2 * 32 * AREA);
	CHECK_UINT(l.max_fine, 30);
	/* The last zone is shorter, and there is nothing past it. */
	CHECK_UINT(zone_extents_of(&l, 0, &first), 32);
	CHECK_UINT(first, 0);
	CHECK_UINT(zone_extents_of(&l, 30, &first), 32);
	CHECK_UINT(first, 960);
	CHECK_UINT(zone_extents_of(&l, 31, &first), 8);
	CHECK_UINT(first, 992);
	CHECK_UINT(zone_extents_of(&l, 32, &first), 0);
	CHECK_UINT(first, 1000);
	/* 16 TiB and 200 TiB of 4 MiB extents in 64 MiB (docs/heat.md): 24 zones of 32 GiB. */
	CHECK_OK(zone_layout_plan(&l, 16u << 18, AREA, 64 * MIB));
	CHECK_UINT(l.zone_extents, 8192);
	CHECK_UINT(l.nr_zones, 512);
	CHECK_UINT(l.max_fine, 24);
	CHECK_UINT(zone_coarse_bytes(&l), 512 * AREA);
	CHECK_UINT(zone_fine_bytes(&l, 24), UINT64_C(24) * 8192 * AREA);
	CHECK_OK(zone_layout_plan(&l, 200u << 18, AREA, 64 * MIB));
	CHECK_UINT(l.zone_extents, 8192);
	CHECK_UINT(l.nr_zones, 6400);
	CHECK_UINT(l.max_fine, 24);

	/* No zone size fits: the largest one tried is left for the message. */
	CHECK_INT(zone_layout_plan(&l, UINT32_MAX, AREA, 64 * MIB), -ENOSPC);
	CHECK_UINT(l.zone_extents, ZONE_MAX_EXTENTS);
	CHECK_UINT(l.nr_zones, 65536);
	CHECK_UINT(l.max_fine, 0);
	/* The coarse region would fit 1/8, but no fine zone would fit beside it. */
	CHECK(layout_fits(100, 32, 1, 36));
	CHECK_INT(zone_layout_plan(&l, 100, 1, 35), -ENOSPC);
	CHECK_OK(zone_layout_plan(&l, 100, 1, 36));
	CHECK_UINT(l.zone_extents, 32);
	CHECK_UINT(l.max_fine, 1);
	CHECK_INT(zone_layout_plan(&l, 1, AREA, AREA - 1), -ENOSPC);
	CHECK_INT(zone_layout_plan(&l, 100, 0, 64 * MIB), -EINVAL);

	/* The rules over a spread of sizes, areas and budgets. */
	for (uint32_t nr = 1; nr < 70000; nr = nr * 3 + 1)
		for (uint64_t area = 1; area <= 4096; area *= 8)
			for (uint64_t b = 1; b < (uint64_t)nr * area * 2; b = b * 2 + 7)
				check_layout(nr, area, b);
	check_layout(200u << 18, 3424, 64 * MIB); /* 32 possible CPUs: too big */
	check_layout(200u << 18, 3424, 1024 * MIB);
}

/* A layout of nz zones of 4 extents, max_fine of them fine at most. */
static struct zone_layout layout(uint32_t nz, uint32_t max_fine)
{
	return (struct zone_layout){
		.nr_extents = nz * 4,
		.zone_extents = 4,
		.nr_zones = nz,
		.max_fine = max_fine,
		.area_bytes = 1,
		.budget_bytes = nz + max_fine * 4,
	};
}

/* kind[] as text, one digit a zone: 0 coarse, 1 hot, 2 survey. */
static const char *kinds(const uint8_t *kind, uint32_t nz)
{
	static char buf[64];

	for (uint32_t z = 0; z < nz && z + 1 < sizeof(buf); z++)
		buf[z] = (char)('0' + kind[z]);
	buf[nz < sizeof(buf) ? nz : sizeof(buf) - 1] = '\0';
	return buf;
}

/* zone_choose() on the test's l, c, heat and kind: how many changed, and what each zone is. */
#define CHECK_CHOICE(changes, want)                                        \
	do {                                                               \
		CHECK_INT(zone_choose(&l, &c, heat, kind), changes);       \
		CHECK_STR(kinds(kind, l.nr_zones), want);                  \
	} while (0)

static void test_choose_hottest(void)
{
	struct zone_layout l = layout(10, 3);
	struct zone_choice c;
	double heat[10] = { 1, 9, 3, 0, 7, 2, 8, 0, 0, 0 };
	uint8_t kind[10] = { 0 };

	zone_choice_default(&c, &l);
	CHECK_NEAR(c.hysteresis, 1.25, 0);
	CHECK_UINT(c.survey, 0); /* max_fine / 4 */
	CHECK_UINT(c.max_new, 0);
	CHECK_UINT(c.survey_next, 0);
	CHECK_INT(c.advance_survey, 0);
	CHECK_CHOICE(3, "0100101000");
	/* The same heat again changes nothing. */
	CHECK_CHOICE(0, "0100101000");
	/* Equal heat: the lower zone. */
	memcpy(heat, (double[10]){ 5, 5, 5, 5, 0, 0, 0, 0, 0, 0 }, sizeof(heat));
	memset(kind, ZONE_COARSE, sizeof(kind));
	CHECK_CHOICE(3, "1110000000");
}

static void test_choose_hysteresis(void)
{
	struct zone_layout l = layout(6, 2);
	struct zone_choice c;
	double heat[6] = { 10, 8, 0, 0, 0, 9.9 };
	uint8_t kind[6] = { ZONE_HOT, ZONE_HOT, 0, 0, 0, 0 };

	zone_choice_default(&c, &l);
	/* 9.9 is hotter than 8, but not by 1.25 times: zone 1 stays. */
	CHECK_CHOICE(0, "110000");
	heat[5] = 10.01;
	CHECK_CHOICE(2, "100001");
	/* Two newcomers, each measured against the fine zone it would replace. */
	memcpy(heat, (double[6]){ 10, 0, 13, 11, 0, 4 }, sizeof(heat));
	CHECK_CHOICE(2, "101000");
	heat[3] = 100;
	heat[4] = 50;
	CHECK_CHOICE(4, "000110");
	/* A fine zone gone cold leaves its place to any zone with heat. */
	memcpy(heat, (double[6]){ 0.5, 0, 0, 100, 0, 0 }, sizeof(heat));
	CHECK_CHOICE(2, "100100");
	/* Hysteresis 1: any hotter zone wins. */
	c.hysteresis = 1;
	heat[5] = 0.6;
	CHECK_CHOICE(2, "000101");
}

static void test_choose_cold(void)
{
	struct zone_layout l = layout(8, 4);
	struct zone_choice c;
	double heat[8] = { 0 };
	uint8_t kind[8] = { ZONE_HOT, ZONE_HOT, 0, 0, 0, 0, 0, 0 };

	zone_choice_default(&c, &l);
	c.survey = 0;
	/* No heat anywhere: nothing is hot, the fine zones that were go. */
	CHECK_CHOICE(2, "00000000");
	heat[6] = 1e-30;
	CHECK_CHOICE(1, "00000010");
}

static void test_choose_survey(void)
{
	struct zone_layout l = layout(10, 4);
	struct zone_choice c;
	double heat[10] = { 0, 0, 0, 5, 0, 0, 0, 4, 0, 0 };
	uint8_t kind[10] = { 0 };

	zone_choice_default(&c, &l);
	CHECK_UINT(c.survey, 1);
	c.survey = 2;
	CHECK_CHOICE(4, "2201000100");
	CHECK_UINT(c.survey_next, 2);
	/* The survey stays until it is moved on, whatever the heat does. */
	heat[1] = 3;
	CHECK_CHOICE(0, "2201000100");
	/* On to the next zones that are not hot. */
	c.advance_survey = 1;
	CHECK_CHOICE(4, "0021200100");
	CHECK_INT(c.advance_survey, 0);
	CHECK_UINT(c.survey_next, 5);
	c.advance_survey = 1;
	CHECK_CHOICE(4, "0001022100");
	c.advance_survey = 1;
	CHECK_CHOICE(4, "0001000122");
	CHECK_UINT(c.survey_next, 0);
	/* And round again. */
	c.advance_survey = 1;
	CHECK_CHOICE(4, "2201000100");
	/* A surveyed zone that turns hottest becomes hot; the survey takes the next one. */
	heat[1] = 50;
	CHECK_CHOICE(3, "2121000000");
	CHECK_UINT(c.survey_next, 3);
	/* Every zone that is not hot, each once, wrapping past the hot one. */
	l = layout(4, 4);
	c.survey = 3;
	memset(heat, 0, sizeof(heat));
	heat[1] = 1;
	c.advance_survey = 1;
	memset(kind, ZONE_COARSE, sizeof(kind));
	CHECK_CHOICE(4, "2122");
	CHECK_UINT(c.survey_next, 3);
	/* The survey takes at most max_fine zones, leaving none for the hot. */
	c.survey = 20;
	c.survey_next = 0;
	l = layout(10, 4);
	memset(kind, ZONE_COARSE, sizeof(kind));
	CHECK_CHOICE(4, "2222000000");
	CHECK_UINT(c.survey_next, 4);
}

static void test_choose_max_new(void)
{
	struct zone_layout l = layout(10, 4);
	struct zone_choice c;
	double heat[10] = { 0, 0, 0, 5, 0, 0, 0, 4, 0, 9 };
	uint8_t kind[10] = { 0 };

	zone_choice_default(&c, &l);
	c.survey = 2;
	c.max_new = 3;
	/* Hot first, then the survey, three new fine regions in all. */
	CHECK_CHOICE(3, "2001000001");
	CHECK_CHOICE(1, "2201000001");
	/* A replacement counts as a new region too; giving a zone up costs none. */
	heat[3] = 0;
	heat[5] = 40;
	heat[6] = 30;
	c.max_new = 1;
	CHECK_CHOICE(2, "2200010001");
	CHECK_CHOICE(2, "2200011000");
}

static void test_choose_full_resolution(void)
{
	struct zone_layout l = layout(5, 0);
	struct zone_choice c;
	double heat[5] = { 1, 2, 3, 4, 5 };
	uint8_t kind[5] = { ZONE_HOT, 0, ZONE_SURVEY, 0, 0 };

	zone_choice_default(&c, &l);
	CHECK_UINT(c.survey, 0);
	c.survey = 2;
	c.advance_survey = 1;
	CHECK_CHOICE(2, "00000");
	CHECK_CHOICE(0, "00000");
}

/* Newcomers that fill the free places are not given away to later, colder ones. */
static void test_choose_free_slots(void)
{
	struct zone_layout l = layout(10, 2);
	struct zone_choice c;
	double heat[10] = { 0, 100, 50, 40, 0, 10, 0, 0, 0, 0 };
	uint8_t kind[10] = { 0, 0, 0, 0, 0, ZONE_HOT, 0, 0, 0, 0 };

	zone_choice_default(&c, &l);
	/* 100 takes the free place, 50 zone 5's; 40 finds no fine zone left to replace. */
	CHECK_CHOICE(3, "0110000000");
	/* From nothing fine, more candidates than places: the hottest, no more. */
	l = layout(10, 3);
	memset(kind, ZONE_COARSE, sizeof(kind));
	for (uint32_t z = 0; z < 10; z++)
		heat[z] = 10 - z;
	CHECK_CHOICE(3, "1110000000");
}

/*
 * Many rounds of changing heat: never more fine zones than max_fine, the
 * hot ones each with heat and none left out that beats the coldest by the
 * hysteresis, the survey the next zones in turn.
 */
static void test_choose_random(void)
{
	enum { NZ = 60 };
	struct zone_layout l = layout(NZ, 12);
	struct zone_choice c;
	double heat[NZ];
	uint8_t kind[NZ] = { 0 }, before[NZ];
	uint32_t x = 99;

	zone_choice_default(&c, &l);
	for (int round = 0; round < 3000; round++) {
		uint32_t nr_hot = 0, nr_survey = 0, from = c.survey_next, n = 0;
		double coldest_hot = 1e300;
		int advance, changes, want_changes = 0;

		x = x * 1664525 + 1013904223;
		c.survey = (x >> 4) % 7;
		c.max_new = (x >> 8) % 3 == 0 ? (x >> 10) % 4 : 0;
		c.advance_survey = advance = (x >> 12) % 3 == 0;
		for (uint32_t z = 0; z < NZ; z++) {
			x = x * 1664525 + 1013904223;
			/* Half the zones cold; the others' heat drifting, now and then jumping. */
			if ((x >> 30) == 0)
				heat[z] = 0;
			else if ((x >> 28) % 4 == 1 || round == 0)
				heat[z] = (double)((x >> 8) % 1000);
		}
		memcpy(before, kind, sizeof(kind));
		changes = zone_choose(&l, &c, heat, kind);
		CHECK(changes >= 0);
		CHECK_INT(c.advance_survey, 0);
		for (uint32_t z = 0; z < NZ; z++) {
			want_changes += kind[z] != before[z];
			if (kind[z] == ZONE_HOT) {
				CHECK(heat[z] > 0);
				nr_hot++;
				if (heat[z] < coldest_hot)
					coldest_hot = heat[z];
			}
			nr_survey += kind[z] == ZONE_SURVEY;
		}
		CHECK_INT(changes, want_changes);
		CHECK(nr_survey <= c.survey);
		CHECK(nr_hot <= l.max_fine - c.survey);
		if (c.max_new)
			continue;
		for (uint32_t z = 0; z < NZ; z++)
			if (kind[z] != ZONE_HOT && heat[z] > 0)
				CHECK(nr_hot == l.max_fine - c.survey &&
				      heat[z] <= c.hysteresis * coldest_hot);
		/* A survey moved on is the next zones from where it stood that are not hot. */
		CHECK_UINT(nr_survey, c.survey);
		if (!advance)
			continue;
		for (uint32_t k = 0; k < NZ && n < c.survey; k++) {
			uint32_t z = (from + k) % NZ;

			if (kind[z] == ZONE_HOT)
				continue;
			CHECK_UINT(kind[z], ZONE_SURVEY);
			n++;
		}
	}
}

static struct statsparse_area rd(uint32_t n)
{
	return (struct statsparse_area){ .reads = n, .sectors_read = (uint64_t)n * 8 };
}

static void test_apply(void)
{
	struct zone_layout l;
	struct heat_params p;
	struct heat_table t, want;
	struct statsparse_area fine[32] = { 0 }, coarse = rd(10);
	uint8_t kind[32] = { 0 };
	double share[32];

	heat_params_default(&p);
	CHECK_OK(zone_layout_plan(&l, 1000, AREA, 1000 * AREA - 1));
	CHECK_UINT(l.zone_extents, 32);
	CHECK_OK(heat_table_init(&t, 1000));
	CHECK_OK(heat_table_init(&want, 1000));
	for (uint32_t i = 0; i < 32; i++)
		fine[i] = rd(i % 3);
	for (uint32_t i = 0; i < 1000; i++)
		heat_at_mut(&t, i)->heat = heat_at_mut(&want, i)->heat = (float)(i % 7);
	/* The sample's decay is the tables' (heat_sample_begin()). */
	t.scale = want.scale = 2;
	/* A fine zone applies as the whole table would, extent by extent. */
	kind[1] = ZONE_HOT;
	kind[2] = ZONE_SURVEY;
	CHECK_INT(zone_apply(&l, kind, 1, &t, &p, &coarse, fine, share), 1);
	CHECK_OK(heat_apply_range(&want, &p, fine, 32, 32));
	CHECK_INT(zone_apply(&l, kind, 2, &t, &p, NULL, fine, NULL), 1);
	CHECK_OK(heat_apply_range(&want, &p, fine, 64, 32));
	/* A coarse zone's area is shared among its extents. */
	CHECK_INT(zone_apply(&l, kind, 0, &t, &p, &coarse, NULL, share), 0);
	CHECK_OK(heat_apply_shared(&want, &p, &coarse, 0, 32, NULL));
	/* The last zone has 8 extents; nothing past the table is touched. */
	CHECK_INT(zone_apply(&l, kind, 31, &t, &p, &coarse, NULL, share), 0);
	CHECK_OK(heat_apply_shared(&want, &p, &coarse, 992, 8, NULL));
	for (uint32_t i = 0; i < 1000; i++) {
		CHECK(heat_at(&t, i)->heat == heat_at(&want, i)->heat);
		CHECK_UINT(heat_at(&t, i)->reads, heat_at(&want, i)->reads);
	}
	CHECK_INT(zone_apply(&l, kind, 32, &t, &p, &coarse, fine, share), -EINVAL);
	CHECK_INT(zone_apply(&l, kind, 1, &t, &p, &coarse, NULL, share), -EINVAL);
	CHECK_INT(zone_apply(&l, kind, 0, &t, &p, NULL, fine, share), -EINVAL);
	heat_table_destroy(&t);
	heat_table_destroy(&want);
}

/*
 * A sample of a zone's I/O through its coarse area: the reads it gives its
 * extents add up to the area's, the heat to the area's score, and an
 * extent hot from an earlier fine spell gets more than the cold ones.
 */
static void test_apply_coarse(void)
{
	struct zone_layout l = layout(2, 1);
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area coarse = rd(1001);
	uint8_t kind[2] = { 0 };
	uint64_t reads = 0;
	double share[4], sum = 0, heat = 0;

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 8));
	heat_at_mut(&t, 5)->heat = 30;
	heat_at_mut(&t, 6)->heat = 10;
	CHECK_INT(zone_apply(&l, kind, 1, &t, &p, &coarse, NULL, share), 0);
	for (uint32_t i = 0; i < 4; i++) {
		reads += heat_at(&t, 4 + i)->reads;
		sum += share[i];
		heat += heat_value(&t, 4 + i);
	}
	CHECK_UINT(reads, 1001);
	CHECK_NEAR(sum, 1, 1e-15);
	CHECK_NEAR(heat, 40 + heat_score(&p, &coarse), 1e-3);
	CHECK_NEAR(share[1], 30 / 80.0 + 1 / 8.0, 1e-15);
	CHECK(share[1] > share[2] && share[2] > share[0]);
	CHECK_NEAR(share[0], share[3], 0);
	CHECK(heat_at(&t, 5)->reads > heat_at(&t, 6)->reads && heat_at(&t, 6)->reads > heat_at(&t, 4)->reads);
	/* Zone 0 saw nothing of it. */
	CHECK_NEAR(heat_sum(&t, 0, 4), 0, 0);
	heat_table_destroy(&t);
}

/* Zones of one extent (full resolution) are each extent's own area. */
static void test_apply_one_extent(void)
{
	struct zone_layout l;
	struct heat_params p;
	struct heat_table t, want;
	struct statsparse_area a[20];
	uint8_t kind[20] = { 0 };

	heat_params_default(&p);
	CHECK_OK(zone_layout_plan(&l, 20, AREA, 20 * AREA));
	CHECK_UINT(l.zone_extents, 1);
	CHECK_OK(heat_table_init(&t, 20));
	CHECK_OK(heat_table_init(&want, 20));
	for (int s = 0; s < 3; s++) {
		for (uint32_t i = 0; i < 20; i++)
			a[i] = rd((i * 7 + (uint32_t)s) % 5);
		t.scale = want.scale = (s + 1) / 0.9;
		for (uint32_t z = 0; z < 20; z++)
			CHECK_INT(zone_apply(&l, kind, z, &t, &p, &a[z], NULL, NULL), 0);
		CHECK_OK(heat_apply_range(&want, &p, a, 0, 20));
	}
	for (uint32_t i = 0; i < 20; i++) {
		CHECK(heat_at(&t, i)->heat == heat_at(&want, i)->heat);
		CHECK_UINT(heat_at(&t, i)->reads, heat_at(&want, i)->reads);
	}
	heat_table_destroy(&t);
	heat_table_destroy(&want);
}

int main(void)
{
	test_layout();
	test_choose_hottest();
	test_choose_hysteresis();
	test_choose_cold();
	test_choose_survey();
	test_choose_max_new();
	test_choose_full_resolution();
	test_choose_free_slots();
	test_choose_random();
	test_apply();
	test_apply_coarse();
	test_apply_one_extent();
	return 0;
}
