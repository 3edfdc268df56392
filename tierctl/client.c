/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "client.h"
#include "config.h"
#include "member.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct client {
	int fd;
	const char *path;
	/* Bytes received; the first `start` of them belong to lines already handed out. */
	char *buf;
	size_t start, len, cap;
};

__attribute__((format(printf, 3, 4)))
static int client_fail(struct client_error *error, int r, const char *fmt, ...)
{
	va_list ap;

	if (!error)
		return r;
	client_error_clear(error);
	va_start(ap, fmt);
	if (vasprintf(&error->message, fmt, ap) < 0)
		error->message = NULL;
	va_end(ap);
	return r;
}

void client_error_clear(struct client_error *error)
{
	if (!error)
		return;
	free(error->message);
	error->message = NULL;
	error->name[0] = '\0';
}

const char *client_socket_path(const char *path)
{
	const char *env;

	if (path)
		return path;
	env = getenv("TIERD_SOCKET");
	return env && *env ? env : TIERD_DEFAULT_SOCKET;
}

/* The errors people meet first get a hint at the usual cause. */
static const char *client_connect_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ECONNREFUSED:
		return " (is tierd running?)";
	case EACCES:
	case EPERM:
		return " (tierd's socket is for root and its group)";
	default:
		return "";
	}
}

int client_open(const char *path, struct client **out, struct client_error *error)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct client *c;
	int r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return client_fail(error, -ENAMETOOLONG, "cannot connect to tierd at %s: %s", path,
				   strerror(ENAMETOOLONG));
	memcpy(addr.sun_path, path, strlen(path) + 1);

	c = calloc(1, sizeof(*c));
	if (!c)
		return client_fail(error, -ENOMEM, "%s", strerror(ENOMEM));
	c->path = path;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = client_fail(error, -errno, "cannot create a socket: %s", strerror(errno));
		goto fail;
	}
	while (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		/* Unlike TCP, a Unix socket connects atomically: after EINTR it is still unconnected. */
		if (errno == EINTR)
			continue;
		r = client_fail(error, -errno, "cannot connect to tierd at %s: %s%s", path,
				strerror(errno), client_connect_hint(errno));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	client_close(c);
	return r;
}

void client_close(struct client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c);
}

static int client_send_all(struct client *c, const char *data, size_t len,
			   struct client_error *error)
{
	while (len) {
		/* MSG_NOSIGNAL: a daemon that went away is an error to report, not SIGPIPE. */
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return client_fail(error, -errno, "cannot send the request to tierd at %s: %s",
					   c->path, strerror(errno));
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int client_send(struct client *c, const char *method, struct json_object *params,
		       struct client_error *error)
{
	struct json_object *req = json_object_new_object();
	const char *text;
	size_t len;
	int r = -ENOMEM;

	if (!req ||
	    json_object_object_add(req, "protocol", json_object_new_int(CLIENT_PROTOCOL)) ||
	    json_object_object_add(req, "method", json_object_new_string(method)) ||
	    (params && json_object_object_add(req, "params", json_object_get(params)))) {
		r = client_fail(error, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	/* PLAIN never breaks lines inside the object, which the framing relies on. */
	text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		r = client_fail(error, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	len = strlen(text);
	if (len + 1 > CLIENT_REQUEST_MAX) {
		r = client_fail(error, -EMSGSIZE, "the request is longer than tierd accepts (%d bytes)",
				CLIENT_REQUEST_MAX);
		goto out;
	}
	r = client_send_all(c, text, len, error);
	if (!r)
		r = client_send_all(c, "\n", 1, error);
out:
	json_object_put(req);
	return r;
}

/* The next line from tierd without its '\n', valid until the next call. */
static int client_read_line(struct client *c, char **line, size_t *line_len,
			    struct client_error *error)
{
	size_t scanned = 0;

	if (c->start) {
		memmove(c->buf, c->buf + c->start, c->len - c->start);
		c->len -= c->start;
		c->start = 0;
	}
	for (;;) {
		char *nl = c->len > scanned ? memchr(c->buf + scanned, '\n', c->len - scanned) : NULL;
		ssize_t n;

		if (nl) {
			*nl = '\0';
			*line = c->buf;
			*line_len = (size_t)(nl - c->buf);
			c->start = *line_len + 1;
			return 0;
		}
		scanned = c->len;
		if (c->len > CLIENT_REPLY_MAX)
			return client_fail(error, -EMSGSIZE,
					   "tierd's reply is longer than %zu MiB; giving up",
					   CLIENT_REPLY_MAX >> 20);
		if (c->len == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 4096;
			char *buf;

			/* Room for the longest line and its '\n', then no more. */
			if (cap > CLIENT_REPLY_MAX + 1)
				cap = CLIENT_REPLY_MAX + 1;
			buf = realloc(c->buf, cap);
			if (!buf)
				return client_fail(error, -ENOMEM, "%s", strerror(ENOMEM));
			c->buf = buf;
			c->cap = cap;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return client_fail(error, -errno, "cannot read tierd's reply: %s",
					   strerror(errno));
		if (n == 0)
			return client_fail(error, -ECONNRESET,
					   "tierd closed the connection without replying");
		c->len += (size_t)n;
	}
}

/* One line as a JSON object speaking our protocol, or -EPROTO. */
static int client_parse_line(const char *line, size_t len, struct json_object **out,
			     struct client_error *error)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = NULL, *protocol;
	uint64_t version = 0;
	int r;

	if (!tok)
		return client_fail(error, -ENOMEM, "%s", strerror(ENOMEM));
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, line, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		r = client_fail(error, -EPROTO, "tierd sent a malformed line: %s",
				json_tokener_error_desc(json_tokener_get_error(tok)));
		goto out;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		r = client_fail(error, -EPROTO, "tierd sent a line that is not a JSON object");
		goto out;
	}
	if (member_uint(obj, "protocol", &version) < 0 || version != CLIENT_PROTOCOL) {
		protocol = member_get(obj, "protocol");
		r = client_fail(error, -EPROTO, "tierd speaks protocol %s, tierctl speaks %d",
				protocol ? json_object_to_json_string(protocol) : "(none)",
				CLIENT_PROTOCOL);
		goto out;
	}
	*out = obj;
	obj = NULL;
	r = 0;
out:
	json_object_put(obj);
	json_tokener_free(tok);
	return r;
}

/* tierd names errnos; this libc numbers them.  No table: the libc knows both. */
static int client_errno_from_name(const char *name)
{
	for (int e = 1; e < 4096; e++) {
		const char *known = strerrorname_np(e);

		if (known && !strcmp(known, name))
			return e;
	}
	return EREMOTEIO;
}

static int client_take_error(struct json_object *reply, struct client_error *error)
{
	struct json_object *err = member_get(reply, "error");
	const char *name = member_string(err, "code"), *message = member_string(err, "message");
	int r;

	if (!name || !message)
		return client_fail(error, -EPROTO, "tierd refused the request without saying why");
	r = client_fail(error, -client_errno_from_name(name), "%s", message);
	if (error)
		snprintf(error->name, sizeof(error->name), "%s", name);
	return r;
}

int client_call(struct client *c, const char *method, struct json_object *params,
		client_progress_fn *progress, void *userdata, struct json_object **result,
		struct client_error *error)
{
	struct json_object *reply = NULL, *ok, *res;
	int r;

	r = client_send(c, method, params, error);
	if (r < 0)
		goto out;
	for (;;) {
		struct json_object *update;
		char *line = NULL;
		size_t len = 0;

		r = client_read_line(c, &line, &len, error);
		if (r < 0)
			goto out;
		r = client_parse_line(line, len, &reply, error);
		if (r < 0)
			goto out;
		update = member_get(reply, "progress");
		if (!update)
			break;
		if (progress)
			progress(update, userdata);
		json_object_put(reply);
		reply = NULL;
	}

	ok = member_get(reply, "ok");
	if (!json_object_is_type(ok, json_type_boolean)) {
		r = client_fail(error, -EPROTO, "tierd's reply says neither ok nor error");
		goto out;
	}
	if (!json_object_get_boolean(ok)) {
		r = client_take_error(reply, error);
		goto out;
	}
	res = member_get(reply, "result");
	if (!json_object_is_type(res, json_type_object)) {
		r = client_fail(error, -EPROTO, "tierd's reply has no result");
		goto out;
	}
	*result = json_object_get(res);
	r = 0;
out:
	json_object_put(reply);
	return r;
}
