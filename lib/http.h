/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http: the request heads the metrics endpoint accepts (RFC 9112), parsed
 * from the bytes a client sent. Pure and byte-exact: a head may hold NULs or
 * anything else, and nothing past it is looked at.
 */
#ifndef TIERD_HTTP_H
#define TIERD_HTTP_H

#include <stddef.h>

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_OTHER, /* a valid token, but not a method the endpoint serves */
};

struct http_request {
	size_t head_len;       /* request line, headers and the blank line */
	enum http_method method;
	const char *path;      /* into the input: the target up to its '?', never empty */
	size_t path_len;
};

/*
 * Parse the head at the start of in[0, len). 0 with *req set when it is
 * complete and valid; -EAGAIN while its blank line has not come; -EBADMSG
 * when it is not METHOD SP TARGET SP HTTP/D.D CRLF followed by NAME: VALUE
 * header lines (400); -EPROTONOSUPPORT for a version other than 1.x (505).
 * Bare LF line ends are accepted. A request line that cannot become valid
 * fails at once, before the head is complete. *req is untouched on failure.
 */
int http_parse_request(const char *in, size_t len, struct http_request *req);

/* The status line's reason phrase for a status code ("" for one not known). */
const char *http_status_text(int status);

#endif
