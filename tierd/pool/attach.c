/* SPDX-License-Identifier: GPL-2.0-or-later */
/* attach: adding an SSD tier to a pool, shrinking its share, releasing it. */
#include "pool-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockdev.h"
#include "fault.h"
#include "log.h"
#include "size.h"

/* Extents the smallest metadata slot of the pool can describe. */
static uint32_t pool_max_logical(const struct pool *p, const struct metadata_sb *extra)
{
	uint32_t max = extra ? metadata_slot_max_logical(extra->slot_bytes) : UINT32_MAX;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		uint32_t m = metadata_slot_max_logical(p->sb[i].slot_bytes);

		if (m < max)
			max = m;
	}
	return max;
}

/* What the smallest slot holds with the pieces of split extents in it too. */
static uint32_t pool_max_logical_beside_pieces(const struct pool *p)
{
	uint64_t slot = UINT64_MAX, pieces = metadata_pieces_bytes(&p->sp.pieces);

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (p->sb[i].slot_bytes < slot)
			slot = p->sb[i].slot_bytes;
	/* Slots are whole blocks: the pieces take whole blocks of them too. */
	pieces = (pieces + METADATA_BLOCK - 1) / METADATA_BLOCK * METADATA_BLOCK;
	return slot > pieces ? metadata_slot_max_logical(slot - pieces) : 0;
}

int pool_attach(struct pools *ps, struct pool *p, const char *ssd, bool grow, bool wipe_signatures,
		char *err, size_t err_len)
{
	struct pool_new_dev nd = { .fd = -1 };
	struct metadata_dev *d;
	uint32_t old_logical = p->sp.map.nr_logical, usable, max_logical;
	unsigned dev, hdd_lbs = p->sp.meta.devs[0].logical_block_size;
	char size[SIZE_FORMAT_MAX];
	int r, ssd_dev = pool_ssd_dev(p);
	bool written = false; /* some device may hold the generation that names the SSD */

	if (!p->active)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s is inactive; activate it first",
				   p->sp.meta.name);
	if (p->degraded)
		return errbuf_fail(-ENODEV, err, err_len,
				   "pool %s is degraded (a device is missing): no attach until every"
				   " device is back and the pool is activated again", p->sp.meta.name);
	if (p->io_held)
		return errbuf_fail(-EBUSY, err, err_len,
				   "pool %s's volume is suspended: its table did not resume after a move,"
				   " and tierd retries until it does (see its log)", p->sp.meta.name);
	if (ssd_dev >= 0)
		return errbuf_fail(-EEXIST, err, err_len, "pool %s already has an SSD tier (%s)",
				   p->sp.meta.name, p->sp.paths[ssd_dev]);
	r = pool_check_new_device(ps, ssd, wipe_signatures, p, &nd, err, err_len);
	if (r < 0)
		goto out;
	if (nd.info.logical_block_size != hdd_lbs) {
		r = errbuf_fail(-EINVAL, err, err_len,
				"logical block sizes differ: %s has %u bytes, pool %s %u; tierd needs"
				" equal ones (see docs/pools.md)", ssd, nd.info.logical_block_size,
				p->sp.meta.name, hdd_lbs);
		goto out;
	}
	max_logical = pool_max_logical(p, NULL);
	r = pool_layout_new_device(&nd, p->sp.meta.extent_size, max_logical, err, err_len);
	if (r < 0)
		goto out;
	usable = nd.sb.nr_pe - pool_reserve_for(nd.sb.nr_pe);
	if (grow && (uint64_t)old_logical + usable > pool_max_logical_beside_pieces(p)) {
		r = errbuf_fail(-ENOSPC, err, err_len,
				"pool %s's metadata area holds at most %u extents%s; %s would make %llu;"
				" attach it with --no-grow", p->sp.meta.name,
				pool_max_logical_beside_pieces(p),
				p->sp.pieces.nr_containers ? " beside its pieces of split extents" : "",
				ssd, (unsigned long long)old_logical + usable);
		goto out;
	}
	r = pool_random_uuid(nd.sb.dev_uuid);
	if (r < 0)
		goto out;
	memcpy(nd.sb.pool_uuid, p->sp.meta.uuid, 16);
	snprintf(nd.sb.pool_name, sizeof(nd.sb.pool_name), "%s", p->sp.meta.name);

	r = extmap_add_dev(&p->sp.map, nd.sb.nr_pe, &dev);
	if (r == 0 && grow) {
		r = extmap_resize_logical(&p->sp.map, old_logical + usable);
		if (r == 0)
			r = pool_map_run(&p->sp.map, old_logical, dev, usable);
	}
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot extend its extent map: %s",
			   p->sp.meta.name, strerror(-r));
		goto undo_map;
	}
	d = &p->sp.meta.devs[dev];
	pool_fill_dev(d, &nd, METADATA_TIER_SSD);
	p->sp.meta.nr_devs++;
	if (grow)
		p->sp.meta.flags |= METADATA_POOL_SSD_GROWS;
	snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", ssd);
	p->sb[dev] = nd.sb;
	p->slot_gen[dev][0] = p->slot_gen[dev][1] = 0;

	/* The SSD first: until the HDD's metadata names it, it is not in the pool. */
	r = pool_format_device(nd.fd, &nd.sb, err, err_len, ssd);
	if (r < 0)
		goto undo_meta;
	p->fd[dev] = nd.fd;
	r = pool_write_metadata(p, err, err_len);
	p->fd[dev] = -1;
	if (r < 0) {
		written = true;
		goto undo_meta;
	}
	fault_point("attach-after-devices");
	r = pool_reopen_device(p, dev, &nd, err, err_len);
	if (r == 0) {
		r = pool_save_state(p, NULL, 0);
		if (r < 0)
			errbuf_set(err, err_len, "pool %s: cannot save the state: %s",
				   p->sp.meta.name, state_last_error(ps->state));
	}
	if (r < 0) {
		p->state_stale = true; /* the devices name the SSD; the state may not */
		log_pool_err(p->sp.meta.name, "SSD %s attached on the devices but not in the state:"
			     " %s", ssd, err);
		goto out;
	}
	if (grow) {
		r = pool_load_table(p, 0, err, err_len);
		if (r < 0)
			goto out;
		pool_heat_start(p);
		log_pool_info(p->sp.meta.name, "SSD %s attached, volume grown to %s", ssd,
			      size_format((uint64_t)p->sp.map.nr_logical * p->sp.meta.extent_size,
					  size, sizeof(size)));
	} else {
		log_pool_info(p->sp.meta.name, "SSD %s attached without growing the volume", ssd);
	}
	goto out;
undo_meta:
	p->sp.meta.nr_devs--;
	if (grow && !(ssd_dev >= 0))
		p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
	memset(&p->sp.meta.devs[dev], 0, sizeof(p->sp.meta.devs[dev]));
undo_map:
	for (uint32_t le = old_logical; le < p->sp.map.nr_logical; le++) {
		/* Freeing a pe of a device all used may need a leaf of its bitmap. */
		if (extmap_unmap(&p->sp.map, le) == -ENOMEM) {
			pool_set_broken(p, "out of memory while undoing an attach in memory");
			goto out;
		}
	}
	extmap_resize_logical(&p->sp.map, old_logical);
	if (p->sp.map.nr_devs > p->sp.meta.nr_devs)
		extmap_remove_dev(&p->sp.map, p->sp.map.nr_devs - 1);
	if (written) {
		char again[POOL_ERR_MAX];

		/*
		 * The HDD may hold the new generation, which names the SSD: with
		 * the SSD gone, the pool would neither activate nor import. The
		 * old device list goes out as a newer generation still.
		 */
		if (pool_write_metadata(p, again, sizeof(again)) < 0)
			pool_set_broken(p, again);
	}
out:
	pool_new_dev_close(&nd);
	return r;
}

/* After the last extent left the SSD: forget it and wipe its superblock. */
int pool_release_device(struct pool *p, unsigned dev, char *err, size_t err_len)
{
	struct metadata_dev saved_dev = p->sp.meta.devs[dev];
	struct metadata_sb saved_sb = p->sb[dev];
	char path[PATH_MAX];
	int fd = p->fd[dev], r;

	if (extmap_count_on_dev(&p->sp.map, dev) != 0)
		return errbuf_fail(-EBUSY, err, err_len, "%s still holds extents",
				   p->sp.paths[dev]);
	if (dev != p->sp.meta.nr_devs - 1)
		return errbuf_fail(-EINVAL, err, err_len, "%s is not the pool's last device",
				   p->sp.paths[dev]);
	r = extmap_remove_dev(&p->sp.map, dev);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot drop %s from its map: %s",
				 p->sp.paths[dev], strerror(-r));
	snprintf(path, sizeof(path), "%s", p->sp.paths[dev]);
	p->sp.meta.nr_devs--;
	p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
	memset(&p->sp.meta.devs[dev], 0, sizeof(p->sp.meta.devs[dev]));
	p->sp.paths[dev][0] = '\0';
	p->fd[dev] = -1;
	/* The remaining devices stop naming it first; then it is free. */
	r = pool_commit(p, NULL, 0, err, err_len);
	if (r < 0) {
		unsigned again;

		p->sp.meta.nr_devs++;
		p->sp.meta.devs[dev] = saved_dev;
		snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", path);
		p->fd[dev] = fd;
		extmap_add_dev(&p->sp.map, saved_dev.nr_pe, &again);
		return r;
	}
	if (fd >= 0) {
		if (pool_wipe_device(fd, &saved_sb) < 0)
			log_about(LOG_WARNING, p->sp.meta.name,
				  "%s: detached, but its superblock could not be wiped", path);
		close(fd);
	}
	log_pool_info(p->sp.meta.name, "%s detached", path);
	return 0;
}

/* Drop the SSD's share of the volume from its end (the filesystem was shrunk). */
int pool_shrink_by(struct pool *p, unsigned ssd, char *err, size_t err_len)
{
	const struct metadata_dev *d = &p->sp.meta.devs[ssd];
	uint32_t usable = d->nr_pe - d->reserve_pe, old_n = p->sp.map.nr_logical, new_n;
	uint64_t hdd_free = 0, needed = 0;
	struct extmap_loc *tail;
	int r;

	if (usable >= old_n)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s would be empty without its SSD",
				   p->sp.meta.name);
	new_n = old_n - usable;
	for (uint32_t le = new_n; le < old_n; le++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, le);

		if (loc.dev != ssd)
			hdd_free++;
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (i != ssd)
			hdd_free += p->sp.map.nr_free[i];
	for (uint32_t le = 0; le < new_n; le++)
		if (extmap_get(&p->sp.map, le).dev == ssd)
			needed++;
	if (needed > hdd_free)
		return pool_fail(p, -ENOSPC, err, err_len,
				 "the HDD tier has room for %llu of the %llu extents on the SSD",
				 (unsigned long long)hdd_free, (unsigned long long)needed);
	tail = malloc((size_t)usable * sizeof(*tail));
	if (!tail)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	/* Held, the tail unmaps and maps back without memory: nothing fails half-way. */
	for (uint32_t le = new_n; le < old_n; le++) {
		if (extmap_hold(&p->sp.map, le) < 0) {
			free(tail);
			return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
		}
	}
	for (uint32_t le = new_n; le < old_n; le++) {
		tail[le - new_n] = extmap_get(&p->sp.map, le);
		extmap_unmap(&p->sp.map, le);
	}
	r = extmap_resize_logical(&p->sp.map, new_n);
	if (r == 0) {
		p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
		r = pool_commit(p, NULL, 0, err, err_len);
		if (r < 0) {
			/* Not committed: the volume keeps its size. */
			p->sp.meta.flags |= METADATA_POOL_SSD_GROWS;
			extmap_resize_logical(&p->sp.map, old_n);
			for (uint32_t le = new_n; le < old_n; le++)
				extmap_map(&p->sp.map, le, tail[le - new_n].dev, tail[le - new_n].pe);
		}
	}
	free(tail);
	if (r < 0)
		return r;
	r = pool_load_table(p, 0, err, err_len);
	if (r == 0)
		pool_heat_start(p);
	return r;
}
