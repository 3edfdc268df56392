/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job: the job engine. Carries out any ordered list of moves of one pool in
 * batches, within a rate cap, I/O awareness and a deadline, pausable: live
 * through the kernel's mirror (migrate.c) while the pool is active, by
 * tierd's own io_uring copy (offline.c) while it is not. One job per pool.
 */
#ifndef TIERD_JOB_H
#define TIERD_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metadata.h"
#include "pool.h"
#include "state.h"

struct ev_loop;

struct job_report;

/* Progress of a running job: as each batch starts, and as the job ends. */
typedef void (*job_progress_fn)(struct pool *p, const struct job_report *now, void *ctx);
/* The job ended: r is 0 or -errno with err set; moved/failed extents counted. */
typedef void (*job_done_fn)(struct pool *p, int r, const char *err, uint64_t moved,
			    uint64_t failed, void *ctx);

/* I/O awareness (docs/migration.md): whether batches wait for a quiet volume. */
enum job_io { JOB_IO_OFF, JOB_IO_THROTTLED, JOB_IO_IDLE };

/* Limits of a list of moves (docs/migration.md, docs/schedule.md). */
struct job_limits {
	uint64_t rate;              /* bytes per second, 0: no cap */
	enum job_io io;
	int64_t deadline;           /* unix seconds: no batch starts after it; 0: none */
};

struct job_move_req {
	uint32_t le;
	bool to_ssd;
};

/*
 * Move the extents [first, first + count) to the tier's devices. Starts and
 * returns; progress and done follow from the event loop.
 */
int job_move_range(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count,
		   bool to_ssd, const struct job_limits *limits, job_progress_fn progress,
		   job_done_fn done, void *ctx, char *err, size_t err_len);

/*
 * Move pieces [piece_first, piece_first + piece_count) of each extent of
 * [first, first + count) (piece_count 0: to the extent's last piece), live:
 * to slots of piece containers on the SSD tier (to_ssd; a container is made of a free SSD extent when none has a
 * free slot, the tier's swap reserve left free) or back to their extent's
 * home. Pieces already there stay. A pool that has no piece yet is split
 * into pieces of pool_piece_ppe(). Needs the volume (-EBUSY when inactive).
 */
int job_move_pieces(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count,
		    uint32_t piece_first, uint32_t piece_count, bool to_ssd,
		    const struct job_limits *limits, job_progress_fn progress, job_done_fn done,
		    void *ctx, char *err, size_t err_len);

struct job_piece_req {
	uint32_t le;
	uint16_t idx;
};

/*
 * Move the pieces listed, in their order, all to the SSD tier (to_ssd) or
 * all home, as job_move_pieces() does, as a job of a tiering run's kind;
 * moved (may be NULL) counts their bytes as it goes (not as extents). -EINVAL for a piece past the pool's or,
 * to the SSD, of an extent not at home on the HDD tier.
 */
int job_move_piece_list(struct pool *p, struct ev_loop *loop, const struct job_piece_req *req,
			size_t nr, bool to_ssd, const struct job_limits *limits, const char *what,
			struct state_moves *moved, job_progress_fn progress, job_done_fn done,
			void *ctx, char *err, size_t err_len);

/*
 * Move extents in the order given, in batches, within limits. A move whose
 * destination is full waits until a later batch frees room (a swap: the
 * demotion before it commits first). moved (may be NULL) counts what moved,
 * batch by batch, until done. done gets -ETIME when the deadline stopped the
 * job, -ENOSPC when moves were left that could never find room.
 */
int job_move_list(struct pool *p, struct ev_loop *loop, const struct job_move_req *moves,
		  size_t nr, const struct job_limits *limits, const char *what,
		  struct state_moves *moved, job_progress_fn progress, job_done_fn done,
		  void *ctx, char *err, size_t err_len);

/*
 * Detach the SSD: with shrink, first drop the SSD's capacity from the end of
 * the volume; then move every extent still on the SSD to the HDD, live, and
 * release the SSD (its superblock wiped).
 */
int job_detach(struct pool *p, struct ev_loop *loop, const char *ssd, bool shrink,
	       job_progress_fn progress, job_done_fn done, void *ctx, char *err, size_t err_len);

/*
 * Drop the missing devices of a degraded pool (an inactive one is activated
 * degraded first): zero a free extent of the remaining devices for each
 * extent they held, then commit the pool without them and reload its table,
 * the lost extents now reading as zeros. Refused, nothing changed, when the
 * HDD is the missing one or the others lack the room.
 */
int job_drop_missing(struct pool *p, struct ev_loop *loop, job_progress_fn progress,
		     job_done_fn done, void *ctx, char *err, size_t err_len);

/* A paused job finishes its batch, then waits; nothing when the pool is idle. */
void job_pause(struct pool *p, bool paused);

/* How a job ended (docs/migration.md, "Jobs"). */
enum job_result {
	JOB_DONE,
	JOB_PARTIAL,   /* some extents failed or found no room; the rest moved */
	JOB_FAILED,
	JOB_CANCELLED, /* the tiering window closed */
	JOB_ABORTED,   /* job_abort() */
	JOB_RESULT_NR
};

/* The result of a done callback's r (-ECANCELED: aborted) and failed count. */
enum job_result job_result_of(int r, uint64_t failed);
/* "done", "partial", "failed", "cancelled", "aborted"; "?" out of range. */
const char *job_result_name(enum job_result result);

/* What a job is: the protocol's "kind" (docs/protocol.md, "The job object"). */
enum job_kind { JOB_KIND_RUN, JOB_KIND_DETACH, JOB_KIND_MOVE, JOB_KIND_DROP, JOB_KIND_NR };
/* "tiering-run", "detach", "extent-move", "drop-missing". */
const char *job_kind_name(enum job_kind kind);

struct job_end {
	enum job_result result;
	int r;               /* as the job's own done callback got it */
	const char *message; /* "" when there is nothing to say */
};

/*
 * A watcher's callback: end NULL for progress (as the job's own progress
 * callback gets it), then once with end set, after the job's own done
 * callback ran and the pool took its next job; now is the job's last report.
 */
typedef void (*job_watch_fn)(struct pool *p, const struct job_report *now,
			     const struct job_end *end, void *ctx);

/*
 * Follow the pool's running job, from any client: fn is called as above
 * until the end. -ENOENT when it runs none, -ENOMEM.
 */
int job_watch(struct pool *p, job_watch_fn fn, void *ctx);

/*
 * Stop the pool's running job at the next batch boundary: the batch in
 * flight commits, no other starts, and the job ends with -ECANCELED (its
 * result JOB_ABORTED); fn (may be NULL) watches it to that end as
 * job_watch() does. What moved stays moved; a detach leaves the SSD
 * attached, a drop drops nothing. -ENOENT when the pool runs no job, -ENOMEM.
 */
int job_abort(struct pool *p, job_watch_fn fn, void *ctx);

/* Extents per table swap: more copy at once, but a longer commit while suspended. */
#define JOB_BATCH 16
/*
 * Pieces a batch may take for each extent it may: a batch costs its table
 * swap and commit more than its bytes, and four 16 KiB pieces are far less
 * to copy than one extent (a batch is at most MIGRATE_BATCH_MAX moves).
 */
#define JOB_PIECES_PER_EXTENT 4
#define JOB_PIECE_BATCH (JOB_BATCH * JOB_PIECES_PER_EXTENT)
/*
 * A held copy of pieces (piece-copy held) holds the volume's I/O for the
 * copy: batches to the SSD tier take as many pieces as the devices copied
 * in this time last, or in a quarter of the rest of the last stall where
 * that is longer (batch_held_target), at least JOB_HELD_PIECES_MIN and at
 * most JOB_HELD_PIECES_MAX pieces or JOB_HELD_BYTES_MAX bytes of them
 * (docs/migration.md, "Held copies of pieces"). The bytes bound the
 * copy's registered buffers: 4 MiB, 64 pieces of 64 KiB.
 */
#define JOB_HELD_COPY_TARGET_NS (20ull * 1000 * 1000)
#define JOB_HELD_COPY_SHARE 4
#define JOB_HELD_PIECES_MIN 4
#define JOB_HELD_PIECES_MAX 256
#define JOB_HELD_BYTES_MAX (4u << 20)

struct job_report_move {
	uint32_t le;
	int32_t piece;            /* which piece of le, or -1: the whole extent */
	int from;                 /* enum metadata_tier, -1 if the source is not known */
	enum metadata_tier to;
};

struct job_report {
	enum job_kind kind;
	const char *what;
	bool pieces; /* the units below are pieces of extents (job_move_pieces), not extents */
	/* Extents: done (moved, failed or already in place) of total. */
	uint64_t done, total, moved, failed;
	/* Bytes of the same, the batch in flight counted by how far its copy got. */
	uint64_t done_bytes, total_bytes;
	double rate;              /* bytes per second over about the last minute; 0: not known */
	int64_t eta;              /* seconds left at that rate; -1: not known (no rate, paused) */
	int64_t started_at;       /* unix seconds */
	struct job_limits limits;
	bool paused, aborting;
	/* Why no batch runs now: "" (one does or will), "paused", "rate", "busy", "idle". */
	const char *waiting;
	size_t nr_batch;          /* the batch in flight */
	struct job_report_move batch[JOB_HELD_PIECES_MAX];
	uint64_t batch_regions_copied, batch_regions;
};

/* The pool's running job; -ENOENT when it runs none. Strings point into the job. */
int job_get_report(const struct pool *p, struct job_report *out);

#endif
