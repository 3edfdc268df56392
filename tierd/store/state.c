#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schema.h"

struct state {
	sqlite3 *db;
	char error[256];
};

static int state_fail(struct state *st, int rc)
{
	snprintf(st->error, sizeof(st->error), "%s", sqlite3_errmsg(st->db));
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	default:
		return -EIO;
	}
}

const char *state_last_error(const struct state *st)
{
	return st ? st->error : "";
}

static int state_exec(struct state *st, const char *sql)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : state_fail(st, rc);
}

static int state_prepare(struct state *st, const char *sql, sqlite3_stmt **stmt)
{
	int rc = sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL);

	return rc == SQLITE_OK ? 0 : state_fail(st, rc);
}

/* Step a statement that returns no rows, then reset it for reuse. */
static int state_step_done(struct state *st, sqlite3_stmt *stmt)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return rc == SQLITE_DONE ? 0 : state_fail(st, rc);
}

static int state_user_version(struct state *st, unsigned *version)
{
	sqlite3_stmt *stmt = NULL;
	int r = state_prepare(st, "PRAGMA user_version", &stmt);

	if (r < 0)
		return r;
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		*version = (unsigned)sqlite3_column_int(stmt, 0);
	} else {
		r = state_fail(st, sqlite3_errcode(st->db));
	}
	sqlite3_finalize(stmt);
	return r;
}

static int state_migrate(struct state *st)
{
	unsigned version = 0;
	int r = state_user_version(st, &version);

	if (r < 0)
		return r;
	if (version > schema_nr_migrations) {
		snprintf(st->error, sizeof(st->error),
			 "the database has schema version %u, newer than this tierd knows (%u)",
			 version, schema_nr_migrations);
		return -EPROTONOSUPPORT;
	}
	for (unsigned i = version; i < schema_nr_migrations; i++) {
		char pragma[64];

		r = state_exec(st, "BEGIN IMMEDIATE");
		if (r < 0)
			return r;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %u",
			 schema_migrations[i].number);
		r = state_exec(st, schema_migrations[i].sql);
		if (r == 0)
			r = state_exec(st, pragma);
		if (r == 0)
			r = state_exec(st, "COMMIT");
		if (r < 0) {
			char why[sizeof(st->error)];

			snprintf(why, sizeof(why), "%s", st->error);
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
			snprintf(st->error, sizeof(st->error), "migration %s: %.200s",
				 schema_migrations[i].name, why);
			return r;
		}
	}
	return 0;
}

int state_open(struct state **out, const char *dir, char *err, size_t err_len)
{
	struct state *st;
	char path[PATH_MAX];
	int rc, r;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, err_len, "cannot create %s: %s", dir, strerror(-r));
		return r;
	}
	if (snprintf(path, sizeof(path), "%s/tierd.db", dir) >= (int)sizeof(path)) {
		snprintf(err, err_len, "state directory path too long");
		return -ENAMETOOLONG;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	rc = sqlite3_open_v2(path, &st->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		r = st->db ? state_fail(st, rc) : -ENOMEM;
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 5000);
	/* FULL: a committed remap must survive a power cut (DESIGN: step 5). */
	r = state_exec(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
			   "PRAGMA foreign_keys = ON;");
	if (r < 0)
		goto fail;
	r = state_migrate(st);
	if (r < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	snprintf(err, err_len, "%s: %s", path, st->error);
	sqlite3_close(st->db);
	free(st);
	return r;
}

void state_close(struct state *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st);
}

void state_pool_destroy(struct state_pool *p)
{
	if (!p)
		return;
	extmap_destroy(&p->map);
}

static const char *tier_name(enum metadata_tier tier)
{
	return tier == METADATA_TIER_SSD ? "ssd" : "hdd";
}

/* A one-off statement whose only parameter is an id. */
static int state_exec_id(struct state *st, const char *sql, int64_t id)
{
	sqlite3_stmt *stmt = NULL;
	int r = state_prepare(st, sql, &stmt);

	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

static int state_write_pool(struct state *st, const struct state_pool *p)
{
	static const char *const sql_device =
		"INSERT INTO device (pool_id, idx, uuid, tier, path, size_bytes,"
		" logical_block_size, data_start, nr_pe, reserve_pe)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char *const sql_extent =
		"INSERT INTO extent (pool_id, le, dev, pe) VALUES (?, ?, ?, ?)";
	sqlite3_stmt *dev = NULL, *ext = NULL;
	char uuid[37];
	int r;

	r = state_prepare(st, sql_device, &dev);
	if (r < 0)
		goto out;
	for (unsigned i = 0; i < p->meta.nr_devs; i++) {
		const struct metadata_dev *d = &p->meta.devs[i];

		metadata_uuid_format(d->uuid, uuid);
		sqlite3_bind_int64(dev, 1, p->id);
		sqlite3_bind_int(dev, 2, (int)i);
		sqlite3_bind_text(dev, 3, uuid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(dev, 4, tier_name(d->tier), -1, SQLITE_STATIC);
		sqlite3_bind_text(dev, 5, p->paths[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(dev, 6, (sqlite3_int64)d->size_bytes);
		sqlite3_bind_int64(dev, 7, d->logical_block_size);
		sqlite3_bind_int64(dev, 8, (sqlite3_int64)d->data_start);
		sqlite3_bind_int64(dev, 9, d->nr_pe);
		sqlite3_bind_int64(dev, 10, d->reserve_pe);
		r = state_step_done(st, dev);
		if (r < 0)
			goto out;
	}
	r = state_prepare(st, sql_extent, &ext);
	if (r < 0)
		goto out;
	for (uint32_t le = 0; le < p->map.nr_logical; le++) {
		struct extmap_loc loc = extmap_get(&p->map, le);

		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		sqlite3_bind_int64(ext, 1, p->id);
		sqlite3_bind_int64(ext, 2, le);
		sqlite3_bind_int(ext, 3, loc.dev);
		sqlite3_bind_int64(ext, 4, loc.pe);
		r = state_step_done(st, ext);
		if (r < 0)
			goto out;
	}
out:
	sqlite3_finalize(ext);
	sqlite3_finalize(dev);
	return r;
}

static void state_bind_pool_row(sqlite3_stmt *stmt, const struct state_pool *p, char uuid[37])
{
	metadata_uuid_format(p->meta.uuid, uuid);
	sqlite3_bind_text(stmt, 1, uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, p->meta.name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 3, (sqlite3_int64)p->meta.extent_size);
	sqlite3_bind_int64(stmt, 4, p->meta.flags);
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64)p->meta.created);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64)p->meta.generation);
	sqlite3_bind_int64(stmt, 7, p->map.nr_logical);
	sqlite3_bind_int(stmt, 8, p->want_active);
}

/* End the transaction: commit if r is 0, else roll back keeping the first error. */
static int state_commit_or_rollback(struct state *st, int r)
{
	if (r == 0)
		r = state_exec(st, "COMMIT");
	if (r < 0) {
		char why[sizeof(st->error)];

		snprintf(why, sizeof(why), "%s", st->error);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		snprintf(st->error, sizeof(st->error), "%s", why);
	}
	return r;
}

int state_pool_insert(struct state *st, struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	char uuid[37];
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st,
			  "INSERT INTO pool (uuid, name, extent_size, flags, created, generation,"
			  " nr_logical, want_active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			  &stmt);
	if (r == 0) {
		state_bind_pool_row(stmt, p, uuid);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	if (r == 0) {
		p->id = sqlite3_last_insert_rowid(st->db);
		r = state_write_pool(st, p);
	}
	return state_commit_or_rollback(st, r);
}

int state_pool_save(struct state *st, const struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	char uuid[37];
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st,
			  "UPDATE pool SET uuid = ?, name = ?, extent_size = ?, flags = ?,"
			  " created = ?, generation = ?, nr_logical = ?, want_active = ?"
			  " WHERE id = ?",
			  &stmt);
	if (r == 0) {
		state_bind_pool_row(stmt, p, uuid);
		sqlite3_bind_int64(stmt, 9, p->id);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	if (r == 0)
		r = state_exec_id(st, "DELETE FROM extent WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_exec_id(st, "DELETE FROM device WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_write_pool(st, p);
	return state_commit_or_rollback(st, r);
}

int state_pool_save_extents(struct state *st, const struct state_pool *p, const uint32_t *les,
			    size_t nr)
{
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = state_prepare(st, "UPDATE pool SET generation = ?1, nr_logical = ?2 WHERE id = ?3", &stmt);
	if (r == 0) {
		sqlite3_bind_int64(stmt, 1, (sqlite3_int64)p->meta.generation);
		sqlite3_bind_int64(stmt, 2, p->map.nr_logical);
		sqlite3_bind_int64(stmt, 3, p->id);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0)
		r = state_prepare(st, "UPDATE extent SET dev = ?1, pe = ?2 WHERE pool_id = ?3 AND le = ?4",
				  &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		struct extmap_loc loc = extmap_get(&p->map, les[i]);

		sqlite3_bind_int(stmt, 1, loc.dev);
		sqlite3_bind_int64(stmt, 2, loc.pe);
		sqlite3_bind_int64(stmt, 3, p->id);
		sqlite3_bind_int64(stmt, 4, les[i]);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0)
		r = state_prepare(st, "DELETE FROM migration WHERE pool_id = ?1 AND le = ?2", &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int64(stmt, 2, les[i]);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return state_commit_or_rollback(st, r);
}

static int state_update_pool_int(struct state *st, const char *sql, int64_t id, int64_t value)
{
	sqlite3_stmt *stmt = NULL;
	int r = state_prepare(st, sql, &stmt);

	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, value);
	sqlite3_bind_int64(stmt, 2, id);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

int state_pool_set_want_active(struct state *st, int64_t id, int want_active)
{
	return state_update_pool_int(st, "UPDATE pool SET want_active = ?1 WHERE id = ?2", id,
				     want_active);
}

int state_pool_delete(struct state *st, int64_t id)
{
	return state_exec_id(st, "DELETE FROM pool WHERE id = ?1", id);
}

int state_pool_set_path(struct state *st, int64_t id, unsigned dev, const char *path)
{
	sqlite3_stmt *stmt = NULL;
	int r = state_prepare(st, "UPDATE device SET path = ?1 WHERE pool_id = ?2 AND idx = ?3",
			      &stmt);

	if (r < 0)
		return r;
	sqlite3_bind_text(stmt, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, id);
	sqlite3_bind_int(stmt, 3, (int)dev);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return r;
}

static int state_load_devices(struct state *st, struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = state_prepare(st,
			  "SELECT idx, uuid, tier, path, size_bytes, logical_block_size, data_start,"
			  " nr_pe, reserve_pe FROM device WHERE pool_id = ?1 ORDER BY idx",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, p->id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		unsigned idx = (unsigned)sqlite3_column_int(stmt, 0), dev_idx;
		struct metadata_dev *d;
		const char *uuid = (const char *)sqlite3_column_text(stmt, 1);
		const char *tier = (const char *)sqlite3_column_text(stmt, 2);
		const char *path = (const char *)sqlite3_column_text(stmt, 3);

		if (idx != p->meta.nr_devs || idx >= METADATA_MAX_DEVS || !uuid || !tier || !path) {
			snprintf(st->error, sizeof(st->error), "pool %s: device rows out of order",
				 p->meta.name);
			r = -EUCLEAN;
			goto out;
		}
		d = &p->meta.devs[idx];
		if (metadata_uuid_parse(d->uuid, uuid) < 0) {
			snprintf(st->error, sizeof(st->error), "pool %s: bad device uuid '%s'",
				 p->meta.name, uuid);
			r = -EUCLEAN;
			goto out;
		}
		d->tier = strcmp(tier, "ssd") == 0 ? METADATA_TIER_SSD : METADATA_TIER_HDD;
		snprintf(p->paths[idx], sizeof(p->paths[idx]), "%s", path);
		d->size_bytes = (uint64_t)sqlite3_column_int64(stmt, 4);
		d->logical_block_size = (uint32_t)sqlite3_column_int64(stmt, 5);
		d->data_start = (uint64_t)sqlite3_column_int64(stmt, 6);
		d->nr_pe = (uint32_t)sqlite3_column_int64(stmt, 7);
		d->reserve_pe = (uint32_t)sqlite3_column_int64(stmt, 8);
		r = extmap_add_dev(&p->map, d->nr_pe, &dev_idx);
		if (r < 0)
			goto out;
		p->meta.nr_devs++;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	return r;
}

static int state_load_extents(struct state *st, struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = state_prepare(st, "SELECT le, dev, pe FROM extent WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, p->id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite3_int64 le = sqlite3_column_int64(stmt, 0);
		sqlite3_int64 dev = sqlite3_column_int64(stmt, 1);
		sqlite3_int64 pe = sqlite3_column_int64(stmt, 2);

		r = -EUCLEAN;
		if (le < 0 || le > UINT32_MAX || dev < 0 || dev >= EXTMAP_MAX_DEVS || pe < 0 ||
		    pe > UINT32_MAX)
			goto bad;
		r = extmap_map(&p->map, (uint32_t)le, (unsigned)dev, (uint32_t)pe);
		if (r < 0)
			goto bad;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
	goto out;
bad:
	snprintf(st->error, sizeof(st->error), "pool %s: extent map row le=%lld invalid (%s)",
		 p->meta.name, (long long)sqlite3_column_int64(stmt, 0), strerror(-r));
	r = -EUCLEAN;
out:
	sqlite3_finalize(stmt);
	return r;
}

int state_pool_load_all(struct state *st, struct state_pool ***pools_out, size_t *nr_out)
{
	sqlite3_stmt *stmt = NULL;
	struct state_pool **pools = NULL, *p;
	size_t nr = 0;
	int r, rc;

	r = state_prepare(st,
			  "SELECT id, uuid, name, extent_size, flags, created, generation,"
			  " nr_logical, want_active FROM pool ORDER BY name",
			  &stmt);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct state_pool **grown = realloc(pools, (nr + 1) * sizeof(*pools));
		const char *uuid = (const char *)sqlite3_column_text(stmt, 1);
		const char *name = (const char *)sqlite3_column_text(stmt, 2);

		r = -ENOMEM;
		if (!grown)
			goto fail;
		pools = grown;
		p = calloc(1, sizeof(*p));
		if (!p)
			goto fail;
		pools[nr++] = p;
		p->id = sqlite3_column_int64(stmt, 0);
		snprintf(p->meta.name, sizeof(p->meta.name), "%s", name ? name : "");
		r = -EUCLEAN;
		if (!uuid || metadata_uuid_parse(p->meta.uuid, uuid) < 0) {
			snprintf(st->error, sizeof(st->error), "pool %s: bad uuid", p->meta.name);
			goto fail;
		}
		p->meta.extent_size = (uint64_t)sqlite3_column_int64(stmt, 3);
		p->meta.flags = (uint32_t)sqlite3_column_int64(stmt, 4);
		p->meta.created = (uint64_t)sqlite3_column_int64(stmt, 5);
		p->meta.generation = (uint64_t)sqlite3_column_int64(stmt, 6);
		p->want_active = sqlite3_column_int(stmt, 8);
		r = extmap_init(&p->map, (uint32_t)sqlite3_column_int64(stmt, 7));
		if (r < 0)
			goto fail;
		r = state_load_devices(st, p);
		if (r < 0)
			goto fail;
		r = state_load_extents(st, p);
		if (r < 0)
			goto fail;
	}
	if (rc != SQLITE_DONE) {
		r = state_fail(st, rc);
		goto fail;
	}
	sqlite3_finalize(stmt);
	*pools_out = pools;
	*nr_out = nr;
	return 0;
fail:
	sqlite3_finalize(stmt);
	for (size_t i = 0; i < nr; i++) {
		state_pool_destroy(pools[i]);
		free(pools[i]);
	}
	free(pools);
	return r;
}

#define STATE_HEAT_RECORD 24

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

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int state_heat_load(struct state *st, int64_t id, struct heat_table *t)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc;

	r = state_prepare(st, "SELECT sampled_ns FROM heat_sampled WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		t->last_sample_ns = (uint64_t)sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	stmt = NULL;
	r = state_prepare(st, "SELECT first_le, nr, data FROM heat WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite3_int64 first = sqlite3_column_int64(stmt, 0);
		sqlite3_int64 nr = sqlite3_column_int64(stmt, 1);
		const uint8_t *data = sqlite3_column_blob(stmt, 2);

		if (first < 0 || nr < 0 || !data ||
		    sqlite3_column_bytes(stmt, 2) != nr * STATE_HEAT_RECORD)
			continue;
		for (sqlite3_int64 i = 0; i < nr && first + i < t->nr; i++) {
			const uint8_t *rec = data + i * STATE_HEAT_RECORD;
			struct heat_extent *e = &t->e[first + i];
			uint32_t bits = (uint32_t)get_le64(rec);
			float heat;

			memcpy(&heat, &bits, sizeof(heat));
			e->heat = heat;
			e->moved_at = (uint32_t)(get_le64(rec) >> 32);
			e->reads = get_le64(rec + 8);
			e->writes = get_le64(rec + 16);
		}
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
	sqlite3_finalize(stmt);
	return r;
}

int state_heat_save(struct state *st, int64_t id, const struct heat_table *t, uint32_t from,
		    uint32_t to)
{
	sqlite3_stmt *stmt = NULL;
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
				  "INSERT OR REPLACE INTO heat (pool_id, first_le, nr, data)"
				  " VALUES (?1, ?2, ?3, ?4)", &stmt);
	/* Rows always start at multiples of the chunk, so a row replaces its own past. */
	for (uint32_t first = from; r == 0 && first < to; first += STATE_HEAT_CHUNK) {
		uint32_t nr = to - first < STATE_HEAT_CHUNK ? to - first : STATE_HEAT_CHUNK;

		for (uint32_t i = 0; i < nr; i++) {
			const struct heat_extent *e = &t->e[first + i];
			uint8_t *rec = data + (size_t)i * STATE_HEAT_RECORD;
			uint32_t bits;

			memcpy(&bits, &e->heat, sizeof(bits));
			put_le32(rec, bits);
			put_le32(rec + 4, e->moved_at);
			put_le64(rec + 8, e->reads);
			put_le64(rec + 16, e->writes);
		}
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_int64(stmt, 2, first);
		sqlite3_bind_int64(stmt, 3, nr);
		sqlite3_bind_blob(stmt, 4, data, (int)(nr * STATE_HEAT_RECORD), SQLITE_STATIC);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	r = state_commit_or_rollback(st, r);
out:
	free(data);
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

/* ---- tiering ---- */

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
			  " result) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, pool_id);
	sqlite3_bind_text(stmt, 2, run->trigger, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, run->policy, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, run->started);
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64)run->planned_extents);
	sqlite3_bind_text(stmt, 6, run->result, -1, SQLITE_STATIC);
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
			  " result = ?8, message = ?9 WHERE id = ?10", &stmt);
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
			  " result, message FROM run WHERE pool_id = ?1 ORDER BY id DESC LIMIT ?2",
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

int state_runs_count(struct state *st, int64_t pool_id,
		     int (*fn)(const char *trigger, const char *result, uint64_t n, void *ctx),
		     void *ctx)
{
	sqlite3_stmt *stmt = NULL;
	int r, rc = SQLITE_DONE;

	r = state_prepare(st,
			  "SELECT trigger_kind, result, count(*) FROM run"
			  " WHERE pool_id = ?1 AND result != 'running' GROUP BY trigger_kind, result",
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
			  "SELECT TOTAL(promoted_extents), TOTAL(demoted_extents), TOTAL(promoted_bytes),"
			  " TOTAL(demoted_bytes), TOTAL(failed) FROM moves WHERE pool_id = ?1", &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->promoted_extents = (uint64_t)sqlite3_column_double(stmt, 0);
		out->demoted_extents = (uint64_t)sqlite3_column_double(stmt, 1);
		out->promoted_bytes = (uint64_t)sqlite3_column_double(stmt, 2);
		out->demoted_bytes = (uint64_t)sqlite3_column_double(stmt, 3);
		out->failed = (uint64_t)sqlite3_column_double(stmt, 4);
	} else {
		r = state_fail(st, rc);
	}
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
	int r = state_exec_id(st, "DELETE FROM migration WHERE pool_id = ?1", id);

	if (r == 0 && nr)
		*nr = (uint64_t)sqlite3_changes(st->db);
	return r;
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
