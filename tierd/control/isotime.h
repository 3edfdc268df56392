/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * isotime: the protocol's one form of a point in time, for every reply
 * (docs/protocol.md, "Names, units and numbers").
 */
#ifndef TIERD_ISOTIME_H
#define TIERD_ISOTIME_H

#include <json-c/json.h>
#include <stdint.h>

/* Unix seconds as "2026-12-02T01:02:03Z" (ISO 8601, UTC); JSON null for 0 or less (none). */
json_object *isotime_json(int64_t t);

#endif
