/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state: SQLite round trips of pools, extent moves, heat and I/O history. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "schema.h"
#include "state.h"

static char dir[] = "/tmp/test-state.XXXXXX";

static struct state *open_state_in(const char *d)
{
	struct state *st = NULL;
	char err[256];

	if (state_open(&st, d, err, sizeof(err)) < 0) {
		fprintf(stderr, "state_open: %s\n", err);
		CHECK(0);
	}
	return st;
}

static struct state *open_state(void)
{
	return open_state_in(dir);
}

/* A folder of its own under dir, for a test that needs a pool alone. */
static const char *sub_dir(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A second connection to the same file, for what tierd never does: raw SQL. */
static sqlite3 *raw_open(const char *d)
{
	char path[160];
	sqlite3 *db = NULL;

	snprintf(path, sizeof(path), "%s/tierd.db", d);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, msg ? msg : "?");
		CHECK(0);
	}
}

static int64_t raw_count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = NULL;
	int64_t n;

	CHECK_INT(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(stmt), SQLITE_ROW);
	n = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
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

/*
 * A staged save: nothing durable (nor visible to another connection) until
 * its commit, which sets the generation given; an abort leaves the old
 * rows; a second stage or another save waits for the first to end.
 */
static void test_pool_staged(void)
{
	struct state *st = open_state_in(sub_dir("staged"));
	struct state_pool p, *back;
	uint32_t moved[2] = { 5, 9 }, pe;
	sqlite3 *raw;

	make_pool(&p, 64);
	CHECK_OK(state_pool_insert(st, &p));
	raw = raw_open(sub_dir("staged"));
	for (int i = 0; i < 2; i++) {
		CHECK_OK(extmap_alloc(&p.map, 1, &pe));
		CHECK_OK(extmap_release(&p.map, 1, pe));
		CHECK_OK(extmap_remap(&p.map, moved[i], 1, pe));
	}
	CHECK_OK(state_intents_add(st, p.id,
				   &(struct state_intent){ .le = 5, .src_dev = 0, .dst_dev = 1 }, 1,
				   1000));

	/* Staged, then rolled back: the rows are those of generation 1. */
	CHECK_OK(state_pool_stage(st, &p, moved, 2));
	CHECK_INT(state_pool_stage(st, &p, moved, 2), -EBUSY);
	CHECK_INT(raw_count(raw, "SELECT generation FROM pool"), 1);
	state_staged_abort(st);
	state_staged_abort(st); /* nothing staged: a no-op */
	back = load_one(st);
	CHECK_UINT(back->meta.generation, 1);
	CHECK_UINT(extmap_get(&back->map, 5).dev, 0);
	state_pool_destroy(back);
	free(back);
	CHECK_INT(raw_count(raw, "SELECT count(*) FROM migration"), 1);

	/* Staged at the map's generation, committed as the next one. */
	CHECK_OK(state_pool_stage(st, &p, moved, 2));
	CHECK_INT(raw_count(raw, "SELECT count(*) FROM migration"), 1);
	CHECK_OK(state_staged_commit(st, 2));
	CHECK_INT(state_staged_commit(st, 3), -EINVAL);
	p.meta.generation = 2;
	back = load_one(st);
	check_same_pool(&p, back);
	state_pool_destroy(back);
	free(back);
	CHECK_INT(raw_count(raw, "SELECT count(*) FROM migration"), 0);

	/* The whole pool staged (les NULL), as after a failed save. */
	CHECK_OK(extmap_alloc(&p.map, 1, &pe));
	CHECK_OK(extmap_release(&p.map, 1, pe));
	CHECK_OK(extmap_remap(&p.map, 11, 1, pe));
	snprintf(p.paths[1], sizeof(p.paths[1]), "/dev/nvme1n1");
	CHECK_OK(state_pool_stage(st, &p, NULL, 0));
	CHECK_OK(state_staged_commit(st, 3));
	p.meta.generation = 3;
	back = load_one(st);
	check_same_pool(&p, back);
	state_pool_destroy(back);
	free(back);

	/* A stage left open when the state closes is rolled back. */
	CHECK_OK(extmap_alloc(&p.map, 1, &pe));
	CHECK_OK(extmap_release(&p.map, 1, pe));
	CHECK_OK(extmap_remap(&p.map, 12, 1, pe));
	CHECK_OK(state_pool_stage(st, &p, (uint32_t[]){ 12 }, 1));
	state_close(st);
	st = open_state_in(sub_dir("staged"));
	back = load_one(st);
	CHECK_UINT(back->meta.generation, 3);
	CHECK_UINT(extmap_get(&back->map, 12).dev, 0);
	state_pool_destroy(back);
	free(back);
	sqlite3_close(raw);
	state_pool_destroy(&p);
	state_close(st);
}

static void test_heat_round_trip(void)
{
	const uint32_t nr = 2 * STATE_HEAT_CHUNK + 100;
	struct state *st = open_state();
	struct state_pool *p = load_one(st);
	struct heat_table t, back;
	struct heat_params hp;

	heat_params_default(&hp);
	CHECK_OK(heat_table_init(&t, nr));
	for (uint32_t i = 0; i < nr; i++) {
		heat_at_mut(&t, i)->heat = (float)i / 3.0f;
		heat_at_mut(&t, i)->reads = (uint64_t)i << 33;
		heat_at_mut(&t, i)->writes = i * 7u;
		heat_at_mut(&t, i)->moved_at = 1700000000u + i;
	}
	t.last_sample_ns = 1234567890123456789ull;
	/* In steps, as the daemon flushes; then the first step again, newer. */
	CHECK_OK(state_heat_save(st, p->id, &t, 0, STATE_HEAT_CHUNK));
	CHECK_OK(state_heat_save(st, p->id, &t, STATE_HEAT_CHUNK, nr));
	CHECK_INT(state_heat_save(st, p->id, &t, 5, nr), -EINVAL);
	heat_at_mut(&t, 1)->heat = 42.5f;
	CHECK_OK(state_heat_save(st, p->id, &t, 0, STATE_HEAT_CHUNK));

	CHECK_OK(heat_table_init(&back, nr));
	CHECK_OK(state_heat_load(st, p->id, &back, &hp));
	CHECK_UINT(back.last_sample_ns, t.last_sample_ns);
	for (uint32_t i = 0; i < nr; i++) {
		CHECK(heat_at(&back, i)->heat == heat_at(&t, i)->heat);
		CHECK_UINT(heat_at(&back, i)->reads, heat_at(&t, i)->reads);
		CHECK_UINT(heat_at(&back, i)->writes, heat_at(&t, i)->writes);
		CHECK_UINT(heat_at(&back, i)->moved_at, heat_at(&t, i)->moved_at);
	}
	heat_table_destroy(&back);
	/* A smaller table (the volume shrank) takes what fits. */
	CHECK_OK(heat_table_init(&back, 10));
	CHECK_OK(state_heat_load(st, p->id, &back, &hp));
	CHECK(heat_at(&back, 1)->heat == 42.5f);
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
	run.planned_pieces = 12;
	CHECK_OK(state_run_insert(st, p->id, &run));
	CHECK(run.id > 0);
	run.moved = m;
	run.moved.promoted_pieces = 7;
	run.moved.demoted_pieces = 4;
	CHECK_OK(state_run_update(st, &run));
	CHECK_OK(state_runs_interrupted(st, 2000));
	CHECK_OK(state_runs_list(st, p->id, 5, &runs, &nr));
	CHECK_UINT(nr, 1);
	CHECK_STR(runs[0].result, "interrupted");
	CHECK_INT(runs[0].finished, 2000);
	CHECK_UINT(runs[0].moved.demoted_bytes, 8192);
	CHECK_UINT(runs[0].planned_extents, 9);
	CHECK_UINT(runs[0].planned_pieces, 12);
	CHECK_UINT(runs[0].moved.promoted_pieces, 7);
	CHECK_UINT(runs[0].moved.demoted_pieces, 4);
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

	/* Pieces: their intents go with a commit that changed the pieces, and with a clear. */
	struct state_piece_intent pin[2] = {
		{ .le = 9, .idx = 3, .src_dev = 0, .src_pe = 9, .src_slot = 3,
		  .dst_dev = 1, .dst_pe = 40, .dst_slot = 17 },
		{ .le = 11, .idx = 255, .src_dev = 1, .src_pe = 40, .src_slot = 2,
		  .dst_dev = 0, .dst_pe = 11, .dst_slot = 255 },
	}, *pin_back;

	CHECK_OK(state_piece_intents_add(st, p->id, pin, 2, 3100));
	CHECK_OK(state_piece_intents_load(st, p->id, &pin_back, &nr));
	CHECK_UINT(nr, 2);
	for (size_t i = 0; i < 2; i++) {
		CHECK_UINT(pin_back[i].le, pin[i].le);
		CHECK_UINT(pin_back[i].idx, pin[i].idx);
		CHECK_UINT(pin_back[i].src_dev, pin[i].src_dev);
		CHECK_UINT(pin_back[i].src_pe, pin[i].src_pe);
		CHECK_UINT(pin_back[i].src_slot, pin[i].src_slot);
		CHECK_UINT(pin_back[i].dst_dev, pin[i].dst_dev);
		CHECK_UINT(pin_back[i].dst_pe, pin[i].dst_pe);
		CHECK_UINT(pin_back[i].dst_slot, pin[i].dst_slot);
	}
	free(pin_back);
	/* A commit of extents alone leaves them: they are another batch's. */
	CHECK_OK(state_pool_save_extents(st, p, &in[0].le, 1));
	CHECK_OK(state_piece_intents_load(st, p->id, &pin_back, &nr));
	CHECK_UINT(nr, 2);
	free(pin_back);
	p->pieces.changes++;
	CHECK_OK(state_pool_save_extents(st, p, NULL, 0));
	p->pieces_saved = p->pieces.changes;
	CHECK_OK(state_piece_intents_load(st, p->id, &pin_back, &nr));
	CHECK_UINT(nr, 0);
	free(pin_back);
	CHECK_OK(state_piece_intents_add(st, p->id, pin, 2, 3200));
	CHECK_OK(state_intents_add(st, p->id, in, 1, 3200));
	CHECK_OK(state_intents_clear(st, p->id, &cleared));
	CHECK_UINT(cleared, 3);
	state_pool_destroy(p);
	free(p);
	state_close(st);
}

/* ---- the extent map as runs (schema/005-extent-runs.sql) ---- */

struct test_run {
	int64_t le, nr, dev, pe;
};

/* The stored runs of pool id in le order; at most max, the count returned. */
static size_t runs_dump(sqlite3 *db, int64_t id, struct test_run *out, size_t max)
{
	sqlite3_stmt *stmt = NULL;
	size_t n = 0;

	CHECK_INT(sqlite3_prepare_v2(db, "SELECT le, nr, dev, pe FROM extent_run WHERE pool_id = ?1"
				     " ORDER BY le", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, id);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		CHECK(n < max);
		out[n++] = (struct test_run){ sqlite3_column_int64(stmt, 0),
					      sqlite3_column_int64(stmt, 1),
					      sqlite3_column_int64(stmt, 2),
					      sqlite3_column_int64(stmt, 3) };
	}
	sqlite3_finalize(stmt);
	return n;
}

/* Maximal runs of m, counted here independently of the store. */
static size_t map_runs(const struct extmap *m)
{
	struct extmap_loc prev = { .dev = EXTMAP_NO_DEV };
	size_t n = 0;

	for (uint32_t le = 0; le < m->nr_logical; le++) {
		struct extmap_loc loc = extmap_get(m, le);

		if (loc.dev != EXTMAP_NO_DEV && !(le > 0 && loc.dev == prev.dev && loc.pe == prev.pe + 1))
			n++;
		prev = loc;
	}
	return n;
}

static uint64_t rnd(uint64_t *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	return *seed;
}

/* Put le at (dev, pe) if that pe is free: 1 if it moved. */
static int try_move(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	int r = extmap_get(m, le).dev == EXTMAP_NO_DEV ? extmap_map(m, le, dev, pe) :
							 extmap_remap(m, le, dev, pe);

	CHECK(r == 0 || r == -EBUSY || r == -EINVAL);
	return r == 0;
}

/*
 * One random change of m, its le appended to changed[]: a single move, a
 * block of consecutive extents to consecutive pe (runs that join), a move
 * back home (runs that merge again), an unmap, or an le named that did not
 * change at all.
 */
static void random_change(struct extmap *m, uint64_t *seed, uint32_t *changed, size_t *n)
{
	uint32_t le = (uint32_t)(rnd(seed) % m->nr_logical);
	unsigned dev = (unsigned)(rnd(seed) % m->nr_devs), k;
	uint32_t pe = (uint32_t)(rnd(seed) % m->nr_pe[dev]);

	switch (rnd(seed) % 10) {
	case 0:
		if (extmap_get(m, le).dev != EXTMAP_NO_DEV && extmap_unmap(m, le) == 0)
			changed[(*n)++] = le;
		break;
	case 1:
		if (try_move(m, le, 0, le))
			changed[(*n)++] = le;
		break;
	case 2:
		changed[(*n)++] = le;
		break;
	case 3:
	case 4:
	case 5:
		for (k = 1 + (unsigned)(rnd(seed) % 8); k > 0 && le < m->nr_logical; k--, le++, pe++)
			if (try_move(m, le, dev, pe))
				changed[(*n)++] = le;
		break;
	default:
		if (try_move(m, le, dev, pe))
			changed[(*n)++] = le;
	}
}

/* The stored pool p->id loads with p's map. */
static void check_loads_as(struct state *st, const struct state_pool *p)
{
	struct state_pool **pools = NULL;
	size_t nr = 0, found = 0;

	CHECK_OK(state_pool_load_all(st, &pools, &nr));
	for (size_t i = 0; i < nr; i++) {
		if (pools[i]->id == p->id) {
			CHECK(extmap_same_mapping(&p->map, &pools[i]->map));
			CHECK_OK(extmap_check(&pools[i]->map, NULL));
			found++;
		}
		state_pool_destroy(pools[i]);
		free(pools[i]);
	}
	free(pools);
	CHECK_UINT(found, 1);
}

static void test_runs(void)
{
	enum { NR = 300, MAX_RUNS = NR + 1, BATCHES = 600 };
	static struct test_run inc[MAX_RUNS], full[MAX_RUNS];
	const char *d = sub_dir("runs");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct state_pool p;
	uint32_t changed[64], home[NR];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t nr_inc, nr_full, n;

	/* A fresh pool is one run per device that holds data. */
	make_pool(&p, NR);
	CHECK_OK(state_pool_insert(st, &p));
	nr_inc = runs_dump(db, p.id, inc, MAX_RUNS);
	CHECK_UINT(nr_inc, 1);
	CHECK_INT(inc[0].le, 0);
	CHECK_INT(inc[0].nr, NR);
	CHECK_INT(inc[0].dev, 0);
	CHECK_INT(inc[0].pe, 0);
	check_loads_as(st, &p);

	/*
	 * Commits of random batches, each stored extent by extent: the map
	 * loads back as it is in memory and the runs stay maximal, so their
	 * number is that of the map's runs.
	 */
	for (int b = 0; b < BATCHES; b++) {
		size_t want = 1 + rnd(&seed) % 16;

		n = 0;
		while (n < want)
			random_change(&p.map, &seed, changed, &n);
		p.meta.generation++;
		CHECK_OK(state_pool_save_extents(st, &p, changed, n));
		CHECK_UINT(runs_dump(db, p.id, inc, MAX_RUNS), map_runs(&p.map));
		check_loads_as(st, &p);
	}
	CHECK(map_runs(&p.map) > 50); /* the moves did fragment the map */

	/* The same map saved whole: the very same rows. */
	nr_inc = runs_dump(db, p.id, inc, MAX_RUNS);
	CHECK_OK(state_pool_save(st, &p));
	nr_full = runs_dump(db, p.id, full, MAX_RUNS);
	CHECK_UINT(nr_inc, nr_full);
	CHECK(memcmp(inc, full, nr_inc * sizeof(inc[0])) == 0);
	check_loads_as(st, &p);

	/* Everything home again, in one commit: one run, as when the pool was new. */
	n = 0;
	for (uint32_t le = 0; le < NR; le++)
		if (extmap_get(&p.map, le).dev != 0 || extmap_get(&p.map, le).pe != le) {
			if (extmap_get(&p.map, le).dev != EXTMAP_NO_DEV)
				CHECK_OK(extmap_unmap(&p.map, le));
			home[n++] = le;
		}
	for (size_t i = 0; i < n; i++)
		CHECK_OK(extmap_map(&p.map, home[i], 0, home[i]));
	CHECK_OK(state_pool_save_extents(st, &p, home, n));
	CHECK_UINT(runs_dump(db, p.id, inc, MAX_RUNS), 1);
	check_loads_as(st, &p);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

/* Pool p (p->id set) as the schema before 005 stored it: a row per mapped extent. */
static void insert_old_pool(sqlite3 *db, const struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	char uuid[37];

	metadata_uuid_format(p->meta.uuid, uuid);
	CHECK_INT(sqlite3_prepare_v2(db, "INSERT INTO pool (id, uuid, name, extent_size, flags,"
				     " created, generation, nr_logical, want_active)"
				     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, p->id);
	sqlite3_bind_text(stmt, 2, uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, p->meta.name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, (sqlite3_int64)p->meta.extent_size);
	sqlite3_bind_int64(stmt, 5, p->meta.flags);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64)p->meta.created);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64)p->meta.generation);
	sqlite3_bind_int64(stmt, 8, p->map.nr_logical);
	sqlite3_bind_int(stmt, 9, p->want_active);
	CHECK_INT(sqlite3_step(stmt), SQLITE_DONE);
	sqlite3_finalize(stmt);
	CHECK_INT(sqlite3_prepare_v2(db, "INSERT INTO device (pool_id, idx, uuid, tier, path,"
				     " size_bytes, logical_block_size, data_start, nr_pe, reserve_pe)"
				     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, NULL),
		  SQLITE_OK);
	for (unsigned i = 0; i < p->meta.nr_devs; i++) {
		const struct metadata_dev *d = &p->meta.devs[i];

		metadata_uuid_format(d->uuid, uuid);
		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int(stmt, 2, (int)i);
		sqlite3_bind_text(stmt, 3, uuid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 4, metadata_tier_name(d->tier), -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 5, p->paths[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 6, (sqlite3_int64)d->size_bytes);
		sqlite3_bind_int64(stmt, 7, d->logical_block_size);
		sqlite3_bind_int64(stmt, 8, (sqlite3_int64)d->data_start);
		sqlite3_bind_int64(stmt, 9, d->nr_pe);
		sqlite3_bind_int64(stmt, 10, d->reserve_pe);
		CHECK_INT(sqlite3_step(stmt), SQLITE_DONE);
		sqlite3_reset(stmt);
	}
	sqlite3_finalize(stmt);
	CHECK_INT(sqlite3_prepare_v2(db, "INSERT INTO extent (pool_id, le, dev, pe) VALUES (?, ?, ?, ?)",
				     -1, &stmt, NULL), SQLITE_OK);
	for (uint32_t le = 0; le < p->map.nr_logical; le++) {
		struct extmap_loc loc = extmap_get(&p->map, le);

		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int64(stmt, 2, le);
		sqlite3_bind_int(stmt, 3, loc.dev);
		sqlite3_bind_int64(stmt, 4, loc.pe);
		CHECK_INT(sqlite3_step(stmt), SQLITE_DONE);
		sqlite3_reset(stmt);
	}
	sqlite3_finalize(stmt);
}

/*
 * A database of schema 004, its pools' maps a row per extent and moved
 * about: migration 005 turns the rows into maximal runs, pool by pool, and
 * the pools load and take commits as before.
 */
static void test_runs_migration(void)
{
	const char *d = sub_dir("migrate");
	struct state_pool p[2];
	uint32_t changed[64];
	uint64_t seed = 42;
	struct state *st;
	sqlite3 *db;
	size_t n;

	for (int i = 0; i < 2; i++) {
		make_pool(&p[i], i ? 97 : 250);
		p[i].id = i + 7;
		snprintf(p[i].meta.name, sizeof(p[i].meta.name), "tank%d", i);
		p[i].meta.uuid[1] = (uint8_t)i;
		p[i].meta.devs[0].uuid[1] = p[i].meta.devs[1].uuid[1] = (uint8_t)(i + 1);
		for (int k = 0; k < (i ? 40 : 400); k++) {
			n = 0;
			random_change(&p[i].map, &seed, changed, &n);
		}
	}
	CHECK(map_runs(&p[0].map) > 40);
	CHECK_INT(mkdir(d, 0700), 0);
	db = raw_open(d);
	CHECK(schema_nr_migrations >= 5);
	CHECK_STR(schema_migrations[4].name, "005-extent-runs.sql");
	for (unsigned i = 0; i < 4; i++)
		raw_exec(db, schema_migrations[i].sql);
	raw_exec(db, "PRAGMA user_version = 4");
	raw_exec(db, "BEGIN");
	insert_old_pool(db, &p[0]);
	insert_old_pool(db, &p[1]);
	raw_exec(db, "COMMIT");
	sqlite3_close(db);

	st = open_state_in(d);
	db = raw_open(d);
	CHECK_INT(raw_count(db, "PRAGMA user_version"), (int)schema_nr_migrations);
	CHECK_INT(raw_count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'extent'"), 0);
	for (int i = 0; i < 2; i++) {
		static struct test_run runs[300];

		CHECK_UINT(runs_dump(db, p[i].id, runs, 300), map_runs(&p[i].map));
		check_loads_as(st, &p[i]);
	}
	for (int b = 0; b < 50; b++) {
		n = 0;
		while (n < 8)
			random_change(&p[0].map, &seed, changed, &n);
		CHECK_OK(state_pool_save_extents(st, &p[0], changed, n));
	}
	check_loads_as(st, &p[0]);
	check_loads_as(st, &p[1]);
	sqlite3_close(db);
	state_close(st);
	state_pool_destroy(&p[0]);
	state_pool_destroy(&p[1]);
}

/* A run that cannot be part of the map stops the load, saying which and why. */
static void test_runs_corrupt(void)
{
	static const struct {
		const char *sql, *why;
	} bad[] = {
		{ "UPDATE extent_run SET nr = 101", "ends past the volume's last extent" },
		{ "UPDATE extent_run SET nr = 9223372036854775807", "ends past the volume's last extent" },
		{ "UPDATE extent_run SET le = 9223372036854775807, nr = 1",
		  "ends past the volume's last extent" },
		{ "UPDATE extent_run SET le = -1", "starts before the volume's first extent" },
		{ "INSERT INTO extent_run VALUES (1, 50, 10, 1, 0)", "overlaps the run before it" },
		{ "UPDATE extent_run SET dev = 2", "its device is not the pool's" },
		{ "UPDATE extent_run SET dev = -1", "its device is not the pool's" },
		{ "UPDATE extent_run SET dev = 4294967296", "its device is not the pool's" },
		{ "UPDATE extent_run SET pe = -3", "ends past its device's last extent" },
		{ "UPDATE extent_run SET nr = 50; INSERT INTO extent_run VALUES (1, 50, 50, 0, 51)",
		  "ends past its device's last extent" },
		{ "UPDATE extent_run SET nr = 50; INSERT INTO extent_run VALUES (1, 50, 50, 0, 25)",
		  "one of its physical extents is mapped twice" },
	};
	const char *d = sub_dir("corrupt");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct state_pool p, **pools = NULL;
	size_t nr = 0;

	make_pool(&p, 100);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_INT(p.id, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_exec(db, bad[i].sql);
		CHECK_INT(state_pool_load_all(st, &pools, &nr), -EUCLEAN);
		if (!strstr(state_last_error(st), bad[i].why) ||
		    strncmp(state_last_error(st), "pool tank: extent map run le=", 29)) {
			fprintf(stderr, "%s: \"%s\" does not say \"%s\"\n", bad[i].sql,
				state_last_error(st), bad[i].why);
			CHECK(0);
		}
		CHECK_OK(state_pool_save(st, &p)); /* the whole map again, from memory */
		check_loads_as(st, &p);
	}
	/* An empty run the table itself refuses. */
	CHECK(sqlite3_exec(db, "UPDATE extent_run SET nr = 0", NULL, NULL, NULL) == SQLITE_CONSTRAINT);
	check_loads_as(st, &p);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

/* A pool with two containers on the SSD and pieces of three extents out. */
static void make_split_pool(struct state_pool *p)
{
	uint32_t c;
	uint16_t slot;

	make_pool(p, 100);
	CHECK_OK(piecemap_init(&p->pieces, 256));
	CHECK_OK(extmap_claim(&p->map, 1, 5));
	CHECK_OK(piecemap_add_container(&p->pieces, 1, 5, NULL));
	CHECK_OK(extmap_claim(&p->map, 1, 9));
	CHECK_OK(piecemap_add_container(&p->pieces, 1, 9, NULL));
	for (uint32_t i = 0; i < 300; i++) {
		CHECK_OK(piecemap_alloc_slot(&p->pieces, 1, &c, &slot));
		CHECK_OK(piecemap_place(&p->pieces, 10 + i % 3, i / 3 * 2, c, slot));
	}
}

/*
 * Pieces round-trip with the pool, their containers held used in the
 * loaded map; a row that could not have been written is refused, naming
 * it; a pool without pieces has no row and loads none.
 */
static void test_pieces(void)
{
	static const struct {
		const char *sql, *why;
	} bad[] = {
		{ "UPDATE piece_container SET pe = 3, dev = 0 WHERE idx = 1",
		  "piece container 1 (device 0, extent 3) invalid" },
		{ "UPDATE piece_container SET pe = 100 WHERE idx = 0",
		  "piece container 0 (device 1, extent 100) invalid" },
		{ "UPDATE piece_container SET dev = 2 WHERE idx = 0",
		  "piece container 0 (device 2, extent 5) invalid" },
		{ "UPDATE piece_container SET pe = 5 WHERE idx = 1",
		  "piece container 1 (device 1, extent 5) invalid" },
		{ "UPDATE piece_container SET idx = 2 WHERE idx = 1",
		  "piece container 2 (device 1, extent 9) invalid" },
		{ "UPDATE piece SET le = 100 WHERE le = 12 AND idx = 0",
		  "piece 0 of extent 100 (container 0, slot 2) invalid" },
		{ "UPDATE piece SET idx = 256 WHERE le = 12 AND idx = 0",
		  "piece 256 of extent 12 (container 0, slot 2) invalid" },
		{ "UPDATE piece SET container = 2 WHERE le = 12 AND idx = 0",
		  "piece 0 of extent 12 (container 2, slot 2) invalid" },
		{ "UPDATE piece SET slot = 1 WHERE le = 12 AND idx = 0",
		  "piece 0 of extent 12 (container 0, slot 1) invalid" },
		{ "UPDATE pool SET pieces_per_extent = 96", "its piece size is invalid" },
		{ "UPDATE pool SET pieces_per_extent = 4294967552", "its piece size is invalid" },
		/* Pieces of 2 KiB: no slot could carry them. */
		{ "UPDATE pool SET pieces_per_extent = 2048", "its piece size is invalid" },
		{ "UPDATE pool SET pieces_per_extent = 0",
		  "piece container 0 stored, but no piece size" },
		{ "UPDATE pool SET pieces_per_extent = 0; DELETE FROM piece_container",
		  "piece 0 of extent 10 stored, but no piece size" },
	};
	const char *d = sub_dir("pieces");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct state_pool p, *back, **pools = NULL;
	size_t nr = 0;

	make_split_pool(&p);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece"), 300);
	back = load_one(st);
	check_same_pool(&p, back);
	CHECK(piecemap_same_placement(&p.pieces, &back->pieces));
	CHECK_INT(extmap_claim(&back->map, 1, 9), -EBUSY);
	CHECK_OK(extmap_check(&back->map, NULL));
	state_pool_destroy(back);
	free(back);

	/* A commit of extents leaves the pieces as they were. */
	p.meta.generation = 2;
	CHECK_OK(state_pool_save_extents(st, &p, (uint32_t[]){ 10 }, 1));
	back = load_one(st);
	CHECK(piecemap_same_placement(&p.pieces, &back->pieces));
	state_pool_destroy(back);
	free(back);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_exec(db, bad[i].sql);
		CHECK_INT(state_pool_load_all(st, &pools, &nr), -EUCLEAN);
		if (strcmp(state_last_error(st) + strlen("pool tank: "), bad[i].why)) {
			fprintf(stderr, "%s: \"%s\" is not \"%s\"\n", bad[i].sql,
				state_last_error(st), bad[i].why);
			CHECK(0);
		}
		CHECK_OK(state_pool_save(st, &p)); /* the pieces again, from memory */
		back = load_one(st);
		CHECK(piecemap_same_placement(&p.pieces, &back->pieces));
		state_pool_destroy(back);
		free(back);
	}

	/* A commit that moved pieces carries them, in the same transaction. */
	{
		uint32_t c;
		uint16_t slot;

		p.pieces_saved = p.pieces.changes;
		CHECK_OK(piecemap_return(&p.pieces, 10, 0));
		CHECK_OK(piecemap_alloc_slot(&p.pieces, 1, &c, &slot));
		CHECK_OK(piecemap_place(&p.pieces, 40, 7, c, slot));
		p.meta.generation = 3;
		CHECK_OK(state_pool_stage(st, &p, (uint32_t[]){ 40 }, 1));
		CHECK_OK(state_staged_commit(st, 3));
		back = load_one(st);
		CHECK(piecemap_same_placement(&p.pieces, &back->pieces));
		CHECK_UINT(back->meta.generation, 3);
		state_pool_destroy(back);
		free(back);
		CHECK_INT(raw_count(db, "SELECT count(*) FROM piece WHERE le = 40"), 1);
	}

	/* Every piece home and the containers gone: no row, nothing loaded. */
	piecemap_destroy(&p.pieces);
	memset(&p.pieces, 0, sizeof(p.pieces));
	CHECK_OK(state_pool_save(st, &p));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece_container"), 0);
	CHECK_INT(raw_count(db, "SELECT pieces_per_extent FROM pool"), 0);
	back = load_one(st);
	CHECK_UINT(back->pieces.nr_containers, 0);
	CHECK_UINT(back->pieces.pieces_per_extent, 0);
	state_pool_destroy(back);
	free(back);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

static void check_pieces_load(struct state *st, const struct state_pool *p)
{
	struct state_pool *back = load_one(st);

	CHECK(piecemap_same_placement(&p->pieces, &back->pieces));
	CHECK_OK(piecemap_check(&back->pieces, NULL));
	state_pool_destroy(back);
	free(back);
}

/* Rows of piece inserted or deleted since the last call. */
static int64_t piece_rows_written(sqlite3 *db)
{
	int64_t n = raw_count(db, "SELECT n FROM written");

	raw_exec(db, "UPDATE written SET n = 0");
	return n;
}

/*
 * A save writes the rows of the pieces that changed, not every piece out
 * (a batch of 64 pieces used to rewrite them all, tens of thousands at
 * 4 KiB pieces, ahead of each suspend). What it writes loads as the pool
 * has it: pieces home, placed, moved between slots, containers added and
 * one dropped, which renumbers the pieces of those after it; a stage
 * rolled back leaves the rows as they were known.
 */
static void test_pieces_changed_rows(void)
{
	const char *d = sub_dir("pieces-rows");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct state_pool p;
	uint32_t c;
	uint16_t slot;

	make_split_pool(&p);
	CHECK_OK(state_pool_insert(st, &p));
	raw_exec(db, "CREATE TABLE written (n INTEGER);"
		     " INSERT INTO written VALUES (0);"
		     " CREATE TRIGGER piece_in AFTER INSERT ON piece"
		     " BEGIN UPDATE written SET n = n + 1; END;"
		     " CREATE TRIGGER piece_out AFTER DELETE ON piece"
		     " BEGIN UPDATE written SET n = n + 1; END;");

	/* One home, one placed, one moved to another slot: three rows. */
	p.pieces_saved = p.pieces.changes;
	CHECK_OK(piecemap_return(&p.pieces, 10, 0));
	CHECK_OK(piecemap_alloc_slot(&p.pieces, 1, &c, &slot));
	CHECK_OK(piecemap_place(&p.pieces, 40, 7, c, slot));
	CHECK_OK(piecemap_alloc_slot(&p.pieces, 1, &c, &slot));
	CHECK_OK(piecemap_place(&p.pieces, 11, 0, c, slot));
	p.meta.generation = 2;
	CHECK_OK(state_pool_stage(st, &p, (uint32_t[]){ 40 }, 1));
	CHECK_OK(state_staged_commit(st, 2));
	CHECK_INT(piece_rows_written(db), 3);
	check_pieces_load(st, &p);

	/* Two new containers, a piece in each: their rows and theirs only. */
	p.pieces_saved = p.pieces.changes;
	for (uint32_t pe = 20; pe < 22; pe++) {
		CHECK_OK(extmap_claim(&p.map, 1, pe));
		CHECK_OK(piecemap_add_container(&p.pieces, 1, pe, &c));
		CHECK_OK(piecemap_claim_slot(&p.pieces, c, 0));
		CHECK_OK(piecemap_place(&p.pieces, 50 + pe, 3, c, 0));
	}
	CHECK_OK(state_pool_save_extents(st, &p, NULL, 0));
	CHECK_INT(piece_rows_written(db), 2);
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece_container"), 4);
	check_pieces_load(st, &p);

	/* The first of them emptied and dropped: the last one's piece follows it down. */
	p.pieces_saved = p.pieces.changes;
	CHECK_OK(piecemap_return(&p.pieces, 70, 3));
	CHECK_OK(piecemap_remove_container(&p.pieces, 2));
	extmap_release(&p.map, 1, 20);
	CHECK_OK(state_pool_save_extents(st, &p, NULL, 0));
	CHECK_INT(piece_rows_written(db), 2);
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece_container"), 3);
	CHECK_INT(raw_count(db, "SELECT container FROM piece WHERE le = 71"), 2);
	check_pieces_load(st, &p);

	/* A stage rolled back: the next save still knows what the rows are. */
	p.pieces_saved = p.pieces.changes;
	CHECK_OK(piecemap_return(&p.pieces, 12, 0));
	CHECK_OK(state_pool_stage(st, &p, (uint32_t[]){ 12 }, 1));
	state_staged_abort(st);
	CHECK_INT(piece_rows_written(db), 0);
	CHECK_OK(piecemap_return(&p.pieces, 12, 2));
	CHECK_OK(state_pool_save_extents(st, &p, NULL, 0));
	CHECK_INT(piece_rows_written(db), 2);
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece"), p.pieces.nr_pieces);
	check_pieces_load(st, &p);

	/* A whole save (the one after a failed save) writes every row again. */
	CHECK_OK(state_pool_save(st, &p));
	CHECK_INT(piece_rows_written(db), 2 * (int64_t)p.pieces.nr_pieces);
	check_pieces_load(st, &p);

	/* Deleted and made again (its id may come back): its rows are written, not compared. */
	CHECK_OK(state_pool_delete(st, p.id));
	piece_rows_written(db);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_INT(piece_rows_written(db), p.pieces.nr_pieces);
	check_pieces_load(st, &p);

	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

struct run_counts {
	uint64_t done, failed, other;
};

static int count_run(const char *trigger, const char *result, uint64_t n, void *ctx)
{
	struct run_counts *c = ctx;

	CHECK_STR(trigger, "auto");
	if (!strcmp(result, "done"))
		c->done += n;
	else if (!strcmp(result, "failed"))
		c->failed += n;
	else
		c->other += n;
	return 0;
}

static struct run_counts runs_counted(struct state *st, int64_t id)
{
	struct run_counts c = { 0 };

	CHECK_OK(state_runs_count(st, id, count_run, &c));
	return c;
}

/*
 * Runs and moves are counted in totals as they end (schema 008): pruning
 * the history keeps the counts, and a database of schema 007 gets totals
 * from the rows it has.
 */
static void test_totals(void)
{
	const char *d = sub_dir("totals");
	struct state *st = open_state_in(d);
	struct state_run run[30];
	struct state_moves m = { 1, 2, 4096, 8192, 1 }, total;
	struct state_pool p;
	struct run_counts c;
	sqlite3 *db;

	make_pool(&p, 10);
	CHECK_OK(state_pool_insert(st, &p));
	/* 20 runs done, 5 failed, the 5 newest running; the clock set back after the 10th. */
	for (int i = 0; i < 30; i++) {
		run[i] = (struct state_run){ .started = i < 10 ? 5000 + i : 1000 + i,
					     .planned_extents = 1 };
		snprintf(run[i].trigger, sizeof(run[i].trigger), "auto");
		snprintf(run[i].policy, sizeof(run[i].policy), "auto");
		snprintf(run[i].result, sizeof(run[i].result), "running");
		CHECK_OK(state_run_insert(st, p.id, &run[i]));
		if (i >= 25)
			continue;
		snprintf(run[i].result, sizeof(run[i].result), i < 20 ? "done" : "failed");
		run[i].finished = run[i].started + 1;
		CHECK_OK(state_run_update(st, &run[i]));
		/* Updated again once ended (its message): counted once. */
		CHECK_OK(state_run_update(st, &run[i]));
	}
	c = runs_counted(st, p.id);
	CHECK_UINT(c.done, 20);
	CHECK_UINT(c.failed, 5);
	CHECK_UINT(c.other, 0);
	CHECK_OK(state_runs_prune(st, p.id, 10));
	db = raw_open(d);
	CHECK_INT(raw_count(db, "SELECT count(*) FROM run"), 10);
	/* The 10 recorded last stay, whatever their clock said. */
	CHECK_INT(raw_count(db, "SELECT min(id) FROM run"), run[20].id);
	CHECK_OK(state_runs_prune(st, p.id, 100)); /* fewer than that: nothing goes */
	CHECK_INT(raw_count(db, "SELECT count(*) FROM run"), 10);
	c = runs_counted(st, p.id);
	CHECK_UINT(c.done, 20);
	CHECK_UINT(c.failed, 5);
	snprintf(run[29].result, sizeof(run[29].result), "done");
	CHECK_OK(state_run_update(st, &run[29]));
	CHECK_UINT(runs_counted(st, p.id).done, 21);

	CHECK_OK(state_moves_total(st, p.id, &total));
	CHECK_UINT(total.promoted_bytes, 0);
	CHECK_OK(state_moves_add(st, p.id, 100, &m));
	CHECK_OK(state_moves_add(st, p.id, 100, &m));
	CHECK_OK(state_moves_add(st, p.id, 101, &m));

	/* Back to schema 007: no totals. Opened again, 008 counts the rows there are. */
	state_close(st);
	raw_exec(db, "DROP TRIGGER run_ended; DROP TRIGGER run_stored_ended;"
		     " DROP TRIGGER moves_added; DROP TRIGGER moves_grown;"
		     " DROP TABLE run_total; DROP TABLE moves_total; DROP TABLE piece_heat;"
		     " DROP TABLE piece_migration;"
		     " ALTER TABLE run DROP COLUMN planned_pieces;"
		     " ALTER TABLE run DROP COLUMN promoted_pieces;"
		     " ALTER TABLE run DROP COLUMN demoted_pieces; PRAGMA user_version = 7");
	sqlite3_close(db);
	st = open_state_in(d);
	c = runs_counted(st, p.id);
	/* The rows kept, which is what the history holds now: runs 20-24 failed, 29 done. */
	CHECK_UINT(c.done, 1);
	CHECK_UINT(c.failed, 5);
	CHECK_OK(state_moves_total(st, p.id, &total));
	CHECK_UINT(total.promoted_extents, 3);
	CHECK_UINT(total.demoted_bytes, 3 * 8192);
	CHECK_UINT(total.failed, 3);
	state_pool_destroy(&p);
	state_close(st);
}

/* Cold chunks of heat are no rows; a chunk that cools loses its row. */
static void test_heat_cold(void)
{
	const uint32_t nr = 3 * STATE_HEAT_CHUNK + 5;
	const char *d = sub_dir("heat-cold");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct heat_table t, back;
	struct heat_params hp;
	struct state_pool p;

	heat_params_default(&hp);
	make_pool(&p, 10);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_OK(heat_table_init(&t, nr));
	CHECK_OK(state_heat_save(st, p.id, &t, 0, nr));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM heat"), 0);
	/* Each field alone keeps its chunk. */
	heat_at_mut(&t, STATE_HEAT_CHUNK + 7)->moved_at = 1700000000;
	heat_at_mut(&t, 3 * STATE_HEAT_CHUNK + 4)->reads = 1;
	CHECK_OK(state_heat_save(st, p.id, &t, 0, nr));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM heat"), 2);
	heat_at_mut(&t, STATE_HEAT_CHUNK + 7)->moved_at = 0;
	heat_at_mut(&t, 3 * STATE_HEAT_CHUNK + 4)->reads = 0;
	heat_at_mut(&t, 3 * STATE_HEAT_CHUNK + 4)->writes = 3;
	heat_at_mut(&t, 5)->heat = 0.25f;
	/* In the daemon's steps: the chunk that cooled is deleted in its own. */
	CHECK_OK(state_heat_save(st, p.id, &t, 0, STATE_HEAT_CHUNK));
	CHECK_OK(state_heat_save(st, p.id, &t, STATE_HEAT_CHUNK, 2 * STATE_HEAT_CHUNK));
	CHECK_OK(state_heat_save(st, p.id, &t, 2 * STATE_HEAT_CHUNK, nr));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM heat"), 2);
	CHECK_INT(raw_count(db, "SELECT sum(first_le) FROM heat"), 3 * STATE_HEAT_CHUNK);
	CHECK_OK(heat_table_init(&back, nr));
	CHECK_OK(state_heat_load(st, p.id, &back, &hp));
	for (uint32_t i = 0; i < nr; i++)
		CHECK(memcmp(heat_at(&back, i), heat_at(&t, i), sizeof(struct heat_extent)) == 0);
	heat_table_destroy(&back);
	heat_table_destroy(&t);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

/*
 * Rows stored at different flushes (only chunks that changed are written)
 * load decayed to the newest time; a row from before schema 006 (no time
 * of its own) counts as of heat_sampled's.
 */
static void test_heat_row_times(void)
{
	const uint32_t nr = 3 * STATE_HEAT_CHUNK;
	const uint64_t t0 = 1700000000ull * 1000000000ull, day = 86400ull * 1000000000ull;
	const char *d = sub_dir("heat-times");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	struct heat_table t, back;
	struct heat_params hp;
	struct state_pool p;

	heat_params_default(&hp);
	make_pool(&p, 10);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_OK(heat_table_init(&t, nr));
	heat_set(&t, 1, 64);
	heat_set(&t, STATE_HEAT_CHUNK + 1, 64);
	t.last_sample_ns = t0;
	CHECK_OK(state_heat_save(st, p.id, &t, 0, nr));
	/* Two days on only the second chunk is stored again, with heat 8 then. */
	t.last_sample_ns = t0 + 2 * day;
	heat_set(&t, STATE_HEAT_CHUNK + 1, 8);
	CHECK_OK(state_heat_save(st, p.id, &t, STATE_HEAT_CHUNK, 2 * STATE_HEAT_CHUNK));
	CHECK_OK(heat_table_init(&back, nr));
	CHECK_OK(state_heat_load(st, p.id, &back, &hp));
	CHECK_UINT(back.last_sample_ns, t0 + 2 * day);
	CHECK_NEAR(heat_value(&back, 1), 16, 16e-6); /* 64, two half-lives old */
	CHECK_NEAR(heat_value(&back, STATE_HEAT_CHUNK + 1), 8, 0);
	/* Loading is no change: nothing to store again. */
	for (uint32_t k = 0; k < heat_nr_chunks(&back); k++)
		CHECK(!heat_chunk_dirty(&back, k));
	heat_table_destroy(&back);
	/* A row of the old schema: as of heat_sampled's time, however its chunk is set. */
	raw_exec(db, "UPDATE heat SET sampled_ns = NULL WHERE first_le = 0");
	raw_exec(db, "UPDATE heat_sampled SET sampled_ns = 1700000000000000000 + 86400000000000");
	raw_exec(db, "UPDATE heat SET sampled_ns = 1700000000000000000 WHERE first_le > 0");
	CHECK_OK(heat_table_init(&back, nr));
	CHECK_OK(state_heat_load(st, p.id, &back, &hp));
	CHECK_UINT(back.last_sample_ns, t0 + day);
	CHECK_NEAR(heat_value(&back, 1), 64, 0);
	CHECK_NEAR(heat_value(&back, STATE_HEAT_CHUNK + 1), 4, 4e-6);
	heat_table_destroy(&back);
	heat_table_destroy(&t);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

/*
 * Piece weights of the extents asked for, kept over a restart: loaded
 * decayed by the time since they were stored, rows of another piece size
 * and records that cannot be weights left out, a save replacing them all.
 */
static void test_piece_heat(void)
{
	const uint64_t t0 = 1700000000ull * 1000000000ull;
	const char *d = sub_dir("piece-heat");
	struct state *st = open_state_in(d);
	sqlite3 *db = raw_open(d);
	uint16_t idx[3] = { 1, 7, 200 };
	float w[3] = { 6, 2, 0 };
	uint32_t les[3] = { 4, 5, 9 };
	struct pieceheat ph, back;
	struct heat_params hp;
	struct state_pool p;

	heat_params_default(&hp);
	make_pool(&p, 10);
	CHECK_OK(state_pool_insert(st, &p));
	CHECK_OK(pieceheat_init(&ph, 256, 16));
	CHECK_OK(pieceheat_add(&ph, 4, idx, w, 3));
	w[0] = 1;
	CHECK_OK(pieceheat_add(&ph, 9, idx, w, 1));
	CHECK_OK(pieceheat_add(&ph, 12, idx, w, 1)); /* not asked for */
	/* Extent 5 has no weight: no row. */
	CHECK_OK(state_piece_heat_save(st, p.id, &ph, les, 3, t0));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece_heat"), 2);
	CHECK_INT(raw_count(db, "SELECT length(data) FROM piece_heat WHERE le = 4"), 12);
	/* One half-life later. */
	CHECK_OK(pieceheat_init(&back, 256, 16));
	CHECK_OK(state_piece_heat_load(st, p.id, &back, 10, &hp,
				       t0 + (uint64_t)hp.half_life_s * 1000000000ull));
	CHECK_UINT(back.nr, 2);
	CHECK_NEAR(pieceheat_weight(&back, 4, 1), 3, 1e-6);
	CHECK_NEAR(pieceheat_weight(&back, 4, 7), 1, 1e-6);
	CHECK(pieceheat_weight(&back, 4, 200) == 0);
	CHECK_NEAR(pieceheat_share(&back, 9, 1), 1, 1e-6);
	pieceheat_destroy(&back);
	/* Extents past the volume and rows of another piece size are left out. */
	CHECK_OK(pieceheat_init(&back, 256, 16));
	CHECK_OK(state_piece_heat_load(st, p.id, &back, 5, &hp, t0));
	CHECK_UINT(back.nr, 1);
	pieceheat_destroy(&back);
	CHECK_OK(pieceheat_init(&back, 64, 16));
	CHECK_OK(state_piece_heat_load(st, p.id, &back, 10, &hp, t0));
	CHECK_UINT(back.nr, 0);
	pieceheat_destroy(&back);
	/* A record past the pieces leaves its row out, not the others. */
	raw_exec(db, "UPDATE piece_heat SET data = x'ffff0000803f' WHERE le = 9");
	CHECK_OK(pieceheat_init(&back, 256, 16));
	CHECK_OK(state_piece_heat_load(st, p.id, &back, 10, &hp, t0));
	CHECK_UINT(back.nr, 1);
	CHECK_INT(pieceheat_known(&back, 4), 1);
	pieceheat_destroy(&back);
	/* A save replaces every row. */
	CHECK_OK(state_piece_heat_save(st, p.id, &ph, les + 2, 1, t0));
	CHECK_INT(raw_count(db, "SELECT count(*) FROM piece_heat"), 1);
	CHECK_INT(raw_count(db, "SELECT le FROM piece_heat"), 9);
	pieceheat_destroy(&ph);
	sqlite3_close(db);
	state_pool_destroy(&p);
	state_close(st);
}

int main(void)
{
	char cmd[64];
	int rc;

	CHECK(mkdtemp(dir) != NULL);
	test_pool_round_trip();
	test_pool_staged();
	test_heat_round_trip();
	test_tier_io();
	test_tiering();
	test_runs();
	test_runs_migration();
	test_runs_corrupt();
	test_heat_cold();
	test_heat_row_times();
	test_pieces();
	test_pieces_changed_rows();
	test_totals();
	test_piece_heat();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	rc = system(cmd);
	return rc == 0 ? 0 : 1;
}
