/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job-internal: the job engine's state, shared by its live and offline paths. */
#ifndef TIERD_JOB_INTERNAL_H
#define TIERD_JOB_INTERNAL_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "devload.h"
#include "job.h"
#include "jobrate.h"
#include "migrate.h"
#include "pool-internal.h"
#include "ucopy.h"

/*
 * A batch holds up to JOB_BATCH moves (job.h), chosen by batch_next()
 * (lib/batch.h); a move whose destination has no free extent left waits:
 * the next batch can use what this one's commit frees (a swap). How many
 * waiting moves past the first one a batch looks at for moves that can start.
 */
#define JOB_LOOKAHEAD 4096
/* I/O awareness (docs/migration.md): the share of time the volume had I/O in flight. */
#define JOB_BUSY_THROTTLED 0.30
#define JOB_BUSY_IDLE 0.05
/* The window over which the volume's load is measured before a batch, seconds. */
#define JOB_LOAD_WINDOW 1.0
/* Throttled: after this many busy windows in a row, one extent moves anyway. */
#define JOB_THROTTLED_MAX_WAITS 5

/* A drop zeroes for at most this long before the loop serves others. */
#define JOB_DROP_SLICE_NS (100 * 1000 * 1000ull)

/* A client following the job (job_watch). */
struct job_watcher {
	struct job_watcher *next;
	job_watch_fn fn;
	void *ctx;
};

struct pool_job {
	struct pool *p;
	enum job_kind kind;
	int64_t started_at;
	struct jobrate rate;
	int aborting; /* job_abort: no batch starts any more */
	int ending;   /* job_finish: its last report has no time left */
	struct job_watcher *watchers;
	struct ev_loop *loop;
	ev_timer kick; /* starts batches from the loop, so done never runs inside start */
	/* The batch rule's own (lib/batch.h): waiting, or started (moved, failed or in place). */
	struct batch_move *moves;
	size_t nr, first_waiting, started;
	struct job_limits limits;
	int detach; /* release detach_dev at the end */
	/* A detach's pieces coming home: then evacuate detach_dev (job_finish). */
	int detach_pieces, detach_shrink;
	struct pool_drop *drop; /* zero its destinations, then commit it (job_drop_missing) */
	/* A drop's units from this one on are pieces of piece_bytes, not extents (0: none). */
	uint64_t pieces_from, piece_bytes;
	/*
	 * A move of pieces (job_move_pieces): pieces [piece_first, + piece_count)
	 * of each extent from piece_le on, unit by unit (job->nr of them); or
	 * (job_move_piece_list) piece_list's, in its order.
	 */
	bool piece_job, piece_to_ssd;
	uint32_t piece_le, piece_first, piece_count;
	struct job_piece_req *piece_list;
	unsigned detach_dev;
	int paused;
	const char *waiting; /* why no batch runs now: "", "paused", "rate", "busy", "idle" */
	unsigned busy_waits;
	struct devload_sample load;
	int load_ok;
	uint64_t next_batch_ns; /* rate cap: no batch starts before */
	struct migrate_item items[JOB_HELD_PIECES_MAX]; /* extents use the first JOB_BATCH */
	size_t nr_items;
	struct migrate_batch *batch;
	/* Without a volume (pool inactive) tierd copies itself, with io_uring. */
	int offline;
	struct ucopy *ucopy;
	struct ucopy_job copies[JOB_BATCH];
	ev_io copy_watch;
	int copying, verifying;
	uint8_t copy_failed[JOB_BATCH]; /* set before a verification pass */
	uint64_t moved, failed;
	struct state_moves *moved_out;
	char what[192];
	job_progress_fn progress;
	job_done_fn done;
	void *ctx;
};

/* A batch ended (live or offline): account for it and start the next. */
void job_batch_done(struct migrate_batch *b, int r, const char *err, void *ctx);
/* Offline (the pool has no volume): open its devices and an io_uring engine for the job. */
int job_offline_prepare(struct pool *p, struct pool_job *job, char *err, size_t err_len);
/* Copy the batch in job->items; job_batch_done follows from the loop. */
int job_offline_start(struct pool_job *job, char *err, size_t err_len);

#endif
