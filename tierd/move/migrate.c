/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate: a batch of live moves through dm-mirror, or of pieces copied while
 * the volume is suspended (docs/migration.md).
 */
#include "migrate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dmctl.h"
#include "dmstatus.h"
#include "dmtable.h"
#include "extmap.h"
#include "fault.h"
#include "log.h"
#include "metadata.h"
#include "piecemap.h"
#include "pool-internal.h"
#include "ucopy.h"

/* kcopyd copies a region at a time; 512 KiB keeps the core log small. */
#define MIGRATE_REGION_SECTORS 1024u
/*
 * A mirror raises a device-mapper event when it is in sync or loses a leg:
 * the batch wakes on those, and polls the status only as a safety net.
 * Without events (a kernel before 4.13) it polls often.
 */
#define MIGRATE_POLL_SECONDS 0.1
#define MIGRATE_POLL_EVENTS_SECONDS 1.0
/*
 * Mirrors a failed move leaves in the live table hold every write a failed
 * leg refused (handle_errors) until the next suspend. Removing them is
 * retried this often; once they have stayed MIGRATE_HELD_SECONDS, each retry
 * that fails also fails the writes held by then (EIO), rather than let them
 * wait for a restart (docs/migration.md, "Mirrors left behind").
 */
#define MIGRATE_LEFTOVER_RETRY_SECONDS 5.0
#define MIGRATE_HELD_SECONDS 30.0

static int volume_suspended(const char *name)
{
	struct dmctl_info info;

	return dmctl_info(name, &info) == 0 && info.exists && info.suspended;
}

/*
 * Where a batch's time went (CLOCK_MONOTONIC, ns). A stall is how long the
 * volume's I/O was held for a table swap: from the suspend's start to the
 * resume's end.
 */
struct migrate_timing {
	uint64_t stall_ns;        /* the longest swap after the copy: normally the commit's */
	uint64_t commit_ns;       /* of which writing the devices and the state, */
	uint64_t commit_bytes;    /* (the bytes written to the devices, all together) */
	uint64_t state_ns;        /* (of which saving the state) */
	uint64_t prepare_ns;      /* the commit's encoding and diff, before the suspend */
	uint64_t recheck_ns;      /* the mirrors' status read again while suspended */
	uint64_t flush_ns;        /* the destinations flushed while suspended */
	uint64_t suspend_ns;      /* the suspend itself (in-flight I/O, mirrors stopping) */
	uint64_t resume_ns;       /* and the resume (the swap, the mirrors torn down) */
	uint64_t mirror_stall_ns; /* the swap into the mirrors, before the copy */
	uint64_t copy_ns;         /* mirrors live until every copy was in sync or failed */
	bool in_sync_by_event;    /* a device-mapper event, not the safety poll, saw that */
};

/*
 * The batch's debug lines (--verbose), one per step of the protocol. Nothing
 * may reach stderr while the volume is suspended: a write to a full pipe to
 * the journal would block tierd with the volume's I/O held. Nor may anything
 * allocate then. So the lines of a suspended window are formatted into this
 * buffer, allocated with the batch, and written once the volume has resumed.
 * 4 KiB holds a commit's lines with room for a few dozen failed legs.
 */
#define MIGRATE_DEBUG_BYTES 4096
struct migrate_debug {
	bool holding;   /* from just before a suspend to its resume: buffer, do not write */
	bool truncated; /* buf filled up: the window's later lines were dropped */
	size_t len;
	char buf[MIGRATE_DEBUG_BYTES]; /* lines, each ended by '\n' */
};

struct migrate_batch {
	struct ev_loop *loop;
	struct pool *p;
	struct migrate_item *items;
	size_t nr;
	struct dmtable_move moves[MIGRATE_BATCH_MAX];
	size_t nr_moves;
	struct dmtable_piece_move piece_moves[MIGRATE_BATCH_MAX];
	size_t nr_piece_moves;
	struct extmap_loc from[MIGRATE_BATCH_MAX];
	/* A piece's place before the commit: its slot, or container PIECEMAP_NO_CONTAINER at home. */
	uint32_t from_container[MIGRATE_BATCH_MAX];
	uint16_t from_slot[MIGRATE_BATCH_MAX];
	bool remapped[MIGRATE_BATCH_MAX]; /* in memory, by batch_commit */
	uint64_t copied, total;
	struct migrate_timing timing;
	uint64_t copy_from, suspend_from;
	ev_timer poll;
	ev_io events; /* on events_fd, when there is one */
	int events_fd;
	migrate_done_fn done;
	void *ctx;
	char err[512];
	/*
	 * A batch of pieces only, copied while the volume is suspended
	 * (docs/migration.md, "Held copies of pieces"): no mirrors; the copy
	 * engine is set up before the suspend.
	 */
	struct ucopy *held;
	/* --verify-moves: set up before any suspend, used while suspended. */
	struct ucopy *verify;
	size_t verify_differ, verify_errors;
	uint64_t verify_ns;
	struct migrate_debug debug;
};

static int by_le(const void *a, const void *b)
{
	const struct migrate_item *x = a, *y = b;

	if (x->le != y->le)
		return (x->le > y->le) - (x->le < y->le);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t piece_sectors(const struct pool *p)
{
	return pool_extent_sectors(p) / p->sp.pieces.pieces_per_extent;
}

/* Where a piece's bytes are: slot of container, or (PIECEMAP_NO_CONTAINER) at le's home. */
static void piece_place(const struct pool *p, uint32_t le, uint32_t idx, uint32_t container,
			uint16_t slot, unsigned *dev, uint64_t *off)
{
	uint64_t bytes = piece_sectors(p) * 512;

	if (container == PIECEMAP_NO_CONTAINER) {
		struct extmap_loc home = extmap_get(&p->sp.map, le);

		*dev = home.dev;
		*off = pool_pe_offset(p, home.dev, home.pe) + idx * bytes;
	} else {
		const struct piecemap_container *c = &p->sp.pieces.containers[container];

		*dev = c->dev;
		*off = pool_pe_offset(p, c->dev, c->pe) + slot * bytes;
	}
}

/* What the batch's log lines count: its items are all pieces, all extents, or both. */
static const char *batch_unit(const struct migrate_batch *b)
{
	size_t pieces = 0;

	for (size_t i = 0; i < b->nr; i++)
		pieces += b->items[i].piece;
	return pieces == b->nr ? "pieces" : pieces ? "moves" : "extents";
}

static void batch_debug(struct migrate_batch *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Log a debug line about the batch, or keep it for the resume if I/O is held. */
static void batch_debug(struct migrate_batch *b, const char *fmt, ...)
{
	struct migrate_debug *d = &b->debug;
	size_t room = sizeof(d->buf) - d->len;
	char line[512];
	va_list ap;
	int n;

	/* Without --verbose, no formatting (and nothing to buffer) at all. */
	if (!log_enabled(LOG_DEBUG) || (d->holding && d->truncated))
		return;
	va_start(ap, fmt);
	if (!d->holding) {
		vsnprintf(line, sizeof(line), fmt, ap);
		log_pool_debug(pool_name(b->p), "batch of %zu %s: %s", b->nr, batch_unit(b), line);
	} else {
		n = vsnprintf(d->buf + d->len, room, fmt, ap);
		/* A line fits whole with its '\n' or not at all: what is kept stays in order. */
		if (n < 0 || (size_t)n + 1 >= room) {
			d->truncated = true;
		} else {
			d->len += (size_t)n;
			d->buf[d->len++] = '\n';
		}
	}
	va_end(ap);
}

/* I/O is about to be held: from here on debug lines wait in the batch. */
static void batch_debug_hold(struct migrate_batch *b)
{
	b->debug.holding = true;
}

/* The volume runs again (or the batch ends): write the lines that waited. */
static void batch_debug_release(struct migrate_batch *b)
{
	struct migrate_debug *d = &b->debug;
	const char *s = d->buf, *end = d->buf + d->len;

	d->holding = false;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));

		log_pool_debug(pool_name(b->p), "batch of %zu %s: %.*s", b->nr, batch_unit(b),
			       (int)(nl - s), s);
		s = nl + 1;
	}
	if (d->truncated)
		log_pool_debug(pool_name(b->p), "batch of %zu %s: later lines of the suspended"
			       " window dropped (%zu-byte buffer full)", b->nr, batch_unit(b),
			       sizeof(d->buf));
	d->len = 0;
	d->truncated = false;
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static void release_item(struct pool *p, const struct migrate_item *it)
{
	if (!it->piece)
		extmap_release(pool_extmap(p), it->dev, it->pe);
	else if (it->container != PIECEMAP_NO_CONTAINER)
		piecemap_release_slot(&p->sp.pieces, it->container, it->slot);
}

static void release_items(struct pool *p, const struct migrate_item *items, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		release_item(p, &items[i]);
}

static void release_destinations(struct migrate_batch *b)
{
	release_items(b->p, b->items, b->nr);
}

/*
 * Mirrors left in the live table after a batch ended (docs/migration.md,
 * "Mirrors left behind"). With recommit, a device may still name the
 * extents' destinations: the old mapping must reach every device as a newer
 * generation before the extents may go back to linear on their sources.
 */
struct migrate_leftover {
	struct ev_loop *loop;
	struct pool *p;
	ev_timer retry;
	uint64_t since_ns;
	bool recommit;
	bool failing_held; /* said that held writes now fail */
	/*
	 * A held copy's batch left the volume suspended: no mirror keeps src
	 * and dst equal, so I/O waits until the old mapping is on every device.
	 */
	bool suspended;
	/*
	 * The volume is suspended because the table a commit named could not
	 * be resumed: nothing is to be written back, only the map's table to
	 * be resumed.
	 */
	bool resume_failed;
	unsigned retries;
	uint32_t changed[MIGRATE_BATCH_MAX];
	size_t nr_changed;
};

static void leftover_destroy(void *obj)
{
	struct migrate_leftover *l = obj;

	if (!l)
		return;
	ev_timer_stop(l->loop, &l->retry);
	free(l);
}

/*
 * Load the map's table and swap it in: held writes go to the places the map
 * names (after a failed commit, the sources).
 */
static int resume_on_map(struct pool *p, char *err, size_t err_len)
{
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	const char *name = pool_name(p);
	struct dmtable t = { 0 };
	int r;

	r = pool_dm_devs(p, devs, err, err_len);
	if (r == 0) {
		r = dmtable_build_split(&t, pool_extmap(p), pool_pieces(p), devs,
					pool_extent_sectors(p));
		if (r < 0)
			snprintf(err, err_len, "cannot build its table: %s", strerror(-r));
	}
	if (r == 0)
		r = pool_load_inactive(p, &t, err, err_len);
	dmtable_destroy(&t);
	if (r == 0) {
		r = dmctl_resume(name);
		if (r < 0) {
			snprintf(err, err_len, "cannot resume /dev/mapper/%s: %s", name,
				 dmctl_error_text(r));
			dmctl_clear(name);
		}
	}
	return r;
}

static void leftover_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct migrate_leftover *l = w->data;
	const char *name = pool_name(l->p);
	char err[256] = "";
	double held;

	(void)loop;
	(void)revents;
	l->retries++;
	if (l->recommit && pool_commit(l->p, l->changed, l->nr_changed, err, sizeof(err)) == 0) {
		l->recommit = false;
		log_pool_info(name, "wrote the old mapping of %zu extents back to every device",
			      l->nr_changed);
	}
	if (!l->recommit && resume_on_map(l->p, err, sizeof(err)) == 0) {
		if (l->resume_failed)
			log_pool_info(name, "resumed on the map's table after %u retries (%.0f s):"
				      " the volume runs again", l->retries,
				      (clock_now_ns() - l->since_ns) / 1e9);
		else
			log_pool_info(name, "the mirrors a failed move left are gone after %u"
				      " retries (%.0f s)", l->retries,
				      (clock_now_ns() - l->since_ns) / 1e9);
		pool_drop_leftover(l->p); /* frees l */
		return;
	}
	held = (clock_now_ns() - l->since_ns) / 1e9;
	if (l->suspended && held >= MIGRATE_HELD_SECONDS && !l->failing_held) {
		if (l->resume_failed)
			log_pool_err(name, "the volume's I/O still waits: the map's table does not"
				     " resume (%s); retrying every %.0f s", err,
				     MIGRATE_LEFTOVER_RETRY_SECONDS);
		else
			log_pool_err(name, "the volume's I/O still waits for the old mapping to reach"
				     " every device (%s); retrying every %.0f s", err,
				     MIGRATE_LEFTOVER_RETRY_SECONDS);
		l->failing_held = true;
	} else if (!l->suspended && held >= MIGRATE_HELD_SECONDS) {
		/*
		 * A flush suspend completes what a failed leg holds with EIO: the
		 * writer learns its write did not happen, which is the truth while
		 * a device may name the destination that refused it.
		 */
		if (!l->failing_held)
			log_pool_err(name, "mirrors left by a failed move still cannot be removed"
				     " (%s); writes a failed leg holds now fail after at most"
				     " %.0f s", err, MIGRATE_LEFTOVER_RETRY_SECONDS);
		l->failing_held = true;
		if (dmctl_suspend(name, 1) == 0)
			dmctl_resume(name);
	}
	l->retry.repeat = MIGRATE_LEFTOVER_RETRY_SECONDS;
	ev_timer_again(l->loop, &l->retry);
}

/*
 * Retry what a failed batch left every MIGRATE_LEFTOVER_RETRY_SECONDS, as
 * the pool's leftover (replacing any). Without memory for it (l NULL),
 * mirrors wait for the next batch or a restart; a suspended volume, which
 * takes no moves meanwhile, for a restart.
 */
static void leftover_start(struct migrate_batch *b, struct migrate_leftover *l, bool suspended)
{
	if (l) {
		l->loop = b->loop;
		l->p = b->p;
		l->since_ns = clock_now_ns();
		l->suspended = suspended;
		ev_timer_init(&l->retry, leftover_retry, MIGRATE_LEFTOVER_RETRY_SECONDS, 0.);
		l->retry.data = l;
		ev_timer_start(l->loop, &l->retry);
		pool_set_leftover(b->p, l, leftover_destroy);
	}
	if (suspended)
		b->p->io_held = true;
}

/*
 * The batch ends with mirrors in the live table: keep retrying to remove
 * them, so that the writes they hold do not wait for a restart. changed: the
 * extents a device may name on their destinations (recommit), else NULL.
 */
static void leave_mirrors(struct migrate_batch *b, const uint32_t *changed, size_t nr_changed,
			  bool suspended)
{
	struct migrate_leftover *l = calloc(1, sizeof(*l));

	if (suspended)
		log_pool_err(pool_name(b->p), "a failed move left the volume suspended: a device may"
			     " name the pieces' copies, no mirror keeps them equal to their sources;"
			     " writing the old mapping again every %.0f s, I/O waits until then",
			     MIGRATE_LEFTOVER_RETRY_SECONDS);
	else
		log_pool_warn(pool_name(b->p), "a failed move left mirrors in the volume's table;"
			      " removing them again every %.0f s", MIGRATE_LEFTOVER_RETRY_SECONDS);
	if (l && changed) {
		l->recommit = true;
		memcpy(l->changed, changed, nr_changed * sizeof(*changed));
		l->nr_changed = nr_changed;
	}
	leftover_start(b, l, suspended);
}

/*
 * A committed batch's volume could not be resumed, on its new table nor on
 * the map's loaded again: it stays suspended, and tierd loads and resumes
 * the map's table every MIGRATE_LEFTOVER_RETRY_SECONDS. The pool takes no
 * moves until then (pool_check_idle).
 */
static void hold_until_resumed(struct migrate_batch *b, const char *why)
{
	struct migrate_leftover *l = calloc(1, sizeof(*l));

	log_pool_err(pool_name(b->p), "the volume does not resume on the map's table after a"
		     " commit (%s): its I/O waits while tierd tries again every %.0f s",
		     why, MIGRATE_LEFTOVER_RETRY_SECONDS);
	if (l)
		l->resume_failed = true;
	leftover_start(b, l, true);
}

/*
 * A table swap ended with its resume: the volume's I/O was held since
 * suspend_from. Returns for how long.
 */
static uint64_t swap_done(struct migrate_batch *b)
{
	uint64_t held = clock_now_ns() - b->suspend_from;

	if (held > b->timing.stall_ns)
		b->timing.stall_ns = held;
	/* The volume runs: the lines of its suspended window may be written now. */
	batch_debug_release(b);
	return held;
}

static void batch_end(struct migrate_batch *b, int r)
{
	const struct migrate_timing *t = &b->timing;
	size_t moved = 0;

	ev_timer_stop(b->loop, &b->poll);
	ev_io_stop(b->loop, &b->events);
	if (b->events_fd >= 0)
		close(b->events_fd);
	for (size_t i = 0; i < b->nr; i++)
		moved += b->items[i].result == 0;
	/* Normally written at the last resume; what a failed one left waiting goes now. */
	batch_debug_release(b);
	/* Only now: nothing may wait on a write to the log while the volume is suspended. */
	if (b->held)
		log_pool_debug(pool_name(b->p), "batch of %zu pieces: stall %.1f ms (held copy %.1f"
			       " ms, commit %.1f ms, state %.1f ms of it, %llu KiB written); commit"
			       " prepared in %.1f ms before the suspend; %zu moved; suspend %.1f ms,"
			       " flush %.1f ms, resume %.1f ms", b->nr, t->stall_ns / 1e6,
			       t->copy_ns / 1e6, t->commit_ns / 1e6, t->state_ns / 1e6,
			       (unsigned long long)t->commit_bytes / 1024, t->prepare_ns / 1e6, moved,
			       t->suspend_ns / 1e6, t->flush_ns / 1e6, t->resume_ns / 1e6);
	else
		log_pool_debug(pool_name(b->p), "batch of %zu %s: stall %.1f ms (commit %.1f ms,"
			       " state %.1f ms of it, %llu KiB written); commit prepared in %.1f ms"
			       " before the suspend; %zu moved, copied in %.2f s after a %.1f ms stall"
			       " to start the mirrors; suspend %.1f ms, mirrors read again %.1f ms,"
			       " flush %.1f ms, resume %.1f ms; in sync seen by %s", b->nr,
			       batch_unit(b), t->stall_ns / 1e6, t->commit_ns / 1e6, t->state_ns / 1e6,
			       (unsigned long long)t->commit_bytes / 1024, t->prepare_ns / 1e6, moved,
			       t->copy_ns / 1e9, t->mirror_stall_ns / 1e6, t->suspend_ns / 1e6,
			       t->recheck_ns / 1e6, t->flush_ns / 1e6, t->resume_ns / 1e6,
			       t->in_sync_by_event ? "a device-mapper event" : "the status poll");
	/* A difference is a failure of the batch: logged whatever the level. */
	if (b->verify)
		log_pool_msg(b->verify_differ + b->verify_errors ? LOG_WARNING : LOG_DEBUG,
			     pool_name(b->p), "verified the batch's copies in %.1f ms (while"
			     " suspended): %zu differ, %zu unreadable%s", b->verify_ns / 1e6,
			     b->verify_differ, b->verify_errors,
			     b->verify_differ + b->verify_errors ? "; nothing committed" : "");
	ucopy_close(b->verify);
	ucopy_close(b->held);
	b->done(b, r, r < 0 ? b->err : "", b->ctx);
	free(b);
}

/*
 * A ucopy job for each item the commit remapped, from where it was to where
 * it goes; idx[j] is job j's item. Returns how many.
 */
static size_t batch_jobs(struct migrate_batch *b, struct ucopy_job *jobs, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nr; i++) {
		const struct migrate_item *it = &b->items[i];

		if (!b->remapped[i])
			continue;
		if (it->piece) {
			unsigned src_dev, dst_dev;
			uint64_t src_off, dst_off;

			piece_place(b->p, it->le, it->idx, b->from_container[i], b->from_slot[i],
				    &src_dev, &src_off);
			piece_place(b->p, it->le, it->idx, it->container, it->slot, &dst_dev,
				    &dst_off);
			jobs[n] = (struct ucopy_job){
				.src_fd = pool_dev_fd(b->p, src_dev),
				.dst_fd = pool_dev_fd(b->p, dst_dev),
				.src_off = src_off,
				.dst_off = dst_off,
				.len = piece_sectors(b->p) * 512,
			};
			idx[n++] = i;
			continue;
		}
		jobs[n] = (struct ucopy_job){
			.src_fd = pool_dev_fd(b->p, b->from[i].dev),
			.dst_fd = pool_dev_fd(b->p, it->dev),
			.src_off = pool_pe_offset(b->p, b->from[i].dev, b->from[i].pe),
			.dst_off = pool_pe_offset(b->p, it->dev, it->pe),
			.len = pool_extent_sectors(b->p) * 512,
		};
		idx[n++] = i;
	}
	return n;
}

/*
 * Compare every remapped extent's copy with its source. The volume is
 * suspended: no write is in flight, so the two must be equal byte for byte.
 * Blocking on purpose (the I/O is held anyway); returns how many differ or
 * could not be read. Its debug line waits in the batch for the resume.
 */
static size_t batch_verify(struct migrate_batch *b)
{
	struct ucopy_job jobs[MIGRATE_BATCH_MAX];
	size_t idx[MIGRATE_BATCH_MAX], n;
	uint64_t from = clock_now_ns();
	int r;

	n = batch_jobs(b, jobs, idx);
	r = ucopy_run(b->verify, UCOPY_VERIFY, jobs, n);
	b->verify_ns = clock_now_ns() - from;
	for (size_t j = 0; j < n; j++) {
		int jr = r < 0 ? r : jobs[j].result;

		if (jr == -EILSEQ)
			b->verify_differ++;
		else if (jr < 0)
			b->verify_errors++;
		if (jr < 0)
			b->items[idx[j]].result = jr;
	}
	batch_debug(b, "verified %zu copies against their source in %.1f ms: %zu differ,"
		    " %zu unreadable", n, ms(b->verify_ns), b->verify_differ, b->verify_errors);
	return b->verify_differ + b->verify_errors;
}

/*
 * The held copy of a batch of pieces: the volume is suspended, so nothing
 * writes a piece while it is copied, and the copy is whole once ucopy has
 * synced the destinations. Blocking on purpose, as the verify. Returns how
 * many copies failed; their items get the error.
 */
static int batch_copy_held(struct migrate_batch *b)
{
	struct ucopy_job jobs[MIGRATE_BATCH_MAX];
	size_t idx[MIGRATE_BATCH_MAX], n;
	uint64_t from = clock_now_ns();
	int r, failed = 0;

	n = batch_jobs(b, jobs, idx);
	r = ucopy_run(b->held, UCOPY_COPY, jobs, n);
	b->timing.copy_ns = clock_now_ns() - from;
	for (size_t j = 0; j < n; j++) {
		int jr = r < 0 ? r : jobs[j].result;

		if (jr < 0) {
			b->items[idx[j]].result = jr;
			failed++;
		}
	}
	/* Only whole copies time the devices: a quick failure would grow the next batch. */
	b->copied = n - (size_t)failed;
	b->total = n;
	batch_debug(b, "copied %zu pieces while suspended in %.1f ms: %d failed", n,
		    ms(b->timing.copy_ns), failed);
	return failed;
}

/*
 * Load the map's table (inactive) and suspend, ready to resume into it.
 * Loaded before the suspend: nothing may allocate while I/O is held.
 */
static int switch_to_map(struct migrate_batch *b, struct dmtable_dev *devs, int quiet)
{
	char scratch[256], *err = quiet ? scratch : b->err;
	size_t err_len = quiet ? sizeof(scratch) : sizeof(b->err);
	const char *name = pool_name(b->p);
	struct dmtable t = { 0 };
	uint64_t from = clock_now_ns();
	int r;

	r = pool_dm_devs(b->p, devs, err, err_len);
	if (r == 0) {
		r = dmtable_build_split(&t, pool_extmap(b->p), pool_pieces(b->p), devs,
					pool_extent_sectors(b->p));
		if (r < 0)
			snprintf(err, err_len, "pool %s: cannot build its table: %s", name,
				 strerror(-r));
	}
	if (r == 0)
		r = pool_load_inactive(b->p, &t, err, err_len);
	dmtable_destroy(&t);
	if (r < 0)
		return r;
	batch_debug(b, "loaded %s in %.1f ms",
		    quiet ? "the old mapping's table (moves undone)" : "the final table",
		    ms(clock_now_ns() - from));
	/* The commit's own switch is a step of the protocol; a revert's is not. */
	if (!quiet)
		fault_point("move-after-final-load");
	/*
	 * Out of the mirrors: without noflush, a write the mirror holds because
	 * one leg failed it (handle_errors) would fail back to the application
	 * although the source has it. With noflush the suspend still waits for
	 * every write in flight, and the held ones are reissued to the new table.
	 */
	batch_debug_hold(b);
	b->suspend_from = clock_now_ns();
	r = dmctl_suspend(name, 0);
	b->timing.suspend_ns = clock_now_ns() - b->suspend_from;
	if (r == 0)
		batch_debug(b, "suspended (noflush) in %.1f ms", ms(b->timing.suspend_ns));
	if (r < 0) {
		snprintf(err, err_len, "cannot suspend /dev/mapper/%s: %s", name, dmctl_error_text(r));
		dmctl_clear(name);
	}
	return r;
}

/*
 * Nothing moved: back to the map's table, or (< 0) the mirrors stay live,
 * both legs receiving every write, the volume running.
 */
static int return_to_map(struct migrate_batch *b, struct dmtable_dev *devs)
{
	const char *name = pool_name(b->p);
	int r;

	r = switch_to_map(b, devs, 1);
	if (r == 0) {
		r = dmctl_resume(name);
		if (r == 0) {
			batch_debug(b, "resumed on the map's table (I/O held %.1f ms)",
				    ms(swap_done(b)));
			return 0;
		}
		dmctl_clear(name);
		dmctl_resume(name);
		batch_debug(b, "resumed on the mirrors (I/O held %.1f ms)", ms(swap_done(b)));
	}
	return r;
}

/*
 * Read the mirrors' status; an item whose mirror failed or is missing gets
 * -EIO. Returns how many of the items still moving are not yet in sync.
 */
static int batch_check_mirrors(struct migrate_batch *b)
{
	struct dmstatus_mirror mirrors[MIGRATE_BATCH_MAX];
	uint64_t extent = pool_extent_sectors(b->p);
	size_t nr = 0;
	char *status = NULL;
	int r, pending = 0;

	r = dmctl_status_of(pool_name(b->p), "mirror", &status);
	if (r == 0)
		r = dmstatus_mirrors(status, mirrors, MIGRATE_BATCH_MAX, &nr);
	free(status);
	if (r < 0)
		snprintf(b->err, sizeof(b->err), "pool %s: cannot follow the copy: %s",
			 pool_name(b->p), strerror(-r));
	b->copied = 0;
	b->total = 0;
	for (size_t j = 0; j < b->nr; j++) {
		struct migrate_item *it = &b->items[j];
		const struct dmstatus_mirror *mirror = NULL;
		uint64_t start = (uint64_t)it->le * extent +
				 (it->piece ? it->idx * piece_sectors(b->p) : 0);

		for (size_t i = 0; i < nr && !mirror; i++)
			if (start == mirrors[i].start)
				mirror = &mirrors[i];
		if (it->result < 0)
			continue;
		/* Without a status to show it, a copy is not known to be complete. */
		if (!mirror || dmstatus_mirror_failed(mirror)) {
			it->result = -EIO;
			if (mirror)
				batch_debug(b, "extent %u%s: a leg of its mirror failed (health %s);"
					    " it stays on its source", it->le,
					    it->piece ? " (a piece)" : "", mirror->health);
			else
				batch_debug(b, "extent %u%s: no mirror in the status; it stays on its"
					    " source", it->le, it->piece ? " (a piece)" : "");
			continue;
		}
		b->copied += mirror->in_sync;
		b->total += mirror->regions;
		if (!dmstatus_mirror_synced(mirror))
			pending++;
	}
	return pending;
}

/*
 * A piece the commit placed goes back to where it was, its destination slot
 * free again. Cannot fail: the old slot was the piece's until the place, and
 * migrate_batch_start reserved room for every piece that left home.
 */
static void piece_unplace(struct migrate_batch *b, size_t i)
{
	struct piecemap *pm = &b->p->sp.pieces;
	const struct migrate_item *it = &b->items[i];

	if (b->from_container[i] == PIECEMAP_NO_CONTAINER) {
		piecemap_return(pm, it->le, it->idx);
		return;
	}
	piecemap_claim_slot(pm, b->from_container[i], b->from_slot[i]);
	piecemap_place(pm, it->le, it->idx, b->from_container[i], b->from_slot[i]);
	/* A piece that came home from the slot: its destination held nothing to free. */
}

/* Put the extents and pieces that were to move back where they were, in memory. */
static void batch_revert(struct migrate_batch *b, int mark_failed)
{
	struct extmap *m = pool_extmap(b->p);

	for (size_t i = 0; i < b->nr; i++) {
		const struct migrate_item *it = &b->items[i];

		if (!b->remapped[i])
			continue;
		if (it->piece)
			piece_unplace(b, i);
		else
			extmap_remap(m, it->le, b->from[i].dev, b->from[i].pe);
		b->remapped[i] = false;
		if (mark_failed)
			b->items[i].result = -EIO;
	}
}

/*
 * The old mapping could not be written back to every device, so one of them
 * may still name the destination of the extents in changed: their mirrors
 * stay, and the destination keeps receiving their writes. No generation ever
 * named the destination of the others: they go back to linear on their
 * source, which also releases the writes that a failed leg holds (dm-mirror
 * keeps those until the next suspend).
 */
static void keep_committed_mirrors(struct migrate_batch *b, const uint32_t *changed,
				   size_t nr_changed, const struct dmtable_piece_move *pieces,
				   size_t nr_pieces, struct dmtable_dev *devs)
{
	struct dmtable_move moves[MIGRATE_BATCH_MAX];
	const char *name = pool_name(b->p);
	struct dmtable t = { 0 };
	char scratch[256];
	size_t n = 0;

	for (size_t i = 0; i < b->nr_moves; i++)
		for (size_t j = 0; j < nr_changed; j++)
			if (b->moves[i].le == changed[j])
				moves[n++] = b->moves[i];
	/* A held copy's live table is the old map's: it has no mirrors to keep. */
	if ((!b->held && n == b->nr_moves && nr_pieces == b->nr_piece_moves) ||
	    pool_dm_devs(b->p, devs, scratch, sizeof(scratch)) < 0)
		return;
	batch_debug(b, "keeping the mirrors of the %zu extents and %zu pieces a device may name",
		    n, nr_pieces);
	if (dmtable_build_moving_split(&t, pool_extmap(b->p), pool_pieces(b->p), devs,
				       pool_extent_sectors(b->p), moves, n, pieces, nr_pieces,
				       MIGRATE_REGION_SECTORS) == 0 &&
	    pool_load_inactive(b->p, &t, scratch, sizeof(scratch)) == 0) {
		/* A held copy's volume is suspended still: only the resume swaps. */
		if (!volume_suspended(name)) {
			batch_debug_hold(b);
			b->suspend_from = clock_now_ns();
		}
		if (dmctl_suspend(name, 0) == 0) {
			dmctl_resume(name);
			batch_debug(b, "resumed on the kept mirrors (I/O held %.1f ms)",
				    ms(swap_done(b)));
		} else {
			dmctl_clear(name);
		}
	}
	dmtable_destroy(&t);
}

/*
 * Every mirror is in sync or has failed: switch the synced extents to their
 * destination (docs/design.md: load, suspend, commit, resume) and keep the rest where
 * they were.
 */
static void batch_commit(struct migrate_batch *b)
{
	struct extmap *m = pool_extmap(b->p);
	struct piecemap *pm = &b->p->sp.pieces;
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	uint32_t changed[MIGRATE_BATCH_MAX];
	struct dmtable_piece_move pieces[MIGRATE_BATCH_MAX];
	size_t nr_changed = 0, nr_pieces = 0;
	const char *name = pool_name(b->p);
	struct pool_prepared next = { 0 };
	ssize_t filled;
	bool any = false;
	uint64_t from;
	int r;

	for (size_t i = 0; i < b->nr; i++)
		any |= b->items[i].result == 0;
	/*
	 * Slots that a commit could not write by their changed blocks are
	 * brought up to the current generation first, while the map still is
	 * that generation (the fill writes it under that number).
	 */
	from = clock_now_ns();
	filled = any ? pool_commit_fill(b->p, b->err, sizeof(b->err)) : 0;
	for (size_t i = 0; i < b->nr; i++) {
		struct migrate_item *it = &b->items[i];

		b->remapped[i] = it->result == 0;
		if (it->piece) {
			/* Reserved: the place cannot fail; the slot it leaves is freed. */
			b->from_container[i] = PIECEMAP_NO_CONTAINER;
			b->from_slot[i] = 0;
			piecemap_find(pm, it->le, it->idx, &b->from_container[i], &b->from_slot[i]);
			if (it->result != 0)
				release_item(b->p, it);
			else if (it->container == PIECEMAP_NO_CONTAINER)
				piecemap_return(pm, it->le, it->idx);
			else
				piecemap_place(pm, it->le, it->idx, it->container, it->slot);
			if (it->result == 0)
				pieces[nr_pieces++] = (struct dmtable_piece_move){
					it->le, it->idx, it->container, it->slot
				};
			continue;
		}
		b->from[i] = extmap_get(m, it->le);
		extmap_release(m, it->dev, it->pe);
		if (it->result == 0) {
			extmap_remap(m, it->le, it->dev, it->pe);
			changed[nr_changed++] = it->le;
		}
	}
	/*
	 * Everything the commit writes is known now: encode it while the
	 * volume runs, so that the suspended window holds only writes and
	 * flushes.
	 */
	r = filled < 0 ? (int)filled : 0;
	if (r == 0 && nr_changed + nr_pieces)
		r = pool_commit_prepare(b->p, &next, b->err, sizeof(b->err));
	/* The state's rows too: what is left for the suspended window is their commit. */
	if (r == 0 && nr_changed + nr_pieces)
		r = pool_commit_stage(b->p, &next, changed, nr_changed, b->err, sizeof(b->err));
	b->timing.prepare_ns = clock_now_ns() - from;
	if (filled > 0)
		batch_debug(b, "copied the current generation into %zd KiB of slots that no diff could use",
			    filled / 1024);
	if (r < 0) {
		batch_debug(b, "%s", b->err);
		pool_prepared_release(&next);
		batch_revert(b, 1);
		if (return_to_map(b, devs) < 0)
			leave_mirrors(b, NULL, 0, false);
		batch_end(b, r);
		return;
	}
	batch_debug(b, "commit prepared in %.1f ms: %zu runs, %zu KiB", ms(b->timing.prepare_ns),
		    next.nr_runs, pool_prepared_bytes(&next) / 1024);
	r = switch_to_map(b, devs, 0);
	/*
	 * The suspend waited for the last writes through the mirrors: one of them
	 * may have failed on the destination just now. Committing then would
	 * lose that write; look again.
	 */
	if (r == 0) {
		uint64_t check_from = clock_now_ns();
		int unsynced = 0;

		if (b->held) {
			batch_copy_held(b);
		} else {
			unsynced = batch_check_mirrors(b);
			b->timing.recheck_ns = clock_now_ns() - check_from;
		}
		for (size_t i = 0; i < b->nr; i++)
			if (b->remapped[i] && b->items[i].result < 0)
				unsynced++;
		if (!b->held)
			batch_debug(b, "mirrors read again while suspended: %d copies no longer"
				    " whole", unsynced);
		if (!unsynced && b->verify && batch_verify(b)) {
			r = -EIO;
			snprintf(b->err, sizeof(b->err),
				 "pool %s: a copy differs from its source (--verify-moves); nothing"
				 " committed", name);
		}
		if (unsynced) {
			r = -EIO;
			snprintf(b->err, sizeof(b->err),
				 "pool %s: a copy failed while the volume was suspended", name);
		}
		/*
		 * The copies must be durable before a device names them (the
		 * commit flushes again, with nothing left to do): a destination
		 * that cannot flush failed its copies, as one that fails writes.
		 */
		check_from = clock_now_ns();
		if (r == 0 && pool_flush_devices(b->p, b->err, sizeof(b->err)) < 0) {
			r = -EIO;
			batch_debug(b, "%s", b->err);
		}
		b->timing.flush_ns = clock_now_ns() - check_from;
	}
	if (r < 0 && volume_suspended(name)) {
		/* Nothing committed yet: the mirrors (or the map's table) stay live, src is complete. */
		dmctl_clear(name);
		dmctl_resume(name);
		batch_debug(b, "resumed on the %s, nothing committed (I/O held %.1f ms)",
			    b->held ? "map's table" : "mirrors", ms(swap_done(b)));
		pool_prepared_release(&next);
		batch_revert(b, 1);
		r = b->held ? 0 : return_to_map(b, devs);
		if (r < 0) {
			snprintf(b->err, sizeof(b->err), "pool %s: nothing moved, but the mirrors could"
				 " not be removed from the table (%s)", name, dmctl_error_text(r));
			leave_mirrors(b, NULL, 0, false);
			batch_end(b, -EIO);
			return;
		}
		batch_end(b, 0);
		return;
	}
	/*
	 * With every copy failed the map has not changed: no generation to
	 * write, and none to fail on a destination that fails its writes.
	 */
	if (r == 0 && nr_changed + nr_pieces > 0) {
		fault_point("move-after-suspend");
		from = clock_now_ns();
		r = pool_commit_prepared(b->p, &next, changed, nr_changed, b->err, sizeof(b->err));
		b->timing.commit_ns = clock_now_ns() - from;
		b->timing.commit_bytes = pool_commit_bytes(b->p);
		b->timing.state_ns = pool_commit_state_ns(b->p);
		if (r < 0) {
			batch_debug(b, "commit failed after %.1f ms: %s", ms(b->timing.commit_ns),
				    b->err);
			/*
			 * A held copy has no mirror to resume on: the volume stays
			 * suspended until a device may name only one of src and dst
			 * (below), which are equal until then.
			 */
			if (!b->held) {
				dmctl_clear(name);
				dmctl_resume(name); /* the mirrors stay live: both legs equal */
				batch_debug(b, "resumed on the mirrors (I/O held %.1f ms)",
					    ms(swap_done(b)));
			}
		} else {
			if (nr_pieces)
				batch_debug(b, "committed %zu extents and %zu pieces to the devices"
					    " and the state: %llu KiB written in %.1f ms", nr_changed,
					    nr_pieces,
					    (unsigned long long)b->timing.commit_bytes / 1024,
					    ms(b->timing.commit_ns));
			else
				batch_debug(b, "committed %zu extents to the devices and the state:"
					    " %llu KiB written in %.1f ms", nr_changed,
					    (unsigned long long)b->timing.commit_bytes / 1024,
					    ms(b->timing.commit_ns));
			fault_point("move-after-commit");
		}
	} else if (r == 0) {
		batch_debug(b, "no copy completed: nothing to commit");
	}
	if (r < 0) {
		pool_prepared_release(&next); /* the volume runs again (or stays held) */
		/*
		 * Nothing or only part committed. Put the extents back where they
		 * were; if a device already holds the new generation, write the old
		 * mapping again as a newer one before the mirrors go, so no device
		 * names a destination that stops receiving writes. If even that
		 * fails the mirrors stay (both legs keep receiving every write) and
		 * the pool takes no more moves until tierd restarts.
		 */
		char again[256];

		batch_revert(b, 1);
		if (pool_commit(b->p, changed, nr_changed, again, sizeof(again)) == 0) {
			batch_debug(b, "wrote the old mapping back as a newer generation");
			if (b->held && volume_suspended(name)) {
				dmctl_clear(name);
				dmctl_resume(name);
				batch_debug(b, "resumed on the map's table (I/O held %.1f ms)",
					    ms(swap_done(b)));
			} else if (return_to_map(b, devs) < 0) {
				leave_mirrors(b, NULL, 0, false);
			}
		} else {
			pool_set_broken(b->p, again);
			keep_committed_mirrors(b, changed, nr_changed, pieces, nr_pieces, devs);
			/*
			 * A held copy whose mirrors could not be loaded: resuming on
			 * either table could serve a place that misses writes after a
			 * restart, so the volume stays suspended until the old
			 * mapping reaches every device (leftover_retry), then resumes
			 * on it. The pool takes no more moves.
			 */
			leave_mirrors(b, changed, nr_changed, volume_suspended(name) == 1);
		}
		batch_end(b, r);
		return;
	}
	from = clock_now_ns();
	r = dmctl_resume(name);
	b->timing.resume_ns = clock_now_ns() - from;
	/* The generation the commit replaced: freed with I/O flowing. */
	pool_prepared_release(&next);
	if (r < 0) {
		/*
		 * The commit named the new places: only the map's table may run
		 * the volume now. The kernel drops a table it refuses at the
		 * resume, and resuming again would run the old one, on places the
		 * commit freed and a restart does not read. Load the map's table
		 * again; while even that does not resume, the volume stays
		 * suspended, its writes waiting rather than going astray.
		 */
		char again[256];

		snprintf(b->err, sizeof(b->err), "cannot resume /dev/mapper/%s on its new table: %s",
			 name, dmctl_error_text(r));
		if (resume_on_map(b->p, again, sizeof(again)) == 0) {
			r = 0;
			log_pool_warn(name, "%s; resumed on the map's table loaded again", b->err);
		} else {
			hold_until_resumed(b, again);
			snprintf(b->err, sizeof(b->err), "pool %s: the moves committed, but its volume"
				 " does not resume (%s); its I/O waits while tierd retries every %.0f s",
				 name, again, MIGRATE_LEFTOVER_RETRY_SECONDS);
		}
	}
	if (r == 0) {
		uint64_t held = swap_done(b);

		batch_debug(b, "resumed into the final table in %.1f ms: the stall, I/O held"
			    " %.1f ms", ms(b->timing.resume_ns), ms(held));
		fault_point("move-after-resume");
	}
	batch_end(b, r);
}

static void batch_check(struct migrate_batch *b, bool by_event)
{
	if (batch_check_mirrors(b) == 0) {
		size_t failed = 0;

		for (size_t i = 0; i < b->nr; i++)
			failed += b->items[i].result < 0;
		b->timing.copy_ns = clock_now_ns() - b->copy_from;
		b->timing.in_sync_by_event = by_event;
		batch_debug(b, "copy over after %.1f ms, seen by %s: %zu in sync, %zu failed",
			    ms(b->timing.copy_ns),
			    by_event ? "a device-mapper event" : "the status poll", b->nr - failed,
			    failed);
		fault_point("move-in-sync");
		batch_commit(b);
	}
}

static void batch_held_go(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	batch_commit(w->data);
}

static void batch_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	batch_check(w->data, false);
}

static void batch_event(struct ev_loop *loop, ev_io *w, int revents)
{
	struct migrate_batch *b = w->data;

	(void)loop;
	(void)revents;
	/* Re-armed first: an event while the status is read wakes us again. */
	if (dmctl_events_arm(b->events_fd) < 0) {
		ev_io_stop(b->loop, &b->events);
		/* libev's way to change an active timer: repeat, then again. */
		b->poll.repeat = MIGRATE_POLL_SECONDS;
		ev_timer_again(b->loop, &b->poll);
	}
	batch_check(b, true);
}

int migrate_batch_start(struct ev_loop *loop, struct pool *p, struct migrate_item *items,
			size_t nr, migrate_done_fn done, void *ctx, struct migrate_batch **out,
			char *err, size_t err_len)
{
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	struct dmtable t = { 0 };
	struct migrate_batch *b;
	const char *name = pool_name(p);
	uint64_t from, suspend_ns = 0, resume_ns = 0;
	size_t leaving_home = 0;
	double every;
	int r;

	/* A batch that does not start releases what the caller reserved for it. */
	if (nr == 0 || nr > MIGRATE_BATCH_MAX) /* not the caller's items: nothing of ours to release */
		return errbuf_fail(-EINVAL, err, err_len, "a batch of %zu moves (1 to %d)", nr,
				   MIGRATE_BATCH_MAX);
	b = calloc(1, sizeof(*b));
	if (!b) {
		release_items(p, items, nr);
		return -ENOMEM;
	}
	b->loop = loop;
	b->p = p;
	b->events_fd = -1;
	b->items = items;
	b->nr = nr;
	b->done = done;
	b->ctx = ctx;
	if (pool_verify_moves(p)) {
		r = ucopy_open(&b->verify, 0, 0, pool_block_size(p));
		if (r < 0) {
			snprintf(err, err_len, "pool %s: --verify-moves needs io_uring: %s", name,
				 strerror(-r));
			release_destinations(b);
			free(b);
			return r;
		}
	}
	qsort(items, nr, sizeof(*items), by_le);
	for (size_t i = 0; i < nr; i++) {
		items[i].result = 0;
		if (items[i].piece) {
			uint32_t c;
			uint16_t slot;

			leaving_home += piecemap_find(&p->sp.pieces, items[i].le, items[i].idx, &c,
						      &slot) == -ENOENT;
			b->piece_moves[b->nr_piece_moves++] = (struct dmtable_piece_move){
				items[i].le, items[i].idx, items[i].container, items[i].slot
			};
		} else {
			b->moves[b->nr_moves++] = (struct dmtable_move){ items[i].le, items[i].dev,
									 items[i].pe };
		}
	}
	from = clock_now_ns();
	/* So that placing the pieces at the commit, and undoing it, needs no memory. */
	r = b->nr_piece_moves ? piecemap_reserve(&p->sp.pieces, (uint32_t)leaving_home) : 0;
	if (r < 0) {
		snprintf(err, err_len, "pool %s: cannot move pieces: %s", name, strerror(-r));
		goto fail;
	}
	/*
	 * Mirrors a failed batch left stay until a batch of mirrors replaces
	 * them: a held copy does not.
	 */
	if (b->nr_moves == 0 && pool_piece_copy(p) == POOL_PIECE_COPY_HELD && !p->leftover) {
		r = ucopy_open(&b->held, (unsigned)b->nr_piece_moves,
			       ucopy_chunk_fit((size_t)piece_sectors(p) * 512, pool_block_size(p)),
			       pool_block_size(p));
		if (r < 0) {
			static bool said;

			if (!said)
				log_pool_warn(name, "cannot set up held copies of pieces (an"
					      " io_uring of %zu buffers: %s): they go through"
					      " mirrors", b->nr_piece_moves, strerror(-r));
			said = true;
			b->held = NULL;
		}
	}
	if (b->held) {
		/* From the loop, as after a mirror's copy: done never runs before we return. */
		b->copy_from = clock_now_ns();
		ev_timer_init(&b->poll, batch_held_go, 0., 0.);
		b->poll.data = b;
		ev_timer_start(loop, &b->poll);
		*out = b;
		return 0;
	}
	r = pool_dm_devs(p, devs, err, err_len);
	if (r < 0)
		goto fail;
	r = dmtable_build_moving_split(&t, pool_extmap(p), pool_pieces(p), devs,
				       pool_extent_sectors(p), b->moves, b->nr_moves,
				       b->piece_moves, b->nr_piece_moves, MIGRATE_REGION_SECTORS);
	if (r < 0) {
		snprintf(err, err_len, "pool %s: cannot build the table of the move: %s", name,
			 strerror(-r));
		goto fail;
	}
	r = pool_load_inactive(p, &t, err, err_len);
	dmtable_destroy(&t);
	if (r < 0)
		goto fail;
	batch_debug(b, "loaded the mirror table in %.1f ms", ms(clock_now_ns() - from));
	fault_point("move-after-mirror-load");
	/* Armed before the mirrors start, so that their being in sync is an event we see. */
	r = dmctl_events_open(&b->events_fd);
	if (r < 0) {
		static bool said;

		if (!said)
			log_warn("no device-mapper events (%s): moves poll the mirrors every %.0f ms",
				 strerror(-r), MIGRATE_POLL_SECONDS * 1e3);
		said = true;
		b->events_fd = -1;
	}
	/*
	 * The mirrors take over from the linear targets: src stays
	 * authoritative. Noflush: the table may still hold mirrors a failed
	 * move left, and a flush would fail the writes they hold, which their
	 * source has.
	 */
	batch_debug_hold(b);
	b->suspend_from = clock_now_ns();
	r = dmctl_suspend(name, 0);
	if (r == 0) {
		suspend_ns = clock_now_ns() - b->suspend_from;
		batch_debug(b, "suspended (noflush) to swap in the mirrors in %.1f ms",
			    ms(suspend_ns));
		fault_point("move-mirror-suspended");
		from = clock_now_ns();
		r = dmctl_resume(name);
		resume_ns = clock_now_ns() - from;
	}
	if (r < 0) {
		snprintf(err, err_len, "cannot start the copy on /dev/mapper/%s: %s", name,
			 dmctl_error_text(r));
		dmctl_clear(name);
		dmctl_resume(name);
		batch_debug_release(b);
		goto fail;
	}
	b->timing.mirror_stall_ns = clock_now_ns() - b->suspend_from;
	b->copy_from = clock_now_ns();
	pool_drop_leftover(p); /* its mirrors are replaced: the map's, now moving */
	batch_debug_release(b);
	fault_point("move-copying");
	if (b->events_fd >= 0) {
		ev_io_init(&b->events, batch_event, b->events_fd, EV_READ);
		b->events.data = b;
		ev_io_start(loop, &b->events);
	}
	every = b->events_fd >= 0 ? MIGRATE_POLL_EVENTS_SECONDS : MIGRATE_POLL_SECONDS;
	batch_debug(b, "resumed on the mirrors in %.1f ms (I/O held %.1f ms); copying, woken by %s"
		    "a status poll every %.0f ms", ms(resume_ns), ms(b->timing.mirror_stall_ns),
		    b->events_fd >= 0 ? "device-mapper events and " : "", every * 1e3);
	ev_timer_init(&b->poll, batch_poll, every, every);
	b->poll.data = b;
	ev_timer_start(loop, &b->poll);
	*out = b;
	return 0;
fail:
	if (b->events_fd >= 0)
		close(b->events_fd);
	release_destinations(b);
	ucopy_close(b->held);
	ucopy_close(b->verify);
	free(b);
	return r;
}

void migrate_batch_progress(const struct migrate_batch *b, uint64_t *copied, uint64_t *total)
{
	*copied = b->copied;
	*total = b->total;
}

bool migrate_batch_held_copy(const struct migrate_batch *b, size_t *copied, uint64_t *copy_ns,
			     uint64_t *stall_ns)
{
	if (!b->held || b->copied < b->total)
		return false;
	*copied = (size_t)b->copied;
	*copy_ns = b->timing.copy_ns;
	*stall_ns = b->timing.stall_ns > b->verify_ns ? b->timing.stall_ns - b->verify_ns : 0;
	return true;
}
