/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "http.h"

static int parse(const char *text, struct http_request *req)
{
	return http_parse_request(text, strlen(text), req);
}

static void check_path(const struct http_request *req, const char *path)
{
	CHECK_UINT(req->path_len, strlen(path));
	CHECK(!memcmp(req->path, path, req->path_len));
}

static void test_valid(void)
{
	static const char curl[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9477\r\n"
				   "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\nbody";
	struct http_request req;

	CHECK_OK(parse(curl, &req));
	CHECK_INT(req.method, HTTP_GET);
	check_path(&req, "/metrics");
	/* The head ends at the blank line: what follows is not looked at. */
	CHECK_UINT(req.head_len, strlen(curl) - 4);

	CHECK_OK(parse("HEAD /metrics?x=1&y HTTP/1.0\r\n\r\n", &req));
	CHECK_INT(req.method, HTTP_HEAD);
	check_path(&req, "/metrics");
	CHECK_OK(parse("GET / HTTP/1.1\n\n", &req));
	check_path(&req, "/");
	CHECK_UINT(req.head_len, 16);
	CHECK_OK(parse("POST /metrics HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", &req));
	CHECK_INT(req.method, HTTP_OTHER);
	/* A method is case-sensitive: "get" is some other method. */
	CHECK_OK(parse("get /metrics HTTP/1.1\r\n\r\n", &req));
	CHECK_INT(req.method, HTTP_OTHER);
	/* Empty values, tabs and bytes past ASCII in a value are allowed. */
	CHECK_OK(parse("GET /metrics HTTP/1.1\r\nX-Empty:\r\nX-Tab:\ta\tb\r\nX-Utf8: \xc3\xa9\r\n\r\n",
		       &req));
	CHECK_OK(parse("GET /metrics HTTP/1.9\r\n\r\n", &req));
}

static void test_incomplete(void)
{
	static const char full[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_request req = { .head_len = 12345 };

	/* Every prefix of a valid head is still waiting for more. */
	for (size_t n = 0; n < sizeof(full) - 1; n++)
		CHECK_INT(http_parse_request(full, n, &req), -EAGAIN);
	CHECK_UINT(req.head_len, 12345);
	CHECK_OK(http_parse_request(full, sizeof(full) - 1, &req));
	CHECK_INT(parse("GGGGGGGGGGGGGGGGGGGGGGGG", &req), -EAGAIN);
}

static void test_invalid(void)
{
	static const char *const bad[] = {
		"\r\n\r\n",
		" GET /metrics HTTP/1.1\r\n\r\n",
		"GET  /metrics HTTP/1.1\r\n\r\n",
		"GET /metrics  HTTP/1.1\r\n\r\n",
		"GET /metrics\r\n\r\n",
		"GET\r\n\r\n",
		"GET /metrics HTTP/1.1 \r\n\r\n",
		"GET /metrics HTTP/1.10\r\n\r\n",
		"GET /metrics HTTP/1\r\n\r\n",
		"GET /metrics http/1.1\r\n\r\n",
		"GET /metrics HTTP/x.1\r\n\r\n",
		"GET /met\trics HTTP/1.1\r\n\r\n",
		"GET /met\x7frics HTTP/1.1\r\n\r\n",
		"GET /m\xc3\xa9trics HTTP/1.1\r\n\r\n",
		"GET ?x HTTP/1.1\r\n\r\n",
		"G(T /metrics HTTP/1.1\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n: x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: a\x7f\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n\r\r\n",
		/* Known bad before the line ends: no need to wait for more. */
		"\x01",
		"GE\xff",
	};
	struct http_request req = { .head_len = 12345 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &req) != -EBADMSG)
			fprintf(stderr, "'%s' gave %d\n", bad[i], parse(bad[i], &req));
		CHECK_INT(parse(bad[i], &req), -EBADMSG);
	}
	/* NULs anywhere: byte-exact, not a C string. */
	CHECK_INT(http_parse_request("GET /\0 HTTP/1.1\r\n\r\n", 20, &req), -EBADMSG);
	CHECK_INT(http_parse_request("GET / HTTP/1.1\r\nA: \0\r\n\r\n", 24, &req), -EBADMSG);
	CHECK_INT(parse("GET /metrics HTTP/2.0\r\n\r\n", &req), -EPROTONOSUPPORT);
	CHECK_INT(parse("GET /metrics HTTP/0.9\r\n\r\n", &req), -EPROTONOSUPPORT);
	CHECK_UINT(req.head_len, 12345);
}

static void test_status_text(void)
{
	CHECK_STR(http_status_text(200), "OK");
	CHECK_STR(http_status_text(431), "Request Header Fields Too Large");
	CHECK_STR(http_status_text(505), "HTTP Version Not Supported");
	CHECK_STR(http_status_text(299), "");
}

int main(void)
{
	test_valid();
	test_incomplete();
	test_invalid();
	test_status_text();
	return 0;
}
