/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-heat: the stored heat of each extent and the per-tier I/O history. */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "state-internal.h"

#define STATE_HEAT_RECORD 24

static const uint8_t state_heat_cold_record[STATE_HEAT_RECORD];

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Nothing to keep in extents [first, first + nr): no heat, no I/O, never
 * moved, the state of an extent with no row.  Pages not allocated are cold.
 */
static int heat_cold(const struct heat_table *t, uint32_t first, uint32_t nr)
{
	for (uint32_t i = heat_next_used(t, first, first + nr); i < first + nr;
	     i = heat_next_used(t, i + 1, first + nr)) {
		const struct heat_extent *e = heat_at(t, i);

		if (e->heat != 0.0f || e->moved_at || e->reads || e->writes)
			return 0;
	}
	return 1;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int state_heat_load(struct state *st, int64_t id, struct heat_table *t,
		    const struct heat_params *params)
{
	sqlite3_stmt *stmt = NULL;
	uint64_t sampled = 0;
	double scale = t->scale > 0 ? t->scale : 1;
	int r, rc = SQLITE_DONE;

	r = state_prepare(st, "SELECT sampled_ns FROM heat_sampled WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		sampled = (uint64_t)sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	stmt = NULL;
	/* A row newer than the table's time (a flush cut short) moves the time on. */
	r = state_prepare(st, "SELECT max(sampled_ns) FROM heat WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_INTEGER &&
	    (uint64_t)sqlite3_column_int64(stmt, 0) > sampled)
		sampled = (uint64_t)sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	stmt = NULL;
	t->last_sample_ns = sampled;
	r = state_prepare(st, "SELECT first_le, nr, data, sampled_ns FROM heat WHERE pool_id = ?1",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	while (r == 0 && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite3_int64 first = sqlite3_column_int64(stmt, 0);
		sqlite3_int64 nr = sqlite3_column_int64(stmt, 1);
		const uint8_t *data = sqlite3_column_blob(stmt, 2);
		uint64_t row_ns = sqlite3_column_type(stmt, 3) == SQLITE_INTEGER ?
					  (uint64_t)sqlite3_column_int64(stmt, 3) : sampled;
		/* The heat a row holds was true at its time; what is left of it at the table's. */
		double decay = row_ns < sampled ? heat_decay_factor(params, sampled - row_ns) : 1.0;

		if (first < 0 || nr < 0 || !data ||
		    sqlite3_column_bytes(stmt, 2) != nr * STATE_HEAT_RECORD)
			continue;
		for (sqlite3_int64 i = 0; i < nr && first + i < t->nr; i++) {
			const uint8_t *rec = data + i * STATE_HEAT_RECORD;
			struct heat_extent *e;
			uint32_t bits = (uint32_t)get_le64(rec), k;
			int was_dirty;
			float heat;

			/* Cold records take no page (a row holds a chunk, mostly cold). */
			if (!memcmp(rec, state_heat_cold_record, STATE_HEAT_RECORD))
				continue;
			k = (uint32_t)(first + i) / HEAT_CHUNK;
			was_dirty = heat_chunk_dirty(t, k);
			e = heat_at_mut(t, (uint32_t)(first + i));
			if (!e) {
				r = -ENOMEM;
				break;
			}
			/* What the store holds is no change to store again. */
			if (!was_dirty)
				heat_chunk_clean(t, k);

			memcpy(&heat, &bits, sizeof(heat));
			e->heat = heat >= 0 && heat < 3e38f ? (float)(heat * decay * scale) : 0;
			e->moved_at = (uint32_t)(get_le64(rec) >> 32);
			e->reads = get_le64(rec + 8);
			e->writes = get_le64(rec + 16);
		}
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
	return r;
}

int state_heat_save(struct state *st, int64_t id, const struct heat_table *t, uint32_t from,
		    uint32_t to)
{
	sqlite3_stmt *stmt = NULL, *del = NULL;
	uint8_t *data;
	int r;

	if (from % STATE_HEAT_CHUNK || to < from)
		return -EINVAL;
	if (to > t->nr)
		to = t->nr;
	data = malloc((size_t)STATE_HEAT_CHUNK * STATE_HEAT_RECORD);
	if (!data)
		return -ENOMEM;
	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		goto out;
	r = state_prepare(st, "INSERT OR REPLACE INTO heat_sampled (pool_id, sampled_ns) VALUES (?1, ?2)",
			  &stmt);
	if (r == 0) {
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, (sqlite3_int64)t->last_sample_ns);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0)
		r = state_prepare(st,
				  "INSERT OR REPLACE INTO heat (pool_id, first_le, nr, data, sampled_ns)"
				  " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt);
	if (r == 0)
		r = state_prepare(st, "DELETE FROM heat WHERE pool_id = ?1 AND first_le = ?2", &del);
	/* Rows always start at multiples of the chunk, so a row replaces its own past. */
	for (uint32_t first = from; r == 0 && first < to; first += STATE_HEAT_CHUNK) {
		uint32_t nr = to - first < STATE_HEAT_CHUNK ? to - first : STATE_HEAT_CHUNK;

		/* A cold chunk is no row (state_heat_load leaves it zero): a pool
		 * stores heat in proportion to what was used, not to its size. */
		if (heat_cold(t, first, nr)) {
			sqlite3_bind_int64(del, 1, id);
			sqlite3_bind_int64(del, 2, first);
			r = state_step_done(st, del);
			continue;
		}
		for (uint32_t i = 0; i < nr; i++) {
			const struct heat_extent *e = heat_at(t, first + i);
			uint8_t *rec = data + (size_t)i * STATE_HEAT_RECORD;
			float heat = (float)heat_value(t, first + i);
			uint32_t bits;

			memcpy(&bits, &heat, sizeof(bits));
			put_le32(rec, bits);
			put_le32(rec + 4, e->moved_at);
			put_le64(rec + 8, e->reads);
			put_le64(rec + 16, e->writes);
		}
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, first);
		sqlite3_bind_int64(stmt, 3, nr);
		sqlite3_bind_blob(stmt, 4, data, (int)(nr * STATE_HEAT_RECORD), SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 5, (sqlite3_int64)t->last_sample_ns);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(del);
	sqlite3_finalize(stmt);
	r = state_commit_or_rollback(st, r);
out:
	free(data);
	return r;
}

/* A stored piece weight: the piece (le16) and its weight (IEEE float, le32). */
#define STATE_PIECE_RECORD 6

int state_piece_heat_save(struct state *st, int64_t id, const struct pieceheat *ph,
			  const uint32_t *les, size_t nr, uint64_t now_ns)
{
	uint32_t ppe = ph->pieces_per_extent;
	sqlite3_stmt *stmt = NULL;
	uint8_t *data = malloc((size_t)ppe * STATE_PIECE_RECORD + 1);
	int r;

	if (!data)
		return -ENOMEM;
	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		goto out;
	r = state_exec_id(st, "DELETE FROM piece_heat WHERE pool_id = ?1", id);
	if (r == 0)
		r = state_prepare(st, "INSERT OR REPLACE INTO piece_heat (pool_id, le,"
				  " pieces_per_extent, sampled_ns, data) VALUES (?1, ?2, ?3, ?4, ?5)",
				  &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		size_t n = 0;

		for (uint32_t k = 0; k < ppe; k++) {
			float w = (float)pieceheat_weight(ph, les[i], k);
			uint32_t bits;

			if (!(w > 0))
				continue;
			memcpy(&bits, &w, sizeof(bits));
			data[n * STATE_PIECE_RECORD] = (uint8_t)k;
			data[n * STATE_PIECE_RECORD + 1] = (uint8_t)(k >> 8);
			put_le32(data + n * STATE_PIECE_RECORD + 2, bits);
			n++;
		}
		if (!n)
			continue;
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, les[i]);
		sqlite3_bind_int64(stmt, 3, ppe);
		sqlite3_bind_int64(stmt, 4, (sqlite3_int64)now_ns);
		sqlite3_bind_blob(stmt, 5, data, (int)(n * STATE_PIECE_RECORD), SQLITE_STATIC);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	r = state_commit_or_rollback(st, r);
out:
	free(data);
	return r;
}

int state_piece_heat_load(struct state *st, int64_t id, struct pieceheat *ph,
			  uint32_t nr_extents, const struct heat_params *params, uint64_t now_ns)
{
	uint32_t ppe = ph->pieces_per_extent;
	uint16_t *idx = malloc(((size_t)ppe + 1) * sizeof(*idx));
	float *w = malloc(((size_t)ppe + 1) * sizeof(*w));
	sqlite3_stmt *stmt = NULL;
	int r = -ENOMEM, rc = SQLITE_DONE;

	if (!idx || !w)
		goto out;
	r = state_prepare(st, "SELECT le, sampled_ns, data FROM piece_heat"
			  " WHERE pool_id = ?1 AND pieces_per_extent = ?2", &stmt);
	if (r < 0)
		goto out;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, ppe);
	while (r == 0 && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite3_int64 le = sqlite3_column_int64(stmt, 0);
		uint64_t at = (uint64_t)sqlite3_column_int64(stmt, 1);
		const uint8_t *data = sqlite3_column_blob(stmt, 2);
		int bytes = sqlite3_column_bytes(stmt, 2);
		double decay = at < now_ns ? heat_decay_factor(params, now_ns - at) : 1.0;
		uint32_t n = 0;

		if (le < 0 || le >= nr_extents || !data || bytes % STATE_PIECE_RECORD ||
		    bytes / STATE_PIECE_RECORD > (int)ppe)
			continue;
		for (int j = 0; j < bytes / STATE_PIECE_RECORD; j++) {
			const uint8_t *rec = data + j * STATE_PIECE_RECORD;
			uint32_t bits = (uint32_t)rec[2] | (uint32_t)rec[3] << 8 |
					(uint32_t)rec[4] << 16 | (uint32_t)rec[5] << 24;
			float f;

			memcpy(&f, &bits, sizeof(f));
			idx[n] = (uint16_t)(rec[0] | rec[1] << 8);
			w[n] = (float)(f * decay);
			/* A record that cannot be a weight leaves the row out, not the load. */
			if (idx[n] >= ppe || !(w[n] >= 0) || !(w[n] < 3e38f))
				break;
			n++;
		}
		if (n == (uint32_t)(bytes / STATE_PIECE_RECORD))
			r = pieceheat_add(ph, (uint32_t)le, idx, w, n);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
out:
	free(idx);
	free(w);
	return r;
}

int state_tier_io_add(struct state *st, int64_t id, int64_t minute, const char *tier,
		      const struct state_tier_io *io)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st,
			  "INSERT INTO tier_io (pool_id, minute, tier, reads, writes, read_bytes,"
			  " write_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
			  " ON CONFLICT (pool_id, minute, tier) DO UPDATE SET"
			  " reads = reads + excluded.reads, writes = writes + excluded.writes,"
			  " read_bytes = read_bytes + excluded.read_bytes,"
			  " write_bytes = write_bytes + excluded.write_bytes", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, minute);
	sqlite3_bind_text(stmt, 3, tier, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, (sqlite3_int64)io->reads);
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64)io->writes);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64)io->read_bytes);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64)io->write_bytes);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_tier_io_total(struct state *st, int64_t id, const char *tier, struct state_tier_io *out)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = state_prepare(st,
			  "SELECT coalesce(sum(reads), 0), coalesce(sum(writes), 0),"
			  " coalesce(sum(read_bytes), 0), coalesce(sum(write_bytes), 0) FROM"
			  " (SELECT reads, writes, read_bytes, write_bytes FROM tier_io"
			  "  WHERE pool_id = ?1 AND tier = ?2 UNION ALL"
			  "  SELECT reads, writes, read_bytes, write_bytes FROM tier_io_hourly"
			  "  WHERE pool_id = ?1 AND tier = ?2)", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_text(stmt, 2, tier, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->reads = (uint64_t)sqlite3_column_int64(stmt, 0);
		out->writes = (uint64_t)sqlite3_column_int64(stmt, 1);
		out->read_bytes = (uint64_t)sqlite3_column_int64(stmt, 2);
		out->write_bytes = (uint64_t)sqlite3_column_int64(stmt, 3);
	} else {
		r = state_fail(st, rc);
	}
	sqlite3_finalize(stmt);
	return r;
}

int state_tier_io_compact(struct state *st, int64_t before_minute)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st,
			  "INSERT INTO tier_io_hourly (pool_id, hour, tier, reads, writes, read_bytes,"
			  " write_bytes) SELECT pool_id, minute / 60, tier, sum(reads), sum(writes),"
			  " sum(read_bytes), sum(write_bytes) FROM tier_io WHERE minute < ?1"
			  " GROUP BY pool_id, minute / 60, tier"
			  " ON CONFLICT (pool_id, hour, tier) DO UPDATE SET"
			  " reads = reads + excluded.reads, writes = writes + excluded.writes,"
			  " read_bytes = read_bytes + excluded.read_bytes,"
			  " write_bytes = write_bytes + excluded.write_bytes", &stmt);
	if (r == 0) {
		sqlite3_bind_int64(stmt, 1, before_minute);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	if (r == 0)
		r = state_exec_id(st, "DELETE FROM tier_io WHERE minute < ?1", before_minute);
	return state_commit_or_rollback(st, r);
}
