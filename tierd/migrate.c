#include "migrate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmctl.h"
#include "dmstatus.h"
#include "dmtable.h"
#include "extmap.h"
#include "metadata.h"
#include "pool.h"

/* kcopyd copies a region at a time; 512 KiB keeps the core log small. */
#define MIGRATE_REGION_SECTORS 1024u
#define MIGRATE_POLL_SECONDS 0.1

static int volume_suspended(const char *name)
{
	struct dmctl_info info;

	return dmctl_info(name, &info) == 0 && info.exists && info.suspended;
}

struct migrate_batch {
	struct ev_loop *loop;
	struct pool *p;
	struct migrate_item *items;
	size_t nr;
	struct dmtable_move moves[MIGRATE_BATCH_MAX];
	struct extmap_loc from[MIGRATE_BATCH_MAX];
	bool remapped[MIGRATE_BATCH_MAX]; /* in memory, by batch_commit */
	uint64_t copied, total;
	ev_timer poll;
	migrate_done_fn done;
	void *ctx;
	char err[512];
};

static int by_le(const void *a, const void *b)
{
	const struct migrate_item *x = a, *y = b;

	return (x->le > y->le) - (x->le < y->le);
}

static const char *dm_reason(int r)
{
	return *dmctl_last_error() ? dmctl_last_error() : strerror(-r);
}

static void release_destinations(struct migrate_batch *b)
{
	for (size_t i = 0; i < b->nr; i++)
		extmap_release(pool_extmap(b->p), b->items[i].dev, b->items[i].pe);
}

static void batch_end(struct migrate_batch *b, int r)
{
	ev_timer_stop(b->loop, &b->poll);
	b->done(b, r, r < 0 ? b->err : "", b->ctx);
	free(b);
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
	int r;

	r = pool_dm_devs(b->p, devs, err, err_len);
	if (r == 0) {
		r = dmtable_build(&t, pool_extmap(b->p), devs, pool_extent_sectors(b->p));
		if (r < 0)
			snprintf(err, err_len, "pool %s: cannot build its table: %s", name,
				 strerror(-r));
	}
	if (r == 0)
		r = pool_load_inactive(b->p, &t, err, err_len);
	dmtable_destroy(&t);
	if (r < 0)
		return r;
	r = dmctl_suspend(name, 1);
	if (r < 0) {
		snprintf(err, err_len, "cannot suspend /dev/mapper/%s: %s", name, dm_reason(r));
		dmctl_clear(name);
	}
	return r;
}

/*
 * Every mirror is in sync or has failed: switch the synced extents to their
 * destination (DESIGN: load, suspend, commit, resume) and keep the rest where
 * they were.
 */
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

	r = dmctl_status(pool_name(b->p), &status);
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

		for (size_t i = 0; i < nr && !mirror; i++)
			if ((uint64_t)it->le * extent == mirrors[i].start)
				mirror = &mirrors[i];
		if (it->result < 0)
			continue;
		/* Without a status to show it, a copy is not known to be complete. */
		if (!mirror || dmstatus_mirror_failed(mirror)) {
			it->result = -EIO;
			continue;
		}
		b->copied += mirror->in_sync;
		b->total += mirror->regions;
		if (!dmstatus_mirror_synced(mirror))
			pending++;
	}
	return pending;
}

/* Put the extents that were to move back where they were, in memory. */
static void batch_revert(struct migrate_batch *b, int mark_failed)
{
	struct extmap *m = pool_extmap(b->p);

	for (size_t i = 0; i < b->nr; i++) {
		if (!b->remapped[i])
			continue;
		extmap_remap(m, b->items[i].le, b->from[i].dev, b->from[i].pe);
		b->remapped[i] = false;
		if (mark_failed)
			b->items[i].result = -EIO;
	}
}

/*
 * Every mirror is in sync or has failed: switch the synced extents to their
 * destination (DESIGN: load, suspend, commit, resume) and keep the rest where
 * they were.
 */
static void batch_commit(struct migrate_batch *b)
{
	struct extmap *m = pool_extmap(b->p);
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	uint32_t changed[MIGRATE_BATCH_MAX];
	size_t nr_changed = 0;
	const char *name = pool_name(b->p);
	int r;

	for (size_t i = 0; i < b->nr; i++) {
		struct migrate_item *it = &b->items[i];

		b->from[i] = extmap_get(m, it->le);
		extmap_release(m, it->dev, it->pe);
		b->remapped[i] = it->result == 0;
		if (it->result == 0) {
			extmap_remap(m, it->le, it->dev, it->pe);
			changed[nr_changed++] = it->le;
		}
	}
	r = switch_to_map(b, devs, 0);
	/*
	 * The suspend flushed the last writes through the mirrors: one of them
	 * may have failed on the destination just now. Committing then would
	 * lose that write; look again.
	 */
	if (r == 0) {
		int unsynced = batch_check_mirrors(b);

		for (size_t i = 0; i < b->nr; i++)
			if (b->remapped[i] && b->items[i].result < 0)
				unsynced++;
		if (unsynced) {
			r = -EIO;
			snprintf(b->err, sizeof(b->err),
				 "pool %s: a copy failed while the volume was suspended", name);
		}
	}
	if (r < 0 && volume_suspended(name)) {
		/* Nothing committed yet: the mirrors stay live, src is complete. */
		dmctl_clear(name);
		dmctl_resume(name);
		batch_revert(b, 1);
		if (switch_to_map(b, devs, 1) == 0)
			dmctl_resume(name);
		batch_end(b, 0);
		return;
	}
	if (r == 0) {
		r = pool_commit(b->p, changed, nr_changed, b->err, sizeof(b->err));
		if (r < 0) {
			dmctl_clear(name);
			dmctl_resume(name); /* the mirrors stay live: both legs equal */
		}
	}
	if (r < 0) {
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
			if (switch_to_map(b, devs, 1) == 0)
				dmctl_resume(name);
		} else {
			pool_set_broken(b->p, again);
		}
		batch_end(b, r);
		return;
	}
	r = dmctl_resume(name);
	if (r < 0) {
		/* The new table is committed and loaded; try once more, then say so. */
		r = dmctl_resume(name);
		if (r < 0)
			snprintf(b->err, sizeof(b->err),
				 "cannot resume /dev/mapper/%s: %s (its I/O waits; restart tierd)", name,
				 dm_reason(r));
	}
	batch_end(b, r);
}

static void batch_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct migrate_batch *b = w->data;

	(void)loop;
	(void)revents;
	if (batch_check_mirrors(b) == 0)
		batch_commit(b);
}

int migrate_batch_start(struct ev_loop *loop, struct pool *p, struct migrate_item *items,
			size_t nr, migrate_done_fn done, void *ctx, struct migrate_batch **out,
			char *err, size_t err_len)
{
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	struct dmtable t = { 0 };
	struct migrate_batch *b;
	const char *name = pool_name(p);
	int r;

	if (nr == 0 || nr > MIGRATE_BATCH_MAX)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->loop = loop;
	b->p = p;
	b->items = items;
	b->nr = nr;
	b->done = done;
	b->ctx = ctx;
	qsort(items, nr, sizeof(*items), by_le);
	for (size_t i = 0; i < nr; i++) {
		items[i].result = 0;
		b->moves[i] = (struct dmtable_move){ items[i].le, items[i].dev, items[i].pe };
	}
	r = pool_dm_devs(p, devs, err, err_len);
	if (r < 0)
		goto fail;
	r = dmtable_build_moving(&t, pool_extmap(p), devs, pool_extent_sectors(p), b->moves, nr,
				 MIGRATE_REGION_SECTORS);
	if (r < 0) {
		snprintf(err, err_len, "pool %s: cannot build the table of the move: %s", name,
			 strerror(-r));
		goto fail;
	}
	r = pool_load_inactive(p, &t, err, err_len);
	dmtable_destroy(&t);
	if (r < 0)
		goto fail;
	/* The mirrors take over from the linear targets: src stays authoritative. */
	r = dmctl_suspend(name, 1);
	if (r == 0)
		r = dmctl_resume(name);
	if (r < 0) {
		snprintf(err, err_len, "cannot start the copy on /dev/mapper/%s: %s", name,
			 dm_reason(r));
		dmctl_clear(name);
		dmctl_resume(name);
		goto fail;
	}
	ev_timer_init(&b->poll, batch_poll, MIGRATE_POLL_SECONDS, MIGRATE_POLL_SECONDS);
	b->poll.data = b;
	ev_timer_start(loop, &b->poll);
	*out = b;
	return 0;
fail:
	release_destinations(b);
	free(b);
	return r;
}

void migrate_batch_progress(const struct migrate_batch *b, uint64_t *copied, uint64_t *total)
{
	*copied = b->copied;
	*total = b->total;
}
