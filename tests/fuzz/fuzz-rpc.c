/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-rpc: arbitrary bytes as a request line, through the decoder and the
 * parameter checks every method runs, and back out as the reply the daemon
 * would send. A crash, a leak or a broken invariant is a finding.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rpc.h"
#include "array.h"



/* What the daemon does with an error: a reply line a client must be able to read. */
static void fuzz_reply_error(int err, const char *message)
{
	json_object *reply = rpc_reply_error(err, message);
	json_object *back;
	const char *text;

	FUZZ_ASSERT(reply);
	text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
	FUZZ_ASSERT(text && !strchr(text, '\n'));
	back = json_tokener_parse(text);
	FUZZ_ASSERT(back && json_object_is_type(back, json_type_object));
	json_object_put(back);
	json_object_put(reply);
}

/* The shapes of spec the methods use (tierd/methods.c). */
static void fuzz_params(json_object *params)
{
	struct {
		const char *name, *hdd, *ssd, *tier;
		uint64_t extent_size, first, count;
		bool force;
		json_object *devices, *ranges, *sizes;
	} a;
	const struct rpc_param create[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "hdd", RPC_STRING, true, &a.hdd },
		{ "ssd", RPC_STRING, false, &a.ssd },
		{ "extent_size_bytes", RPC_UINT64, false, &a.extent_size },
		{ "wipe_signatures", RPC_BOOL, false, &a.force },
	};
	const struct rpc_param import[] = {
		{ "devices", RPC_STRING_ARRAY, true, &a.devices },
	};
	const struct rpc_param move[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "first", RPC_UINT64, true, &a.first },
		{ "count", RPC_UINT64, false, &a.count },
		{ "tier", RPC_STRING, true, &a.tier },
	};
	const struct rpc_param pin[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "ranges", RPC_RANGES, true, &a.ranges },
		{ "tier", RPC_STRING, false, &a.tier },
	};
	const struct rpc_param advise[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "window_seconds", RPC_UINT64, false, &a.count },
		{ "ssd_sizes_bytes", RPC_UINT64_ARRAY, false, &a.sizes },
	};
	const struct {
		const struct rpc_param *spec;
		size_t nr;
	} specs[] = {
		{ NULL, 0 },
		{ create, ARRAY_SIZE(create) },
		{ import, ARRAY_SIZE(import) },
		{ move, ARRAY_SIZE(move) },
		{ pin, ARRAY_SIZE(pin) },
		{ advise, ARRAY_SIZE(advise) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		char err[256] = "";
		int r;

		memset(&a, 0, sizeof(a));
		r = rpc_params(params, specs[i].spec, specs[i].nr, err, sizeof(err));
		if (r < 0) {
			FUZZ_ASSERT(r == -EINVAL && err[0]);
			fuzz_reply_error(r, err);
			continue;
		}
		FUZZ_ASSERT(r == 0);
		if (specs[i].spec == create)
			FUZZ_ASSERT(a.name && a.hdd);
		if (specs[i].spec == move)
			FUZZ_ASSERT(a.name && a.tier);
		if (specs[i].spec == pin) {
			FUZZ_ASSERT(a.name && json_object_is_type(a.ranges, json_type_array));
			for (size_t j = 0; j < json_object_array_length(a.ranges); j++) {
				uint64_t offset, length;

				rpc_range_get(a.ranges, j, &offset, &length);
				FUZZ_ASSERT(offset != UINT64_MAX && length != UINT64_MAX);
			}
		}
		if (specs[i].spec == advise && a.sizes)
			for (size_t j = 0; j < json_object_array_length(a.sizes); j++)
				FUZZ_ASSERT(json_object_get_uint64(json_object_array_get_idx(a.sizes, j)) !=
					    UINT64_MAX);
		if (specs[i].spec == import) {
			FUZZ_ASSERT(json_object_is_type(a.devices, json_type_array));
			for (size_t j = 0; j < json_object_array_length(a.devices); j++)
				FUZZ_ASSERT(json_object_get_string(
					json_object_array_get_idx(a.devices, j)));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_request req;
	json_object *reply;
	char err[256] = "";
	int r;

	r = rpc_decode(&req, (const char *)data, size, err, sizeof(err));
	if (r < 0) {
		FUZZ_ASSERT((r == -EINVAL || r == -EPROTONOSUPPORT || r == -ENOMEM) && err[0]);
		FUZZ_ASSERT(!req.params);
		fuzz_reply_error(r, err);
		return 0;
	}
	FUZZ_ASSERT(r == 0 && req.method[0]);
	FUZZ_ASSERT(strspn(req.method, "abcdefghijklmnopqrstuvwxyz.") == strlen(req.method));
	FUZZ_ASSERT(json_object_is_type(req.params, json_type_object));
	fuzz_params(req.params);
	/* A reply that echoes the params takes its own reference. */
	reply = rpc_reply_ok(json_object_get(req.params));
	FUZZ_ASSERT(reply);
	FUZZ_ASSERT(json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN));
	json_object_put(reply);
	rpc_request_destroy(&req);
	return 0;
}
