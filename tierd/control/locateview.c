/* SPDX-License-Identifier: GPL-2.0-or-later */
/* locateview: the protocol's JSON of pool.locate, where ranges of a volume lie (docs/protocol.md). */
#include "locateview.h"

#include <stdbool.h>
#include <stdio.h>

#include "metadata.h"

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static json_object *run_json(const struct pool_place *at, uint64_t offset, uint64_t length)
{
	json_object *o = json_object_new_object();

	add_u64(o, "offset_bytes", offset);
	add_u64(o, "size_bytes", length);
	json_object_object_add(o, "tier", at->tier < 0 ? NULL :
			       json_object_new_string(metadata_tier_name((enum metadata_tier)at->tier)));
	json_object_object_add(o, "device", at->device ? json_object_new_string(at->device) : NULL);
	json_object_object_add(o, "device_offset_bytes",
			       at->tier < 0 ? NULL : json_object_new_uint64(at->device_offset));
	json_object_object_add(o, "missing", json_object_new_boolean(at->missing));
	return o;
}

/* A run being gathered: where it starts on the volume and the device, and its length. */
struct locate_run {
	struct pool_place start;
	uint64_t offset, length;
};

/* Whether the bytes at place b continue run r on the device as on the volume. */
static bool continues(const struct locate_run *r, const struct pool_place *b)
{
	const struct pool_place *a = &r->start;

	if (a->tier != b->tier || a->device != b->device || a->missing != b->missing)
		return false;
	return a->tier < 0 || a->device_offset + r->length == b->device_offset;
}

/* Add len bytes at place at to run r, or end r (into runs) and start a new one there. */
static void run_add(json_object *runs, struct locate_run *r, const struct pool_place *at,
		    uint64_t offset, uint64_t len)
{
	if (r->length && continues(r, at)) {
		r->length += len;
		return;
	}
	if (r->length)
		json_object_array_add(runs, run_json(&r->start, r->offset, r->length));
	*r = (struct locate_run){ .start = *at, .offset = offset, .length = len };
}

json_object *locateview_json(const struct pool *p, const struct locateview_range *ranges,
			     size_t nr, char *err, size_t err_len)
{
	uint64_t es = pool_extent_size(p), volume = (uint64_t)pool_nr_extents(p) * es;
	json_object *o, *runs;

	for (size_t i = 0; i < nr; i++)
		if (!ranges[i].length || ranges[i].offset >= volume ||
		    ranges[i].length > volume - ranges[i].offset) {
			snprintf(err, err_len, "pool %s: range %zu of %zu is empty or reaches past the"
				 " volume's end (%llu bytes)", pool_name(p), i + 1, nr,
				 (unsigned long long)volume);
			return NULL;
		}
	o = json_object_new_object();
	runs = json_object_new_array();
	add_u64(o, "extent_size_bytes", es);
	for (size_t i = 0; i < nr; i++) {
		uint32_t first = (uint32_t)(ranges[i].offset / es);
		uint32_t last = (uint32_t)((ranges[i].offset + ranges[i].length - 1) / es);
		struct locate_run run = { 0 };
		struct pool_place at;
		uint64_t piece;

		for (uint32_t le = first; le <= last; le++) {
			/* A split extent, piece by piece: its pieces out lie elsewhere. */
			if (pool_piece_place(p, le, 0, &at, &piece)) {
				for (uint64_t off = 0; off < es; off += piece) {
					pool_piece_place(p, le, (uint32_t)(off / piece), &at, &piece);
					run_add(runs, &run, &at, (uint64_t)le * es + off, piece);
				}
				continue;
			}
			pool_extent_place(p, le, &at);
			run_add(runs, &run, &at, (uint64_t)le * es, es);
		}
		if (run.length)
			json_object_array_add(runs, run_json(&run.start, run.offset, run.length));
	}
	json_object_object_add(o, "runs", runs);
	return o;
}
