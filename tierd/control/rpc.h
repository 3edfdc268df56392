/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rpc: decoding and validating control requests (docs/protocol.md). */
#ifndef TIERD_RPC_H
#define TIERD_RPC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_PROTOCOL 2
#define RPC_REQUEST_MAX 65536
#define RPC_METHOD_MAX 64
/* Entries one reply may list (heat.top, runs.list, a dry run's moves): a bound on its size. */
#define RPC_LIST_MAX 10000u

struct rpc_request {
	char method[RPC_METHOD_MAX];
	json_object *params; /* always an object; owned by the request */
};

/*
 * Decode one request line. -EINVAL (with err filled) for anything that is not
 * a JSON object with protocol 2, a string method of [a-z.]+ and an object (or
 * absent) params; -EPROTONOSUPPORT for another protocol version.
 */
int rpc_decode(struct rpc_request *req, const char *line, size_t len, char *err, size_t err_len);
void rpc_request_destroy(struct rpc_request *req);

enum rpc_type {
	RPC_STRING,       /* out: const char ** (owned by params) */
	RPC_BOOL,         /* out: bool * */
	RPC_UINT64,       /* out: uint64_t * */
	RPC_STRING_ARRAY, /* out: json_object ** (an array of strings, owned by params) */
	RPC_RANGES,       /* out: json_object ** (an array of [offset, length] pairs of uint64) */
	RPC_UINT64_ARRAY, /* out: json_object ** (an array of uint64, owned by params) */
};

struct rpc_param {
	const char *name;
	enum rpc_type type;
	bool required;
	void *out; /* left untouched when an optional param is absent */
};

/* Check params against spec: types, required members, and no unknown member
 * (a typo must not pass silently). -EINVAL with err filled. */
int rpc_params(json_object *params, const struct rpc_param *spec, size_t nr, char *err,
	       size_t err_len);

/* Pair i of an RPC_RANGES array that rpc_params accepted. */
void rpc_range_get(json_object *ranges, size_t i, uint64_t *offset, uint64_t *length);

/* {"protocol":2,"ok":true,"result":result}; takes ownership of result (NULL: {}). */
json_object *rpc_reply_ok(json_object *result);
/* {"protocol":2,"ok":false,"error":{"code":"EBUSY","message":message}} */
json_object *rpc_reply_error(int err, const char *message);
/* {"protocol":2,"progress":progress}; takes ownership. */
json_object *rpc_progress(json_object *progress);

/*
 * A JSON number rounded to 4 significant digits, printed as such (0.1, not
 * 0.10000000000000001): every fraction and score a reply holds.
 */
json_object *rpc_json_number(double v);

/* {"key": value}: a result's one noun; takes ownership of value. */
json_object *rpc_result(const char *key, json_object *value);

#endif
