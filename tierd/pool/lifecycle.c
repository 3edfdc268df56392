/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lifecycle: activate, deactivate, destroy, and whether a pool takes moves. */
#include "pool-internal.h"

#include <errno.h>
#include <linux/dm-ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "blockdev.h"
#include "dmctl.h"
#include "log.h"

/* ---- activation -------------------------------------------------------------- */

static int tables_equal(const struct dmtable *a, const struct dmtable *b)
{
	return a->nr == b->nr && memcmp(a->t, b->t, a->nr * sizeof(*a->t)) == 0;
}

/*
 * tierd restarted while the volume stayed live: keep it if its table is what
 * the map says, else load the map's table (the map is what was committed).
 */
static int pool_adopt_live_volume(struct pool *p, int suspended, char *err, size_t err_len)
{
	struct dmtable want = { 0 }, have = { 0 };
	char *text = NULL, uuid[DM_UUID_LEN], ours[64];
	int r;

	/* Anything but our own uuid, read back whole, is someone else's volume. */
	r = dmctl_uuid(p->sp.meta.name, uuid, sizeof(uuid));
	pool_dm_uuid(p, ours);
	if (r < 0 || strcmp(uuid, ours) != 0)
		return errbuf_fail(-EEXIST, err, err_len,
				   "/dev/mapper/%s exists but is not pool %s's volume (dm uuid '%s')",
				   p->sp.meta.name, p->sp.meta.name, r < 0 ? "unreadable" : uuid);
	r = pool_table(p, &want, err, err_len);
	if (r < 0)
		return r;
	/* An inactive table a stopped tierd loaded (a mirror table, say) must never be resumed into. */
	dmctl_clear(p->sp.meta.name);
	r = dmctl_table(p->sp.meta.name, &text);
	if (r == 0)
		r = dmtable_parse(&have, text);
	if (r == 0 && tables_equal(&want, &have) && suspended) {
		/* tierd stopped between a suspend and its resume: I/O waits on us. */
		log_pool_warn(p->sp.meta.name, "volume found suspended; resuming it");
		dmctl_clear(p->sp.meta.name);
		r = dmctl_resume(p->sp.meta.name);
		if (r < 0)
			errbuf_set(err, err_len, "cannot resume /dev/mapper/%s: %s", p->sp.meta.name,
				   dmctl_error_text(r));
	} else if (r == 0 && tables_equal(&want, &have)) {
		log_pool_info(p->sp.meta.name, "volume already active with the expected table");
	} else {
		log_pool_warn(p->sp.meta.name, "the live table differs from the extent map; loading"
			      " the map's");
		/* The live one may name places a commit freed: it never runs again. */
		r = pool_load_map_table(p, err, err_len);
	}
	free(text);
	dmtable_destroy(&want);
	dmtable_destroy(&have);
	return r;
}

/*
 * The same for pieces: the pieces adopted at activation say where each
 * piece is, in a slot or at home. Returns how many intents there were.
 */
static size_t pool_settle_piece_intents(struct pools *ps, struct pool *p)
{
	const struct piecemap *pm = &p->sp.pieces;
	struct state_piece_intent *v;
	size_t nr, completed = 0;

	if (state_piece_intents_load(ps->state, p->sp.id, &v, &nr) < 0) {
		log_pool_warn(p->sp.meta.name, "cannot read its piece migration intents: %s",
			      state_last_error(ps->state));
		return 0;
	}
	for (size_t i = 0; i < nr; i++) {
		struct extmap_loc home = extmap_get(&p->sp.map, v[i].le);
		uint16_t dev = home.dev, slot = v[i].idx;
		uint32_t pe = home.pe, c;

		if (piecemap_find(pm, v[i].le, v[i].idx, &c, &slot) == 0) {
			dev = pm->containers[c].dev;
			pe = pm->containers[c].pe;
		}
		completed += dev == v[i].dst_dev && pe == v[i].dst_pe && slot == v[i].dst_slot;
	}
	if (nr)
		log_pool_info(p->sp.meta.name, "%zu piece moves were in flight when tierd stopped:"
			      " %zu had committed, %zu rolled back (their source places stayed"
			      " authoritative)", nr, completed, nr - completed);
	free(v);
	return nr;
}

/*
 * Intents left by a stop or crash mid-move: the map adopted at activation
 * says where each extent is (moved if the commit reached a device, else still
 * on its source, which stayed authoritative). Either way the intent is done.
 */
static void pool_settle_intents(struct pools *ps, struct pool *p)
{
	struct state_intent *v;
	size_t nr, completed = 0;

	if (state_intents_load(ps->state, p->sp.id, &v, &nr) < 0) {
		log_pool_warn(p->sp.meta.name, "cannot read its migration intents: %s",
			      state_last_error(ps->state));
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, v[i].le);

		completed += loc.dev == v[i].dst_dev && loc.pe == v[i].dst_pe;
	}
	if (nr)
		log_pool_info(p->sp.meta.name, "%zu moves were in flight when tierd stopped: %zu"
			      " had committed, %zu rolled back (their source extents stayed"
			      " authoritative)", nr, completed, nr - completed);
	free(v);
	nr += pool_settle_piece_intents(ps, p);
	if (nr && state_intents_clear(ps->state, p->sp.id, NULL) < 0)
		log_pool_warn(p->sp.meta.name, "cannot clear its migration intents: %s",
			      state_last_error(ps->state));
}

int pool_open_current(struct pool *p, bool degraded, char *err, size_t err_len)
{
	uint32_t bad_le;
	int r;

	r = pool_open_devices(p, degraded, err, err_len);
	if (r == -ENODEV && !degraded) {
		char again[POOL_ERR_MAX];

		/*
		 * A drop of the missing device may have reached the devices and
		 * not the state: their newest generation is then whole.
		 */
		p->probe_missing = true;
		if (pool_open_devices(p, true, again, sizeof(again)) == 0) {
			if (pool_newest_leaves_out_missing(p))
				r = 0;
			else
				pool_close_devices(p);
		}
		p->probe_missing = false;
		p->allow_missing = false;
	}
	if (r < 0)
		goto fail;
	r = pool_adopt_newer_metadata(p, err, err_len);
	if (r == 0) {
		r = extmap_check(&p->sp.map, &bad_le);
		if (r < 0)
			errbuf_set(err, err_len, "pool %s: its extent map is inconsistent (extent %u)",
				   p->sp.meta.name, bad_le);
	}
	if (r == 0) {
		r = piecemap_check(&p->sp.pieces, NULL);
		if (r < 0)
			errbuf_set(err, err_len, "pool %s: its pieces of split extents are"
				   " inconsistent", p->sp.meta.name);
	}
	if (r == 0)
		return 0;
fail:
	/* Nothing open: not degraded either, whatever the probe for a missing device said. */
	pool_close_devices(p);
	p->degraded = false;
	p->allow_missing = false;
	return r;
}

int pool_activate(struct pools *ps, struct pool *p, bool degraded, char *err, size_t err_len)
{
	struct dmctl_info info;
	int r;

	if (p->active)
		return 0;
	/*
	 * A broken pool's devices may name other places than its memory does
	 * (a commit that failed half-way and could not be undone): mapping
	 * memory's now would put writes where the next start does not look.
	 */
	if (p->broken[0])
		return errbuf_fail(-EIO, err, err_len,
				   "pool %s is not activated until tierd restarts: its metadata could"
				   " not be written (%s)", p->sp.meta.name, p->broken);
	r = pool_open_current(p, degraded, err, err_len);
	if (r < 0)
		goto fail;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		state_pool_set_path(ps->state, p->sp.id, i, p->sp.paths[i]);
	r = dmctl_info(p->sp.meta.name, &info);
	if (r < 0) {
		errbuf_set(err, err_len, "cannot query /dev/mapper/%s: %s", p->sp.meta.name,
			   strerror(-r));
		goto fail;
	}
	r = info.exists ? pool_adopt_live_volume(p, info.suspended, err, err_len) :
			  pool_load_table(p, 1, err, err_len);
	if (r < 0)
		goto fail;
	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		p->dm_major = info.major;
		p->dm_minor = info.minor;
	}
	pool_settle_intents(ps, p);
	p->active = 1;
	p->inactive_why[0] = '\0';
	pool_heat_start(p);
	if (!p->sp.want_active) {
		p->sp.want_active = 1;
		state_pool_set_want_active(ps->state, p->sp.id, 1);
	}
	return 0;
fail:
	snprintf(p->inactive_why, sizeof(p->inactive_why), "%s", err);
	p->degraded = false;
	p->allow_missing = false;
	pool_close_devices(p);
	return r;
}

int pools_check_state_dir(struct pools *ps, const char *dir, char *err, size_t err_len)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return errbuf_fail(-errno, err, err_len, "%s: %s", dir, strerror(errno));
	for (struct pool *p = ps->list; p; p = p->next) {
		if (!p->active || !p->dm_major)
			continue;
		if (blockdev_stacked_on(st.st_dev, makedev(p->dm_major, p->dm_minor)))
			return errbuf_fail(-ELOOP, err, err_len,
					   "the state directory %s lives on pool %s's volume: tierd would"
					   " wait on itself at the pool's first commit (SQLite syncs while"
					   " the volume is suspended); move it off the volume, e.g. to"
					   " /var/lib/tierd on the root filesystem", dir, p->sp.meta.name);
	}
	return 0;
}

void pools_activate_all(struct pools *ps, bool degraded)
{
	char err[POOL_ERR_MAX];

	for (struct pool *p = ps->list; p; p = p->next) {
		if (!p->sp.want_active)
			continue;
		if (pool_activate(ps, p, degraded, err, sizeof(err)) < 0) {
			log_about(LOG_ERR, p->sp.meta.name, "%s", err);
			snprintf(p->waiting_logged, sizeof(p->waiting_logged), "%s", err);
		} else {
			log_about(LOG_INFO, p->sp.meta.name, "pool %s active%s: /dev/mapper/%s",
				  p->sp.meta.name, p->degraded ? " and degraded" : "",
				  p->sp.meta.name);
		}
	}
}

static bool pool_waiting(const struct pool *p)
{
	/* A broken pool waits for a restart, not for a device. */
	return p->sp.want_active && !p->active && !p->broken[0];
}

unsigned pools_activate_waiting(struct pools *ps, bool degraded, const char *why)
{
	char err[POOL_ERR_MAX];
	unsigned waiting = 0;

	for (struct pool *p = ps->list; p; p = p->next) {
		if (!pool_waiting(p))
			continue;
		if (pool_activate(ps, p, degraded, err, sizeof(err)) < 0) {
			/* Said once per reason: retries come every few seconds. */
			if (strcmp(err, p->waiting_logged) != 0) {
				log_about(LOG_INFO, p->sp.meta.name, "pool %s still waits: %s",
					  p->sp.meta.name, err);
				snprintf(p->waiting_logged, sizeof(p->waiting_logged), "%s", err);
			}
			waiting++;
			continue;
		}
		p->waiting_logged[0] = '\0';
		log_about(LOG_INFO, p->sp.meta.name, "pool %s active%s (%s): /dev/mapper/%s",
			  p->sp.meta.name, p->degraded ? " and degraded" : "", why,
			  p->sp.meta.name);
	}
	return waiting;
}

unsigned pools_waiting(const struct pools *ps)
{
	unsigned waiting = 0;

	for (const struct pool *p = ps->list; p; p = p->next)
		waiting += pool_waiting(p);
	return waiting;
}

void pools_report_waiting(struct pools *ps, unsigned waited_s)
{
	for (struct pool *p = ps->list; p; p = p->next)
		if (pool_waiting(p))
			log_about(LOG_WARNING, p->sp.meta.name, "pool %s is still inactive after"
				  " %u s: %s", p->sp.meta.name, waited_s, p->inactive_why);
}

int pool_deactivate(struct pools *ps, struct pool *p, char *err, size_t err_len)
{
	struct dmctl_info info;
	int r;

	r = dmctl_info(p->sp.meta.name, &info);
	if (r == 0 && info.exists) {
		if (info.open_count > 0)
			return errbuf_fail(-EBUSY, err, err_len,
					   "/dev/mapper/%s is in use (%u open handles); unmount it first",
					   p->sp.meta.name, info.open_count);
		r = dmctl_remove(p->sp.meta.name, 0);
		if (r < 0)
			return errbuf_fail(r, err, err_len, "cannot remove /dev/mapper/%s: %s",
					   p->sp.meta.name, dmctl_error_text(r));
	}
	pool_drop_leftover(p); /* its mirrors went with the volume */
	pool_close_devices(p);
	p->active = 0;
	p->degraded = false;
	p->allow_missing = false;
	pool_heat_stop(p); /* the regions went with the device */
	p->sp.want_active = 0;
	r = state_pool_set_want_active(ps->state, p->sp.id, 0);
	if (r < 0)
		log_pool_warn(p->sp.meta.name, "cannot record it as inactive: %s",
			      state_last_error(ps->state));
	return 0;
}

/* ---- destroy ---------------------------------------------------------------------- */

int pool_destroy(struct pools *ps, struct pool *p, bool force, char *err, size_t err_len)
{
	struct dmctl_info info;
	int r;

	r = dmctl_info(p->sp.meta.name, &info);
	if (r == 0 && info.exists) {
		if (info.open_count > 0 && !force)
			return errbuf_fail(-EBUSY, err, err_len,
					   "/dev/mapper/%s is in use (%u open handles); unmount it first or"
					   " use --force", p->sp.meta.name, info.open_count);
		r = dmctl_remove(p->sp.meta.name, force);
		if (r < 0)
			return errbuf_fail(r, err, err_len, "cannot remove /dev/mapper/%s: %s",
					   p->sp.meta.name, dmctl_error_text(r));
	}
	p->active = 0;
	/* Forget the pool first: a crash before the wipe leaves only orphaned
	 * superblocks, never a pool in the state whose devices were wiped. */
	r = state_pool_delete(ps->state, p->sp.id);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot delete it from the state: %s",
				 state_last_error(ps->state));
	if (pool_open_devices(p, false, err, err_len) == 0) {
		for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
			if (pool_wipe_device(p->fd[i], &p->sb[i]) < 0)
				log_pool_warn(p->sp.meta.name, "cannot wipe the superblock of %s",
					      p->sp.paths[i]);
	} else {
		log_about(LOG_WARNING, p->sp.meta.name, "%s; its superblocks stay", err);
	}
	err[0] = '\0';
	if (ps->forget)
		ps->forget(p, ps->forget_ctx);
	pools_unlink(ps, p);
	pool_free(p);
	return 0;
}

void pool_set_broken(struct pool *p, const char *why)
{
	snprintf(p->broken, sizeof(p->broken), "%s", pool_error_sentence(p, why));
	log_pool_err(p->sp.meta.name, "its metadata could not be written (%s); no more moves until"
		     " tierd restarts", p->broken);
}

/* Moves may run on an inactive pool (tierd copies then); a detach needs the volume. */
int pool_check_idle(const struct pool *p, bool need_active, char *err, size_t err_len)
{
	if (p->broken[0])
		return errbuf_fail(-EIO, err, err_len,
				   "pool %s takes no moves until tierd restarts: its metadata could not be"
				   " written (%s)", p->sp.meta.name, p->broken);
	if (p->io_held)
		return errbuf_fail(-EBUSY, err, err_len,
				   "pool %s's volume is suspended: its table did not resume after a move,"
				   " and tierd retries until it does (see its log)", p->sp.meta.name);
	if (p->degraded)
		return errbuf_fail(-ENODEV, err, err_len,
				   "pool %s is degraded (a device is missing): no moves until every"
				   " device is back and the pool is activated again", p->sp.meta.name);
	if (need_active && !p->active)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s is inactive; activate it first",
				   p->sp.meta.name);
	if (p->job)
		return errbuf_fail(-EBUSY, err, err_len, "pool %s is busy: %s", p->sp.meta.name,
				   p->job_what);
	return 0;
}

void pool_drop_empty_containers(struct pool *p)
{
	struct piecemap *pm = &p->sp.pieces;

	for (uint32_t c = pm->nr_containers; c-- > 0;) {
		const struct piecemap_container *ct = &pm->containers[c];
		unsigned dev = ct->dev;
		uint32_t pe = ct->pe;

		if (ct->nr_used || piecemap_remove_container(pm, c) < 0)
			continue;
		extmap_release(&p->sp.map, dev, pe);
	}
}

void pool_set_leftover(struct pool *p, void *leftover, void (*destroy)(void *leftover))
{
	void *old = p->leftover;
	void (*old_destroy)(void *) = p->leftover_destroy;

	p->leftover = leftover;
	p->leftover_destroy = destroy;
	p->io_held = false; /* until the new leftover's setter says it holds the volume */
	if (old && old_destroy)
		old_destroy(old);
}

void pool_drop_leftover(struct pool *p)
{
	pool_set_leftover(p, NULL, NULL);
}

void pool_set_job(struct pool *p, struct pool_job *job, const char *what)
{
	p->job = job;
	p->job_what = job ? what : NULL;
}

const char *pool_job_what(const struct pool *p)
{
	return p->job ? p->job_what : NULL;
}
