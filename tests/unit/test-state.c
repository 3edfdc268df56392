/* state: SQLite round trips of pools, extent moves, heat and I/O history. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "state.h"

static char dir[] = "/tmp/test-state.XXXXXX";

static struct state *open_state(void)
{
	struct state *st = NULL;
	char err[256];

	CHECK_OK(state_open(&st, dir, err, sizeof(err)));
	return st;
}

static void make_pool(struct state_pool *p, uint32_t nr_logical)
{
	unsigned dev;

	memset(p, 0, sizeof(*p));
	snprintf(p->meta.name, sizeof(p->meta.name), "tank");
	p->meta.uuid[0] = 0xab;
	p->meta.uuid[6] = 0x40;
	p->meta.extent_size = 4 << 20;
	p->meta.generation = 1;
	p->meta.created = 1700000000;
	p->meta.nr_devs = 2;
	for (unsigned i = 0; i < 2; i++) {
		p->meta.devs[i].uuid[0] = (uint8_t)(i + 1);
		p->meta.devs[i].tier = i ? METADATA_TIER_SSD : METADATA_TIER_HDD;
		p->meta.devs[i].nr_pe = nr_logical;
		p->meta.devs[i].reserve_pe = 2;
		p->meta.devs[i].logical_block_size = 512;
		p->meta.devs[i].data_start = 1 << 20;
		p->meta.devs[i].size_bytes = (uint64_t)nr_logical << 22;
		snprintf(p->paths[i], sizeof(p->paths[i]), "/dev/vd%c", 'a' + i);
	}
	p->want_active = 1;
	CHECK_OK(extmap_init(&p->map, nr_logical));
	CHECK_OK(extmap_add_dev(&p->map, nr_logical, &dev));
	CHECK_OK(extmap_add_dev(&p->map, nr_logical, &dev));
	CHECK_INT(extmap_fill_linear(&p->map, 0), (int)nr_logical);
}

static void check_same_pool(const struct state_pool *a, const struct state_pool *b)
{
	CHECK_UINT(a->id, b->id);
	CHECK_STR(a->meta.name, b->meta.name);
	CHECK(memcmp(a->meta.uuid, b->meta.uuid, 16) == 0);
	CHECK_UINT(a->meta.generation, b->meta.generation);
	CHECK_UINT(a->meta.nr_devs, b->meta.nr_devs);
	for (unsigned i = 0; i < a->meta.nr_devs; i++) {
		CHECK(memcmp(&a->meta.devs[i], &b->meta.devs[i], sizeof(a->meta.devs[i])) == 0);
		CHECK_STR(a->paths[i], b->paths[i]);
	}
	CHECK_UINT(a->map.nr_logical, b->map.nr_logical);
	for (uint32_t le = 0; le < a->map.nr_logical; le++) {
		CHECK_UINT(extmap_get(&a->map, le).dev, extmap_get(&b->map, le).dev);
		CHECK_UINT(extmap_get(&a->map, le).pe, extmap_get(&b->map, le).pe);
	}
	CHECK_OK(extmap_check(&b->map, NULL));
}

static struct state_pool *load_one(struct state *st)
{
	struct state_pool **pools = NULL, *p;
	size_t nr = 0;

	CHECK_OK(state_pool_load_all(st, &pools, &nr));
	CHECK_UINT(nr, 1);
	p = pools[0];
	free(pools);
	return p;
}

static void test_pool_round_trip(void)
{
	struct state *st = open_state();
	struct state_pool p, *back;
	uint32_t moved[2] = { 3, 7 }, pe;

	make_pool(&p, 100);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK(p.id > 0);
	CHECK_INT(state_pool_insert(st, &p), -EEXIST); /* same uuid and name */
	state_close(st);

	/* A new connection, as after a restart. */
	st = open_state();
	back = load_one(st);
	check_same_pool(&p, back);
	state_pool_destroy(back);
	free(back);

	/* A migration commit: two extents to the SSD, only their rows rewritten. */
	for (int i = 0; i < 2; i++) {
		CHECK_OK(extmap_alloc(&p.map, 1, &pe));
		CHECK_OK(extmap_release(&p.map, 1, pe));
		CHECK_OK(extmap_remap(&p.map, moved[i], 1, pe));
	}
	p.meta.generation = 2;
	CHECK_OK(state_pool_save_extents(st, &p, moved, 2));
	back = load_one(st);
	check_same_pool(&p, back);
	CHECK_UINT(extmap_get(&back->map, 7).dev, 1);
	state_pool_destroy(back);
	free(back);

	CHECK_OK(state_pool_set_want_active(st, p.id, 0));
	CHECK_OK(state_pool_set_path(st, p.id, 1, "/dev/nvme0n1"));
	back = load_one(st);
	CHECK_INT(back->want_active, 0);
	CHECK_STR(back->paths[1], "/dev/nvme0n1");
	state_pool_destroy(back);
	free(back);
	state_pool_destroy(&p);
	state_close(st);
}

static void test_heat_round_trip(void)
{
	const uint32_t nr = 2 * STATE_HEAT_CHUNK + 100;
	struct state *st = open_state();
	struct state_pool *p = load_one(st);
	struct heat_table t, back;

	CHECK_OK(heat_table_init(&t, nr));
	for (uint32_t i = 0; i < nr; i++) {
		t.e[i].heat = (float)i / 3.0f;
		t.e[i].reads = (uint64_t)i << 33;
		t.e[i].writes = i * 7u;
	}
	t.last_sample_ns = 1234567890123456789ull;
	/* In steps, as the daemon flushes; then the first step again, newer. */
	CHECK_OK(state_heat_save(st, p->id, &t, 0, STATE_HEAT_CHUNK));
	CHECK_OK(state_heat_save(st, p->id, &t, STATE_HEAT_CHUNK, nr));
	CHECK_INT(state_heat_save(st, p->id, &t, 5, nr), -EINVAL);
	t.e[1].heat = 42.5f;
	CHECK_OK(state_heat_save(st, p->id, &t, 0, STATE_HEAT_CHUNK));

	CHECK_OK(heat_table_init(&back, nr));
	CHECK_OK(state_heat_load(st, p->id, &back));
	CHECK_UINT(back.last_sample_ns, t.last_sample_ns);
	for (uint32_t i = 0; i < nr; i++) {
		CHECK(back.e[i].heat == t.e[i].heat);
		CHECK_UINT(back.e[i].reads, t.e[i].reads);
		CHECK_UINT(back.e[i].writes, t.e[i].writes);
	}
	heat_table_destroy(&back);
	/* A smaller table (the volume shrank) takes what fits. */
	CHECK_OK(heat_table_init(&back, 10));
	CHECK_OK(state_heat_load(st, p->id, &back));
	CHECK(back.e[1].heat == 42.5f);
	heat_table_destroy(&back);
	heat_table_destroy(&t);
	state_pool_destroy(p);
	free(p);
	state_close(st);
}

static void test_tier_io(void)
{
	struct state *st = open_state();
	struct state_pool *p = load_one(st);
	struct state_tier_io io = { 10, 5, 40960, 20480 }, total;

	/* Two minutes in the first hour, one in the second; the same minute twice adds up. */
	CHECK_OK(state_tier_io_add(st, p->id, 60, "ssd", &io));
	CHECK_OK(state_tier_io_add(st, p->id, 60, "ssd", &io));
	CHECK_OK(state_tier_io_add(st, p->id, 61, "hdd", &io));
	CHECK_OK(state_tier_io_add(st, p->id, 125, "ssd", &io));
	CHECK_INT(state_tier_io_add(st, p->id, 62, "tape", &io), -EEXIST); /* CHECK constraint */
	CHECK_OK(state_tier_io_compact(st, 120));
	CHECK_OK(state_tier_io_compact(st, 120)); /* nothing left to fold */
	/* Folding keeps every count. */
	CHECK_OK(state_tier_io_total(st, p->id, "ssd", &total));
	CHECK_UINT(total.reads, 30);
	CHECK_UINT(total.writes, 15);
	CHECK_UINT(total.read_bytes, 3 * 40960);
	CHECK_OK(state_tier_io_total(st, p->id, "hdd", &total));
	CHECK_UINT(total.write_bytes, 20480);
	state_pool_destroy(p);
	free(p);
	state_close(st);
}

int main(void)
{
	char cmd[64];
	int rc;

	CHECK(mkdtemp(dir) != NULL);
	test_pool_round_trip();
	test_heat_round_trip();
	test_tier_io();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	rc = system(cmd);
	return rc == 0 ? 0 : 1;
}
