/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state-pieces: a pool's piece containers and pieces out
 * (schema/007-pieces.sql), as a version 2 metadata slot carries them:
 * written by their differences from the rows stored, and loaded.
 */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state-internal.h"

/* The rows of pool id, or NULL; a new entry, not known, when add and there is none. */
static struct state_piece_rows *rows_of(struct state *st, int64_t id, bool add)
{
	struct state_piece_rows *grown;

	for (size_t i = 0; i < st->nr_piece_rows; i++)
		if (st->piece_rows[i].pool_id == id)
			return &st->piece_rows[i];
	if (!add)
		return NULL;
	grown = realloc(st->piece_rows, (st->nr_piece_rows + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	st->piece_rows = grown;
	grown = &st->piece_rows[st->nr_piece_rows++];
	*grown = (struct state_piece_rows){ .pool_id = id };
	return grown;
}

static void rows_free(struct state_piece_rows *rows)
{
	free(rows->pieces);
	free(rows->containers);
	*rows = (struct state_piece_rows){ 0 };
}

/* rows := what p's pieces store as; keeps the buffers it can. */
static int rows_copy(struct state_piece_rows *rows, const struct state_pool *p)
{
	const struct piecemap *pm = &p->pieces;

	if (pm->nr_pieces > rows->pieces_cap) {
		struct piecemap_piece *v = realloc(rows->pieces, pm->nr_pieces * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rows->pieces = v;
		rows->pieces_cap = pm->nr_pieces;
	}
	if (pm->nr_containers > rows->containers_cap) {
		struct state_container_row *v = realloc(rows->containers,
							pm->nr_containers * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rows->containers = v;
		rows->containers_cap = pm->nr_containers;
	}
	rows->pool_id = p->id;
	rows->pieces_per_extent = pm->nr_containers ? pm->pieces_per_extent : 0;
	if (pm->nr_pieces)
		memcpy(rows->pieces, pm->pieces, pm->nr_pieces * sizeof(*rows->pieces));
	rows->nr_pieces = pm->nr_pieces;
	for (uint32_t i = 0; i < pm->nr_containers; i++)
		rows->containers[i] = (struct state_container_row){ pm->containers[i].dev,
								    pm->containers[i].pe };
	rows->nr_containers = pm->nr_containers;
	return 0;
}

static int step_ids(struct state *st, sqlite3_stmt *stmt, int64_t id, const int64_t *v, int n)
{
	sqlite3_bind_int64(stmt, 1, id);
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(stmt, i + 2, v[i]);
	return state_step_done(st, stmt);
}

/* Every row of the pool's, written again: its rows are not known, or its piece size changed. */
static int pieces_write_all(struct state *st, const struct state_pool *p)
{
	const struct piecemap *pm = &p->pieces;
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_exec_id(st, "DELETE FROM piece WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_exec_id(st, "DELETE FROM piece_container WHERE pool_id = ?1", p->id);
	if (r == 0)
		r = state_prepare(st, "UPDATE pool SET pieces_per_extent = ?2 WHERE id = ?1", &stmt);
	if (r == 0)
		r = step_ids(st, stmt, p->id,
			     (int64_t[]){ pm->nr_containers ? pm->pieces_per_extent : 0 }, 1);
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0 && pm->nr_containers)
		r = state_prepare(st, "INSERT INTO piece_container (pool_id, idx, dev, pe)"
				  " VALUES (?1, ?2, ?3, ?4)", &stmt);
	for (uint32_t i = 0; r == 0 && i < pm->nr_containers; i++)
		r = step_ids(st, stmt, p->id,
			     (int64_t[]){ i, pm->containers[i].dev, pm->containers[i].pe }, 3);
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0 && pm->nr_pieces)
		r = state_prepare(st, "INSERT INTO piece (pool_id, le, idx, container, slot)"
				  " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt);
	for (uint32_t i = 0; r == 0 && i < pm->nr_pieces; i++) {
		const struct piecemap_piece *pc = &pm->pieces[i];

		r = step_ids(st, stmt, p->id, (int64_t[]){ pc->le, pc->idx, pc->container, pc->slot },
			     4);
	}
	sqlite3_finalize(stmt);
	return r;
}

static int piece_cmp(const struct piecemap_piece *a, const struct piecemap_piece *b)
{
	if (a->le != b->le)
		return a->le < b->le ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/*
 * The rows that differ from the stored ones (same piece size): containers
 * appended, or all of them when one changed its place (a container dropped
 * renumbers those after it); pieces gone home, and pieces placed anew, by
 * one walk over both sorted lists.
 */
static int pieces_write_changes(struct state *st, const struct state_pool *p,
				const struct state_piece_rows *old)
{
	const struct piecemap *pm = &p->pieces;
	sqlite3_stmt *del = NULL, *put = NULL;
	uint32_t i = 0, j = 0, same = 0;
	int r = 0;

	while (same < old->nr_containers && same < pm->nr_containers &&
	       old->containers[same].dev == pm->containers[same].dev &&
	       old->containers[same].pe == pm->containers[same].pe)
		same++;
	if (same < old->nr_containers) {
		r = state_exec_id(st, "DELETE FROM piece_container WHERE pool_id = ?1", p->id);
		same = 0;
	}
	if (r == 0 && same < pm->nr_containers)
		r = state_prepare(st, "INSERT INTO piece_container (pool_id, idx, dev, pe)"
				  " VALUES (?1, ?2, ?3, ?4)", &put);
	for (uint32_t c = same; r == 0 && c < pm->nr_containers; c++)
		r = step_ids(st, put, p->id,
			     (int64_t[]){ c, pm->containers[c].dev, pm->containers[c].pe }, 3);
	sqlite3_finalize(put);
	put = NULL;
	if (r == 0)
		r = state_prepare(st, "DELETE FROM piece WHERE pool_id = ?1 AND le = ?2 AND idx = ?3",
				  &del);
	if (r == 0)
		r = state_prepare(st, "INSERT OR REPLACE INTO piece (pool_id, le, idx, container,"
				  " slot) VALUES (?1, ?2, ?3, ?4, ?5)", &put);
	while (r == 0 && (i < old->nr_pieces || j < pm->nr_pieces)) {
		const struct piecemap_piece *a = i < old->nr_pieces ? &old->pieces[i] : NULL;
		const struct piecemap_piece *b = j < pm->nr_pieces ? &pm->pieces[j] : NULL;
		int cmp = !a ? 1 : !b ? -1 : piece_cmp(a, b);

		if (cmp < 0) {
			r = step_ids(st, del, p->id, (int64_t[]){ a->le, a->idx }, 2);
			i++;
			continue;
		}
		if (cmp > 0 || a->container != b->container || a->slot != b->slot)
			r = step_ids(st, put, p->id,
				     (int64_t[]){ b->le, b->idx, b->container, b->slot }, 4);
		i += cmp == 0;
		j++;
	}
	sqlite3_finalize(del);
	sqlite3_finalize(put);
	return r;
}

int state_pieces_save(struct state *st, const struct state_pool *p)
{
	const struct piecemap *pm = &p->pieces;
	uint32_t ppe = pm->nr_containers ? pm->pieces_per_extent : 0;
	const struct state_piece_rows *old;
	int r;

	/*
	 * A second save in one transaction (none does so now): the rows known
	 * are not what the transaction holds, so neither pool's are known.
	 */
	if (st->has_pending) {
		state_pieces_forget(st, st->pending.pool_id);
		state_pieces_forget(st, p->id);
		st->has_pending = false;
	}
	/*
	 * Room for the rows to be known at the commit, which must not
	 * allocate. Without it they are written whole and stay unknown: the
	 * copy saves writes, the save does not depend on it.
	 */
	if (!rows_of(st, p->id, true) || rows_copy(&st->pending, p) < 0) {
		state_pieces_forget(st, p->id);
		return pieces_write_all(st, p);
	}
	old = rows_of(st, p->id, false);
	r = old->known && old->pieces_per_extent == ppe ? pieces_write_changes(st, p, old) :
							  pieces_write_all(st, p);
	st->has_pending = r == 0;
	return r;
}

void state_pieces_end(struct state *st, bool committed)
{
	struct state_piece_rows *rows, kept;

	if (!st->has_pending)
		return;
	st->has_pending = false;
	rows = rows_of(st, st->pending.pool_id, false);
	if (!committed || !rows)
		return;
	/* Swapped, not copied: the old rows' buffers serve the next transaction's. */
	kept = *rows;
	*rows = st->pending;
	rows->known = true;
	st->pending = kept;
}

void state_pieces_drop(struct state *st, int64_t id)
{
	struct state_piece_rows *rows = rows_of(st, id, false);

	state_pieces_forget(st, id);
	if (!rows)
		return;
	rows_free(rows);
	*rows = st->piece_rows[--st->nr_piece_rows];
}

void state_pieces_forget(struct state *st, int64_t id)
{
	struct state_piece_rows *rows = rows_of(st, id, false);

	if (rows)
		rows->known = false;
	if (st->has_pending && st->pending.pool_id == id)
		st->has_pending = false;
}

int state_pieces_loaded(struct state *st, const struct state_pool *p)
{
	struct state_piece_rows *rows = rows_of(st, p->id, true);
	int r;

	if (!rows)
		return -ENOMEM;
	r = rows_copy(rows, p);
	rows->known = r == 0;
	return r;
}

void state_pieces_free(struct state *st)
{
	for (size_t i = 0; i < st->nr_piece_rows; i++)
		rows_free(&st->piece_rows[i]);
	free(st->piece_rows);
	st->piece_rows = NULL;
	st->nr_piece_rows = 0;
	rows_free(&st->pending);
	st->has_pending = false;
}

static int pieces_invalid(struct state *st, const struct state_pool *p, const char *what)
{
	snprintf(st->error, sizeof(st->error), "pool %s: %s", p->meta.name, what);
	return -EUCLEAN;
}

/*
 * One row into p->pieces: 0, -ENOMEM, or any other error for a row that
 * could not have been written, with why naming it.
 */
typedef int (*pieces_row_fn)(struct state_pool *p, sqlite3_stmt *stmt, int64_t nth, char *why,
			     size_t why_len);

/* The containers, claimed in the map as decode claims them; the map is loaded. */
static int container_row(struct state_pool *p, sqlite3_stmt *stmt, int64_t nth, char *why,
			 size_t why_len)
{
	int64_t idx = sqlite3_column_int64(stmt, 0), dev = sqlite3_column_int64(stmt, 1);
	int64_t pe = sqlite3_column_int64(stmt, 2);
	int r;

	snprintf(why, why_len, "piece container %lld (device %lld, extent %lld) invalid",
		 (long long)idx, (long long)dev, (long long)pe);
	if (idx != nth || dev < 0 || dev >= p->map.nr_devs || pe < 0 || pe >= p->map.nr_pe[dev])
		return -EUCLEAN;
	/* A pe mapped to an extent, or a container twice, is refused by the claim. */
	r = extmap_claim(&p->map, (unsigned)dev, (uint32_t)pe);

	return r ? r : piecemap_append_container(&p->pieces, (uint16_t)dev, (uint32_t)pe, NULL);
}

static int piece_row(struct state_pool *p, sqlite3_stmt *stmt, int64_t nth, char *why,
		     size_t why_len)
{
	int64_t le = sqlite3_column_int64(stmt, 0), idx = sqlite3_column_int64(stmt, 1);
	int64_t c = sqlite3_column_int64(stmt, 2), slot = sqlite3_column_int64(stmt, 3);
	int r;

	(void)nth;
	snprintf(why, why_len, "piece %lld of extent %lld (container %lld, slot %lld) invalid",
		 (long long)idx, (long long)le, (long long)c, (long long)slot);
	if (le < 0 || le >= p->map.nr_logical ||
	    extmap_get(&p->map, (uint32_t)le).dev == EXTMAP_NO_DEV || idx < 0 ||
	    idx >= p->pieces.pieces_per_extent || c < 0 || c >= p->pieces.nr_containers ||
	    slot < 0 || slot >= p->pieces.pieces_per_extent)
		return -EUCLEAN;
	/* A slot another piece holds is refused by the claim, a piece twice by the place. */
	r = piecemap_claim_slot(&p->pieces, (uint32_t)c, (uint16_t)slot);
	return r ? r : piecemap_place(&p->pieces, (uint32_t)le, (uint32_t)idx, (uint32_t)c,
				      (uint16_t)slot);
}

/* A row of either table in a pool whose piece size says it has none. */
static int container_row_without_size(struct state_pool *p, sqlite3_stmt *stmt, int64_t nth,
				      char *why, size_t why_len)
{
	(void)p;
	(void)nth;
	snprintf(why, why_len, "piece container %lld stored, but no piece size",
		 (long long)sqlite3_column_int64(stmt, 0));
	return -EUCLEAN;
}

static int piece_row_without_size(struct state_pool *p, sqlite3_stmt *stmt, int64_t nth,
				  char *why, size_t why_len)
{
	(void)p;
	(void)nth;
	snprintf(why, why_len, "piece %lld of extent %lld stored, but no piece size",
		 (long long)sqlite3_column_int64(stmt, 1), (long long)sqlite3_column_int64(stmt, 0));
	return -EUCLEAN;
}

static int pieces_rows(struct state *st, struct state_pool *p, const char *sql, pieces_row_fn fn)
{
	sqlite3_stmt *stmt = NULL;
	char why[160];
	int64_t nth = 0;
	int r, rc;

	r = state_prepare(st, sql, &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, p->id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		r = fn(p, stmt, nth++, why, sizeof(why));
		if (r == -ENOMEM)
			goto out;
		if (r < 0) {
			r = pieces_invalid(st, p, why);
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
out:
	sqlite3_finalize(stmt);
	return r;
}

int state_pieces_load(struct state *st, struct state_pool *p, int64_t pieces_per_extent)
{
	int r;

	if (!pieces_per_extent) {
		/* No container: no row either, or the map would hold their extents free. */
		r = pieces_rows(st, p, "SELECT idx, dev, pe FROM piece_container WHERE pool_id = ?1"
				" LIMIT 1", container_row_without_size);
		if (r == 0)
			r = pieces_rows(st, p, "SELECT le, idx, container, slot FROM piece"
					" WHERE pool_id = ?1 LIMIT 1", piece_row_without_size);
		return r;
	}
	if (pieces_per_extent < 0 || pieces_per_extent > PIECEMAP_MAX_PIECES_PER_EXTENT ||
	    !metadata_piece_size_valid(p->meta.extent_size, (uint32_t)pieces_per_extent))
		return pieces_invalid(st, p, "its piece size is invalid");
	r = piecemap_init(&p->pieces, (uint32_t)pieces_per_extent);
	if (r < 0)
		return r;
	r = pieces_rows(st, p, "SELECT idx, dev, pe FROM piece_container WHERE pool_id = ?1"
			" ORDER BY idx", container_row);
	if (r == 0)
		r = pieces_rows(st, p, "SELECT le, idx, container, slot FROM piece WHERE pool_id = ?1"
				" ORDER BY le, idx", piece_row);
	if (r == 0 && piecemap_check(&p->pieces, NULL) < 0)
		r = pieces_invalid(st, p, "its pieces are inconsistent");
	return r;
}
