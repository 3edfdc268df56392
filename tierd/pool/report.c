/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report: a pool as plain values, for the views (JSON) and the exporter. */
#include "pool-internal.h"

#include <string.h>

#include "iostats.h"

static void dev_report(const struct pool *p, unsigned i, struct pool_dev_report *out)
{
	const struct metadata_dev *d = &p->sp.meta.devs[i];
	uint32_t containers = 0;

	/* A piece container holds data of the extents split into it: used, though mapped by none. */
	for (uint32_t c = 0; c < p->sp.pieces.nr_containers; c++)
		containers += p->sp.pieces.containers[c].dev == i;
	*out = (struct pool_dev_report){
		.path = p->sp.paths[i],
		.tier = d->tier,
		.size_bytes = d->size_bytes,
		.logical_block_size = d->logical_block_size,
		.data_offset = d->data_start,
		.total_extents = d->nr_pe,
		.used_extents = extmap_count_on_dev(&p->sp.map, i) + containers,
		.reserved_extents = d->reserve_pe,
		.missing = p->degraded && p->fd[i] < 0,
	};
	memcpy(out->uuid, d->uuid, sizeof(out->uuid));
}

/* Whether a piece of le is out in a container of a missing device. */
static bool pool_pieces_lost(const struct pool *p, uint32_t le)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t first, n = piecemap_extent(pm, le, &first);

	for (uint32_t i = first; i < first + n; i++)
		if (p->fd[pm->containers[pm->pieces[i].container].dev] < 0)
			return true;
	return false;
}

/* *next_split: the first split extent at or after le, kept by the caller across a walk. */
static bool pool_extent_lost(const struct pool *p, uint32_t le, uint32_t *next_split)
{
	struct extmap_loc loc = extmap_get(&p->sp.map, le);

	if (loc.dev < p->sp.meta.nr_devs && p->fd[loc.dev] < 0)
		return true;
	if (*next_split < le)
		*next_split = piecemap_next_split(&p->sp.pieces, le);
	/* A lookup only at split extents: the walk covers every extent of the volume. */
	return le == *next_split && loc.dev != EXTMAP_NO_DEV && pool_pieces_lost(p, le);
}

/* Extents whose home is present but a piece of which is in a container of a missing device. */
static uint32_t pool_split_lost(const struct pool *p)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t n = 0;

	for (uint32_t i = 0; i < pm->nr_pieces; i++) {
		const struct piecemap_piece *pc = &pm->pieces[i];
		struct extmap_loc home;

		if (i && pc->le == pm->pieces[i - 1].le)
			continue;
		home = extmap_get(&p->sp.map, pc->le);
		n += p->fd[home.dev] >= 0 && pool_pieces_lost(p, pc->le);
	}
	return n;
}

static void pieces_report(const struct pool *p, struct pool_pieces_report *out)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t ppe = pool_piece_ppe(p);

	*out = (struct pool_pieces_report){ .containers = pm->nr_containers,
					    .pieces = pm->nr_pieces };
	if (ppe)
		out->piece_bytes = p->sp.meta.extent_size / ppe;
	if (!pm->nr_containers)
		return;
	for (uint32_t i = 0; i < pm->nr_pieces; i++)
		out->split_extents += !i || pm->pieces[i].le != pm->pieces[i - 1].le;
}

void pool_get_report(const struct pool *p, struct pool_report *out)
{
	*out = (struct pool_report){
		.name = p->sp.meta.name,
		.active = p->active,
		.dm_major = p->dm_major,
		.dm_minor = p->dm_minor,
		.extent_size = p->sp.meta.extent_size,
		.extents = p->sp.map.nr_logical,
		.ssd_grows_volume = !!(p->sp.meta.flags & METADATA_POOL_SSD_GROWS),
		.generation = p->sp.meta.generation,
		.max_table_targets = p->ps->table_targets,
		.nr_devs = p->sp.meta.nr_devs,
		.heat = {
			.enabled = p->heat_on,
			.areas = p->heat_on ? (uint32_t)(p->heat_kernel_bytes /
							 iostats_kernel_bytes_per_area()) : 0,
			.zone_bytes = p->heat_on ? p->zones.zone_extents * p->sp.meta.extent_size : 0,
			.zones = p->heat_on ? p->zones.nr_zones : 0,
			.fine_zones = p->heat_on ? p->nr_fine : 0,
			.max_fine_zones = p->heat_on ? p->zones.max_fine : 0,
			.kernel_bytes_per_area = iostats_kernel_bytes_per_area(),
			.kernel_bytes = p->heat_on ? p->heat_kernel_bytes : 0,
			.limit_bytes = p->heat_limit_bytes,
			.table_bytes = heat_table_bytes(&p->heat),
			.sample_areas = p->heat_on ? p->sample_areas : 0,
			.piece_areas = p->heat_on ? p->piece_areas : 0,
			.piece_windows = p->heat_on ? p->piece_watch.nr_windows : 0,
			.piece_windows_busy = p->heat_on ? piecewatch_busy(&p->piece_watch) : 0,
			.half_life_s = (uint64_t)p->ps->heat.half_life_s,
			.reason = p->heat_on ? "" : p->heat_off,
		},
		.job_what = pool_job_what(p),
		.degraded = p->degraded,
		.inactive_reason = p->active ? "" : p->inactive_why,
		.moves_refused = p->broken,
	};
	memcpy(out->uuid, p->sp.meta.uuid, sizeof(out->uuid));
	pieces_report(p, &out->pieces);
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		struct pool_dev_report *d = &out->devs[i];
		struct pool_tier_report *t;

		dev_report(p, i, d);
		t = &out->tiers[d->tier];
		t->present = true;
		t->total_extents += d->total_extents;
		t->used_extents += d->used_extents;
		t->size_bytes += (uint64_t)d->total_extents * p->sp.meta.extent_size;
		if (d->missing)
			out->lost_extents += extmap_count_on_dev(&p->sp.map, i);
	}
	if (p->degraded)
		out->lost_extents += pool_split_lost(p);
}

uint32_t pool_table_targets(const struct pool *p)
{
	/* A piece out splits its extent's target and adds its own: two more at most. */
	uint64_t n = (uint64_t)extmap_runs(&p->sp.map) + 2ull * p->sp.pieces.nr_pieces;

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

size_t pool_lost_ranges(const struct pool *p, struct pool_range *out, size_t max)
{
	uint32_t next_split = piecemap_next_split(&p->sp.pieces, 0);
	bool in_run = false;
	size_t n = 0;

	if (!p->degraded)
		return 0;
	for (uint32_t le = 0; le < p->sp.map.nr_logical; le++) {
		if (!pool_extent_lost(p, le, &next_split)) {
			in_run = false;
			continue;
		}
		if (in_run) {
			if (out && n - 1 < max)
				out[n - 1].count++;
			continue;
		}
		in_run = true;
		if (out && n < max)
			out[n] = (struct pool_range){ .first = le, .count = 1 };
		n++;
	}
	return n;
}

int pool_piece_place(const struct pool *p, uint32_t le, uint32_t idx, struct pool_place *out,
		     uint64_t *piece_bytes)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint64_t bytes;
	uint32_t c;
	uint16_t slot;
	unsigned dev;

	if (!piecemap_extent(pm, le, NULL))
		return 0;
	bytes = p->sp.meta.extent_size / pm->pieces_per_extent;
	*piece_bytes = bytes;
	if (piecemap_find(pm, le, idx, &c, &slot) < 0) {
		pool_extent_place(p, le, out);
		if (out->tier >= 0)
			out->device_offset += (uint64_t)idx * bytes;
		return 1;
	}
	dev = pm->containers[c].dev;
	*out = (struct pool_place){
		.tier = (int)p->sp.meta.devs[dev].tier,
		.device = p->sp.paths[dev],
		.device_offset = p->sp.meta.devs[dev].data_start +
				 (uint64_t)pm->containers[c].pe * p->sp.meta.extent_size +
				 (uint64_t)slot * bytes,
		.missing = p->degraded && p->fd[dev] < 0,
	};
	return 1;
}

void pool_extent_place(const struct pool *p, uint32_t le, struct pool_place *out)
{
	struct extmap_loc loc = le < p->sp.map.nr_logical ? extmap_get(&p->sp.map, le) :
		(struct extmap_loc){ .dev = EXTMAP_NO_DEV };
	const struct metadata_dev *d;

	*out = (struct pool_place){ .tier = -1 };
	if (loc.dev >= p->sp.meta.nr_devs)
		return;
	d = &p->sp.meta.devs[loc.dev];
	*out = (struct pool_place){
		.tier = (int)d->tier,
		.device = p->sp.paths[loc.dev],
		.device_offset = d->data_start + (uint64_t)loc.pe * p->sp.meta.extent_size,
		.missing = p->degraded && p->fd[loc.dev] < 0,
	};
}
