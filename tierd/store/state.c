/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state: opening the database, migrations, transactions, and the pool and device rows. */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schema.h"
#include "state-internal.h"

int state_fail(struct state *st, int rc)
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

int state_exec(struct state *st, const char *sql)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : state_fail(st, rc);
}

int state_prepare(struct state *st, const char *sql, sqlite3_stmt **stmt)
{
	int rc = sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL);

	return rc == SQLITE_OK ? 0 : state_fail(st, rc);
}

/* Step a statement that returns no rows, then reset it for reuse. */
int state_step_done(struct state *st, sqlite3_stmt *stmt)
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

/*
 * The directory and any parent missing (a prefix's /var/local/lib, say);
 * parents as 0755 like any system folder, the state itself 0700.
 */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int state_open(struct state **out, const char *dir, char *err, size_t err_len)
{
	struct state *st;
	char path[PATH_MAX];
	int rc, r;

	r = make_dirs(dir);
	if (r < 0) {
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
	/* FULL: a committed remap must survive a power cut (docs/design.md, the commit). */
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
	state_staged_abort(st);
	sqlite3_close(st->db);
	state_pieces_free(st);
	free(st);
}

void state_pool_destroy(struct state_pool *p)
{
	if (!p)
		return;
	extmap_destroy(&p->map);
	piecemap_destroy(&p->pieces);
}

/* A one-off statement whose only parameter is an id. */
int state_exec_id(struct state *st, const char *sql, int64_t id)
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
	sqlite3_stmt *dev = NULL;
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
		sqlite3_bind_text(dev, 4, metadata_tier_name(d->tier), -1, SQLITE_STATIC);
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
	r = state_map_write(st, p);
	if (r == 0)
		r = state_pieces_save(st, p);
out:
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
int state_commit_or_rollback(struct state *st, int r)
{
	if (r == 0)
		r = state_exec(st, "COMMIT");
	state_pieces_end(st, r == 0);
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

/* The rows of state_pool_save, inside the caller's transaction. */
static int state_pool_write_all(struct state *st, const struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	char uuid[37];
	int r;

	/* The save that repairs a failed one: the pieces' rows too, all of them. */
	state_pieces_forget(st, p->id);
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
		r = state_exec_id(st, "DELETE FROM extent_run WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_exec_id(st, "DELETE FROM device WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_write_pool(st, p);
	return r;
}

/* The rows of state_pool_save_extents, inside the caller's transaction. */
static int state_pool_write_extents(struct state *st, const struct state_pool *p,
				    const uint32_t *les, size_t nr)
{
	sqlite3_stmt *stmt = NULL;
	int r;

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
		r = state_map_save_les(st, p, les, nr);
	/* Only in a commit that moved pieces: the rows of those pieces. */
	if (r == 0 && p->pieces.changes != p->pieces_saved)
		r = state_pieces_save(st, p);
	/* A pool moves one batch at a time: the pieces it committed are all its intents. */
	if (r == 0 && p->pieces.changes != p->pieces_saved)
		r = state_exec_id(st, "DELETE FROM piece_migration WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_prepare(st, "DELETE FROM migration WHERE pool_id = ?1 AND le = ?2", &stmt);
	for (size_t i = 0; r == 0 && i < nr; i++) {
		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int64(stmt, 2, les[i]);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return r;
}

int state_pool_save(struct state *st, const struct state_pool *p)
{
	int r = state_exec(st, "BEGIN IMMEDIATE");

	if (r < 0)
		return r;
	return state_commit_or_rollback(st, state_pool_write_all(st, p));
}

int state_pool_save_extents(struct state *st, const struct state_pool *p, const uint32_t *les,
			    size_t nr)
{
	int r = state_exec(st, "BEGIN IMMEDIATE");

	if (r < 0)
		return r;
	return state_commit_or_rollback(st, state_pool_write_extents(st, p, les, nr));
}

int state_pool_stage(struct state *st, const struct state_pool *p, const uint32_t *les,
		     size_t nr)
{
	int r;

	if (st->staged_generation)
		return -EBUSY;
	r = state_exec(st, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	r = les ? state_pool_write_extents(st, p, les, nr) : state_pool_write_all(st, p);
	if (r == 0)
		r = state_prepare(st, "UPDATE pool SET generation = ?1 WHERE id = ?2",
				  &st->staged_generation);
	if (r == 0) {
		sqlite3_bind_int64(st->staged_generation, 2, p->id);
		return 0;
	}
	return state_commit_or_rollback(st, r);
}

int state_staged_commit(struct state *st, uint64_t generation)
{
	sqlite3_stmt *stmt = st->staged_generation;
	int r;

	if (!stmt)
		return -EINVAL;
	st->staged_generation = NULL;
	sqlite3_bind_int64(stmt, 1, (sqlite3_int64)generation);
	r = state_step_done(st, stmt);
	sqlite3_finalize(stmt);
	return state_commit_or_rollback(st, r);
}

void state_staged_abort(struct state *st)
{
	if (!st || !st->staged_generation)
		return;
	sqlite3_finalize(st->staged_generation);
	st->staged_generation = NULL;
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	state_pieces_end(st, false);
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
	/* Forgotten even if the delete fails: whether it removed the rows is unknown. */
	state_pieces_drop(st, id);
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

int state_pool_load_all(struct state *st, struct state_pool ***pools_out, size_t *nr_out)
{
	sqlite3_stmt *stmt = NULL;
	struct state_pool **pools = NULL, *p;
	size_t nr = 0;
	int r, rc;

	r = state_prepare(st,
			  "SELECT id, uuid, name, extent_size, flags, created, generation,"
			  " nr_logical, want_active, pieces_per_extent FROM pool ORDER BY name",
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
		r = state_map_load(st, p);
		if (r < 0)
			goto fail;
		r = state_pieces_load(st, p, sqlite3_column_int64(stmt, 9));
		if (r < 0)
			goto fail;
		/* Without memory for the copy, the first save writes the rows whole. */
		if (state_pieces_loaded(st, p) < 0)
			state_pieces_forget(st, p->id);
		p->pieces_saved = p->pieces.changes;
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
		/* Rows that do not load may not be what the state wrote: written whole next. */
		state_pieces_forget(st, pools[i]->id);
		state_pool_destroy(pools[i]);
		free(pools[i]);
	}
	free(pools);
	return r;
}
