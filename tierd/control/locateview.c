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

/* Whether extent next, at place b, continues the run that ends with place a. */
static bool continues(const struct pool_place *a, const struct pool_place *b, uint64_t es)
{
	if (a->tier != b->tier || a->device != b->device || a->missing != b->missing)
		return false;
	return a->tier < 0 || a->device_offset + es == b->device_offset;
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
		struct pool_place start, prev, at;
		uint32_t run_first = first;

		pool_extent_place(p, first, &start);
		prev = start;
		for (uint32_t le = first + 1; le <= last + 1; le++) {
			if (le <= last) {
				pool_extent_place(p, le, &at);
				if (continues(&prev, &at, es)) {
					prev = at;
					continue;
				}
			}
			json_object_array_add(runs, run_json(&start, (uint64_t)run_first * es,
							     (uint64_t)(le - run_first) * es));
			if (le <= last) {
				start = prev = at;
				run_first = le;
			}
		}
	}
	json_object_object_add(o, "runs", runs);
	return o;
}
