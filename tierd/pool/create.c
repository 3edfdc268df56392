/* SPDX-License-Identifier: GPL-2.0-or-later */
/* create: new pools over fresh devices, and pools imported from their devices alone. */
#include "pool-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blockdev.h"
#include "dmctl.h"
#include "log.h"

/* A new pool whose devices are written: into the state, its volume created, heat on. */
static int pool_register(struct pools *ps, struct pool *p, char *err, size_t err_len)
{
	int r = state_pool_insert(ps->state, &p->sp);

	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot save the state: %s",
				 state_last_error(ps->state));
	r = pool_load_table(p, 1, err, err_len);
	if (r < 0) {
		state_pool_delete(ps->state, p->sp.id);
		return r;
	}
	p->active = 1;
	pools_link(ps, p);
	if (heat_table_init(&p->heat, p->sp.map.nr_logical) == 0)
		pool_heat_start(p);
	return 0;
}

int pool_create(struct pools *ps, const struct pool_create_args *a, struct pool **out, char *err,
		size_t err_len)
{
	struct pool_new_dev nd[2] = { { .fd = -1 }, { .fd = -1 } };
	unsigned nr = a->ssd ? 2 : 1;
	uint64_t extent = a->extent_size ? a->extent_size : POOL_DEFAULT_EXTENT_SIZE;
	uint64_t total_pe = 0;
	uint32_t max_logical, usable[2] = { 0, 0 }, nr_logical;
	struct dmctl_info info;
	struct pool *p = NULL;
	int r;

	if (metadata_name_valid(a->name) < 0)
		return errbuf_fail(-EINVAL, err, err_len,
				   "invalid pool name '%s': use 1 to %d of A-Z a-z 0-9 _ . + -, not"
				   " starting with '.' or '-'", a->name, METADATA_NAME_MAX);
	if (pools_find(ps, a->name))
		return errbuf_fail(-EEXIST, err, err_len, "a pool named %s already exists",
				   a->name);
	if (dmctl_info(a->name, &info) == 0 && info.exists)
		return errbuf_fail(-EEXIST, err, err_len,
				   "a device-mapper device named %s already exists", a->name);
	if (extent < METADATA_ALIGN || extent > (UINT64_C(1) << 30) || (extent & (extent - 1)))
		return errbuf_fail(-EINVAL, err, err_len,
				   "invalid extent size %llu: a power of two from 1 MiB to 1 GiB",
				   (unsigned long long)extent);
	if (a->ssd && pool_same_device(a->hdd, a->ssd))
		return errbuf_fail(-EINVAL, err, err_len, "%s and %s are the same device", a->hdd,
				   a->ssd);
	r = pool_check_new_device(ps, a->hdd, a->wipe_signatures, NULL, &nd[0], err, err_len);
	if (r < 0)
		goto out;
	if (a->ssd) {
		r = pool_check_new_device(ps, a->ssd, a->wipe_signatures, NULL, &nd[1], err, err_len);
		if (r < 0)
			goto out;
		if (nd[0].info.logical_block_size != nd[1].info.logical_block_size) {
			r = errbuf_fail(-EINVAL, err, err_len,
					"logical block sizes differ: %s has %u bytes, %s %u; tierd needs"
					" equal ones (see docs/pools.md)", a->hdd,
					nd[0].info.logical_block_size, a->ssd,
					nd[1].info.logical_block_size);
			goto out;
		}
	}
	for (unsigned i = 0; i < nr; i++)
		total_pe += nd[i].info.size / extent;
	max_logical = total_pe * 2 > POOL_SLOT_MIN_EXTENTS ?
			      (total_pe * 2 > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)(total_pe * 2)) :
			      POOL_SLOT_MIN_EXTENTS;
	for (unsigned i = 0; i < nr; i++) {
		r = pool_layout_new_device(&nd[i], extent, max_logical, err, err_len);
		if (r < 0)
			goto out;
	}

	r = -ENOMEM;
	p = pool_new();
	if (!p)
		goto out;
	r = pool_random_uuid(p->sp.meta.uuid);
	if (r < 0)
		goto out;
	snprintf(p->sp.meta.name, sizeof(p->sp.meta.name), "%s", a->name);
	p->sp.meta.extent_size = extent;
	p->sp.meta.flags = a->ssd ? METADATA_POOL_SSD_GROWS : 0;
	p->sp.meta.created = (uint64_t)time(NULL);
	p->sp.meta.nr_devs = nr;
	p->sp.want_active = 1;
	for (unsigned i = 0; i < nr; i++) {
		r = pool_random_uuid(nd[i].sb.dev_uuid);
		if (r < 0)
			goto out;
		memcpy(nd[i].sb.pool_uuid, p->sp.meta.uuid, 16);
		snprintf(nd[i].sb.pool_name, sizeof(nd[i].sb.pool_name), "%s", a->name);
		pool_fill_dev(&p->sp.meta.devs[i], &nd[i],
			      i ? METADATA_TIER_SSD : METADATA_TIER_HDD);
		usable[i] = p->sp.meta.devs[i].nr_pe - p->sp.meta.devs[i].reserve_pe;
		snprintf(p->sp.paths[i], sizeof(p->sp.paths[i]), "%s", nd[i].path);
		p->sb[i] = nd[i].sb;
	}
	/* The HDD holds the start of the volume, the SSD its end; tiering sorts them out. */
	nr_logical = usable[0] + usable[1];
	r = extmap_init(&p->sp.map, nr_logical);
	for (unsigned i = 0; r == 0 && i < nr; i++) {
		unsigned dev;

		r = extmap_add_dev(&p->sp.map, p->sp.meta.devs[i].nr_pe, &dev);
	}
	if (r == 0)
		r = pool_map_run(&p->sp.map, 0, 0, usable[0]);
	if (r == 0 && nr == 2)
		r = pool_map_run(&p->sp.map, usable[0], 1, usable[1]);
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot build its extent map: %s", a->name,
			   strerror(-r));
		goto out;
	}

	/* From here on devices are written. */
	for (unsigned i = 0; i < nr; i++) {
		r = pool_format_device(nd[i].fd, &nd[i].sb, err, err_len, nd[i].path);
		if (r < 0)
			goto unformat;
		p->fd[i] = nd[i].fd;
	}
	r = pool_write_metadata(p, err, err_len);
	for (unsigned i = 0; i < nr; i++)
		p->fd[i] = -1; /* still owned by nd[i] */
	if (r < 0)
		goto unformat;
	for (unsigned i = 0; i < nr; i++) {
		r = pool_reopen_device(p, i, &nd[i], err, err_len);
		if (r < 0)
			goto unformat;
	}
	r = pool_register(ps, p, err, err_len);
	if (r < 0)
		goto unformat;
	*out = p;
	return 0;
unformat:
	for (unsigned i = 0; i < nr; i++) {
		int fd = p->fd[i] >= 0 ? p->fd[i] : nd[i].fd;

		if (fd >= 0 && pool_wipe_device(fd, &nd[i].sb) < 0)
			log_err("%s: cannot wipe the superblock written a moment ago", nd[i].path);
	}
out:
	for (unsigned i = 0; i < 2; i++)
		pool_new_dev_close(&nd[i]);
	pool_free(p);
	return r;
}

/* ---- import ---------------------------------------------------------------------- */

int pool_import(struct pools *ps, const char *const *paths, size_t nr, bool degraded,
		struct pool **out, char *err, size_t err_len)
{
	struct metadata_sb sb[METADATA_MAX_DEVS];
	int fd[METADATA_MAX_DEVS];
	uint64_t gen[METADATA_MAX_DEVS][2], best = 0;
	unsigned best_dev = 0, best_slot = 0;
	struct pool *p = NULL;
	struct dmctl_info info;
	char uuid[37];
	int r = 0;

	if (nr == 0 || nr > METADATA_MAX_DEVS)
		return errbuf_fail(-EINVAL, err, err_len, "give every device of the pool (1 to %d)",
				   METADATA_MAX_DEVS);
	for (size_t i = 0; i < nr; i++)
		fd[i] = -1;
	for (size_t i = 0; i < nr; i++) {
		r = pool_open_direct(paths[i], &fd[i]);
		if (r < 0) {
			errbuf_set(err, err_len, "%s: %s", paths[i],
				   r == -ENOENT ? "no such device" : strerror(-r));
			goto out;
		}
		r = pool_read_sb(fd[i], &sb[i]);
		if (r < 0) {
			errbuf_set(err, err_len, "%s: %s", paths[i],
				   r == -ENOENT ? "no tierd superblock" : "damaged tierd superblock");
			goto out;
		}
		if (memcmp(sb[i].pool_uuid, sb[0].pool_uuid, 16) != 0) {
			r = errbuf_fail(-EINVAL, err, err_len,
					"%s belongs to pool %s, %s to pool %s", paths[0],
					sb[0].pool_name, paths[i], sb[i].pool_name);
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			if (memcmp(sb[i].dev_uuid, sb[j].dev_uuid, 16) == 0) {
				r = errbuf_fail(-EINVAL, err, err_len,
						"%s and %s are the same device", paths[j],
						paths[i]);
				goto out;
			}
		}
		for (unsigned s = 0; s < 2; s++) {
			pool_read_slot(fd[i], &sb[i], s, &gen[i][s], NULL, NULL, NULL);
			if (gen[i][s] > best) {
				best = gen[i][s];
				best_dev = (unsigned)i;
				best_slot = s;
			}
		}
	}
	if (pools_find_uuid(ps, sb[0].pool_uuid)) {
		r = errbuf_fail(-EEXIST, err, err_len, "pool %s is already known to this tierd",
				sb[0].pool_name);
		goto out;
	}
	if (best == 0) {
		r = errbuf_fail(-EUCLEAN, err, err_len,
				"pool %s: no valid metadata on any device given", sb[0].pool_name);
		goto out;
	}
	r = -ENOMEM;
	p = pool_new();
	if (!p)
		goto out;
	r = pool_read_slot(fd[best_dev], &sb[best_dev], best_slot, &best, &p->sp.meta, &p->sp.map,
			   &p->sp.pieces);
	if (r < 0 && best) {
		r = errbuf_fail(r, err, err_len,
				"pool %s: its newest metadata (generation %" PRIu64 " on %s) %s%s",
				sb[0].pool_name, best, paths[best_dev], pool_slot_error(r),
				r == -EPROTONOSUPPORT ? ": import it with the tierd that wrote it" : "");
		goto out;
	}
	if (r < 0 || best == 0) {
		r = errbuf_fail(r < 0 ? r : -EIO, err, err_len, "%s: cannot re-read its metadata",
				paths[best_dev]);
		goto out;
	}
	/* Every device the newest metadata names must be here; nothing else may be. */
	for (unsigned d = 0; d < p->sp.meta.nr_devs; d++) {
		size_t i;

		for (i = 0; i < nr && memcmp(sb[i].dev_uuid, p->sp.meta.devs[d].uuid, 16); i++)
			;
		if (i == nr && degraded) {
			metadata_uuid_format(p->sp.meta.devs[d].uuid, uuid);
			log_pool_warn(p->sp.meta.name, "imported without its %s device %s: what it"
				      " held reads and writes as I/O errors",
				      p->sp.meta.devs[d].tier == METADATA_TIER_SSD ? "SSD" : "HDD",
				      uuid);
			p->sp.paths[d][0] = '\0';
			p->degraded = true;
			continue;
		}
		if (i == nr) {
			metadata_uuid_format(p->sp.meta.devs[d].uuid, uuid);
			r = errbuf_fail(-ENODEV, err, err_len,
					"pool %s needs its %s device %s, which is not among those given;"
					" with --degraded what it held reads and writes as I/O errors",
					p->sp.meta.name,
					p->sp.meta.devs[d].tier == METADATA_TIER_SSD ? "SSD" : "HDD",
					uuid);
			goto out;
		}
		snprintf(p->sp.paths[d], sizeof(p->sp.paths[d]), "%s", paths[i]);
		p->fd[d] = fd[i];
		fd[i] = -1;
		p->sb[d] = sb[i];
		p->slot_gen[d][0] = gen[i][0];
		p->slot_gen[d][1] = gen[i][1];
	}
	for (size_t i = 0; i < nr; i++) {
		if (fd[i] >= 0) {
			r = errbuf_fail(-EINVAL, err, err_len,
					"%s is not a device of pool %s in its newest metadata (generation %llu)",
					paths[i], p->sp.meta.name, (unsigned long long)best);
			goto out;
		}
	}
	/*
	 * Once more, now that p holds the devices: to keep the newest two
	 * generations for the commits to diff against (a second read of each
	 * slot, paid once per import).
	 */
	pool_read_slots(p);
	if (pools_find(ps, p->sp.meta.name)) {
		r = errbuf_fail(-EEXIST, err, err_len, "another pool is already named %s",
				p->sp.meta.name);
		goto out;
	}
	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		r = errbuf_fail(-EEXIST, err, err_len,
				"a device-mapper device named %s already exists", p->sp.meta.name);
		goto out;
	}
	p->sp.want_active = 1;
	p->allow_missing = degraded;
	r = pool_register(ps, p, err, err_len);
	if (r < 0)
		goto out;
	*out = p;
	p = NULL;
out:
	for (size_t i = 0; i < nr; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	pool_free(p);
	return r;
}
