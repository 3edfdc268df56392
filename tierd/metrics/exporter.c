/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "exporter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "metrics.h"

/*
 * After the response, what the client still sends (the rest of an oversized
 * request) is read and dropped for this long before closing: closing with
 * unread input makes the kernel reset the connection, which can destroy the
 * response before the client has read it.
 */
#define EXPORTER_LINGER 2.0

struct exporter_conn {
	struct exporter *e;
	struct exporter_conn *next;
	ev_io io;
	ev_timer timer;
	int fd;
	size_t in_len;
	char *out; /* the whole response, once the request is complete */
	size_t out_len, out_off;
	int lingering;
	char in[EXPORTER_REQUEST_MAX];
};

struct exporter {
	struct ev_loop *loop;
	ev_io io;
	int fd;
	exporter_body_fn body;
	void *ctx;
	struct exporter_conn *conns;
	unsigned nr_conns;
};

int exporter_parse_addr(const char *text, struct sockaddr_storage *addr, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN];
	const char *port, *end;
	unsigned long p = 0;
	int v6 = text[0] == '[';

	if (v6) {
		end = strchr(text, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		text++;
		port = end + 2;
	} else {
		end = strrchr(text, ':');
		if (!end)
			return -EINVAL;
		port = end + 1;
	}
	if ((size_t)(end - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, (size_t)(end - text));
	host[end - text] = '\0';
	/* Digits only: strtoul would take signs, spaces and hex. */
	if (!*port || strlen(port) > 5)
		return -EINVAL;
	for (const char *c = port; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		p = p * 10 + (unsigned long)(*c - '0');
	}
	if (p == 0 || p > 65535)
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)addr;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a);
	}
	return 0;
}

/* ---- requests ---- */

/* What a browser pointed at the bare address shows: where the metrics are. */
static const char exporter_index[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n"
	"<head><meta charset=\"utf-8\"><title>tierd</title></head>\n"
	"<body>\n"
	"<h1>tierd</h1>\n"
	"<p>Metrics for Prometheus: <a href=\"/metrics\">/metrics</a></p>\n"
	"</body>\n"
	"</html>\n";

static int path_is(const struct http_request *req, const char *path)
{
	return req->path_len == strlen(path) && !memcmp(req->path, path, req->path_len);
}

/* ---- connections ---- */

static void conn_free(struct exporter_conn *conn)
{
	struct exporter *e = conn->e;

	for (struct exporter_conn **p = &e->conns; *p; p = &(*p)->next) {
		if (*p == conn) {
			*p = conn->next;
			break;
		}
	}
	e->nr_conns--;
	ev_io_stop(e->loop, &conn->io);
	ev_timer_stop(e->loop, &conn->timer);
	close(conn->fd);
	free(conn->out);
	free(conn);
}

static void conn_watch(struct exporter_conn *conn, int events, double timeout)
{
	struct ev_loop *loop = conn->e->loop;

	ev_io_stop(loop, &conn->io);
	ev_io_set(&conn->io, conn->fd, events);
	ev_io_start(loop, &conn->io);
	ev_timer_stop(loop, &conn->timer);
	ev_timer_set(&conn->timer, timeout, 0.);
	ev_timer_start(loop, &conn->timer);
}

/* Queue the response and send it as the client reads; body may be NULL. */
static void conn_respond(struct exporter_conn *conn, int status, const char *type,
			 const char *body, size_t body_len, int head_only)
{
	char head[512];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "Connection: close\r\n"
		     "\r\n",
		     status, http_status_text(status), type, body_len,
		     status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (head_only)
		body_len = 0;
	conn->out = malloc((size_t)n + body_len);
	if (!conn->out) {
		conn_free(conn);
		return;
	}
	memcpy(conn->out, head, (size_t)n);
	if (body_len)
		memcpy(conn->out + n, body, body_len);
	conn->out_len = (size_t)n + body_len;
	conn_watch(conn, EV_WRITE, EXPORTER_TIMEOUT);
}

static void conn_fail(struct exporter_conn *conn, int status, int head_only)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, http_status_text(status));

	conn_respond(conn, status, "text/plain; charset=utf-8", body, (size_t)n, head_only);
}

static void conn_handle(struct exporter_conn *conn, const struct http_request *req)
{
	struct exporter *e = conn->e;
	int head_only = req->method == HTTP_HEAD, r;
	size_t len = 0;
	char *text = NULL;

	if (req->method == HTTP_OTHER) {
		conn_fail(conn, 405, 0);
		return;
	}
	if (path_is(req, "/")) {
		conn_respond(conn, 200, "text/html; charset=utf-8", exporter_index,
			     sizeof(exporter_index) - 1, head_only);
		return;
	}
	if (!path_is(req, "/metrics")) {
		conn_fail(conn, 404, head_only);
		return;
	}
	r = e->body(e->ctx, &text, &len);
	if (r < 0) {
		conn_fail(conn, 500, head_only);
		return;
	}
	conn_respond(conn, 200, METRICS_CONTENT_TYPE, text, len, head_only);
	free(text);
}

static void conn_read(struct exporter_conn *conn)
{
	struct http_request req;
	ssize_t n;
	int r;

	/* Never asks for 0 bytes: a full buffer was answered with 431. */
	n = read(conn->fd, conn->in + conn->in_len, sizeof(conn->in) - conn->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0 || (n == 0 && !conn->in_len)) {
		conn_free(conn);
		return;
	}
	/* The client stopped sending before the request was complete. */
	if (n == 0) {
		conn_fail(conn, 400, 0);
		return;
	}
	conn->in_len += (size_t)n;
	r = http_parse_request(conn->in, conn->in_len, &req);
	if (r == 0)
		conn_handle(conn, &req);
	else if (r == -EPROTONOSUPPORT)
		conn_fail(conn, 505, 0);
	else if (r != -EAGAIN)
		conn_fail(conn, 400, 0);
	else if (conn->in_len == sizeof(conn->in))
		conn_fail(conn, 431, 0);
}

static void conn_write(struct exporter_conn *conn)
{
	ssize_t n = send(conn->fd, conn->out + conn->out_off, conn->out_len - conn->out_off,
			 MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_free(conn);
		return;
	}
	conn->out_off += (size_t)n;
	if (conn->out_off < conn->out_len)
		return;
	free(conn->out);
	conn->out = NULL;
	shutdown(conn->fd, SHUT_WR);
	conn->lingering = 1;
	conn_watch(conn, EV_READ, EXPORTER_LINGER);
}

static void conn_drain(struct exporter_conn *conn)
{
	char sink[4096];
	ssize_t n = read(conn->fd, sink, sizeof(sink));

	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	conn_free(conn);
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct exporter_conn *conn = w->data;

	(void)loop;
	if (conn->out) {
		if (revents & EV_WRITE)
			conn_write(conn);
	} else if (conn->lingering) {
		conn_drain(conn);
	} else {
		conn_read(conn);
	}
}

/* Too slow to send its request or to read the response: the slot is someone else's. */
static void conn_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	conn_free(w->data);
}

/* Best effort: a fresh socket's buffer takes the short answer. */
static void exporter_refuse(int fd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
				   "Content-Type: text/plain; charset=utf-8\r\n"
				   "Content-Length: 24\r\n"
				   "Retry-After: 1\r\n"
				   "Connection: close\r\n"
				   "\r\n"
				   "503 Service Unavailable\n";

	(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct exporter *e = w->data;
	struct exporter_conn *conn;
	int fd;

	(void)revents;
	fd = accept4(e->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (e->nr_conns >= EXPORTER_CONN_MAX) {
		exporter_refuse(fd);
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		exporter_refuse(fd);
		return;
	}
	conn->e = e;
	conn->fd = fd;
	conn->next = e->conns;
	e->conns = conn;
	e->nr_conns++;
	ev_io_init(&conn->io, conn_cb, fd, EV_READ);
	conn->io.data = conn;
	ev_timer_init(&conn->timer, conn_timeout_cb, EXPORTER_TIMEOUT, 0.);
	conn->timer.data = conn;
	ev_io_start(loop, &conn->io);
	ev_timer_start(loop, &conn->timer);
}

int exporter_open(struct exporter **out, struct ev_loop *loop, const char *listen_addr,
		  exporter_body_fn body, void *ctx)
{
	struct sockaddr_storage addr;
	struct exporter *e;
	socklen_t len;
	int one = 1, r;

	r = exporter_parse_addr(listen_addr, &addr, &len);
	if (r < 0)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->loop = loop;
	e->body = body;
	e->ctx = ctx;
	e->fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (e->fd < 0) {
		r = -errno;
		goto fail;
	}
	/* A restart must not wait for the last scrape's TIME_WAIT to pass. */
	if (setsockopt(e->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    /* [::]:PORT means IPv6 only, not every IPv4 address as well. */
	    (addr.ss_family == AF_INET6 &&
	     setsockopt(e->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(e->fd, (struct sockaddr *)&addr, len) < 0 || listen(e->fd, 16) < 0) {
		r = -errno;
		goto fail;
	}
	ev_io_init(&e->io, accept_cb, e->fd, EV_READ);
	e->io.data = e;
	ev_io_start(loop, &e->io);
	*out = e;
	return 0;
fail:
	if (e->fd >= 0)
		close(e->fd);
	free(e);
	return r;
}

void exporter_close(struct exporter *e)
{
	if (!e)
		return;
	while (e->conns)
		conn_free(e->conns);
	ev_io_stop(e->loop, &e->io);
	close(e->fd);
	free(e);
}
