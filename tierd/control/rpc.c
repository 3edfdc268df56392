/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

static int rpc_method_valid(const char *m)
{
	size_t n = strlen(m);

	if (n == 0 || n >= RPC_METHOD_MAX)
		return 0;
	for (; *m; m++)
		if (!((*m >= 'a' && *m <= 'z') || *m == '.'))
			return 0;
	return 1;
}

int rpc_decode(struct rpc_request *req, const char *line, size_t len, char *err, size_t err_len)
{
	struct json_tokener *tok;
	json_object *obj = NULL, *v;
	int r = -EINVAL;

	memset(req, 0, sizeof(*req));
	if (len > RPC_REQUEST_MAX) {
		snprintf(err, err_len, "request larger than %d bytes", RPC_REQUEST_MAX);
		return -EINVAL;
	}
	if (memchr(line, '\0', len)) {
		snprintf(err, err_len, "request contains a NUL byte");
		return -EINVAL;
	}
	tok = json_tokener_new_ex(32);
	if (!tok)
		return -ENOMEM;
	/* Strings echoed in error replies must be valid UTF-8 for the client's parser. */
	json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, line, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		snprintf(err, err_len, "request is not valid JSON: %s",
			 e == json_tokener_continue ? "it ends in the middle" : json_tokener_error_desc(e));
		goto out;
	}
	/* Trailing bytes after the object, other than white space, are garbage. */
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++) {
		if (!strchr(" \t\r\n", line[i])) {
			snprintf(err, err_len, "request has data after the JSON object");
			goto out;
		}
	}
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(err, err_len, "request is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(obj, "protocol", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(err, err_len, "request lacks an integer \"protocol\"");
		goto out;
	}
	if (json_object_get_int64(v) != RPC_PROTOCOL) {
		snprintf(err, err_len, "protocol %lld is not supported (this tierd speaks %d)",
			 (long long)json_object_get_int64(v), RPC_PROTOCOL);
		r = -EPROTONOSUPPORT;
		goto out;
	}
	if (!json_object_object_get_ex(obj, "method", &v) ||
	    !json_object_is_type(v, json_type_string) || !rpc_method_valid(json_object_get_string(v))) {
		snprintf(err, err_len, "request lacks a valid \"method\"");
		goto out;
	}
	snprintf(req->method, sizeof(req->method), "%s", json_object_get_string(v));
	json_object_object_foreach(obj, key, val) {
		(void)val;
		if (strcmp(key, "protocol") && strcmp(key, "method") && strcmp(key, "params")) {
			snprintf(err, err_len, "unknown request member \"%.64s\"", key);
			goto out;
		}
	}
	if (json_object_object_get_ex(obj, "params", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			snprintf(err, err_len, "\"params\" is not an object");
			goto out;
		}
		req->params = json_object_get(v);
	} else {
		req->params = json_object_new_object();
		if (!req->params) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = 0;
out:
	json_object_put(obj);
	json_tokener_free(tok);
	return r;
}

void rpc_request_destroy(struct rpc_request *req)
{
	if (!req)
		return;
	json_object_put(req->params);
	req->params = NULL;
}

static const char *rpc_type_name(enum rpc_type type)
{
	switch (type) {
	case RPC_STRING:
		return "a string";
	case RPC_BOOL:
		return "a boolean";
	case RPC_UINT64:
		return "a non-negative integer below 2^64 - 1";
	case RPC_STRING_ARRAY:
		return "an array of strings";
	case RPC_RANGES:
		return "an array of [offset, length] pairs of non-negative integers";
	case RPC_UINT64_ARRAY:
		return "an array of non-negative integers";
	}
	return "?";
}

static bool rpc_is_uint64(json_object *v)
{
	/* json-c keeps integers above INT64_MAX as uint64; negatives are int64. */
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return false;
	/* json-c clamps anything from 2^64 up to UINT64_MAX: refuse rather than guess. */
	return json_object_get_uint64(v) != UINT64_MAX;
}

static bool rpc_is_range(json_object *v)
{
	return json_object_is_type(v, json_type_array) && json_object_array_length(v) == 2 &&
	       rpc_is_uint64(json_object_array_get_idx(v, 0)) &&
	       rpc_is_uint64(json_object_array_get_idx(v, 1));
}

void rpc_range_get(json_object *ranges, size_t i, uint64_t *offset, uint64_t *length)
{
	json_object *pair = json_object_array_get_idx(ranges, i);

	*offset = json_object_get_uint64(json_object_array_get_idx(pair, 0));
	*length = json_object_get_uint64(json_object_array_get_idx(pair, 1));
}

static int rpc_param_take(const struct rpc_param *p, json_object *v)
{
	switch (p->type) {
	case RPC_STRING:
		if (!json_object_is_type(v, json_type_string))
			return -EINVAL;
		*(const char **)p->out = json_object_get_string(v);
		return 0;
	case RPC_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return -EINVAL;
		*(bool *)p->out = json_object_get_boolean(v);
		return 0;
	case RPC_UINT64:
		if (!rpc_is_uint64(v))
			return -EINVAL;
		*(uint64_t *)p->out = json_object_get_uint64(v);
		return 0;
	case RPC_STRING_ARRAY:
		if (!json_object_is_type(v, json_type_array))
			return -EINVAL;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
				return -EINVAL;
		*(json_object **)p->out = v;
		return 0;
	case RPC_RANGES:
		if (!json_object_is_type(v, json_type_array))
			return -EINVAL;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!rpc_is_range(json_object_array_get_idx(v, i)))
				return -EINVAL;
		*(json_object **)p->out = v;
		return 0;
	case RPC_UINT64_ARRAY:
		if (!json_object_is_type(v, json_type_array))
			return -EINVAL;
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!rpc_is_uint64(json_object_array_get_idx(v, i)))
				return -EINVAL;
		*(json_object **)p->out = v;
		return 0;
	}
	return -EINVAL;
}

int rpc_params(json_object *params, const struct rpc_param *spec, size_t nr, char *err,
	       size_t err_len)
{
	json_object_object_foreach(params, key, val) {
		size_t i;

		(void)val;
		for (i = 0; i < nr && strcmp(spec[i].name, key); i++)
			;
		if (i == nr) {
			snprintf(err, err_len, "unknown parameter \"%.64s\"", key);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		json_object *v;

		if (!json_object_object_get_ex(params, spec[i].name, &v)) {
			if (spec[i].required) {
				snprintf(err, err_len, "missing parameter \"%s\"", spec[i].name);
				return -EINVAL;
			}
			continue;
		}
		if (rpc_param_take(&spec[i], v) < 0) {
			snprintf(err, err_len, "parameter \"%s\" must be %s", spec[i].name,
				 rpc_type_name(spec[i].type));
			return -EINVAL;
		}
	}
	return 0;
}

static json_object *rpc_envelope(void)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "protocol", json_object_new_int(RPC_PROTOCOL));
	return o;
}

json_object *rpc_reply_ok(json_object *result)
{
	json_object *o = rpc_envelope();

	if (!o) {
		json_object_put(result);
		return NULL;
	}
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "result", result ? result : json_object_new_object());
	return o;
}

json_object *rpc_reply_error(int err, const char *message)
{
	json_object *o = rpc_envelope(), *e;
	const char *name = strerrorname_np(err < 0 ? -err : err);

	if (!o)
		return NULL;
	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_string(name ? name : "EIO"));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", e);
	return o;
}

json_object *rpc_progress(json_object *progress)
{
	json_object *o = rpc_envelope();

	if (!o) {
		json_object_put(progress);
		return NULL;
	}
	json_object_object_add(o, "progress", progress);
	return o;
}

json_object *rpc_json_number(double v)
{
	char text[DECIMAL_FORMAT_MAX];

	decimal_format(v, text, sizeof(text));
	/* The value parsed back from the text, so that both agree. */
	return json_object_new_double_s(strtod(text, NULL), text);
}

json_object *rpc_result(const char *key, json_object *value)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, key, value);
	else
		json_object_put(value);
	return o;
}
