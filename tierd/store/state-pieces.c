/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state-pieces: a pool's piece containers and pieces out
 * (schema/007-pieces.sql), written whole and loaded, as a version 2
 * metadata slot carries them.
 */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>

#include "state-internal.h"

int state_pieces_write(struct state *st, const struct state_pool *p)
{
	const struct piecemap *pm = &p->pieces;
	sqlite3_stmt *stmt = NULL;
	int r;

	r = state_prepare(st, "UPDATE pool SET pieces_per_extent = ?1 WHERE id = ?2", &stmt);
	if (r == 0) {
		sqlite3_bind_int64(stmt, 1, pm->nr_containers ? pm->pieces_per_extent : 0);
		sqlite3_bind_int64(stmt, 2, p->id);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0 && pm->nr_containers)
		r = state_prepare(st, "INSERT INTO piece_container (pool_id, idx, dev, pe)"
				  " VALUES (?1, ?2, ?3, ?4)", &stmt);
	for (uint32_t i = 0; r == 0 && i < pm->nr_containers; i++) {
		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int64(stmt, 2, i);
		sqlite3_bind_int64(stmt, 3, pm->containers[i].dev);
		sqlite3_bind_int64(stmt, 4, pm->containers[i].pe);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (r == 0 && pm->nr_pieces)
		r = state_prepare(st, "INSERT INTO piece (pool_id, le, idx, container, slot)"
				  " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt);
	for (uint32_t i = 0; r == 0 && i < pm->nr_pieces; i++) {
		const struct piecemap_piece *pc = &pm->pieces[i];

		sqlite3_bind_int64(stmt, 1, p->id);
		sqlite3_bind_int64(stmt, 2, pc->le);
		sqlite3_bind_int64(stmt, 3, pc->idx);
		sqlite3_bind_int64(stmt, 4, pc->container);
		sqlite3_bind_int64(stmt, 5, pc->slot);
		r = state_step_done(st, stmt);
	}
	sqlite3_finalize(stmt);
	return r;
}

int state_pieces_delete(struct state *st, int64_t id)
{
	int r = state_exec_id(st, "DELETE FROM piece WHERE pool_id = ?1", id);

	return r ? r : state_exec_id(st, "DELETE FROM piece_container WHERE pool_id = ?1", id);
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
