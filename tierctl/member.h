/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * member: typed reads of a JSON object's members, for objects that come from
 * tierd and so may not be what the protocol says.
 */
#ifndef TIERCTL_MEMBER_H
#define TIERCTL_MEMBER_H

#include <stdint.h>

struct json_object;

/* The member (borrowed), or NULL when missing or obj is not an object. */
struct json_object *member_get(struct json_object *obj, const char *key);

/* The member's text if it is a string, else NULL. */
const char *member_string(struct json_object *obj, const char *key);

/* 0 with *out, -ENOENT when missing, -EINVAL when not an integer >= 0. */
int member_uint(struct json_object *obj, const char *key, uint64_t *out);

/* Whether the member is the boolean true (missing or another type: false). */
int member_bool(struct json_object *obj, const char *key);

#endif
