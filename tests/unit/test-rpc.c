/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rpc: request decoding, parameter checks and the reply envelopes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rpc.h"
#include "array.h"


static int decode(struct rpc_request *req, const char *text, char *err, size_t err_len)
{
	return rpc_decode(req, text, strlen(text), err, err_len);
}

static void test_decode_good(void)
{
	struct rpc_request req;
	char err[256];
	json_object *v;

	CHECK_OK(decode(&req, "{\"protocol\":2,\"method\":\"pool.list\"}", err, sizeof(err)));
	CHECK_STR(req.method, "pool.list");
	/* Absent params read as an empty object: methods need no special case. */
	CHECK(json_object_is_type(req.params, json_type_object));
	CHECK_INT(json_object_object_length(req.params), 0);
	rpc_request_destroy(&req);

	CHECK_OK(decode(&req, " {\"method\":\"pool.show\", \"params\":{\"name\":\"tank\"},"
			"\"protocol\":2}\r\n", err, sizeof(err)));
	CHECK_STR(req.method, "pool.show");
	CHECK(json_object_object_get_ex(req.params, "name", &v));
	CHECK_STR(json_object_get_string(v), "tank");
	rpc_request_destroy(&req);
	/* Twice is harmless: a connection may be torn down after its reply. */
	rpc_request_destroy(&req);
	rpc_request_destroy(NULL);
}

/* The limits are inclusive: RPC_REQUEST_MAX bytes and a method of RPC_METHOD_MAX - 1. */
static void test_decode_limits(void)
{
	static const char head[] = "{\"protocol\":2,\"method\":\"pool.list\"}";
	char *line = malloc(RPC_REQUEST_MAX + 2);
	char method[RPC_METHOD_MAX + 1], text[256], err[256];
	struct rpc_request req;

	CHECK(line);
	memset(line, ' ', RPC_REQUEST_MAX + 1);
	memcpy(line, head, strlen(head));
	CHECK_OK(rpc_decode(&req, line, RPC_REQUEST_MAX, err, sizeof(err)));
	rpc_request_destroy(&req);
	CHECK_INT(rpc_decode(&req, line, RPC_REQUEST_MAX + 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "larger than"));
	CHECK(!req.params);
	free(line);

	memset(method, 'a', sizeof(method));
	method[RPC_METHOD_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "{\"protocol\":2,\"method\":\"%s\"}", method);
	CHECK_OK(decode(&req, text, err, sizeof(err)));
	CHECK_STR(req.method, method);
	rpc_request_destroy(&req);
	method[RPC_METHOD_MAX - 1] = 'a';
	method[RPC_METHOD_MAX] = '\0';
	snprintf(text, sizeof(text), "{\"protocol\":2,\"method\":\"%s\"}", method);
	CHECK_INT(decode(&req, text, err, sizeof(err)), -EINVAL);
}

static void test_decode_bad(void)
{
	static const struct check_bad_input cases[] = {
		{ "", -EINVAL },
		{ "{", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.li", -EINVAL },
		{ "null", -EINVAL },
		{ "1", -EINVAL },
		{ "\"pool.list\"", -EINVAL },
		{ "[{\"protocol\":2,\"method\":\"pool.list\"}]", -EINVAL },
		{ "{\"method\":\"pool.list\"}", -EINVAL },
		{ "{\"protocol\":\"1\",\"method\":\"pool.list\"}", -EINVAL },
		{ "{\"protocol\":2.0,\"method\":\"pool.list\"}", -EINVAL },
		{ "{\"protocol\":true,\"method\":\"pool.list\"}", -EINVAL },
		{ "{\"protocol\":1,\"method\":\"pool.list\"}", -EPROTONOSUPPORT },
		{ "{\"protocol\":0,\"method\":\"pool.list\"}", -EPROTONOSUPPORT },
		{ "{\"protocol\":-1,\"method\":\"pool.list\"}", -EPROTONOSUPPORT },
		{ "{\"protocol\":2}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":null}", -EINVAL },
		{ "{\"protocol\":2,\"method\":[\"pool.list\"]}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"Pool.list\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool list\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool2.list\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool_list\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"p\\u00f6ol\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":[]}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":null}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":\"\"}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"id\":7}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\"} x", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\"}{}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\"}\n{}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":{\"a\":"
		  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}",
		  -EINVAL },
		{ "\xff\xfe{}", -EINVAL },
		/* Invalid UTF-8 inside a string would be echoed back in the error. */
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":{\"\xc3\x28\":1}}", -EINVAL },
		{ "{\"protocol\":2,\"method\":\"pool.list\",\"params\":{\"name\":\"\xff\"}}", -EINVAL },
	};
	struct rpc_request req;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char err[256] = "";

		CHECK_INT(decode(&req, cases[i].text, err, sizeof(err)), cases[i].err);
		/* A refusal says why, and leaves nothing to free. */
		CHECK(err[0]);
		CHECK(!req.params);
	}
}

static void test_decode_nul(void)
{
	static const char text[] = "{\"protocol\":2,\"method\":\"pool.list\"}\0x";
	struct rpc_request req;
	char err[256];

	/* strlen would stop at the NUL; the line's length is what came over the socket. */
	CHECK_INT(rpc_decode(&req, text, sizeof(text) - 1, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "NUL"));
}

struct outs {
	const char *name, *tier;
	uint64_t size;
	bool force;
	json_object *devices;
};

static int params(const char *json, struct outs *o, char *err, size_t err_len)
{
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &o->name },
		{ "tier", RPC_STRING, false, &o->tier },
		{ "size", RPC_UINT64, false, &o->size },
		{ "force", RPC_BOOL, false, &o->force },
		{ "devices", RPC_STRING_ARRAY, false, &o->devices },
	};
	json_object *p = json_tokener_parse(json);
	int r;

	CHECK(p);
	r = rpc_params(p, spec, ARRAY_SIZE(spec), err, err_len);
	/* The outputs point into p: only err is left to look at. */
	json_object_put(p);
	return r;
}

static void test_params_good(void)
{
	struct outs o = { .tier = "default", .size = 7, .force = true };
	json_object *p;
	char err[256];
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &o.name },
		{ "tier", RPC_STRING, false, &o.tier },
		{ "size", RPC_UINT64, false, &o.size },
		{ "force", RPC_BOOL, false, &o.force },
		{ "devices", RPC_STRING_ARRAY, false, &o.devices },
	};

	/* Optional members that are absent leave the caller's defaults alone. */
	p = json_tokener_parse("{\"name\":\"tank\"}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_STR(o.name, "tank");
	CHECK_STR(o.tier, "default");
	CHECK_UINT(o.size, 7);
	CHECK(o.force);
	CHECK(!o.devices);
	json_object_put(p);

	p = json_tokener_parse("{\"name\":\"\",\"tier\":\"ssd\",\"size\":18446744073709551614,"
			       "\"force\":false,\"devices\":[\"/dev/vdb\",\"/dev/vdc\"]}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_STR(o.name, "");
	CHECK_STR(o.tier, "ssd");
	CHECK_UINT(o.size, UINT64_MAX - 1);
	CHECK(!o.force);
	CHECK_INT(json_object_array_length(o.devices), 2);
	CHECK_STR(json_object_get_string(json_object_array_get_idx(o.devices, 1)), "/dev/vdc");
	json_object_put(p);

	/* json-c clamps 2^64 and beyond to UINT64_MAX: both are refused, not guessed at. */
	p = json_tokener_parse("{\"name\":\"a\",\"size\":18446744073709551615}");
	CHECK_INT(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)), -EINVAL);
	json_object_put(p);
	p = json_tokener_parse("{\"name\":\"a\",\"size\":99999999999999999999999}");
	CHECK_INT(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)), -EINVAL);
	json_object_put(p);

	p = json_tokener_parse("{\"name\":\"a\",\"size\":0,\"devices\":[]}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_UINT(o.size, 0);
	CHECK_INT(json_object_array_length(o.devices), 0);
	json_object_put(p);

	/* No spec: only an empty object passes. */
	p = json_object_new_object();
	CHECK_OK(rpc_params(p, NULL, 0, err, sizeof(err)));
	json_object_object_add(p, "x", NULL);
	CHECK_INT(rpc_params(p, NULL, 0, err, sizeof(err)), -EINVAL);
	json_object_put(p);
}

static void test_params_bad(void)
{
	static const struct {
		const char *json, *message;
	} cases[] = {
		{ "{}", "missing parameter \"name\"" },
		{ "{\"tier\":\"ssd\"}", "missing parameter \"name\"" },
		{ "{\"name\":\"a\",\"nmae\":\"b\"}", "unknown parameter \"nmae\"" },
		{ "{\"name\":\"a\",\"Name\":\"b\"}", "unknown parameter \"Name\"" },
		{ "{\"name\":null}", "\"name\" must be a string" },
		{ "{\"name\":1}", "\"name\" must be a string" },
		{ "{\"name\":[\"a\"]}", "\"name\" must be a string" },
		{ "{\"name\":{}}", "\"name\" must be a string" },
		{ "{\"name\":\"a\",\"size\":-1}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":1.0}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":1e3}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":\"1\"}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":true}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":null}", "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"size\":-9223372036854775809}",
		  "\"size\" must be a non-negative integer" },
		{ "{\"name\":\"a\",\"force\":1}", "\"force\" must be a boolean" },
		{ "{\"name\":\"a\",\"force\":\"true\"}", "\"force\" must be a boolean" },
		{ "{\"name\":\"a\",\"force\":null}", "\"force\" must be a boolean" },
		{ "{\"name\":\"a\",\"devices\":\"/dev/vdb\"}", "\"devices\" must be an array" },
		{ "{\"name\":\"a\",\"devices\":[\"/dev/vdb\",1]}", "\"devices\" must be an array" },
		{ "{\"name\":\"a\",\"devices\":[null]}", "\"devices\" must be an array" },
		{ "{\"name\":\"a\",\"devices\":[[\"/dev/vdb\"]]}", "\"devices\" must be an array" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct outs o = { 0 };
		char err[256] = "";

		CHECK_INT(params(cases[i].json, &o, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].message)) {
			fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n", cases[i].json, err,
				cases[i].message);
			exit(1);
		}
	}
}

/* An unknown key is echoed, cut short: a huge key must not make a huge error. */
static void test_params_long_key(void)
{
	char json[1100], err[256];
	struct outs o = { 0 };

	snprintf(json, sizeof(json), "{\"name\":\"a\",\"%01000d\":1}", 0);
	CHECK_INT(params(json, &o, err, sizeof(err)), -EINVAL);
	CHECK(strlen(err) < 100);
}

/* [offset, length] pairs: exactly two non-negative integers each, or the whole list is refused. */
static void test_params_ranges(void)
{
	static const char *const bad[] = {
		"{\"ranges\":{}}",
		"{\"ranges\":[1,2]}",
		"{\"ranges\":[[1]]}",
		"{\"ranges\":[[1,2,3]]}",
		"{\"ranges\":[[0,1],[1,-1]]}",
		"{\"ranges\":[[0,1],[\"1\",1]]}",
		"{\"ranges\":[[0,1.5]]}",
		"{\"ranges\":[[0,null]]}",
		"{\"ranges\":[[18446744073709551615,1]]}",
		"{\"ranges\":[null]}",
		"{\"ranges\":\"0,1\"}",
	};
	json_object *ranges = NULL, *p;
	const struct rpc_param spec[] = { { "ranges", RPC_RANGES, true, &ranges } };
	uint64_t offset, length;
	char err[256];

	p = json_tokener_parse("{\"ranges\":[[0,4096],[18446744073709551614,0]]}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_INT(json_object_array_length(ranges), 2);
	rpc_range_get(ranges, 0, &offset, &length);
	CHECK_UINT(offset, 0);
	CHECK_UINT(length, 4096);
	rpc_range_get(ranges, 1, &offset, &length);
	CHECK_UINT(offset, UINT64_MAX - 1);
	CHECK_UINT(length, 0);
	json_object_put(p);

	p = json_tokener_parse("{\"ranges\":[]}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_INT(json_object_array_length(ranges), 0);
	json_object_put(p);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		p = json_tokener_parse(bad[i]);
		CHECK(p);
		err[0] = '\0';
		CHECK_INT(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)), -EINVAL);
		if (!strstr(err, "\"ranges\" must be an array of [offset, length] pairs")) {
			fprintf(stderr, "%s: \"%s\"\n", bad[i], err);
			exit(1);
		}
		json_object_put(p);
	}
}

static void check_number(double v, const char *expect)
{
	json_object *n = rpc_json_number(v);

	CHECK(n);
	CHECK_STR(json_object_to_json_string(n), expect);
	CHECK(json_object_get_double(n) == strtod(expect, NULL));
	json_object_put(n);
}

static void check_reply(json_object *reply, const char *expect)
{
	CHECK(reply);
	CHECK_STR(json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN), expect);
	json_object_put(reply);
}

static void test_replies(void)
{
	json_object *o = json_object_new_object();

	check_reply(rpc_reply_ok(NULL), "{\"protocol\":2,\"ok\":true,\"result\":{}}");
	json_object_object_add(o, "pools", json_object_new_array());
	check_reply(rpc_reply_ok(o), "{\"protocol\":2,\"ok\":true,\"result\":{\"pools\":[]}}");
	check_reply(rpc_reply_error(EBUSY, "pool tank is busy"),
		    "{\"protocol\":2,\"ok\":false,\"error\":{\"code\":\"EBUSY\","
		    "\"message\":\"pool tank is busy\"}}");
	/* Methods pass -errno as often as errno. */
	check_reply(rpc_reply_error(-EPERM, "no"),
		    "{\"protocol\":2,\"ok\":false,\"error\":{\"code\":\"EPERM\",\"message\":\"no\"}}");
	/* Control characters in a message stay escaped: a reply is one line. */
	check_reply(rpc_reply_error(EINVAL, "a\nb"),
		    "{\"protocol\":2,\"ok\":false,\"error\":{\"code\":\"EINVAL\","
		    "\"message\":\"a\\nb\"}}");
	o = json_object_new_object();
	json_object_object_add(o, "done", json_object_new_int(3));
	check_reply(rpc_progress(o), "{\"protocol\":2,\"progress\":{\"done\":3}}");
	check_reply(rpc_result("pool", json_object_new_string("x")), "{\"pool\":\"x\"}");
}

/* Fractions and scores print short, whatever their binary value. */
static void test_numbers(void)
{
	check_number(0.1, "0.1");
	check_number(0.10000000000000001, "0.1");
	check_number(2.0 / 3.0, "0.6667");
	check_number(150.123, "150.1");
	check_number(0.0, "0");
}

static void test_protocol_message(void)
{
	struct rpc_request req;
	char err[256];

	CHECK_INT(decode(&req, "{\"protocol\":1,\"method\":\"pool.list\"}", err, sizeof(err)),
		  -EPROTONOSUPPORT);
	CHECK(strstr(err, "this tierd speaks 2"));
}

/* An array of non-negative integers below 2^64 - 1, or the whole list is refused. */
static void test_params_uint64_array(void)
{
	static const char *const bad[] = {
		"{\"sizes\":{}}",
		"{\"sizes\":1}",
		"{\"sizes\":[1,-1]}",
		"{\"sizes\":[1.5]}",
		"{\"sizes\":[\"1\"]}",
		"{\"sizes\":[null]}",
		"{\"sizes\":[[1]]}",
		"{\"sizes\":[18446744073709551615]}",
	};
	json_object *sizes = NULL, *p;
	const struct rpc_param spec[] = { { "sizes", RPC_UINT64_ARRAY, true, &sizes } };
	char err[256];

	p = json_tokener_parse("{\"sizes\":[0,4096,18446744073709551614]}");
	CHECK_OK(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)));
	CHECK_INT(json_object_array_length(sizes), 3);
	CHECK_UINT(json_object_get_uint64(json_object_array_get_idx(sizes, 2)), UINT64_MAX - 1);
	json_object_put(p);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		p = json_tokener_parse(bad[i]);
		CHECK(p);
		err[0] = '\0';
		CHECK_INT(rpc_params(p, spec, ARRAY_SIZE(spec), err, sizeof(err)), -EINVAL);
		if (!strstr(err, "\"sizes\" must be an array of non-negative integers")) {
			fprintf(stderr, "%s: \"%s\"\n", bad[i], err);
			exit(1);
		}
		json_object_put(p);
	}
}

int main(void)
{
	test_decode_good();
	test_decode_limits();
	test_decode_bad();
	test_decode_nul();
	test_params_good();
	test_params_bad();
	test_params_long_key();
	test_params_ranges();
	test_params_uint64_array();
	test_replies();
	test_numbers();
	test_protocol_message();
	return 0;
}
