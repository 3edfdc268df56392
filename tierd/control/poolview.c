/* SPDX-License-Identifier: GPL-2.0-or-later */
/* poolview: pools, tiers, jobs and heat as the protocol's JSON objects. */
#include "poolview.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "jobview.h"
#include "metadata.h"
#include "rpc.h"

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static json_object *device_json(const struct pool_dev_report *d)
{
	json_object *o = json_object_new_object();
	char uuid[37];

	metadata_uuid_format(d->uuid, uuid);
	json_object_object_add(o, "path", json_object_new_string(d->path));
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	add_u64(o, "size_bytes", d->size_bytes);
	add_u64(o, "logical_block_size_bytes", d->logical_block_size);
	add_u64(o, "data_offset_bytes", d->data_offset);
	add_u64(o, "total_extents", d->total_extents);
	add_u64(o, "used_extents", d->used_extents);
	add_u64(o, "free_extents", d->total_extents - d->used_extents);
	add_u64(o, "reserved_extents", d->reserved_extents);
	json_object_object_add(o, "missing", json_object_new_boolean(d->missing));
	return o;
}

/* At most this many lost ranges are listed; lost_bytes counts them all. */
#define POOLVIEW_LOST_RANGES 64

static json_object *lost_ranges_json(const struct pool *p, uint64_t extent_size)
{
	struct pool_range ranges[POOLVIEW_LOST_RANGES];
	size_t n = pool_lost_ranges(p, ranges, POOLVIEW_LOST_RANGES);
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n && i < POOLVIEW_LOST_RANGES; i++) {
		json_object *o = json_object_new_object();

		add_u64(o, "first_extent", ranges[i].first);
		add_u64(o, "extents", ranges[i].count);
		add_u64(o, "offset_bytes", (uint64_t)ranges[i].first * extent_size);
		add_u64(o, "size_bytes", (uint64_t)ranges[i].count * extent_size);
		json_object_array_add(a, o);
	}
	return a;
}

/* NULL when the pool has no device of that tier. */
static json_object *tier_json(const struct pool_report *r, enum metadata_tier tier)
{
	const struct pool_tier_report *t = &r->tiers[tier];
	uint64_t reserved = 0;
	json_object *o, *devs;

	if (!t->present)
		return NULL;
	o = json_object_new_object();
	devs = json_object_new_array();
	for (unsigned i = 0; i < r->nr_devs; i++) {
		const struct pool_dev_report *d = &r->devs[i];

		if (d->tier != tier)
			continue;
		json_object_array_add(devs, device_json(d));
		reserved += d->reserved_extents;
	}
	json_object_object_add(o, "name", json_object_new_string(metadata_tier_name(tier)));
	json_object_object_add(o, "class", json_object_new_string(metadata_tier_name(tier)));
	add_u64(o, "size_bytes", t->size_bytes);
	add_u64(o, "total_extents", t->total_extents);
	add_u64(o, "used_extents", t->used_extents);
	add_u64(o, "free_extents", t->total_extents - t->used_extents);
	add_u64(o, "reserved_extents", reserved);
	/* What the tier gives the volume, when it grows it: its extents less the swap reserves. */
	add_u64(o, "usable_bytes", (t->total_extents - reserved) * r->extent_size);
	json_object_object_add(o, "devices", devs);
	return o;
}

static json_object *tiers_json(const struct pool_report *r)
{
	static const enum metadata_tier order[] = { METADATA_TIER_SSD, METADATA_TIER_HDD };
	json_object *tiers = json_object_new_array(), *t;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if ((t = tier_json(r, order[i])))
			json_object_array_add(tiers, t);
	return tiers;
}

json_object *poolview_tiers_json(const struct pool *p)
{
	struct pool_report r;

	pool_get_report(p, &r);
	return tiers_json(&r);
}

static json_object *heat_status_json(const struct pool_heat_report *h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(h->enabled));
	add_u64(o, "areas", h->areas);
	add_u64(o, "zone_bytes", h->zone_bytes);
	add_u64(o, "zones", h->zones);
	add_u64(o, "fine_zones", h->fine_zones);
	add_u64(o, "max_fine_zones", h->max_fine_zones);
	add_u64(o, "area_kernel_bytes", h->kernel_bytes_per_area);
	add_u64(o, "kernel_bytes", h->kernel_bytes);
	add_u64(o, "kernel_limit_bytes", h->limit_bytes);
	add_u64(o, "table_bytes", h->table_bytes);
	add_u64(o, "sample_areas", h->sample_areas);
	add_u64(o, "piece_areas", h->piece_areas);
	add_u64(o, "piece_windows", h->piece_windows);
	add_u64(o, "piece_windows_busy", h->piece_windows_busy);
	add_u64(o, "half_life_seconds", h->half_life_s);
	if (!h->enabled && h->reason[0])
		json_object_object_add(o, "reason", json_object_new_string(h->reason));
	return o;
}

json_object *poolview_job_json(const struct pool *p)
{
	struct job_report j;

	return job_get_report(p, &j) < 0 ? NULL : jobview_json(p, &j, NULL);
}

static json_object *table_json(const struct pool *p, const struct pool_report *r)
{
	json_object *o = json_object_new_object();

	add_u64(o, "targets", pool_table_targets(p));
	json_object_object_add(o, "max_targets", r->max_table_targets ?
				json_object_new_int64(r->max_table_targets) : NULL);
	return o;
}

static json_object *pieces_json(const struct pool_pieces_report *pr)
{
	json_object *o = json_object_new_object();

	add_u64(o, "piece_bytes", pr->piece_bytes);
	add_u64(o, "containers", pr->containers);
	add_u64(o, "pieces", pr->pieces);
	add_u64(o, "split_extents", pr->split_extents);
	add_u64(o, "bytes", pr->piece_bytes * pr->pieces);
	return o;
}

json_object *poolview_pool_json(const struct pool *p)
{
	json_object *o = json_object_new_object();
	char uuid[37], dm[PATH_MAX];
	struct pool_report r;

	pool_get_report(p, &r);
	metadata_uuid_format(r.uuid, uuid);
	snprintf(dm, sizeof(dm), "/dev/mapper/%s", r.name);
	json_object_object_add(o, "name", json_object_new_string(r.name));
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	json_object_object_add(o, "state", json_object_new_string(r.active ? "active" : "inactive"));
	json_object_object_add(o, "dm_device", json_object_new_string(dm));
	add_u64(o, "extent_size_bytes", r.extent_size);
	add_u64(o, "size_bytes", (uint64_t)r.extents * r.extent_size);
	add_u64(o, "total_extents", r.extents);
	json_object_object_add(o, "ssd_grows_volume", json_object_new_boolean(r.ssd_grows_volume));
	add_u64(o, "metadata_generation", r.generation);
	json_object_object_add(o, "table", table_json(p, &r));
	json_object_object_add(o, "tiers", tiers_json(&r));
	json_object_object_add(o, "heat", heat_status_json(&r.heat));
	json_object_object_add(o, "pieces", pieces_json(&r.pieces));
	json_object_object_add(o, "job", poolview_job_json(p));
	json_object_object_add(o, "degraded", json_object_new_boolean(r.degraded));
	add_u64(o, "lost_extents", r.lost_extents);
	add_u64(o, "lost_bytes", (uint64_t)r.lost_extents * r.extent_size);
	json_object_object_add(o, "lost_ranges", lost_ranges_json(p, r.extent_size));
	json_object_object_add(o, "inactive_reason", r.inactive_reason[0] ?
				json_object_new_string(r.inactive_reason) : NULL);
	json_object_object_add(o, "moves_refused", r.moves_refused[0] ?
				json_object_new_string(r.moves_refused) : NULL);
	return o;
}

static int by_name(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b, *nx, *ny;

	json_object_object_get_ex(x, "name", &nx);
	json_object_object_get_ex(y, "name", &ny);
	return strcmp(json_object_get_string(nx), json_object_get_string(ny));
}

static int add_pool(struct pool *p, void *ctx)
{
	json_object_array_add(ctx, poolview_pool_json(p));
	return 0;
}

json_object *poolview_pools_json(struct pools *ps)
{
	json_object *a = json_object_new_array();

	pools_for_each(ps, add_pool, a);
	json_object_array_sort(a, by_name);
	return a;
}

json_object *poolview_heat_json(const struct pool *p, uint32_t top)
{
	json_object *a = json_object_new_array();
	struct pool_hot_extent *v = NULL;
	uint64_t extent_size = pool_extent_size(p);
	uint32_t n = 0;

	if (pool_heat_top(p, top, &v, &n) < 0)
		n = 0;
	for (uint32_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		add_u64(o, "extent", v[i].le);
		add_u64(o, "offset_bytes", (uint64_t)v[i].le * extent_size);
		json_object_object_add(o, "tier", json_object_new_string(
			v[i].tier < 0 ? "none" : metadata_tier_name((enum metadata_tier)v[i].tier)));
		json_object_object_add(o, "heat", rpc_json_number(v[i].heat));
		add_u64(o, "reads", v[i].reads);
		add_u64(o, "writes", v[i].writes);
		if (v[i].pieces) {
			json_object *pieces = json_object_new_object();

			add_u64(pieces, "piece_bytes", extent_size / v[i].pieces);
			add_u64(pieces, "count", v[i].pieces);
			if (v[i].pieces_for_90)
				add_u64(pieces, "holding_90_percent", v[i].pieces_for_90);
			json_object_object_add(o, "pieces", pieces);
		}
		json_object_array_add(a, o);
	}
	free(v);
	return a;
}
