/* SPDX-License-Identifier: GPL-2.0-or-later */
/* adviceview: the protocol's JSON of pool.advise (docs/protocol.md). */
#include "adviceview.h"

#include "rpc.h"

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

json_object *adviceview_json(const char *pool, const struct tiering_advice_report *r)
{
	json_object *o = json_object_new_object(), *pts = json_object_new_array();
	uint64_t ssd_ios = r->io[METADATA_TIER_SSD].reads + r->io[METADATA_TIER_SSD].writes;
	uint64_t all_ios = ssd_ios + r->io[METADATA_TIER_HDD].reads + r->io[METADATA_TIER_HDD].writes;

	json_object_object_add(o, "pool", json_object_new_string(pool));
	json_object_object_add(o, "policy", json_object_new_string(r->policy));
	json_object_object_add(o, "heat_enabled", json_object_new_boolean(r->heat_on));
	add_u64(o, "extent_size_bytes", r->extent_size);
	add_u64(o, "ssd_size_bytes", r->ssd_size);
	add_u64(o, "all_hot_ssd_size_bytes", r->all_hot_size);
	json_object_object_add(o, "all_hot_ssd_io_share", rpc_json_number(r->all_hot_share));
	if (r->piece_size)
		add_u64(o, "piece_bytes", r->piece_size);
	add_u64(o, "promoted_bytes", r->promote_bytes);
	add_u64(o, "demoted_bytes", r->demote_bytes);
	add_u64(o, "window_seconds", r->window_seconds);
	add_u64(o, "window_ios", all_ios);
	json_object_object_add(o, "measured_ssd_io_share",
			       all_ios ? rpc_json_number((double)ssd_ios / (double)all_ios) : NULL);
	for (size_t i = 0; i < r->nr_points; i++) {
		json_object *pt = json_object_new_object();

		add_u64(pt, "ssd_size_bytes", r->points[i].ssd_size);
		json_object_object_add(pt, "ssd_io_share", rpc_json_number(r->points[i].ssd_io_share));
		if (r->piece_size)
			json_object_object_add(pt, "ssd_io_share_with_pieces",
					       rpc_json_number(r->points[i].ssd_io_share_pieces));
		json_object_object_add(pt, "current", json_object_new_boolean(r->points[i].current));
		json_object_array_add(pts, pt);
	}
	json_object_object_add(o, "points", pts);
	return o;
}
