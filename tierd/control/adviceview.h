/* SPDX-License-Identifier: GPL-2.0-or-later */
/* adviceview: the protocol's JSON of pool.advise (docs/protocol.md). */
#ifndef TIERD_ADVICEVIEW_H
#define TIERD_ADVICEVIEW_H

#include <json-c/json.h>

#include "tiering.h"

/* The advice object, new, the caller's. */
json_object *adviceview_json(const char *pool, const struct tiering_advice_report *r);

#endif
