/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-tiering: tiering settings, pins, runs, moves history and migration intents. */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state-internal.h"

/* Room for element n of an array read row by row: doubles *cap as needed. */
static int grow_for_one(void **v, size_t *cap, size_t n, size_t size)
{
	size_t want;
	void *grown;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 16;
	grown = realloc(*v, want * size);
	if (!grown)
		return -ENOMEM;
	*v = grown;
	*cap = want;
	return 0;
}

static void copy_text(char *dst, size_t len, sqlite3_stmt *stmt, int col)
{
	const unsigned char *v = sqlite3_column_text(stmt, col);

	snprintf(dst, len, "%s", v ? (const char *)v : "");
}

void state_tiering_default(struct state_tiering *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->policy, sizeof(t->policy), "auto");
	snprintf(t->spec, sizeof(t->spec), "manual");
	snprintf(t->io_awareness, sizeof(t->io_awareness), "throttled");
}

int state_tiering_load(struct state *st, int64_t id, struct state_tiering *out)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	state_tiering_default(out);
	r = state_prepare(st,
			  "SELECT policy, spec, run_window, max_bytes, rate, io_awareness, paused"
			  " FROM tiering WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		copy_text(out->policy, sizeof(out->policy), stmt, 0);
		copy_text(out->spec, sizeof(out->spec), stmt, 1);
		copy_text(out->window, sizeof(out->window), stmt, 2);
		out->max_bytes = (uint64_t)sqlite3_column_int64(stmt, 3);
		out->rate = (uint64_t)sqlite3_column_int64(stmt, 4);
		copy_text(out->io_awareness, sizeof(out->io_awareness), stmt, 5);
		out->paused = sqlite3_column_int(stmt, 6) != 0;
	} else if (rc != SQLITE_DONE) {
		r = state_fail(st, rc);
	}
	sqlite3_finalize(stmt);
	return r;
}

int state_tiering_save(struct state *st, int64_t id, const struct state_tiering *t)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "INSERT OR REPLACE INTO tiering (pool_id, policy, spec, run_window, max_bytes,"
			  " rate, io_awareness, paused) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_text(stmt, 2, t->policy, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, t->spec, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 4, t->window, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64)t->max_bytes);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64)t->rate);
	sqlite3_bind_text(stmt, 7, t->io_awareness, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 8, t->paused != 0);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_pins_load(struct state *st, int64_t id, struct state_pin **pins, size_t *nr)
{
	sqlite3_stmt *stmt = NULL;
	struct state_pin *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	*pins = NULL;
	*nr = 0;
	r = state_prepare(st, "SELECT first_le, nr, tier FROM pin WHERE pool_id = ?1 ORDER BY first_le",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const unsigned char *tier = sqlite3_column_text(stmt, 2);

		r = grow_for_one((void **)&v, &cap, n, sizeof(*v));
		if (r < 0)
			goto out;
		v[n].first = (uint32_t)sqlite3_column_int64(stmt, 0);
		v[n].nr = (uint32_t)sqlite3_column_int64(stmt, 1);
		v[n].ssd = tier && strcmp((const char *)tier, "ssd") == 0;
		n++;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	if (r < 0) {
		free(v);
		return r;
	}
	*pins = v;
	*nr = n;
	return 0;
}

int state_pins_save(struct state *st, int64_t id, const struct state_pin *pins, size_t nr)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_exec_id(st, "DELETE FROM pin WHERE pool_id = ?1", id);
	if (r == 0)
		r = state_prepare(st, "INSERT INTO pin (pool_id, first_le, nr, tier) VALUES (?1, ?2, ?3, ?4)",
				  &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, pins[i].first);
		sqlite3_bind_int64(stmt, 3, pins[i].nr);
		sqlite3_bind_text(stmt, 4, pins[i].ssd ? "ssd" : "hdd", -1, SQLITE_STATIC);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return state_commit_or_rollback(st, r);
}

static void bind_moves(sqlite3_stmt *stmt, int first, const struct state_moves *m)
{
	sqlite3_bind_int64(stmt, first, (sqlite3_int64)m->promoted_extents);
	sqlite3_bind_int64(stmt, first + 1, (sqlite3_int64)m->demoted_extents);
	sqlite3_bind_int64(stmt, first + 2, (sqlite3_int64)m->promoted_bytes);
	sqlite3_bind_int64(stmt, first + 3, (sqlite3_int64)m->demoted_bytes);
	sqlite3_bind_int64(stmt, first + 4, (sqlite3_int64)m->failed);
}

static void column_moves(sqlite3_stmt *stmt, int first, struct state_moves *m)
{
	m->promoted_extents = (uint64_t)sqlite3_column_int64(stmt, first);
	m->demoted_extents = (uint64_t)sqlite3_column_int64(stmt, first + 1);
	m->promoted_bytes = (uint64_t)sqlite3_column_int64(stmt, first + 2);
	m->demoted_bytes = (uint64_t)sqlite3_column_int64(stmt, first + 3);
	m->failed = (uint64_t)sqlite3_column_int64(stmt, first + 4);
}

int state_run_insert(struct state *st, int64_t pool_id, struct state_run *run)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "INSERT INTO run (pool_id, trigger_kind, policy, started, planned_extents,"
			  " result, planned_pieces) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, pool_id);
	sqlite3_bind_text(stmt, 2, run->trigger, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, run->policy, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, run->started);
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64)run->planned_extents);
	sqlite3_bind_text(stmt, 6, run->result, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64)run->planned_pieces);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	if (r == 0)
		run->id = sqlite3_last_insert_rowid(st->db);
	return r;
}

int state_run_update(struct state *st, const struct state_run *run)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "UPDATE run SET finished = ?1, planned_extents = ?2, promoted_extents = ?3,"
			  " demoted_extents = ?4, promoted_bytes = ?5, demoted_bytes = ?6, failed = ?7,"
			  " result = ?8, message = ?9, planned_pieces = ?11, promoted_pieces = ?12,"
			  " demoted_pieces = ?13 WHERE id = ?10", &stmt);
	if (r < 0)
		return r;
	if (run->finished)
		sqlite3_bind_int64(stmt, 1, run->finished);
	else
		sqlite3_bind_null(stmt, 1);
	sqlite3_bind_int64(stmt, 2, (sqlite3_int64)run->planned_extents);
	bind_moves(stmt, 3, &run->moved);
	sqlite3_bind_text(stmt, 8, run->result, -1, SQLITE_STATIC);
	if (run->message[0])
		sqlite3_bind_text(stmt, 9, run->message, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(stmt, 9);
	sqlite3_bind_int64(stmt, 10, run->id);
	sqlite3_bind_int64(stmt, 11, (sqlite3_int64)run->planned_pieces);
	sqlite3_bind_int64(stmt, 12, (sqlite3_int64)run->moved.promoted_pieces);
	sqlite3_bind_int64(stmt, 13, (sqlite3_int64)run->moved.demoted_pieces);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_runs_list(struct state *st, int64_t pool_id, unsigned limit, struct state_run **runs,
		    size_t *nr)
{
	sqlite3_stmt *stmt = NULL;
	struct state_run *v;
	size_t n = 0;
	int r, rc;

	*runs = NULL;
	*nr = 0;
	v = calloc(limit ? limit : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = state_prepare(st,
			  "SELECT id, trigger_kind, policy, started, finished, planned_extents,"
			  " promoted_extents, demoted_extents, promoted_bytes, demoted_bytes, failed,"
			  " result, message, planned_pieces, promoted_pieces, demoted_pieces FROM run"
			  " WHERE pool_id = ?1 ORDER BY id DESC LIMIT ?2",
			  &stmt);
	if (r < 0)
		goto out;
	sqlite3_bind_int64(stmt, 1, pool_id);
	sqlite3_bind_int64(stmt, 2, limit);
	while (n < limit && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct state_run *run = &v[n++];

		run->id = sqlite3_column_int64(stmt, 0);
		copy_text(run->trigger, sizeof(run->trigger), stmt, 1);
		copy_text(run->policy, sizeof(run->policy), stmt, 2);
		run->started = sqlite3_column_int64(stmt, 3);
		run->finished = sqlite3_column_int64(stmt, 4);
		run->planned_extents = (uint64_t)sqlite3_column_int64(stmt, 5);
		column_moves(stmt, 6, &run->moved);
		copy_text(run->result, sizeof(run->result), stmt, 11);
		copy_text(run->message, sizeof(run->message), stmt, 12);
		run->planned_pieces = (uint64_t)sqlite3_column_int64(stmt, 13);
		run->moved.promoted_pieces = (uint64_t)sqlite3_column_int64(stmt, 14);
		run->moved.demoted_pieces = (uint64_t)sqlite3_column_int64(stmt, 15);
	}
	if (n < limit && rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	if (r < 0) {
		free(v);
		return r;
	}
	*runs = v;
	*nr = n;
	return 0;
}

int state_runs_interrupted(struct state *st, int64_t now)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "UPDATE run SET result = 'interrupted', finished = ?1,"
			  " message = 'tierd stopped before the run ended' WHERE result = 'running'",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, now);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_runs_prune(struct state *st, int64_t pool_id, unsigned keep)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	/*
	 * By id, the order runs were recorded in: by start time, a clock set
	 * back would make every new run the oldest and prune it at once.
	 */
	r = state_prepare(st,
			  "DELETE FROM run WHERE pool_id = ?1 AND result != 'running' AND id <"
			  " (SELECT id FROM run WHERE pool_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, pool_id);
	sqlite3_bind_int64(stmt, 2, keep ? keep - 1 : 0);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_runs_count(struct state *st, int64_t pool_id,
		     int (*fn)(const char *trigger, const char *result, uint64_t n, void *ctx),
		     void *ctx)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc = SQLITE_DONE;

	r = state_prepare(st,
			  "SELECT trigger_kind, result, n FROM run_total WHERE pool_id = ?1",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, pool_id);
	while (r == 0 && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
		r = fn((const char *)sqlite3_column_text(stmt, 0),
		       (const char *)sqlite3_column_text(stmt, 1),
		       (uint64_t)sqlite3_column_int64(stmt, 2), ctx);
	if (r == 0 && rc != SQLITE_DONE)
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
	return r;
}

int state_moves_add(struct state *st, int64_t id, int64_t minute, const struct state_moves *m)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "INSERT INTO moves (pool_id, minute, promoted_extents, demoted_extents,"
			  " promoted_bytes, demoted_bytes, failed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			  " ON CONFLICT (pool_id, minute) DO UPDATE SET"
			  " promoted_extents = promoted_extents + excluded.promoted_extents,"
			  " demoted_extents = demoted_extents + excluded.demoted_extents,"
			  " promoted_bytes = promoted_bytes + excluded.promoted_bytes,"
			  " demoted_bytes = demoted_bytes + excluded.demoted_bytes,"
			  " failed = failed + excluded.failed", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, minute);
	bind_moves(stmt, 3, m);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_moves_total(struct state *st, int64_t id, struct state_moves *out)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	memset(out, 0, sizeof(*out));
	r = state_prepare(st,
			  "SELECT promoted_extents, demoted_extents, promoted_bytes, demoted_bytes, failed"
			  " FROM moves_total WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		column_moves(stmt, 0, out);
	else if (rc != SQLITE_DONE) /* no row: nothing moved yet */
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
	return r;
}

/* Add the rows of one query (interval start seconds, then columns) into out. */
static int state_history_query(struct state *st, const char *sql, int64_t id, int64_t start,
			       uint32_t step_s, size_t nr, struct state_interval *out, int moves)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = state_prepare(st, sql, &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, start);
	sqlite3_bind_int64(stmt, 3, start + (int64_t)step_s * (int64_t)nr);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(stmt, 0);
		size_t i;

		if (t < start)
			continue;
		i = (size_t)((t - start) / step_s);
		if (i >= nr)
			continue;
		if (moves) {
			struct state_moves m;

			column_moves(stmt, 1, &m);
			out[i].moved.promoted_extents += m.promoted_extents;
			out[i].moved.demoted_extents += m.demoted_extents;
			out[i].moved.promoted_bytes += m.promoted_bytes;
			out[i].moved.demoted_bytes += m.demoted_bytes;
			out[i].moved.failed += m.failed;
		} else {
			const unsigned char *tier = sqlite3_column_text(stmt, 1);
			struct state_tier_io *io =
				&out[i].io[tier && !strcmp((const char *)tier, "ssd") ? METADATA_TIER_SSD :
											 METADATA_TIER_HDD];

			io->reads += (uint64_t)sqlite3_column_int64(stmt, 2);
			io->writes += (uint64_t)sqlite3_column_int64(stmt, 3);
			io->read_bytes += (uint64_t)sqlite3_column_int64(stmt, 4);
			io->write_bytes += (uint64_t)sqlite3_column_int64(stmt, 5);
		}
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
	return r;
}

int state_history(struct state *st, int64_t id, int64_t start, uint32_t step_s, size_t nr,
		  struct state_interval *out)
{
	int r;

	if (step_s == 0)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		out[i].start = start + (int64_t)i * step_s;
	r = state_history_query(st,
				"SELECT minute * 60, tier, reads, writes, read_bytes, write_bytes"
				" FROM tier_io WHERE pool_id = ?1 AND minute * 60 >= ?2 AND minute * 60 < ?3",
				id, start, step_s, nr, out, 0);
	if (r == 0)
		r = state_history_query(st,
					"SELECT hour * 3600, tier, reads, writes, read_bytes, write_bytes"
					" FROM tier_io_hourly WHERE pool_id = ?1 AND hour * 3600 >= ?2"
					" AND hour * 3600 < ?3", id, start, step_s, nr, out, 0);
	if (r == 0)
		r = state_history_query(st,
					"SELECT minute * 60, promoted_extents, demoted_extents,"
					" promoted_bytes, demoted_bytes, failed FROM moves"
					" WHERE pool_id = ?1 AND minute * 60 >= ?2 AND minute * 60 < ?3",
					id, start, step_s, nr, out, 1);
	return r;
}

int state_intents_add(struct state *st, int64_t id, const struct state_intent *v, size_t nr,
		      int64_t now)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st,
			  "INSERT OR REPLACE INTO migration (pool_id, le, src_dev, src_pe, dst_dev,"
			  " dst_pe, started) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, v[i].le);
		sqlite3_bind_int64(stmt, 3, v[i].src_dev);
		sqlite3_bind_int64(stmt, 4, v[i].src_pe);
		sqlite3_bind_int64(stmt, 5, v[i].dst_dev);
		sqlite3_bind_int64(stmt, 6, v[i].dst_pe);
		sqlite3_bind_int64(stmt, 7, now);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return state_commit_or_rollback(st, r);
}

int state_intents_clear(struct state *st, int64_t id, uint64_t *nr)
{
	uint64_t n = 0;
	int r;

	/* One transaction: one sync after each batch, whatever it moved. */
	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_exec_id(st, "DELETE FROM migration WHERE pool_id = ?1", id);
	if (r == 0) {
		n = (uint64_t)sqlite3_changes(st->db);
		r = state_exec_id(st, "DELETE FROM piece_migration WHERE pool_id = ?1", id);
	}
	if (r == 0)
		n += (uint64_t)sqlite3_changes(st->db);
	r = state_commit_or_rollback(st, r);
	if (r == 0 && nr)
		*nr = n;
	return r;
}

int state_piece_intents_add(struct state *st, int64_t id, const struct state_piece_intent *v,
			    size_t nr, int64_t now)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st,
			  "INSERT OR REPLACE INTO piece_migration (pool_id, le, idx, src_dev, src_pe,"
			  " src_slot, dst_dev, dst_pe, dst_slot, started)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, v[i].le);
		sqlite3_bind_int64(stmt, 3, v[i].idx);
		sqlite3_bind_int64(stmt, 4, v[i].src_dev);
		sqlite3_bind_int64(stmt, 5, v[i].src_pe);
		sqlite3_bind_int64(stmt, 6, v[i].src_slot);
		sqlite3_bind_int64(stmt, 7, v[i].dst_dev);
		sqlite3_bind_int64(stmt, 8, v[i].dst_pe);
		sqlite3_bind_int64(stmt, 9, v[i].dst_slot);
		sqlite3_bind_int64(stmt, 10, now);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return state_commit_or_rollback(st, r);
}

int state_piece_intents_load(struct state *st, int64_t id, struct state_piece_intent **out,
			     size_t *nr)
{
	sqlite3_stmt *stmt = NULL;
	struct state_piece_intent *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	*out = NULL;
	*nr = 0;
	r = state_prepare(st,
			  "SELECT le, idx, src_dev, src_pe, src_slot, dst_dev, dst_pe, dst_slot"
			  " FROM piece_migration WHERE pool_id = ?1 ORDER BY le, idx", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		r = grow_for_one((void **)&v, &cap, n, sizeof(*v));
		if (r < 0)
			goto out;
		v[n] = (struct state_piece_intent){
			.le = (uint32_t)sqlite3_column_int64(stmt, 0),
			.idx = (uint16_t)sqlite3_column_int64(stmt, 1),
			.src_dev = (uint16_t)sqlite3_column_int64(stmt, 2),
			.src_pe = (uint32_t)sqlite3_column_int64(stmt, 3),
			.src_slot = (uint16_t)sqlite3_column_int64(stmt, 4),
			.dst_dev = (uint16_t)sqlite3_column_int64(stmt, 5),
			.dst_pe = (uint32_t)sqlite3_column_int64(stmt, 6),
			.dst_slot = (uint16_t)sqlite3_column_int64(stmt, 7),
		};
		n++;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	if (r < 0) {
		free(v);
		return r;
	}
	*out = v;
	*nr = n;
	return 0;
}

int state_intents_load(struct state *st, int64_t id, struct state_intent **out, size_t *nr)
{
	sqlite3_stmt *stmt = NULL;
	struct state_intent *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc;

	*out = NULL;
	*nr = 0;
	r = state_prepare(st,
			  "SELECT le, src_dev, src_pe, dst_dev, dst_pe FROM migration WHERE pool_id = ?1"
			  " ORDER BY le", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		r = grow_for_one((void **)&v, &cap, n, sizeof(*v));
		if (r < 0)
			goto out;
		v[n].le = (uint32_t)sqlite3_column_int64(stmt, 0);
		v[n].src_dev = (uint16_t)sqlite3_column_int64(stmt, 1);
		v[n].src_pe = (uint32_t)sqlite3_column_int64(stmt, 2);
		v[n].dst_dev = (uint16_t)sqlite3_column_int64(stmt, 3);
		v[n].dst_pe = (uint32_t)sqlite3_column_int64(stmt, 4);
		n++;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	if (r < 0) {
		free(v);
		return r;
	}
	*out = v;
	*nr = n;
	return 0;
}
