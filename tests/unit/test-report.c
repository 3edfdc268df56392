/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report: a pool's typed report adds up its devices per tier, and its heat status. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pool-internal.h"

/* An HDD of 20 extents and an SSD of 8, a volume of 24: 4 of them on the SSD. */
static struct pool *make_pool(struct pools *ps)
{
	struct pool *p = pool_new();
	uint32_t next_pe[2] = { 0, 0 };
	unsigned dev;

	CHECK(p != NULL);
	p->ps = ps;
	snprintf(p->sp.meta.name, sizeof(p->sp.meta.name), "tank");
	p->sp.meta.extent_size = 4 << 20;
	p->sp.meta.generation = 7;
	p->sp.meta.nr_devs = 2;
	p->sp.meta.devs[0] = (struct metadata_dev){ .tier = METADATA_TIER_HDD, .nr_pe = 20,
						    .reserve_pe = 2, .size_bytes = 81 << 20 };
	p->sp.meta.devs[1] = (struct metadata_dev){ .tier = METADATA_TIER_SSD, .nr_pe = 8,
						    .reserve_pe = 2, .size_bytes = 33 << 20 };
	snprintf(p->sp.paths[0], sizeof(p->sp.paths[0]), "/dev/md0");
	snprintf(p->sp.paths[1], sizeof(p->sp.paths[1]), "/dev/nvme0n1");
	CHECK_OK(extmap_init(&p->sp.map, 24));
	CHECK_OK(extmap_add_dev(&p->sp.map, 20, &dev));
	CHECK_OK(extmap_add_dev(&p->sp.map, 8, &dev));
	for (uint32_t le = 0; le < 24; le++) {
		unsigned on = le % 6 == 0; /* every sixth extent on the SSD */

		CHECK_OK(extmap_map(&p->sp.map, le, on, next_pe[on]++));
	}
	return p;
}

static void test_tiers(void)
{
	struct pools ps = { .heat = { .half_life_s = 3600 } };
	struct pool *p = make_pool(&ps);
	struct pool_report r;

	pool_get_report(p, &r);
	CHECK_STR(r.name, "tank");
	CHECK_UINT(r.extents, 24);
	CHECK_UINT(r.generation, 7);
	CHECK_UINT(r.nr_devs, 2);
	CHECK_STR(r.devs[1].path, "/dev/nvme0n1");
	CHECK_UINT(r.devs[0].used_extents, 20);
	CHECK_UINT(r.devs[1].used_extents, 4);
	CHECK(r.tiers[METADATA_TIER_HDD].present);
	CHECK_UINT(r.tiers[METADATA_TIER_HDD].total_extents, 20);
	CHECK_UINT(r.tiers[METADATA_TIER_HDD].used_extents, 20);
	CHECK_UINT(r.tiers[METADATA_TIER_HDD].size_bytes, 20u * (4 << 20));
	CHECK(r.tiers[METADATA_TIER_SSD].present);
	CHECK_UINT(r.tiers[METADATA_TIER_SSD].total_extents, 8);
	CHECK_UINT(r.tiers[METADATA_TIER_SSD].used_extents, 4);
	CHECK_UINT(r.tiers[METADATA_TIER_SSD].size_bytes, 8u * (4 << 20));
	CHECK(r.job_what == NULL);
	CHECK(!r.heat.enabled);
	CHECK_UINT(r.heat.areas, 0);
	CHECK_UINT(r.heat.half_life_s, 3600);
	pool_free(p);
}

/* Without an SSD the SSD tier is absent, not an empty one. */
static void test_hdd_only(void)
{
	struct pools ps = { .heat = { .half_life_s = 60 } };
	struct pool *p = make_pool(&ps);
	struct pool_report r;

	p->sp.meta.nr_devs = 1;
	pool_get_report(p, &r);
	CHECK(r.tiers[METADATA_TIER_HDD].present);
	CHECK(!r.tiers[METADATA_TIER_SSD].present);
	CHECK_UINT(r.tiers[METADATA_TIER_SSD].total_extents, 0);
	pool_free(p);
}

int main(void)
{
	test_tiers();
	test_hdd_only();
	return 0;
}
