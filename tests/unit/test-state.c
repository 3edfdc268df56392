/* SPDX-License-Identifier: GPL-2.0-or-later */
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
		t.e[i].moved_at = 1700000000u + i;
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
		CHECK_UINT(back.e[i].moved_at, t.e[i].moved_at);
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

static void test_tiering(void)
{
	struct state *st = open_state();
	struct state_pool *p = load_one(st);
	struct state_tiering t, back;
	struct state_pin pins[2] = { { 3, 2, 1 }, { 10, 1, 0 } }, *pins_back;
	struct state_run run = { 0 }, *runs;
	struct state_moves m = { 1, 2, 4096, 8192, 1 }, total;
	struct state_interval hist[3] = { 0 };
	struct state_intent in[2] = { { 5, 0, 1, 7, 0 }, { 6, 0, 1, 8, 1 } }, *in_back;
	struct state_tier_io io = { 10, 0, 40960, 0 };
	size_t nr;
	uint64_t cleared;

	/* Defaults until something is stored, then a round trip. */
	CHECK_OK(state_tiering_load(st, p->id, &back));
	CHECK_STR(back.policy, "auto");
	CHECK_STR(back.spec, "manual");
	CHECK_STR(back.io_awareness, "throttled");
	state_tiering_default(&t);
	snprintf(t.spec, sizeof(t.spec), "every 1h");
	snprintf(t.window, sizeof(t.window), "22:00-06:00");
	snprintf(t.io_awareness, sizeof(t.io_awareness), "idle");
	t.max_bytes = 1 << 30;
	t.rate = 100 << 20;
	t.paused = 1;
	CHECK_OK(state_tiering_save(st, p->id, &t));
	CHECK_OK(state_tiering_load(st, p->id, &back));
	CHECK(memcmp(&t, &back, sizeof(t)) == 0);
	snprintf(t.io_awareness, sizeof(t.io_awareness), "fast");
	CHECK_INT(state_tiering_save(st, p->id, &t), -EEXIST); /* CHECK constraint */

	CHECK_OK(state_pins_save(st, p->id, pins, 2));
	CHECK_OK(state_pins_load(st, p->id, &pins_back, &nr));
	CHECK_UINT(nr, 2);
	CHECK(memcmp(pins, pins_back, sizeof(pins)) == 0);
	free(pins_back);
	CHECK_OK(state_pins_save(st, p->id, pins + 1, 1));
	CHECK_OK(state_pins_load(st, p->id, &pins_back, &nr));
	CHECK_UINT(nr, 1);
	CHECK_UINT(pins_back[0].first, 10);
	free(pins_back);

	snprintf(run.trigger, sizeof(run.trigger), "on-demand");
	snprintf(run.policy, sizeof(run.policy), "auto");
	snprintf(run.result, sizeof(run.result), "running");
	run.started = 1000;
	run.planned_extents = 9;
	CHECK_OK(state_run_insert(st, p->id, &run));
	CHECK(run.id > 0);
	run.moved = m;
	CHECK_OK(state_run_update(st, &run));
	CHECK_OK(state_runs_interrupted(st, 2000));
	CHECK_OK(state_runs_list(st, p->id, 5, &runs, &nr));
	CHECK_UINT(nr, 1);
	CHECK_STR(runs[0].result, "interrupted");
	CHECK_INT(runs[0].finished, 2000);
	CHECK_UINT(runs[0].moved.demoted_bytes, 8192);
	CHECK_UINT(runs[0].planned_extents, 9);
	free(runs);
	/* Migration 004: `tierctl job abort` ends a run with a word 003 did not allow. */
	snprintf(run.result, sizeof(run.result), "aborted");
	CHECK_OK(state_run_update(st, &run));
	CHECK_OK(state_runs_list(st, p->id, 5, &runs, &nr));
	CHECK_UINT(nr, 1);
	CHECK_STR(runs[0].result, "aborted");
	CHECK(runs[0].id == run.id);
	free(runs);
	snprintf(run.result, sizeof(run.result), "stopped");
	CHECK_INT(state_run_update(st, &run), -EEXIST); /* CHECK constraint */
	snprintf(run.result, sizeof(run.result), "running");
	snprintf(run.trigger, sizeof(run.trigger), "whim");
	CHECK_INT(state_run_insert(st, p->id, &run), -EEXIST);

	/* Moves and I/O land in the interval of their minute. */
	CHECK_OK(state_moves_add(st, p->id, 100, &m));
	CHECK_OK(state_moves_add(st, p->id, 100, &m));
	CHECK_OK(state_moves_add(st, p->id, 102, &m));
	CHECK_OK(state_moves_total(st, p->id, &total));
	CHECK_UINT(total.promoted_extents, 3);
	CHECK_UINT(total.failed, 3);
	CHECK_OK(state_tier_io_add(st, p->id, 101, "ssd", &io));
	CHECK_OK(state_history(st, p->id, 6000, 60, 3, hist));
	CHECK_INT(hist[2].start, 6120);
	CHECK_UINT(hist[0].moved.promoted_bytes, 8192);
	CHECK_UINT(hist[1].io[METADATA_TIER_SSD].reads, 10);
	CHECK_UINT(hist[2].moved.demoted_extents, 2);

	/* An intent goes with the commit of its extent, in the same transaction. */
	CHECK_OK(state_intents_add(st, p->id, in, 2, 3000));
	CHECK_OK(state_intents_load(st, p->id, &in_back, &nr));
	CHECK_UINT(nr, 2);
	CHECK(memcmp(in, in_back, sizeof(in)) == 0);
	free(in_back);
	CHECK_OK(state_pool_save_extents(st, p, &in[0].le, 1));
	CHECK_OK(state_intents_load(st, p->id, &in_back, &nr));
	CHECK_UINT(nr, 1);
	CHECK_UINT(in_back[0].le, 6);
	free(in_back);
	CHECK_OK(state_intents_clear(st, p->id, &cleared));
	CHECK_UINT(cleared, 1);
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
	test_tiering();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	rc = system(cmd);
	return rc == 0 ? 0 : 1;
}
