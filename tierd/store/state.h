/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state: tierd's SQLite database (pools, devices, extent maps). */
#ifndef TIERD_STATE_H
#define TIERD_STATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "extmap.h"
#include "heat.h"
#include "metadata.h"
#include "pieceheat.h"
#include "piecemap.h"

struct state;

/* A pool as the database holds it: the same content as the on-device copy,
 * plus where each device was last seen and whether it should be active. */
struct state_pool {
	int64_t id;
	struct metadata_pool meta;
	struct extmap map;
	struct piecemap pieces; /* zeroed: no piece container */
	/*
	 * pieces.changes when the state last held the pieces as they are, set
	 * by the caller after a save: a save of extents rewrites the pieces'
	 * rows only when they changed since.
	 */
	uint64_t pieces_saved;
	char paths[METADATA_MAX_DEVS][PATH_MAX];
	int want_active;
};

/* Creates dir (0700) and tierd.db in it, applies pending migrations; on
 * failure err says why. */
int state_open(struct state **out, const char *dir, char *err, size_t err_len);
void state_close(struct state *st);
/* SQLite's message for the last failure, for the caller's log. */
const char *state_last_error(const struct state *st);

/* Pools, each filled completely; free with state_pool_destroy() + free(). */
int state_pool_load_all(struct state *st, struct state_pool ***pools, size_t *nr);
void state_pool_destroy(struct state_pool *p);

/* New pool: sets p->id. */
int state_pool_insert(struct state *st, struct state_pool *p);
/* Rewrite the pool's row, devices and whole map in one transaction. */
int state_pool_save(struct state *st, const struct state_pool *p);
/*
 * The pool's generation and the locations of the extents les[] (a migration's
 * commit), and its pieces when they changed since p->pieces_saved; the
 * extents' migration intents go in the same transaction.
 */
int state_pool_save_extents(struct state *st, const struct state_pool *p, const uint32_t *les,
			    size_t nr);
/*
 * A save in two steps, for a commit made while the volume is suspended:
 * the stage writes every row of state_pool_save (les NULL) or of
 * state_pool_save_extents in a transaction it leaves open, at the pool's
 * generation as p has it; state_staged_commit then sets the generation and
 * commits, so that only the commit's own write and sync are left for the
 * suspended window, and nothing is durable before it. Until then no other
 * save may run: state_staged_abort rolls the stage back (nothing staged: a
 * no-op).
 */
int state_pool_stage(struct state *st, const struct state_pool *p, const uint32_t *les,
		     size_t nr);
int state_staged_commit(struct state *st, uint64_t generation);
void state_staged_abort(struct state *st);
int state_pool_set_want_active(struct state *st, int64_t id, int want_active);
int state_pool_set_path(struct state *st, int64_t id, unsigned dev, const char *path);
int state_pool_delete(struct state *st, int64_t id);

/* ---- heat and I/O history (docs/heat.md) ---- */

/* Extents per stored heat row (the table's chunk); a flush step stores whole rows. */
#define STATE_HEAT_CHUNK HEAT_CHUNK

/* Load the stored heat into t (sized to the pool's extents; rows past it
 * ignored), each row decayed with params from the time it was stored to the
 * newest time stored, which becomes t's last sample. A chunk with no row
 * stays as t has it: zero from heat_table_init(). */
int state_heat_load(struct state *st, int64_t id, struct heat_table *t,
		    const struct heat_params *params);
/* Store extents [from, to) of t, from a multiple of STATE_HEAT_CHUNK, and t's
 * sample time, in one transaction; each row says when it was sampled, so
 * rows stored at different flushes load alike. A chunk whose extents are
 * all zero (no heat, reads, writes or move time) is stored as no row. */
int state_heat_save(struct state *st, int64_t id, const struct heat_table *t, uint32_t from,
		    uint32_t to);

/*
 * The piece weights of extents les[0..nr) that ph knows, at now_ns, in
 * place of every row the pool had (schema/009-piece-heat.sql), in one
 * transaction: pieces with no weight take no record, and an extent none
 * of whose pieces has weight no row.
 */
int state_piece_heat_save(struct state *st, int64_t id, const struct pieceheat *ph,
			  const uint32_t *les, size_t nr, uint64_t now_ns);
/*
 * Add the stored piece weights to ph (pieceheat_add()), each row decayed
 * with params from its time to now_ns; rows of another piece size than
 * ph's, or of extents from nr_extents on, are left out.
 */
int state_piece_heat_load(struct state *st, int64_t id, struct pieceheat *ph,
			  uint32_t nr_extents, const struct heat_params *params, uint64_t now_ns);

struct state_tier_io {
	uint64_t reads, writes, read_bytes, write_bytes;
};

/* Add to a tier's row of one minute. */
int state_tier_io_add(struct state *st, int64_t id, int64_t minute, const char *tier,
		      const struct state_tier_io *io);
/* Everything a tier served, minute and hourly rows together. */
int state_tier_io_total(struct state *st, int64_t id, const char *tier, struct state_tier_io *out);
/* Fold minute rows before `before` into hourly rows. */
int state_tier_io_compact(struct state *st, int64_t before_minute);

/* ---- tiering: policy, schedule, pins, runs, moves (docs/policies.md, docs/schedule.md) ---- */

#define STATE_NAME_MAX 64

/* A pool's tiering settings; state_tiering_load() gives the defaults when none were set. */
struct state_tiering {
	char policy[STATE_NAME_MAX];
	char spec[256];
	char window[32];          /* "" when runs may start at any time */
	uint64_t max_bytes;       /* per run, 0: no limit */
	uint64_t rate;            /* bytes per second, 0: no cap */
	char io_awareness[16];    /* off, throttled, idle */
	int paused;
};

void state_tiering_default(struct state_tiering *t);
int state_tiering_load(struct state *st, int64_t id, struct state_tiering *out);
int state_tiering_save(struct state *st, int64_t id, const struct state_tiering *t);

struct state_pin {
	uint32_t first, nr;
	int ssd; /* 1: pinned to the SSD tier, 0: to the HDD tier */
};

/* The pool's pins in extent order; free *pins. */
int state_pins_load(struct state *st, int64_t id, struct state_pin **pins, size_t *nr);
/* Replace every pin of the pool. */
int state_pins_save(struct state *st, int64_t id, const struct state_pin *pins, size_t nr);

struct state_moves {
	uint64_t promoted_extents, demoted_extents, promoted_bytes, demoted_bytes, failed;
	/* Pieces moved: a run's row keeps them; the per-minute history, their bytes only. */
	uint64_t promoted_pieces, demoted_pieces;
};

struct state_run {
	int64_t id;
	char trigger[16];         /* schedule, on-demand, auto */
	char policy[STATE_NAME_MAX];
	int64_t started, finished; /* unix seconds; finished 0 while running */
	uint64_t planned_extents, planned_pieces;
	struct state_moves moved;
	char result[16];          /* running, done, partial, failed, cancelled, interrupted */
	char message[256];
};

/* A new run: sets r->id. */
int state_run_insert(struct state *st, int64_t pool_id, struct state_run *r);
int state_run_update(struct state *st, const struct state_run *r);
/* The newest runs first, at most limit; free *runs. */
int state_runs_list(struct state *st, int64_t pool_id, unsigned limit, struct state_run **runs,
		    size_t *nr);
/* At start: runs left 'running' by a crash or stop become 'interrupted'. */
int state_runs_interrupted(struct state *st, int64_t now);
/*
 * Forget the pool's ended runs older than its newest keep (keep >= 1;
 * their counts stay in state_runs_count's totals).
 */
int state_runs_prune(struct state *st, int64_t pool_id, unsigned keep);
/*
 * The pool's finished runs counted per trigger and result, pruned ones
 * too: fn once per pair that has any.
 */
int state_runs_count(struct state *st, int64_t pool_id,
		     int (*fn)(const char *trigger, const char *result, uint64_t n, void *ctx),
		     void *ctx);

/* Add what moved in one minute (unix time / 60). */
int state_moves_add(struct state *st, int64_t id, int64_t minute, const struct state_moves *m);
int state_moves_total(struct state *st, int64_t id, struct state_moves *out);

/* I/O per tier and moves of one interval of a history. */
struct state_interval {
	int64_t start;                 /* unix seconds */
	struct state_tier_io io[2];    /* [METADATA_TIER_*] */
	struct state_moves moved;
};

/*
 * nr intervals of step_s seconds from start (unix seconds, a whole minute):
 * fills out[0..nr), which the caller zeroed. Hourly rows count in the
 * interval holding their hour's start.
 */
int state_history(struct state *st, int64_t id, int64_t start, uint32_t step_s, size_t nr,
		  struct state_interval *out);

/* ---- migration intents (commit protocol step 1, docs/migration.md) ---- */

struct state_intent {
	uint32_t le;
	uint16_t src_dev, dst_dev;
	uint32_t src_pe, dst_pe;
};

/* Record the moves about to copy, in one transaction. */
int state_intents_add(struct state *st, int64_t id, const struct state_intent *v, size_t nr,
		      int64_t now);
/* The pool's intents; free *v. */
int state_intents_load(struct state *st, int64_t id, struct state_intent **v, size_t *nr);
/*
 * Forget every intent of the pool, of extents and of pieces (after a batch,
 * or at activation); *nr gets how many there were.
 */
int state_intents_clear(struct state *st, int64_t id, uint64_t *nr);

/*
 * A move of piece idx of extent le under way (schema/011-piece-intents.sql).
 * A place is (dev, pe, slot): a slot of the piece container at dev:pe, or,
 * at home, the piece's place in its extent's home extent (slot = idx).
 */
struct state_piece_intent {
	uint32_t le;
	uint16_t idx;
	uint16_t src_dev, src_slot;
	uint16_t dst_dev, dst_slot;
	uint32_t src_pe, dst_pe;
};

/*
 * Record the piece moves about to copy, in one transaction. The commit of
 * pieces (state_pool_save_extents, state_pool_stage with the pieces
 * changed) deletes the pool's rows in its own.
 */
int state_piece_intents_add(struct state *st, int64_t id, const struct state_piece_intent *v,
			    size_t nr, int64_t now);
/* The pool's piece intents, by (le, idx); free *v. */
int state_piece_intents_load(struct state *st, int64_t id, struct state_piece_intent **v,
			     size_t *nr);

#endif
