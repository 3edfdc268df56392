/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "http.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* RFC 9110's token characters, which make up a method and a header name. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The end of the line starting at in[0, len) (its '\n'), NULL while it has none. */
static const char *line_end(const char *in, size_t len)
{
	return memchr(in, '\n', len);
}

/* The line [s, e) without its CR. */
static size_t line_len(const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	return n && s[n - 1] == '\r' ? n - 1 : n;
}

static int parse_request_line(const char *line, size_t len, struct http_request *req)
{
	const char *end = line + len, *p = line, *target, *version;
	size_t target_len, path_len;

	while (p < end && is_tchar(*p))
		p++;
	if (p == line || p == end || *p != ' ')
		return -EBADMSG;
	if (p - line == 3 && !memcmp(line, "GET", 3))
		req->method = HTTP_GET;
	else if (p - line == 4 && !memcmp(line, "HEAD", 4))
		req->method = HTTP_HEAD;
	else
		req->method = HTTP_OTHER;
	target = ++p;
	/* Visible ASCII only: no spaces, controls or bytes past 0x7e. */
	while (p < end && *p > ' ' && *p < 0x7f)
		p++;
	target_len = (size_t)(p - target);
	if (!target_len || p == end || *p != ' ')
		return -EBADMSG;
	version = ++p;
	if (end - version != 8 || memcmp(version, "HTTP/", 5) || !is_digit(version[5]) ||
	    version[6] != '.' || !is_digit(version[7]))
		return -EBADMSG;
	if (version[5] != '1')
		return -EPROTONOSUPPORT;
	/* A query string selects nothing here. */
	for (path_len = 0; path_len < target_len && target[path_len] != '?'; path_len++)
		;
	if (!path_len)
		return -EBADMSG;
	req->path = target;
	req->path_len = path_len;
	return 0;
}

/*
 * NAME ":" OWS VALUE OWS: a token before the colon (no space before it, RFC
 * 9112 5.1), and a value of visible bytes, spaces and tabs. A line that
 * starts with white space would continue the one before (obsolete folding):
 * refused, as RFC 9112 allows.
 */
static int parse_header_line(const char *line, size_t len)
{
	const char *end = line + len, *p = line;

	while (p < end && is_tchar(*p))
		p++;
	if (p == line || p == end || *p != ':')
		return -EBADMSG;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c < ' ' && c != '\t') || c == 0x7f)
			return -EBADMSG;
	}
	return 0;
}

int http_parse_request(const char *in, size_t len, struct http_request *req)
{
	struct http_request r = { 0 };
	const char *p = in, *end = in + len, *nl;
	int ret;

	nl = line_end(p, len);
	if (!nl) {
		/* Not a line yet, but what came already can tell it will never be valid. */
		for (const char *c = p; c < end && *c != ' '; c++) {
			if (!is_tchar(*c))
				return -EBADMSG;
		}
		return -EAGAIN;
	}
	ret = parse_request_line(p, line_len(p, nl), &r);
	if (ret < 0)
		return ret;
	for (p = nl + 1; (nl = line_end(p, (size_t)(end - p))); p = nl + 1) {
		size_t n = line_len(p, nl);

		if (!n) {
			r.head_len = (size_t)(nl + 1 - in);
			*req = r;
			return 0;
		}
		ret = parse_header_line(p, n);
		if (ret < 0)
			return ret;
	}
	return -EAGAIN;
}

const char *http_status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "";
	}
}
