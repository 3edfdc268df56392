/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-internal: what the store's .c files share; no caller outside tierd/store/ includes it. */
#ifndef TIERD_STATE_INTERNAL_H
#define TIERD_STATE_INTERNAL_H

#include <sqlite3.h>
#include <stdint.h>

#include "state.h"

struct state {
	sqlite3 *db;
	char error[256];
	/* A stage's transaction is open: its pool's generation, to set at commit. */
	sqlite3_stmt *staged_generation;
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
/* Insert p's containers and pieces (none stored) and its piece size. */
int state_pieces_write(struct state *st, const struct state_pool *p);
int state_pieces_delete(struct state *st, int64_t id);
/* Fill p->pieces from its rows, claiming each container in p's loaded map
 * (a pieces_per_extent of 0: no pieces, p->pieces left zeroed); -EUCLEAN and
 * st->error naming the row if one is invalid. */
int state_pieces_load(struct state *st, struct state_pool *p, int64_t pieces_per_extent);

#endif
