/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exporter: the daemon's metrics over HTTP for Prometheus (docs/metrics.md).
 * GET (or HEAD) /metrics, and / for a page linking to it; one request per connection,
 * bounded in request size, connections and time, on the daemon's loop.
 */
#ifndef TIERD_EXPORTER_H
#define TIERD_EXPORTER_H

#include <ev.h>
#include <stddef.h>
#include <sys/socket.h>

/* Longest request head (request line and headers) read; past it, 431. */
#define EXPORTER_REQUEST_MAX 8192
#define EXPORTER_CONN_MAX 16
/* Seconds a client has to send its request, then again to read the response. */
#define EXPORTER_TIMEOUT 10.0

struct exporter;

/*
 * Builds the body of a /metrics response, at each request: 0 with *text
 * (malloc'd, the exporter frees it) and *len set, or -errno (the client
 * gets 500).
 */
typedef int (*exporter_body_fn)(void *ctx, char **text, size_t *len);

/*
 * "ADDRESS:PORT" with an IPv4 literal or a bracketed IPv6 one
 * ("127.0.0.1:9477", "[::1]:9477"); no host names, so the daemon never
 * waits on a resolver and binds exactly where it was told. -EINVAL if not.
 */
int exporter_parse_addr(const char *text, struct sockaddr_storage *addr, socklen_t *len);
/* Listen on listen_addr (see exporter_parse_addr) and serve body's text. */
int exporter_open(struct exporter **out, struct ev_loop *loop, const char *listen_addr,
		  exporter_body_fn body, void *ctx);
/* Stops listening and drops every connection. */
void exporter_close(struct exporter *e);

#endif
