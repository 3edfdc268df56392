/* SPDX-License-Identifier: GPL-2.0-or-later */
/* poolview: tierd's pool objects (docs/protocol.md) as text for people. */
#ifndef TIERCTL_POOLVIEW_H
#define TIERCTL_POOLVIEW_H

#include <stdio.h>

struct json_object;

/* One line per pool: NAME STATE SIZE SSD HDD EXTENT.  pools is the array. */
int poolview_print_list(FILE *out, struct json_object *pools);

/* The pool's fields, then a line per device. */
int poolview_print_show(FILE *out, struct json_object *pool);

/*
 * The line a command prints after changing a pool: before, then "tank:
 * /dev/mapper/tank, 1.0 GiB (SSD 256.0 MiB + HDD 768.0 MiB)", the tiers'
 * usable sizes (or "(HDD 768.0 MiB; SSD 256.0 MiB for hot extents, not
 * counted)" when the SSD does not grow the volume), then after (may be NULL).
 */
int poolview_print_change(FILE *out, const char *before, struct json_object *pool,
			  const char *after);

#endif
