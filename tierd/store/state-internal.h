/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-internal: what the store's .c files share; no caller outside tierd/store/ includes it. */
#ifndef TIERD_STATE_INTERNAL_H
#define TIERD_STATE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "state.h"

/*
 * A pool's piece rows as the database holds them (schema/007-pieces.sql):
 * its piece size, the containers' places, the pieces out. A save compares
 * the pool's pieces with them and writes only the rows that differ, so a
 * batch of 64 pieces writes some 64 rows, not every piece out (tens of
 * thousands at 4 KiB pieces, each batch).
 */
struct state_piece_rows {
	int64_t pool_id;
	bool known; /* exactly the rows the last committed transaction left */
	uint32_t pieces_per_extent; /* as stored: 0 while the pool has no container */
	struct piecemap_piece *pieces; /* by (le, idx) */
	uint32_t nr_pieces, pieces_cap;
	struct state_container_row {
		uint16_t dev;
		uint32_t pe;
	} *containers; /* by index */
	uint32_t nr_containers, containers_cap;
};

struct state {
	sqlite3 *db;
	char error[256];
	/* A stage's transaction is open: its pool's generation, to set at commit. */
	sqlite3_stmt *staged_generation;
	/* The piece rows of each pool the state wrote or read. */
	struct state_piece_rows *piece_rows;
	size_t nr_piece_rows;
	/*
	 * The rows of pending.pool_id once the open transaction commits;
	 * allocated as the rows are written, swapped in at the COMMIT, which
	 * may run while a volume's I/O is held.
	 */
	struct state_piece_rows pending;
	bool has_pending;
};

/* Defined in state.c; on failure they set st->error and return a negative errno. */
int state_fail(struct state *st, int rc);
int state_exec(struct state *st, const char *sql);
int state_prepare(struct state *st, const char *sql, sqlite3_stmt **stmt);
int state_step_done(struct state *st, sqlite3_stmt *stmt);
int state_exec_id(struct state *st, const char *sql, int64_t id);
int state_commit_or_rollback(struct state *st, int r);

/* Defined in state-map.c: the extent map as runs, inside the caller's transaction. */
/* Insert p's whole map as maximal runs (the pool has no run stored). */
int state_map_write(struct state *st, const struct state_pool *p);
/* Store the locations of les[] from p's map; the rest is stored already. */
int state_map_save_les(struct state *st, const struct state_pool *p, const uint32_t *les,
		       size_t nr);
/* Fill p's map (devices added, nothing mapped) from its runs; -EUCLEAN and
 * st->error naming the run if one is invalid. */
int state_map_load(struct state *st, struct state_pool *p);

/* Defined in state-pieces.c: containers and pieces, inside the caller's transaction. */
/*
 * Store p's containers, pieces and piece size: only the rows that differ
 * from those stored when the state knows them (it wrote or read them),
 * else all. They become known at the transaction's commit.
 */
int state_pieces_save(struct state *st, const struct state_pool *p);
/* Called by state_commit_or_rollback and the stage's end: committed or not. */
void state_pieces_end(struct state *st, bool committed);
/* The rows of pool id are no longer known (the pool's rows were deleted). */
void state_pieces_forget(struct state *st, int64_t id);
/* The pool is gone: forget its rows and free their copy. */
void state_pieces_drop(struct state *st, int64_t id);
/* The rows just loaded into p are what the database holds; -ENOMEM. */
int state_pieces_loaded(struct state *st, const struct state_pool *p);
void state_pieces_free(struct state *st);
/* Fill p->pieces from its rows, claiming each container in p's loaded map
 * (a pieces_per_extent of 0: no pieces, p->pieces left zeroed); -EUCLEAN and
 * st->error naming the row if one is invalid. */
int state_pieces_load(struct state *st, struct state_pool *p, int64_t pieces_per_extent);

#endif
