/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tierview: the protocol's JSON of the tiering reports (docs/protocol.md). */
#ifndef TIERD_TIERVIEW_H
#define TIERD_TIERVIEW_H

#include <json-c/json.h>

#include "pool.h"
#include "state.h"
#include "tiering.h"

/* Each returns a new object (or array) that the caller owns. */

/* The policies array of policy.list. */
json_object *tierview_policies_json(const struct tiering_policies_report *r);
/* The schedule object. */
json_object *tierview_schedule_json(const struct tiering_schedule_report *r);
/* The pins array. */
json_object *tierview_pins_json(const struct tiering_pins_report *r);
/* The plan of a dry run. */
json_object *tierview_plan_json(const struct tiering_plan_report *r);
/* A run (RUN). */
json_object *tierview_run_json(const struct state_run *run);
/* The runs array of runs.list. */
json_object *tierview_runs_json(const struct tiering_runs_report *r);
/* The result of pool.stats; the tiers are p's. */
json_object *tierview_stats_json(const struct pool *p, const struct tiering_stats_report *r);

#endif
