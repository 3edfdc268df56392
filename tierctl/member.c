/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"

#include <errno.h>
#include <json-c/json.h>

struct json_object *member_get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

const char *member_string(struct json_object *obj, const char *key)
{
	struct json_object *v = member_get(obj, key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int member_uint(struct json_object *obj, const char *key, uint64_t *out)
{
	struct json_object *v = member_get(obj, key);

	if (!v)
		return -ENOENT;
	/* json-c clamps what exceeds int64 to INT64_MAX here, so only real negatives fail. */
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return -EINVAL;
	*out = json_object_get_uint64(v);
	return 0;
}

int member_bool(struct json_object *obj, const char *key)
{
	struct json_object *v = member_get(obj, key);

	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}
