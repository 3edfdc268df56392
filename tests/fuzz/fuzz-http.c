/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-http: arbitrary bytes as what a client sends the metrics endpoint,
 * through the request parser (lib/http.c) that sees them first. Beyond
 * crashes and reads past the input: a head that parses is what it says (its
 * path inside it, visible ASCII, no query) and parses the same alone; a
 * waiting input was waiting at every length before; a refusal stays a
 * refusal whatever follows.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "http.h"

static void check_parsed(const char *in, size_t len, const struct http_request *req)
{
	struct http_request again;

	FUZZ_ASSERT(req->head_len > 0 && req->head_len <= len);
	FUZZ_ASSERT(in[req->head_len - 1] == '\n');
	FUZZ_ASSERT(req->method == HTTP_GET || req->method == HTTP_HEAD ||
		    req->method == HTTP_OTHER);
	FUZZ_ASSERT(req->path > in && req->path_len > 0);
	FUZZ_ASSERT(req->path + req->path_len < in + req->head_len);
	for (size_t i = 0; i < req->path_len; i++)
		FUZZ_ASSERT(req->path[i] > ' ' && req->path[i] < 0x7f && req->path[i] != '?');
	FUZZ_ASSERT(http_parse_request(in, req->head_len, &again) == 0);
	FUZZ_ASSERT(again.head_len == req->head_len && again.method == req->method &&
		    again.path == req->path && again.path_len == req->path_len);
	FUZZ_ASSERT(http_parse_request(in, req->head_len - 1, &again) == -EAGAIN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char more[] = "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	struct http_request req;
	char *in = malloc(size + sizeof(more));
	int r;

	FUZZ_ASSERT(in);
	if (size)
		memcpy(in, data, size);
	r = http_parse_request(in, size, &req);
	switch (r) {
	case 0:
		check_parsed(in, size, &req);
		break;
	case -EAGAIN:
		FUZZ_ASSERT(http_parse_request(in, size / 2, &req) == -EAGAIN);
		break;
	case -EBADMSG:
	case -EPROTONOSUPPORT:
		memcpy(in + size, more, sizeof(more));
		FUZZ_ASSERT(http_parse_request(in, size + sizeof(more), &req) == r);
		break;
	default:
		FUZZ_ASSERT(!"an error the header does not list");
	}
	free(in);
	return 0;
}
