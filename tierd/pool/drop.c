/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drop: leaving a dead device out of a degraded pool for good. Its extents
 * get free extents of the remaining devices, zeroed first; one commit then
 * names those and no longer the dead device. Until that commit the zeroed
 * extents are free ones nothing refers to, so a crash anywhere before it
 * leaves the pool as it was (docs/pools.md).
 */
#include "pool-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockdev.h"
#include "fault.h"
#include "log.h"

/* The devices that are missing: fd -1 in a degraded pool. */
static unsigned missing_devs(const struct pool *p, unsigned out[METADATA_MAX_DEVS])
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (p->fd[i] < 0)
			out[n++] = i;
	return n;
}

void pool_drop_free(struct pool *p, struct pool_drop *d)
{
	if (!d)
		return;
	/* Destinations not taken by a commit go back to the free extents. */
	for (uint32_t i = 0; i < d->nr; i++)
		extmap_release(&p->sp.map, d->dest[i].dev, d->dest[i].pe);
	free(d->dest);
	free(d->pieces);
	free(d->scratch);
	free(d);
}

/*
 * The pieces in containers of missing devices whose extent lives on a
 * device that stays: their data is lost, and their home copy, stale since
 * they left, must read as zeros as a lost extent does. Pieces of an extent
 * that is lost itself go with it (its new home is zeroed whole).
 */
static int drop_plan_pieces(struct pool *p, struct pool_drop *d)
{
	const struct piecemap *pm = &p->sp.pieces;

	if (!pm->nr_containers)
		return 0;
	/* The commit then releases the containers and renumbers the rest without memory. */
	d->scratch = calloc(pm->nr_containers, sizeof(*d->scratch));
	if (!d->scratch)
		return -ENOMEM;
	for (uint32_t c = 0; c < pm->nr_containers; c++)
		if (p->fd[pm->containers[c].dev] < 0 &&
		    extmap_hold_pe(&p->sp.map, pm->containers[c].dev, pm->containers[c].pe) < 0)
			return -ENOMEM;
	for (uint32_t i = 0; i < pm->nr_pieces; i++) {
		const struct piecemap_piece *pc = &pm->pieces[i];
		struct extmap_loc home = extmap_get(&p->sp.map, pc->le);

		if (p->fd[pm->containers[pc->container].dev] >= 0 || p->fd[home.dev] < 0)
			continue;
		if (!d->pieces) {
			d->pieces = calloc(pm->nr_pieces, sizeof(*d->pieces));
			if (!d->pieces)
				return -ENOMEM;
		}
		d->pieces[d->nr_pieces++] = (struct pool_drop_piece){
			.le = pc->le, .idx = pc->idx, .dev = home.dev, .pe = home.pe };
	}
	return 0;
}

int pool_drop_plan(struct pool *p, struct pool_drop **out, char *err, size_t err_len)
{
	uint32_t reserve[EXTMAP_MAX_DEVS] = { 0 };
	unsigned gone[METADATA_MAX_DEVS], nr_gone;
	struct pool_drop *d;
	char uuid[37];
	int r;

	*out = NULL;
	if (p->broken[0])
		return errbuf_fail(-EIO, err, err_len,
				   "pool %s takes no changes until tierd restarts: its metadata could"
				   " not be written (%s)", p->sp.meta.name, p->broken);
	if (!p->active)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s is inactive", p->sp.meta.name);
	nr_gone = missing_devs(p, gone);
	if (!p->degraded || nr_gone == 0)
		return errbuf_fail(-EINVAL, err, err_len,
				   "pool %s has all its devices: no device to drop", p->sp.meta.name);
	for (unsigned g = 0; g < nr_gone; g++) {
		if (gone[g] != 0 && p->sp.meta.devs[gone[g]].tier != METADATA_TIER_HDD)
			continue;
		metadata_uuid_format(p->sp.meta.devs[gone[g]].uuid, uuid);
		return errbuf_fail(-EINVAL, err, err_len,
				   "pool %s: its missing device %s is the HDD tier, which holds the"
				   " pool; it cannot be dropped (bring it back, or restore the pool"
				   " from backup)", p->sp.meta.name, uuid);
	}
	if (nr_gone >= p->sp.meta.nr_devs)
		return errbuf_fail(-EINVAL, err, err_len, "pool %s would have no device left",
				   p->sp.meta.name);
	d = calloc(1, sizeof(*d));
	if (!d)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	/* The swap reserves stay free; a missing device gives nothing. */
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		reserve[i] = p->fd[i] < 0 ? UINT32_MAX : p->sp.meta.devs[i].reserve_pe;
	for (unsigned g = 0; g < nr_gone; g++) {
		struct extmap_dest *v;
		uint32_t needed, room;

		r = extmap_plan_evacuate(&p->sp.map, gone[g], reserve, &v, &needed, &room);
		if (r == -ENOSPC) {
			metadata_uuid_format(p->sp.meta.devs[gone[g]].uuid, uuid);
			errbuf_set(err, err_len,
				   "pool %s: the %u extents lost with device %s need as many free"
				   " extents on the remaining devices, which have %u (their swap"
				   " reserves kept free); nothing was changed", p->sp.meta.name,
				   needed, uuid, room);
		} else if (r < 0) {
			errbuf_set(err, err_len, "pool %s: cannot plan the drop: %s",
				   p->sp.meta.name, strerror(-r));
		}
		if (r < 0) {
			pool_drop_free(p, d);
			return r;
		}
		if (d->nr) {
			struct extmap_dest *all = realloc(d->dest, (d->nr + needed + 1) * sizeof(*all));

			if (!all) {
				for (uint32_t i = 0; i < needed; i++)
					extmap_release(&p->sp.map, v[i].dev, v[i].pe);
				free(v);
				pool_drop_free(p, d);
				return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
			}
			memcpy(all + d->nr, v, needed * sizeof(*all));
			free(v);
			d->dest = all;
		} else {
			free(d->dest);
			d->dest = v;
		}
		d->nr += needed;
	}
	r = drop_plan_pieces(p, d);
	if (r < 0) {
		pool_drop_free(p, d);
		return errbuf_fail(r, err, err_len, "out of memory");
	}
	*out = d;
	return 0;
}

int pool_drop_zero(struct pool *p, const struct pool_drop *d, uint32_t i, char *err,
		   size_t err_len)
{
	const struct extmap_dest *x;
	const struct pool_drop_piece *pc;
	uint64_t piece;
	int r;

	r = fault_fail("drop-zero");
	if (i >= d->nr) {
		pc = &d->pieces[i - d->nr];
		piece = p->sp.meta.extent_size / p->sp.pieces.pieces_per_extent;
		if (r == 0)
			r = blockdev_wipe(p->fd[pc->dev],
					  pool_pe_offset(p, pc->dev, pc->pe) + pc->idx * piece, piece);
		if (r < 0)
			return errbuf_fail(r, err, err_len,
					   "%s: cannot zero piece %u of extent %u of the volume, lost"
					   " with its container: %s; nothing was changed",
					   p->sp.paths[pc->dev], pc->idx, pc->le, strerror(-r));
		return 0;
	}
	x = &d->dest[i];
	if (r == 0)
		r = blockdev_wipe(p->fd[x->dev], pool_pe_offset(p, x->dev, x->pe),
				  p->sp.meta.extent_size);
	if (r < 0)
		return errbuf_fail(r, err, err_len,
				   "%s: cannot zero extent %u (for extent %u of the volume): %s;"
				   " nothing was changed", p->sp.paths[x->dev], x->pe, x->le,
				   strerror(-r));
	return 0;
}

/* Forget device dev of the pool's metadata and memory; the later ones shift down. */
static void forget_dev(struct pool *p, unsigned dev)
{
	unsigned last = p->sp.meta.nr_devs - 1;

	for (unsigned i = dev; i < last; i++) {
		p->sp.meta.devs[i] = p->sp.meta.devs[i + 1];
		memcpy(p->sp.paths[i], p->sp.paths[i + 1], sizeof(p->sp.paths[i]));
		p->fd[i] = p->fd[i + 1];
		p->sb[i] = p->sb[i + 1];
		memcpy(p->slot_gen[i], p->slot_gen[i + 1], sizeof(p->slot_gen[i]));
	}
	memset(&p->sp.meta.devs[last], 0, sizeof(p->sp.meta.devs[last]));
	p->sp.paths[last][0] = '\0';
	p->fd[last] = -1;
	memset(&p->sb[last], 0, sizeof(p->sb[last]));
	p->slot_gen[last][0] = p->slot_gen[last][1] = 0;
	p->sp.meta.nr_devs--;
}

/*
 * Forget the containers of gone device dev and the pieces in them (their
 * homes, where the extent survives, were zeroed): their extents released,
 * so that the device leaves the map empty, the containers of later devices
 * renumbered with them. Cannot fail: pool_drop_plan held the extents'
 * bitmap leaves and gave the scratch room.
 */
static void drop_commit_pieces(struct pool *p, struct pool_drop *d, unsigned dev)
{
	struct piecemap *pm = &p->sp.pieces;

	for (uint32_t c = 0; c < pm->nr_containers; c++)
		if (pm->containers[c].dev == dev)
			extmap_release(&p->sp.map, dev, pm->containers[c].pe);
	piecemap_drop_dev(pm, (uint16_t)dev, d->scratch);
}

int pool_drop_commit(struct pool *p, struct pool_drop *d, char *err, size_t err_len)
{
	unsigned gone[METADATA_MAX_DEVS], nr_gone = missing_devs(p, gone);
	int r;

	/* From here memory is the new pool; the commit below cannot be taken back. */
	for (uint32_t i = 0; i < d->nr; i++) {
		extmap_release(&p->sp.map, d->dest[i].dev, d->dest[i].pe);
		extmap_remap(&p->sp.map, d->dest[i].le, d->dest[i].dev, d->dest[i].pe);
	}
	d->nr = 0;
	for (unsigned g = nr_gone; g-- > 0;) {
		drop_commit_pieces(p, d, gone[g]);
		r = extmap_drop_dev(&p->sp.map, gone[g]);
		if (r < 0) {
			/* Only a bug gets here: the map still names the device. */
			pool_set_broken(p, "the map still names a dropped device");
			return pool_fail(p, r, err, err_len, "cannot drop device %u from its map: %s",
					 gone[g], strerror(-r));
		}
		forget_dev(p, gone[g]);
	}
	if (pool_ssd_dev(p) < 0)
		p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS; /* the volume is the HDD's now */
	p->degraded = false;
	p->allow_missing = false;
	pool_known_drop(p); /* the device list changed: whole generations */
	/* pool_write_metadata flushes the zeroes before any slot names them. */
	r = pool_write_metadata(p, err, err_len);
	if (r < 0) {
		/*
		 * The devices hold the old generation or the new one, each
		 * complete; which one, the next activation reads.
		 */
		pool_set_broken(p, err);
		return r;
	}
	fault_point("drop-after-devices");
	if (pool_save_state(p, NULL, 0) < 0)
		log_pool_warn(p->sp.meta.name, "the missing device is dropped on the devices, but"
			      " the state could not be saved (%s); the next activation takes the"
			      " devices'", state_last_error(p->ps->state));
	return pool_load_table(p, 0, err, err_len);
}
