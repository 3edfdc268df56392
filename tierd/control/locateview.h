/* SPDX-License-Identifier: GPL-2.0-or-later */
/* locateview: the protocol's JSON of pool.locate, where ranges of a volume lie (docs/protocol.md). */
#ifndef TIERD_LOCATEVIEW_H
#define TIERD_LOCATEVIEW_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"

struct locateview_range {
	uint64_t offset, length; /* bytes of the volume */
};

/*
 * The locate object for ranges[0..nr) of p's volume, rounded out to whole
 * extents: runs of extents that lie contiguously on one device, in the
 * ranges' order. NULL with err set when a range reaches past the volume's end.
 */
json_object *locateview_json(const struct pool *p, const struct locateview_range *ranges,
			     size_t nr, char *err, size_t err_len);

#endif
