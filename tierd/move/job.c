/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job: the job engine: any ordered list of moves, in batches, within limits. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ev.h>

#include "clock.h"
#include "devload.h"
#include "dmctl.h"
#include "job-internal.h"
#include "jobrate.h"
#include "log.h"
#include "migrate.h"
#include "pool-internal.h"
#include "size.h"
#include "ucopy.h"

static const char *const result_names[JOB_RESULT_NR] = {
	[JOB_DONE] = "done",
	[JOB_PARTIAL] = "partial",
	[JOB_FAILED] = "failed",
	[JOB_CANCELLED] = "cancelled",
	[JOB_ABORTED] = "aborted",
};

static const char *const kind_names[JOB_KIND_NR] = {
	[JOB_KIND_RUN] = "tiering-run",
	[JOB_KIND_DETACH] = "detach",
	[JOB_KIND_MOVE] = "extent-move",
	[JOB_KIND_DROP] = "drop-missing",
};

enum job_result job_result_of(int r, uint64_t failed)
{
	switch (r) {
	case 0:
		return failed ? JOB_PARTIAL : JOB_DONE;
	case -ENOSPC:
		return JOB_PARTIAL;
	case -ETIME:
		return JOB_CANCELLED;
	case -ECANCELED:
		return JOB_ABORTED;
	default:
		return JOB_FAILED;
	}
}

const char *job_result_name(enum job_result result)
{
	return (unsigned)result < JOB_RESULT_NR ? result_names[result] : "?";
}

const char *job_kind_name(enum job_kind kind)
{
	return (unsigned)kind < JOB_KIND_NR ? kind_names[kind] : "?";
}

/*
 * The bytes of the job's first units: extents, but for a drop's pieces,
 * which come after its extents and are zeroed a piece each.
 */
static uint64_t job_units_bytes(const struct pool_job *job, uint64_t units)
{
	uint64_t es = job->p->sp.meta.extent_size, extents;

	if (!job->piece_bytes)
		return units * es;
	extents = units < job->pieces_from ? units : job->pieces_from;
	return extents * es + (units - extents) * job->piece_bytes;
}

/* Where an item's bytes are before its batch commits: the tier of that device, or -1. */
static int job_item_from(const struct pool *p, const struct migrate_item *it)
{
	struct extmap_loc src = extmap_get(&p->sp.map, it->le);
	unsigned dev = src.dev;
	uint32_t c;
	uint16_t slot;

	if (it->piece && piecemap_find(&p->sp.pieces, it->le, it->idx, &c, &slot) == 0)
		dev = p->sp.pieces.containers[c].dev;
	return dev < p->sp.meta.nr_devs ? (int)p->sp.meta.devs[dev].tier : -1;
}

/* The bytes of one item the job moves: an extent, or a piece. */
static uint64_t job_item_bytes(const struct pool_job *job)
{
	return job->piece_job ? job->piece_bytes : job->p->sp.meta.extent_size;
}

/* The most pieces a held copy of the job's takes: JOB_HELD_PIECES_MAX, or JOB_HELD_BYTES_MAX of them. */
static size_t job_held_pieces_max(const struct pool_job *job)
{
	uint64_t piece = job_item_bytes(job), fit = JOB_HELD_BYTES_MAX / (piece ? piece : 1);

	if (fit < JOB_HELD_PIECES_MIN)
		return JOB_HELD_PIECES_MIN;
	return fit < JOB_HELD_PIECES_MAX ? (size_t)fit : JOB_HELD_PIECES_MAX;
}

static void job_fill_report(const struct pool_job *job, struct job_report *out)
{
	const struct pool *p = job->p;
	uint64_t in_flight = job->nr_items;

	*out = (struct job_report){
		.kind = job->kind, .what = job->what, .pieces = job->piece_job,
		.done = job->started - in_flight,
		.total = job->nr, .moved = job->moved, .failed = job->failed,
		.total_bytes = job_units_bytes(job, job->nr), .started_at = job->started_at,
		.limits = job->limits,
		.paused = job->paused, .aborting = job->aborting, .waiting = job->waiting,
	};
	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];

		out->batch[out->nr_batch++] = (struct job_report_move){
			.le = it->le,
			.piece = it->piece ? (int32_t)it->idx : -1,
			.from = job_item_from(p, it),
			.to = p->sp.meta.devs[it->dev].tier,
		};
	}
	if (job->batch)
		migrate_batch_progress(job->batch, &out->batch_regions_copied, &out->batch_regions);
	out->done_bytes = job_units_bytes(job, out->done);
	if (out->batch_regions)
		out->done_bytes += (uint64_t)((double)(in_flight * job_item_bytes(job)) *
					      (double)out->batch_regions_copied /
					      (double)out->batch_regions);
	out->rate = jobrate_rate(&job->rate, clock_now_ns(), out->done_bytes);
	out->eta = job->paused || job->ending ? -1 :
					       jobrate_eta(out->rate, out->done_bytes, out->total_bytes);
}

/* The job's progress to whoever follows it: the client that started it, then the watchers. */
static void job_notify(struct pool_job *job)
{
	struct job_report now;

	job_fill_report(job, &now);
	jobrate_sample(&job->rate, clock_now_ns(), now.done_bytes);
	if (job->progress)
		job->progress(job->p, &now, job->ctx);
	for (struct job_watcher *w = job->watchers; w; w = w->next)
		w->fn(job->p, &now, NULL, w->ctx);
}

/* Why an aborted job ended, naming what it leaves as it is. */
static void job_abort_message(const struct pool_job *job, char *msg, size_t len)
{
	const struct pool *p = job->p;
	bool detaching = job->detach || job->detach_pieces;

	snprintf(msg, len, "pool %s: %s aborted on request after %zu of %zu %s%s%s%s",
		 p->sp.meta.name, job->what, job->started, job->nr,
		 job->piece_job ? "pieces" : "extents",
		 detaching ? "; " : "", detaching ? p->sp.paths[job->detach_dev] : "",
		 detaching ? " stays attached" : job->drop ? "; no device was dropped" : "");
}

static int detach_evacuate(struct pool *p, struct ev_loop *loop, unsigned dev, bool shrink,
			   job_progress_fn progress, job_done_fn done, void *ctx, char *err,
			   size_t err_len);

static void job_finish(struct pool_job *job, int r, const char *err)
{
	struct pool *p = job->p;
	struct job_watcher *watchers = job->watchers, *next;
	char msg[POOL_ERR_MAX];
	struct job_report last;
	struct job_end end;

	snprintf(msg, sizeof(msg), "%s", err ? err : "");
	if (r == -ECANCELED)
		job_abort_message(job, msg, sizeof(msg));
	if (r == 0 && job->detach) {
		if (job->failed)
			r = errbuf_fail(-EIO, msg, sizeof(msg),
					"%llu extents could not be moved off %s (I/O errors, see the log);"
					" it stays attached", (unsigned long long)job->failed,
					p->sp.paths[job->detach_dev]);
		else
			r = pool_release_device(p, job->detach_dev, msg, sizeof(msg));
	}
	if (r == 0 && job->detach_pieces && job->failed)
		r = errbuf_fail(-EIO, msg, sizeof(msg),
				"%llu pieces could not come home from %s (I/O errors, see the log);"
				" it stays attached", (unsigned long long)job->failed,
				p->sp.paths[job->detach_dev]);
	if (job->drop) {
		if (r == 0)
			r = pool_drop_commit(p, job->drop, msg, sizeof(msg));
		pool_drop_free(p, job->drop);
		job->drop = NULL;
	}
	job->waiting = "";
	job->ending = 1;
	job_notify(job);
	job_fill_report(job, &last);
	ev_timer_stop(job->loop, &job->kick);
	ev_io_stop(job->loop, &job->copy_watch);
	ucopy_close(job->ucopy);
	if (job->offline && !p->active)
		pool_close_devices(p);
	pool_set_job(p, NULL, NULL);
	if (r == 0 && job->detach_pieces) {
		/* Every piece is home: the detach goes on, and its caller hears of its end. */
		log_pool_info(p->sp.meta.name, "%llu pieces came home to detach %s",
			      (unsigned long long)job->moved, p->sp.paths[job->detach_dev]);
		r = detach_evacuate(p, job->loop, job->detach_dev, job->detach_shrink, job->progress,
				    job->done, job->ctx, msg, sizeof(msg));
		if (r < 0)
			job->done(p, r, msg, 0, 0, job->ctx);
	} else {
		job->done(p, r, msg, job->moved, job->failed, job->ctx);
	}
	/*
	 * A run's next phase (or a detach's evacuation) took over: who follows
	 * the job follows it to the end.
	 */
	if (p->job && p->job != job && watchers) {
		struct job_watcher **tail = &p->job->watchers;

		while (*tail)
			tail = &(*tail)->next;
		*tail = watchers;
		watchers = NULL;
	}
	end = (struct job_end){ .result = job_result_of(r, job->failed), .r = r, .message = msg };
	for (; watchers; watchers = next) {
		next = watchers->next;
		watchers->fn(p, &last, &end, watchers->ctx);
		free(watchers);
	}
	free(job->moves);
	free(job->piece_list);
	free(job);
}

static void job_next(struct pool_job *job);

_Static_assert(JOB_PIECE_BATCH <= JOB_HELD_PIECES_MAX && JOB_HELD_PIECES_MAX <= MIGRATE_BATCH_MAX,
	       "a batch of pieces is one migration batch");

static void job_wait(struct pool_job *job, const char *why, double seconds)
{
	job->waiting = why;
	ev_timer_stop(job->loop, &job->kick);
	ev_timer_set(&job->kick, seconds, 0.);
	ev_timer_start(job->loop, &job->kick);
}

/*
 * What the batch moved, into the pool's history, the caller's counters and
 * the residency clock. r and err: the batch's own failure, which is then
 * why its extents did not move (a commit that could not be saved, say).
 */
static void job_account(struct pool_job *job, int r, const char *err)
{
	struct pool *p = job->p;
	struct state_moves delta = { 0 };
	uint64_t bytes = job_item_bytes(job);
	time_t now = time(NULL);

	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		int up = p->sp.meta.devs[it->dev].tier == METADATA_TIER_SSD;
		char what[64];

		if (it->piece)
			snprintf(what, sizeof(what), "piece %u of extent %u", it->idx, it->le);
		else
			snprintf(what, sizeof(what), "extent %u", it->le);
		if (it->result != 0) {
			job->failed++;
			delta.failed++;
			if (r < 0 && err && *err)
				log_pool_err(p->sp.meta.name, "%s could not move to %s; it"
					     " stays where it was: %s", what,
					     p->sp.paths[it->dev], pool_error_sentence(p, err));
			else
				log_pool_err(p->sp.meta.name, "%s could not move to %s (a"
					     " device failed); it stays where it was", what,
					     p->sp.paths[it->dev]);
			continue;
		}
		job->moved++;
		/* The history counts extents that moved whole, and the bytes of pieces too. */
		if (up) {
			delta.promoted_extents += !it->piece;
			delta.promoted_pieces += it->piece;
			delta.promoted_bytes += bytes;
		} else {
			delta.demoted_extents += !it->piece;
			delta.demoted_pieces += it->piece;
			delta.demoted_bytes += bytes;
		}
		if (!it->piece)
			pool_heat_moved(p, it->le, now);
	}
	if (job->moved_out) {
		job->moved_out->promoted_extents += delta.promoted_extents;
		job->moved_out->demoted_extents += delta.demoted_extents;
		job->moved_out->promoted_bytes += delta.promoted_bytes;
		job->moved_out->demoted_bytes += delta.demoted_bytes;
		job->moved_out->failed += delta.failed;
		job->moved_out->promoted_pieces += delta.promoted_pieces;
		job->moved_out->demoted_pieces += delta.demoted_pieces;
	}
	if (state_moves_add(p->ps->state, p->sp.id, now / 60, &delta) < 0)
		log_pool_warn(p->sp.meta.name, "cannot record the moves in the history: %s",
			      state_last_error(p->ps->state));
	/* Moved extents lost their intent in the commit; failed ones end here. */
	if (state_intents_clear(p->ps->state, p->sp.id, NULL) < 0)
		log_pool_warn(p->sp.meta.name, "cannot clear migration intents: %s",
			      state_last_error(p->ps->state));
}

void job_batch_done(struct migrate_batch *b, int r, const char *err, void *ctx)
{
	struct pool_job *job = ctx;
	uint64_t bytes = (uint64_t)job->nr_items * job_item_bytes(job);
	uint64_t copy_ns, stall_ns;
	size_t copied;

	/*
	 * The next held copy's size, from this one's time on the same devices:
	 * reads of the HDD tier, in parallel. A copy home instead writes the
	 * HDD tier and flushes it, whose time hardly depends on how many
	 * pieces (a RAID6 read-modify-write): a smaller batch would not hold
	 * I/O for less, so copies home are neither timed nor sized. A batch
	 * that failed times its undoing, not a commit; one that went through
	 * mirrors (a held copy could not be set up) keeps the next to the
	 * mirrors' size.
	 */
	if (job->piece_to_ssd && r == 0 &&
	    migrate_batch_held_copy(b, &copied, &copy_ns, &stall_ns)) {
		size_t cur = job->p->held_pieces ? job->p->held_pieces : JOB_PIECE_BATCH;
		uint64_t target = batch_held_target(stall_ns, copy_ns, JOB_HELD_COPY_TARGET_NS,
						    JOB_HELD_COPY_SHARE);

		job->p->held_pieces = (uint32_t)batch_held_pieces(cur, copied, copy_ns, target,
								  JOB_HELD_PIECES_MIN,
								  job_held_pieces_max(job));
	} else if (job->piece_to_ssd && job->p->held_pieces > JOB_PIECE_BATCH) {
		job->p->held_pieces = JOB_PIECE_BATCH;
	}
	job->batch = NULL;
	job_account(job, r, err);
	job->nr_items = 0;
	if (r < 0) {
		job_finish(job, r, err);
		return;
	}
	if (job->limits.rate)
		job->next_batch_ns = clock_now_ns() + (uint64_t)((double)bytes / (double)job->limits.rate * 1e9);
	job->load_ok = devload_read(job->p->dm_major, job->p->dm_minor, &job->load) == 0;
	jobrate_sample(&job->rate, clock_now_ns(), (uint64_t)job->started * job_item_bytes(job));
	job_next(job);
}

/*
 * Whether a batch may start now and how many extents it may hold; otherwise
 * the job waits (a timer calls job_next again). Off: always, full batches.
 * Throttled: waits while the volume is busy, up to JOB_THROTTLED_MAX_WAITS
 * windows, then moves one extent. Idle: waits until the volume is quiet.
 */
static size_t job_admit(struct pool_job *job)
{
	struct devload_sample cur;
	uint64_t now = clock_now_ns();
	double busy, elapsed;

	if (job->paused) {
		job->waiting = "paused";
		return 0;
	}
	if (job->next_batch_ns > now) {
		job_wait(job, "rate", (double)(job->next_batch_ns - now) / 1e9);
		return 0;
	}
	if (job->limits.io == JOB_IO_OFF)
		return JOB_BATCH;
	if (!job->load_ok || devload_read(job->p->dm_major, job->p->dm_minor, &cur) < 0) {
		job->load_ok = devload_read(job->p->dm_major, job->p->dm_minor, &job->load) == 0;
		if (!job->load_ok)
			return JOB_BATCH; /* no counters: cannot tell, do not stall forever */
		job_wait(job, job->limits.io == JOB_IO_IDLE ? "idle" : "busy", JOB_LOAD_WINDOW);
		return 0;
	}
	elapsed = (double)(cur.at_ns - job->load.at_ns) / 1e9;
	if (elapsed < JOB_LOAD_WINDOW * 0.9) {
		job_wait(job, job->limits.io == JOB_IO_IDLE ? "idle" : "busy",
			 JOB_LOAD_WINDOW - elapsed);
		return 0;
	}
	busy = devload_busy(&job->load, &cur);
	job->load = cur;
	if (job->limits.io == JOB_IO_IDLE) {
		if (busy >= JOB_BUSY_IDLE) {
			job_wait(job, "idle", JOB_LOAD_WINDOW);
			return 0;
		}
		return JOB_BATCH;
	}
	if (busy < JOB_BUSY_THROTTLED) {
		job->busy_waits = 0;
		return JOB_BATCH;
	}
	if (++job->busy_waits <= JOB_THROTTLED_MAX_WAITS) {
		job_wait(job, "busy", JOB_LOAD_WINDOW);
		return 0;
	}
	job->busy_waits = 0;
	return 1;
}

static void job_record_intents(struct pool_job *job)
{
	struct pool *p = job->p;
	struct state_intent v[JOB_BATCH];

	for (size_t i = 0; i < job->nr_items; i++) {
		struct extmap_loc src = extmap_get(&p->sp.map, job->items[i].le);

		v[i] = (struct state_intent){ .le = job->items[i].le, .src_dev = src.dev,
					      .src_pe = src.pe, .dst_dev = (uint16_t)job->items[i].dev,
					      .dst_pe = job->items[i].pe };
	}
	if (state_intents_add(p->ps->state, p->sp.id, v, job->nr_items, time(NULL)) < 0)
		log_pool_warn(p->sp.meta.name, "cannot record the migration intents: %s",
			      state_last_error(p->ps->state));
}

/* Step 1 of the protocol for a batch of pieces: where each is and where it goes. */
static void job_record_piece_intents(struct pool_job *job)
{
	struct pool *p = job->p;
	const struct piecemap *pm = &p->sp.pieces;
	struct state_piece_intent v[JOB_HELD_PIECES_MAX];

	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		struct extmap_loc home = extmap_get(&p->sp.map, it->le);
		struct state_piece_intent *in = &v[i];
		uint32_t c;
		uint16_t slot;

		*in = (struct state_piece_intent){ .le = it->le, .idx = (uint16_t)it->idx,
						   .src_dev = home.dev, .src_pe = home.pe,
						   .src_slot = (uint16_t)it->idx,
						   .dst_dev = home.dev, .dst_pe = home.pe,
						   .dst_slot = (uint16_t)it->idx };
		if (piecemap_find(pm, it->le, it->idx, &c, &slot) == 0) {
			in->src_dev = pm->containers[c].dev;
			in->src_pe = pm->containers[c].pe;
			in->src_slot = slot;
		}
		if (it->container != PIECEMAP_NO_CONTAINER) {
			in->dst_dev = pm->containers[it->container].dev;
			in->dst_pe = pm->containers[it->container].pe;
			in->dst_slot = it->slot;
		}
	}
	if (state_piece_intents_add(p->ps->state, p->sp.id, v, job->nr_items, time(NULL)) < 0)
		log_pool_warn(p->sp.meta.name, "cannot record the piece migration intents: %s",
			      state_last_error(p->ps->state));
}

/*
 * The reserve batch_next() keeps free on each device: a move may use a
 * device's swap reserve only to make room on the other tier, so only
 * promotions to an SSD keep off it, and a detach may use it all.
 */
static void job_reserves(const struct pool_job *job, uint32_t reserve[EXTMAP_MAX_DEVS])
{
	const struct pool *p = job->p;

	for (unsigned dev = 0; dev < EXTMAP_MAX_DEVS; dev++) {
		bool none = job->detach || dev >= p->sp.map.nr_devs ||
			    p->sp.meta.devs[dev].tier == METADATA_TIER_HDD;

		reserve[dev] = none ? 0 : p->sp.meta.devs[dev].reserve_pe;
	}
}

/*
 * Zero the next destinations of a drop for up to JOB_DROP_SLICE_NS, then
 * let the loop serve others; commit (job_finish) after the last.
 */
static void job_drop_next(struct pool_job *job)
{
	uint64_t start = clock_now_ns();
	char err[POOL_ERR_MAX];
	int r;

	if (job->paused) {
		job->waiting = "paused";
		return;
	}
	job->waiting = "";
	while (job->started < job->nr) {
		r = pool_drop_zero(job->p, job->drop, (uint32_t)job->started, err, sizeof(err));
		if (r < 0) {
			job_finish(job, r, err);
			return;
		}
		job->started++;
		job->moved++;
		if (clock_now_ns() - start >= JOB_DROP_SLICE_NS)
			break;
	}
	job_notify(job);
	if (job->started < job->nr)
		job_wait(job, "", 0.);
	else
		job_finish(job, 0, NULL);
}

/*
 * A free slot on the SSD tier for a piece, reserved: in a container that
 * has one, else in a new container made of a free SSD extent beyond the
 * tier's swap reserve. -ENOSPC when there is none.
 */
static int job_piece_slot(struct pool *p, unsigned *dev, uint32_t *container, uint16_t *slot)
{
	struct piecemap *pm = &p->sp.pieces;
	int ssd = pool_ssd_dev(p), r;
	uint32_t pe;

	if (ssd < 0)
		return -ENODEV;
	*dev = (unsigned)ssd;
	if (piecemap_alloc_slot(pm, (uint16_t)ssd, container, slot) == 0)
		return 0;
	if (p->sp.map.nr_free[ssd] <= p->sp.meta.devs[ssd].reserve_pe)
		return -ENOSPC;
	r = extmap_alloc(&p->sp.map, (unsigned)ssd, &pe);
	if (r < 0)
		return r;
	r = piecemap_add_container(pm, (uint16_t)ssd, pe, NULL);
	if (r < 0) {
		extmap_release(&p->sp.map, (unsigned)ssd, pe);
		return r;
	}
	return piecemap_alloc_slot(pm, (uint16_t)ssd, container, slot);
}

/*
 * The next batch of a move of pieces, of up to max: the next units (extent,
 * piece) not where they are to go, each with its destination reserved.
 */
static void job_pieces_next(struct pool_job *job, size_t max)
{
	struct pool *p = job->p;
	struct piecemap *pm = &p->sp.pieces;
	uint32_t max_targets = pool_table_targets_max(p), targets = 0;
	char err[POOL_ERR_MAX];
	size_t n = 0;
	int r = 0;

	/* A walk of the map's spans (milliseconds at 200 TiB): only where a limit is checked. */
	if (job->piece_to_ssd && max_targets)
		targets = pool_table_targets(p);

	/*
	 * The batch's commit cannot bring slots that lag up to date once the
	 * pieces changed in memory (pool_commit_fill writes the generation as
	 * the map encodes it): a container made below would leave it the
	 * whole record to write inside the stall. So the fill runs now; a
	 * failure of it fails that commit in turn, which says why.
	 */
	if (job->piece_to_ssd && pool_commit_fill(p, err, sizeof(err)) < 0)
		log_pool_warn(p->sp.meta.name, "%s", err);
	while (n < max && job->started < job->nr) {
		const struct job_piece_req *listed = job->piece_list ?
							     &job->piece_list[job->started] : NULL;
		uint32_t le = listed ? listed->le :
			      job->piece_le + (uint32_t)(job->started / job->piece_count);
		uint32_t idx = listed ? listed->idx :
			       job->piece_first + (uint32_t)(job->started % job->piece_count);
		struct migrate_item *it = &job->items[n];
		uint32_t c;
		uint16_t slot;
		bool out = piecemap_find(pm, le, idx, &c, &slot) == 0;

		/* Home over a range: an extent with no piece out is skipped whole, to the next split one. */
		if (!listed && !job->piece_to_ssd && !piecemap_extent(pm, le, NULL)) {
			uint32_t next = piecemap_next_split(pm, le);
			uint64_t to = next == UINT32_MAX ? job->nr :
				      (uint64_t)(next - job->piece_le) * job->piece_count;

			job->started = to < job->nr ? to : job->nr;
			continue;
		}
		if (out == job->piece_to_ssd) {
			job->started++; /* in place */
			continue;
		}
		*it = (struct migrate_item){ .le = le, .piece = true, .idx = idx,
					     .container = PIECEMAP_NO_CONTAINER };
		if (job->piece_to_ssd) {
			/* A piece out costs up to two more targets (pool_table_targets). */
			if (max_targets && targets + 2 > max_targets) {
				snprintf(err, sizeof(err), "piece %u of extent %u and the ones after"
					 " it could not move: the volume's table would pass its"
					 " limit of %u targets (the table-targets setting; it has"
					 " %u)", idx, le, max_targets, targets);
				r = -ENOSPC;
				break;
			}
			r = job_piece_slot(p, &it->dev, &it->container, &it->slot);
			if (r == -ENOSPC)
				snprintf(err, sizeof(err), "piece %u of extent %u and the ones after"
					 " it could not move: no free slot for them, nor a free"
					 " extent for a piece container on the SSD tier beyond its"
					 " swap reserve", idx, le);
			else if (r < 0)
				snprintf(err, sizeof(err), "piece %u of extent %u could not move: no"
					 " slot for it on the SSD tier: %s", idx, le, strerror(-r));
			if (r < 0)
				break;
			targets += 2;
		} else {
			it->dev = extmap_get(&p->sp.map, le).dev;
		}
		job->started++;
		n++;
	}
	if (n == 0) {
		job_finish(job, r, r < 0 ? err : NULL);
		return;
	}
	/* Out of room or budget after n: they move, and the next round ends the job saying why. */
	job->nr_items = n;
	job_record_piece_intents(job);
	r = migrate_batch_start(job->loop, p, job->items, n, job_batch_done, job, &job->batch,
				err, sizeof(err));
	if (r < 0) {
		job->nr_items = 0;
		job_finish(job, r, err);
		return;
	}
	job_notify(job);
}

static void job_next(struct pool_job *job)
{
	struct pool *p = job->p;
	char err[POOL_ERR_MAX];
	uint32_t reserve[EXTMAP_MAX_DEVS];
	struct batch_item picked[JOB_BATCH];
	struct batch_table table;
	size_t n, max, left;
	int r;

	if (job->aborting) {
		job_finish(job, -ECANCELED, NULL);
		return;
	}
	if (job->drop) {
		job_drop_next(job);
		return;
	}
	if (job->limits.deadline && time(NULL) >= job->limits.deadline) {
		job_finish(job, -ETIME, "the tiering window closed");
		return;
	}
	if (job->piece_job ? job->started >= job->nr :
			     !batch_pending(job->moves, job->nr, &job->first_waiting)) {
		job_finish(job, 0, NULL);
		return;
	}
	max = job_admit(job);
	if (max == 0)
		return;
	if (max > JOB_BATCH)
		max = JOB_BATCH;
	job->waiting = "";
	if (job->piece_job) {
		size_t pieces = max * JOB_PIECES_PER_EXTENT;

		/*
		 * Sized for a held copy, up to JOB_HELD_PIECES_MAX when the job
		 * may take a whole batch; mirrors left by a failed batch make
		 * it a mirror batch, of JOB_PIECE_BATCH at most.
		 */
		if (job->piece_to_ssd && pool_piece_copy(p) == POOL_PIECE_COPY_HELD &&
		    !p->leftover && p->held_pieces &&
		    (p->held_pieces < pieces || max == JOB_BATCH))
			pieces = p->held_pieces;
		/* The size was the last job's: this one's pieces may be larger. */
		if (pieces > job_held_pieces_max(job))
			pieces = job_held_pieces_max(job);
		job_pieces_next(job, pieces);
		return;
	}
	job_reserves(job, reserve);
	table = (struct batch_table){
		.targets = pool_table_targets(p),
		/* A detach must empty its device, whatever the table becomes. */
		.max_targets = job->detach ? 0 : pool_table_targets_max(p),
	};
	n = batch_next(&p->sp.map, job->moves, job->nr, &job->first_waiting, reserve, &table, max,
		       JOB_LOOKAHEAD, picked, &job->started);
	if (n == 0) {
		left = batch_waiting(job->moves, job->nr, job->first_waiting);
		if (left && table.held) {
			snprintf(err, sizeof(err), "%zu extents could not move: the volume's table"
				 " would pass its limit of %u targets (the table-targets setting;"
				 " it has %u)", left, table.max_targets, table.targets);
			job_finish(job, -ENOSPC, err);
			return;
		}
		if (left) {
			snprintf(err, sizeof(err), "%zu extents could not move: no free extents left on"
				 " their destination", left);
			job_finish(job, -ENOSPC, err);
			return;
		}
		job_finish(job, 0, NULL);
		return;
	}
	for (size_t i = 0; i < n; i++)
		job->items[i] = (struct migrate_item){ .le = picked[i].le, .dev = picked[i].dev,
						       .pe = picked[i].pe };
	job->nr_items = n;
	job_record_intents(job);
	r = job->offline ? job_offline_start(job, err, sizeof(err)) :
			   migrate_batch_start(job->loop, p, job->items, n, job_batch_done, job,
					       &job->batch, err, sizeof(err));
	if (r < 0) {
		job->nr_items = 0;
		job_finish(job, r, err);
		return;
	}
	job_notify(job);
}

/* ---- moves without a volume: tierd copies with io_uring (ucopy.c) ---- */

static void job_kick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	job_next(w->data);
}

/* A job of kind on p, not started; NULL when out of memory. */
static struct pool_job *job_new(struct pool *p, struct ev_loop *loop, enum job_kind kind,
				job_progress_fn progress, job_done_fn done, void *ctx)
{
	struct pool_job *job = calloc(1, sizeof(*job));

	if (!job)
		return NULL;
	job->p = p;
	job->loop = loop;
	job->kind = kind;
	job->started_at = time(NULL);
	jobrate_start(&job->rate, clock_now_ns());
	job->waiting = "";
	job->progress = progress;
	job->done = done;
	job->ctx = ctx;
	ev_timer_init(&job->kick, job_kick, 0., 0.);
	job->kick.data = job;
	return job;
}

static int job_start(struct pool *p, struct ev_loop *loop, enum job_kind kind,
		     struct batch_move *moves, size_t nr, const struct job_limits *limits,
		     job_progress_fn progress, job_done_fn done, void *ctx, struct pool_job **out,
		     char *err, size_t err_len)
{
	struct pool_job *job;
	size_t kept = 0;
	uint32_t split = UINT32_MAX;

	/*
	 * A split extent moves only by its pieces: a whole move would copy its
	 * home, whose pieces out are stale there. Its pieces come home first
	 * (job_move_pieces); until then it stays where it is.
	 */
	for (size_t i = 0; i < nr; i++) {
		if (piecemap_extent(&p->sp.pieces, moves[i].le, NULL)) {
			if (split == UINT32_MAX)
				split = moves[i].le;
			continue;
		}
		moves[kept++] = moves[i];
	}
	if (split != UINT32_MAX && !kept) {
		free(moves);
		return errbuf_fail(-EBUSY, err, err_len,
				   "extent %u of pool %s is split into pieces: bring them home"
				   " first ('tierctl extent move %s %u --pieces all --tier hdd')",
				   split, p->sp.meta.name, p->sp.meta.name, split);
	}
	if (split != UINT32_MAX)
		log_pool_warn(p->sp.meta.name, "%zu extents split into pieces stay where they are",
			      nr - kept);
	nr = kept;
	job = job_new(p, loop, kind, progress, done, ctx);
	if (!job) {
		free(moves);
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	}
	job->moves = moves;
	job->nr = nr;
	if (limits)
		job->limits = *limits;
	if (!p->active) {
		int r = job_offline_prepare(p, job, err, err_len);

		if (r < 0) {
			free(moves);
			free(job);
			return r;
		}
	}
	if (p->active) {
		struct dmctl_info info;

		/* The volume's device number, for its load: created or activated, it may be new. */
		if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
			p->dm_major = info.major;
			p->dm_minor = info.minor;
		}
	}
	job->load_ok = devload_read(p->dm_major, p->dm_minor, &job->load) == 0;
	ev_timer_start(loop, &job->kick);
	pool_set_job(p, job, job->what);
	*out = job;
	return 0;
}

/* The extents of [first, first + count) that are (on) or are not on dev, to move to to_dev. */
static int extents_by_dev(const struct pool *p, uint32_t first, uint32_t count, unsigned dev,
			  bool on, unsigned to_dev, struct batch_move **moves, size_t *nr)
{
	struct batch_move *v = malloc(((size_t)count + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t le = first; le < first + count; le++)
		if ((extmap_get(&p->sp.map, le).dev == dev) == on)
			v[n++] = (struct batch_move){ .le = le, .dev = (uint16_t)to_dev };
	*moves = v;
	*nr = n;
	return 0;
}

int job_move_range(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count, bool to_ssd,
		   const struct job_limits *limits, job_progress_fn progress, job_done_fn done,
		   void *ctx, char *err, size_t err_len)
{
	int ssd = pool_ssd_dev(p), r;
	unsigned to = to_ssd ? (unsigned)ssd : 0;
	struct batch_move *moves;
	struct pool_job *job;
	size_t nr;

	r = pool_check_idle(p, false, err, err_len);
	if (r < 0)
		return r;
	if (to_ssd && ssd < 0)
		return errbuf_fail(-ENODEV, err, err_len, "pool %s has no SSD tier",
				   p->sp.meta.name);
	if (count == 0 || first >= p->sp.map.nr_logical || count > p->sp.map.nr_logical - first)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s has extents 0 to %u",
				   p->sp.meta.name, p->sp.map.nr_logical - 1);
	r = extents_by_dev(p, first, count, to, false, to, &moves, &nr);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "out of memory");
	r = job_start(p, loop, JOB_KIND_MOVE, moves, nr, limits, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	snprintf(job->what, sizeof(job->what), "moving extents %u-%u to the %s tier", first,
		 first + count - 1, to_ssd ? "SSD" : "HDD");
	return 0;
}

/*
 * The checks every move of pieces makes, and the pool's piece size set
 * with its first piece: *ppe, the pieces per extent.
 */
static int job_pieces_ready(struct pool *p, bool to_ssd, uint32_t *ppe_out, char *err,
			    size_t err_len)
{
	struct piecemap *pm = &p->sp.pieces;
	uint64_t es = p->sp.meta.extent_size;
	uint32_t ppe = pm->pieces_per_extent;
	char have[SIZE_FORMAT_MAX], want[SIZE_FORMAT_MAX];
	int r;

	r = pool_check_idle(p, false, err, err_len);
	if (r < 0)
		return r;
	if (!p->active)
		return errbuf_fail(-EBUSY, err, err_len, "pool %s is not active: pieces move only"
				   " while its volume runs", p->sp.meta.name);
	if (to_ssd && pool_ssd_dev(p) < 0)
		return errbuf_fail(-ENODEV, err, err_len, "pool %s has no SSD tier",
				   p->sp.meta.name);
	if (!ppe && !to_ssd)
		return errbuf_fail(-ENOENT, err, err_len, "pool %s has no pieces out: none to"
				   " bring home", p->sp.meta.name);
	/* No piece was ever out: the pool takes its heat's piece size now, with its first one. */
	if (!ppe)
		ppe = pool_piece_ppe(p);
	if (!ppe)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s: its extents of %s cannot be"
				   " split into pieces of %s (tierd's piece-size)", p->sp.meta.name,
				   size_format(es, have, sizeof(have)),
				   size_format(p->ps->piece_bytes, want, sizeof(want)));
	*ppe_out = ppe;
	return 0;
}

/* Only pieces of extents at home on the HDD tier go to the SSD. */
static int job_piece_home_hdd(const struct pool *p, uint32_t le, char *err, size_t err_len)
{
	struct extmap_loc home = extmap_get(&p->sp.map, le);

	if (home.dev < p->sp.meta.nr_devs && p->sp.meta.devs[home.dev].tier != METADATA_TIER_SSD)
		return 0;
	return errbuf_fail(-EINVAL, err, err_len, "extent %u of pool %s is %s: only pieces of"
			   " extents on the HDD tier go to the SSD", le, p->sp.meta.name,
			   home.dev >= p->sp.meta.nr_devs ? "not mapped" :
							     "on the SSD tier already");
}

/* A job (*out) of nr pieces of ppe to an extent, not started; the caller has checked them. */
static int job_pieces_new(struct pool *p, struct ev_loop *loop, enum job_kind kind, uint32_t ppe,
			  size_t nr, bool to_ssd, const struct job_limits *limits,
			  job_progress_fn progress, job_done_fn done, void *ctx,
			  struct pool_job **out, char *err, size_t err_len)
{
	struct piecemap *pm = &p->sp.pieces;
	struct pool_job *job;
	struct dmctl_info info;
	int r;

	if (!pm->pieces_per_extent) {
		/* The count goes on: a writer that saved the pieces before must see a change. */
		uint64_t changes = pm->changes;

		r = piecemap_init(pm, ppe);
		if (r < 0)
			return errbuf_fail(r, err, err_len, "pool %s: cannot split its extents: %s",
					   p->sp.meta.name, strerror(-r));
		pm->changes = changes + 1;
	}
	job = job_new(p, loop, kind, progress, done, ctx);
	if (!job)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	job->piece_job = true;
	job->piece_to_ssd = to_ssd;
	job->piece_bytes = p->sp.meta.extent_size / ppe;
	job->nr = nr;
	if (limits)
		job->limits = *limits;
	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		p->dm_major = info.major;
		p->dm_minor = info.minor;
	}
	job->load_ok = devload_read(p->dm_major, p->dm_minor, &job->load) == 0;
	*out = job;
	return 0;
}

int job_move_pieces(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count,
		    uint32_t piece_first, uint32_t piece_count, bool to_ssd,
		    const struct job_limits *limits, job_progress_fn progress, job_done_fn done,
		    void *ctx, char *err, size_t err_len)
{
	struct pool_job *job;
	char pieces_text[48];
	uint32_t ppe;
	int r;

	r = job_pieces_ready(p, to_ssd, &ppe, err, err_len);
	if (r < 0)
		return r;
	if (count == 0 || first >= p->sp.map.nr_logical || count > p->sp.map.nr_logical - first)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s has extents 0 to %u",
				   p->sp.meta.name, p->sp.map.nr_logical - 1);
	if (piece_count == 0 && piece_first < ppe)
		piece_count = ppe - piece_first;
	if (piece_first >= ppe || piece_count > ppe - piece_first)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s has pieces 0 to %u of each"
				   " extent", p->sp.meta.name, ppe - 1);
	for (uint32_t le = first; to_ssd && le < first + count; le++) {
		r = job_piece_home_hdd(p, le, err, err_len);
		if (r < 0)
			return r;
	}
	r = job_pieces_new(p, loop, JOB_KIND_MOVE, ppe, (size_t)count * piece_count, to_ssd, limits,
			   progress, done, ctx, &job, err, err_len);
	if (r < 0)
		return r;
	job->piece_le = first;
	job->piece_first = piece_first;
	job->piece_count = piece_count;
	if (piece_count == 1)
		snprintf(pieces_text, sizeof(pieces_text), "piece %u", piece_first);
	else
		snprintf(pieces_text, sizeof(pieces_text), "pieces %u-%u", piece_first,
			 piece_first + piece_count - 1);
	if (count == 1)
		snprintf(job->what, sizeof(job->what), "moving %s of extent %u %s", pieces_text,
			 first, to_ssd ? "to the SSD tier" : "home");
	else
		snprintf(job->what, sizeof(job->what), "moving %s of extents %u-%u %s", pieces_text,
			 first, first + count - 1, to_ssd ? "to the SSD tier" : "home");
	ev_timer_start(loop, &job->kick);
	pool_set_job(p, job, job->what);
	return 0;
}

static int piece_list_job(struct pool *p, struct ev_loop *loop, enum job_kind kind,
			  const struct job_piece_req *req, size_t nr, bool to_ssd,
			  const struct job_limits *limits, const char *what,
			  struct state_moves *moved, job_progress_fn progress, job_done_fn done,
			  void *ctx, struct pool_job **out, char *err, size_t err_len)
{
	struct job_piece_req *list;
	struct pool_job *job;
	uint32_t ppe;
	int r;

	r = job_pieces_ready(p, to_ssd, &ppe, err, err_len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nr; i++) {
		if (req[i].le >= p->sp.map.nr_logical || req[i].idx >= ppe)
			return errbuf_fail(-EINVAL, err, err_len, "pool %s has extents 0 to %u,"
					   " pieces 0 to %u of each", p->sp.meta.name,
					   p->sp.map.nr_logical - 1, ppe - 1);
		r = to_ssd ? job_piece_home_hdd(p, req[i].le, err, err_len) : 0;
		if (r < 0)
			return r;
	}
	list = reallocarray(NULL, nr + 1, sizeof(*list));
	if (!list)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	memcpy(list, req, nr * sizeof(*list));
	r = job_pieces_new(p, loop, kind, ppe, nr, to_ssd, limits, progress, done, ctx, &job, err,
			   err_len);
	if (r < 0) {
		free(list);
		return r;
	}
	job->piece_list = list;
	job->moved_out = moved;
	snprintf(job->what, sizeof(job->what), "%s", what);
	ev_timer_start(loop, &job->kick);
	pool_set_job(p, job, job->what);
	if (out)
		*out = job;
	return 0;
}

int job_move_piece_list(struct pool *p, struct ev_loop *loop, const struct job_piece_req *req,
			size_t nr, bool to_ssd, const struct job_limits *limits, const char *what,
			struct state_moves *moved, job_progress_fn progress, job_done_fn done,
			void *ctx, char *err, size_t err_len)
{
	/* Only a run moves lists of pieces: its phases are the run's job to whoever follows it. */
	return piece_list_job(p, loop, JOB_KIND_RUN, req, nr, to_ssd, limits, what, moved,
			      progress, done, ctx, NULL, err, err_len);
}

int job_move_list(struct pool *p, struct ev_loop *loop, const struct job_move_req *req, size_t nr,
		  const struct job_limits *limits, const char *what, struct state_moves *moved,
		  job_progress_fn progress, job_done_fn done, void *ctx, char *err, size_t err_len)
{
	int ssd = pool_ssd_dev(p), r;
	struct batch_move *moves;
	struct pool_job *job;

	r = pool_check_idle(p, false, err, err_len);
	if (r < 0)
		return r;
	if (ssd < 0)
		return errbuf_fail(-ENODEV, err, err_len, "pool %s has no SSD tier",
				   p->sp.meta.name);
	moves = calloc(nr + 1, sizeof(*moves));
	if (!moves)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		if (req[i].le >= p->sp.map.nr_logical) {
			free(moves);
			return errbuf_fail(-EINVAL, err, err_len, "pool %s has extents 0 to %u",
					   p->sp.meta.name, p->sp.map.nr_logical - 1);
		}
		moves[i] = (struct batch_move){ .le = req[i].le,
						   .dev = (uint16_t)(req[i].to_ssd ? ssd : 0) };
	}
	r = job_start(p, loop, JOB_KIND_RUN, moves, nr, limits, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	job->moved_out = moved;
	snprintf(job->what, sizeof(job->what), "%s", what);
	return 0;
}

void job_pause(struct pool *p, bool paused)
{
	struct pool_job *job = p->job;

	if (!job || job->paused == paused)
		return;
	job->paused = paused;
	/* A waiting job looks again now; a batch in flight ends first. */
	if (!paused && !job->batch)
		job_wait(job, "", 0.);
}

int job_get_report(const struct pool *p, struct job_report *out)
{
	if (!p->job)
		return -ENOENT;
	job_fill_report(p->job, out);
	return 0;
}

int job_watch(struct pool *p, job_watch_fn fn, void *ctx)
{
	struct pool_job *job = p->job;
	struct job_watcher *w;

	if (!job)
		return -ENOENT;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->ctx = ctx;
	w->next = job->watchers;
	job->watchers = w;
	return 0;
}

int job_abort(struct pool *p, job_watch_fn fn, void *ctx)
{
	struct pool_job *job = p->job;
	int r;

	if (!job)
		return -ENOENT;
	if (fn) {
		r = job_watch(p, fn, ctx);
		if (r < 0)
			return r;
	}
	job->aborting = 1;
	/* A job between batches stops now, from the loop; one in flight when its batch ends. */
	if (!job->nr_items)
		job_wait(job, "", 0.);
	return 0;
}

/*
 * A detach once no piece is out: with shrink, drop the SSD's capacity from
 * the end of the volume, then move every extent on the SSD home. The
 * capacity check was made before any piece came home: a detach refused
 * for it changes nothing.
 */
static int detach_evacuate(struct pool *p, struct ev_loop *loop, unsigned dev, bool shrink,
			   job_progress_fn progress, job_done_fn done, void *ctx, char *err,
			   size_t err_len)
{
	struct batch_move *moves;
	struct pool_job *job;
	size_t nr;
	int r;

	if (p->sp.meta.flags & METADATA_POOL_SSD_GROWS) {
		if (!shrink)
			return errbuf_fail(-EBUSY, err, err_len, "pool %s: its SSD's capacity is"
					   " part of the volume; detach with --shrink",
					   p->sp.meta.name);
		r = pool_shrink_by(p, dev, err, err_len);
		if (r < 0)
			return r;
	}
	/* Its commits record them gone; the SSD's extents are then all the map's. */
	pool_drop_empty_containers(p);
	r = extents_by_dev(p, 0, p->sp.map.nr_logical, dev, true, 0, &moves, &nr);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "out of memory");
	r = job_start(p, loop, JOB_KIND_DETACH, moves, nr, NULL, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	job->detach = 1;
	job->detach_dev = dev;
	snprintf(job->what, sizeof(job->what), "evacuating %s", p->sp.paths[dev]);
	return 0;
}

/*
 * A detach with pieces out brings them all home first, as a job of its
 * own kind; job_finish() goes on with detach_evacuate() when every piece
 * came home. Pieces out are few beside the extents (the table bounds them)
 * and each a small copy, so this phase is short beside the evacuation.
 */
static int detach_pieces_home(struct pool *p, struct ev_loop *loop, unsigned dev, bool shrink,
			      job_progress_fn progress, job_done_fn done, void *ctx, char *err,
			      size_t err_len)
{
	const struct piecemap *pm = &p->sp.pieces;
	struct job_piece_req *req;
	struct pool_job *job;
	char what[192];
	int r;

	req = calloc(pm->nr_pieces, sizeof(*req));
	if (!req)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	for (uint32_t i = 0; i < pm->nr_pieces; i++)
		req[i] = (struct job_piece_req){ .le = pm->pieces[i].le, .idx = pm->pieces[i].idx };
	snprintf(what, sizeof(what), "bringing %u pieces home to detach %s", pm->nr_pieces,
		 p->sp.paths[dev]);
	r = piece_list_job(p, loop, JOB_KIND_DETACH, req, pm->nr_pieces, false, NULL, what, NULL,
			   progress, done, ctx, &job, err, err_len);
	free(req);
	if (r < 0)
		return r;
	job->detach_pieces = 1;
	job->detach_shrink = shrink;
	job->detach_dev = dev;
	return 0;
}

int job_detach(struct pool *p, struct ev_loop *loop, const char *ssd, bool shrink,
	       job_progress_fn progress, job_done_fn done, void *ctx, char *err, size_t err_len)
{
	int dev = pool_ssd_dev(p), r;

	r = pool_check_idle(p, true, err, err_len);
	if (r < 0)
		return r;
	if (dev < 0)
		return errbuf_fail(-ENODEV, err, err_len, "pool %s has no SSD tier",
				   p->sp.meta.name);
	if (!pool_same_device(ssd, p->sp.paths[dev]))
		return errbuf_fail(-ENODEV, err, err_len,
				   "%s is not the SSD of pool %s (that is %s)", ssd, p->sp.meta.name,
				   p->sp.paths[dev]);
	if ((p->sp.meta.flags & METADATA_POOL_SSD_GROWS) && !shrink) {
		const struct metadata_dev *d = &p->sp.meta.devs[dev];
		uint64_t keep = (uint64_t)(p->sp.map.nr_logical - (d->nr_pe - d->reserve_pe)) *
				p->sp.meta.extent_size;
		char human[SIZE_FORMAT_MAX];

		return errbuf_fail(-EBUSY, err, err_len,
				   "the SSD's capacity is part of /dev/mapper/%s: shrink its filesystem"
				   " to at most %s (%llu bytes) first, then detach with --shrink",
				   p->sp.meta.name, size_format(keep, human, sizeof(human)),
				   (unsigned long long)keep);
	}
	if (p->sp.pieces.nr_pieces)
		return detach_pieces_home(p, loop, (unsigned)dev, shrink, progress, done, ctx, err,
					  err_len);
	return detach_evacuate(p, loop, (unsigned)dev, shrink, progress, done, ctx, err, err_len);
}

int job_drop_missing(struct pool *p, struct ev_loop *loop, job_progress_fn progress,
		     job_done_fn done, void *ctx, char *err, size_t err_len)
{
	struct pool_job *job;
	struct pool_drop *d;
	int r;

	if (p->job)
		return errbuf_fail(-EBUSY, err, err_len, "pool %s is busy: %s", p->sp.meta.name,
				   p->job_what);
	/* Inactive because a device is missing: activate it degraded first. */
	if (!p->active) {
		r = pool_activate(p->ps, p, true, err, err_len);
		if (r < 0)
			return r;
	}
	r = pool_drop_plan(p, &d, err, err_len);
	if (r < 0)
		return r;
	job = job_new(p, loop, JOB_KIND_DROP, progress, done, ctx);
	if (!job) {
		pool_drop_free(p, d);
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	}
	job->drop = d;
	job->nr = (size_t)d->nr + d->nr_pieces;
	if (d->nr_pieces) {
		job->pieces_from = d->nr;
		job->piece_bytes = p->sp.meta.extent_size / p->sp.pieces.pieces_per_extent;
	}
	if (d->nr_pieces)
		snprintf(job->what, sizeof(job->what),
			 "zeroing %u extents and %u pieces to replace those lost with the missing"
			 " device", d->nr, d->nr_pieces);
	else
		snprintf(job->what, sizeof(job->what),
			 "zeroing %u extents to replace those lost with the missing device", d->nr);
	ev_timer_start(loop, &job->kick);
	pool_set_job(p, job, job->what);
	return 0;
}
