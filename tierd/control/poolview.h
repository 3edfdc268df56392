/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poolview: pools, their tiers, jobs and heat as the protocol's JSON objects
 * (docs/protocol.md), built from the pool and job layers' typed reports.
 */
#ifndef TIERD_POOLVIEW_H
#define TIERD_POOLVIEW_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "pool.h"

/* A pool object, with its tiers, heat and running job. */
json_object *poolview_pool_json(const struct pool *p);
/* Every pool object, by name. */
json_object *poolview_pools_json(struct pools *ps);
/* The tier objects, each with its device objects. */
json_object *poolview_tiers_json(const struct pool *p);
/* The running job, or NULL (JSON null) when idle. */
json_object *poolview_job_json(const struct pool *p);
/* The top extents by heat: [{extent, offset_bytes, tier, heat, reads, writes}]. */
json_object *poolview_heat_json(const struct pool *p, uint32_t top);

#endif
