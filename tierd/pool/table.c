/* SPDX-License-Identifier: GPL-2.0-or-later */
/* table: the volume's device-mapper table, built from the extent map and swapped in. */
#include "pool-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dmctl.h"

int pool_dm_devs(const struct pool *p, struct dmtable_dev *devs, char *err, size_t err_len)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		struct stat st;

		devs[i] = (struct dmtable_dev){ .missing = p->degraded && p->fd[i] < 0 };
		if (devs[i].missing)
			continue;
		if (stat(p->sp.paths[i], &st) < 0)
			return errbuf_fail(-errno, err, err_len, "%s: %s", p->sp.paths[i],
					   strerror(errno));
		devs[i].major = major(st.st_rdev);
		devs[i].minor = minor(st.st_rdev);
		devs[i].data_start = p->sp.meta.devs[i].data_start / SECTOR;
	}
	return 0;
}

struct extmap *pool_extmap(struct pool *p)
{
	return &p->sp.map;
}

const struct piecemap *pool_pieces(const struct pool *p)
{
	return &p->sp.pieces;
}

uint64_t pool_extent_sectors(const struct pool *p)
{
	return p->sp.meta.extent_size / SECTOR;
}

int pool_table(const struct pool *p, struct dmtable *t, char *err, size_t err_len)
{
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	int r;

	r = pool_dm_devs(p, devs, err, err_len);
	if (r < 0)
		return r;
	r = dmtable_build_split(t, &p->sp.map, &p->sp.pieces, devs, pool_extent_sectors(p));
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot build its table: %s", strerror(-r));
	return 0;
}

/* The table as dmctl takes it; params point into *text (free both). */
static int pool_targets(const struct dmtable *t, struct dmctl_target **targets, char **text)
{
	const size_t width = 160;
	struct dmctl_target *v;
	char *buf;

	v = calloc(t->nr ? t->nr : 1, sizeof(*v));
	buf = calloc(t->nr ? t->nr : 1, width);
	if (!v || !buf) {
		free(v);
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nr; i++) {
		int r = dmtable_params(&t->t[i], buf + i * width, width);

		if (r < 0) {
			free(v);
			free(buf);
			return r;
		}
		v[i].start = t->t[i].start;
		v[i].len = t->t[i].len;
		v[i].type = dmtable_type(&t->t[i]);
		v[i].params = buf + i * width;
	}
	*targets = v;
	*text = buf;
	return 0;
}

/*
 * The new volume's device number, which I/O awareness, the stacking check and
 * the metrics' kernel device name need from the first moment, not only once
 * tierd restarts. Unknown (0:0) if the kernel cannot say.
 */
static void pool_learn_devno(struct pool *p)
{
	struct dmctl_info info;

	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		p->dm_major = info.major;
		p->dm_minor = info.minor;
	}
}

/* Create the volume (create) or load t into its inactive slot. */
static int pool_send_table(struct pool *p, const struct dmtable *t, int create, char *err,
			   size_t err_len)
{
	struct dmctl_target *targets = NULL;
	char *text = NULL, uuid[64];
	int r;

	r = pool_targets(t, &targets, &text);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "%s", strerror(-r));
	if (create) {
		pool_dm_uuid(p, uuid);
		r = dmctl_create(p->sp.meta.name, uuid, targets, t->nr);
		if (r < 0)
			errbuf_set(err, err_len, "cannot create /dev/mapper/%s: %s", p->sp.meta.name,
				   dmctl_error_text(r));
		else
			pool_learn_devno(p);
	} else {
		r = dmctl_load(p->sp.meta.name, targets, t->nr);
		if (r < 0)
			errbuf_set(err, err_len, "cannot load a table into /dev/mapper/%s: %s",
				   p->sp.meta.name, dmctl_error_text(r));
	}
	free(targets);
	free(text);
	return r;
}

int pool_load_inactive(struct pool *p, const struct dmtable *t, char *err, size_t err_len)
{
	return pool_send_table(p, t, 0, err, err_len);
}

/*
 * Create the volume, or load the map's table into a live one and swap it
 * in. If the swap fails, old_may_run says whether the live table may run
 * again, or the volume stays suspended.
 */
static int load_table(struct pool *p, int create, bool old_may_run, char *err, size_t err_len)
{
	struct dmtable t = { 0 };
	int r;

	r = pool_table(p, &t, err, err_len);
	if (r < 0)
		return r;
	/* Load before suspending: nothing may allocate while the volume is suspended. */
	r = pool_send_table(p, &t, create, err, err_len);
	if (r < 0 || create)
		goto out;
	/*
	 * noflush: a mirror left by a stopped tierd may hold a write one leg
	 * refused; requeued, it reaches the new table instead of failing.
	 */
	r = dmctl_suspend(p->sp.meta.name, 0);
	if (r == 0)
		r = dmctl_resume(p->sp.meta.name);
	if (r < 0 && old_may_run) {
		errbuf_set(err, err_len, "cannot switch /dev/mapper/%s to its new table: %s",
			   p->sp.meta.name, dmctl_error_text(r));
		dmctl_clear(p->sp.meta.name);
		dmctl_resume(p->sp.meta.name);
	} else if (r < 0) {
		errbuf_set(err, err_len, "cannot switch /dev/mapper/%s to its map's table: %s; it"
			   " stays suspended rather than run a table that differs from the map (fix"
			   " the cause, then 'tierctl pool activate %s')", p->sp.meta.name,
			   dmctl_error_text(r), p->sp.meta.name);
		dmctl_clear(p->sp.meta.name);
	}
out:
	dmtable_destroy(&t);
	return r;
}

int pool_load_table(struct pool *p, int create, char *err, size_t err_len)
{
	return load_table(p, create, true, err, err_len);
}

int pool_load_map_table(struct pool *p, char *err, size_t err_len)
{
	return load_table(p, 0, false, err, err_len);
}
