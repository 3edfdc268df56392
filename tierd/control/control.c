/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/*
 * Limits that keep one client from holding the daemon's memory or its
 * connections hostage (docs/protocol.md, "Limits").
 */
#define CONTROL_CONN_MAX 64
/* One request line and its newline: the input buffer never grows past it. */
#define CONTROL_IN_MAX (RPC_REQUEST_MAX + 1)
/* Unsent output past which no further request is read: a client that does not
 * read its replies stops being served rather than growing our buffer. */
#define CONTROL_OUT_PAUSE (64u << 10)
/* Unsent output (progress lines piling up) past which the client is dropped. */
#define CONTROL_OUT_MAX (16u << 20)
/* One reply's text past which the client gets an error instead (E2BIG). */
#define CONTROL_REPLY_MAX (8u << 20)

struct control_conn {
	struct control *control;
	struct control_conn *next;
	ev_io io;
	/* Idle: no request in progress; no whole request read, no output sent since last_active. */
	ev_timer idle;
	ev_tstamp last_active;
	int fd;
	uid_t uid;
	char *in; /* CONTROL_IN_MAX bytes; unhandled input is in[in_off, in_len) */
	size_t in_off, in_len;
	char *out;
	size_t out_len, out_off;
	struct rpc_request req;
	int busy;	 /* a request is being handled: read nothing more */
	int dispatching; /* in conn_process: replies must not re-enter it or free conn */
	int hangup;	 /* read nothing more; close once the output is sent */
	int closed;	 /* the peer went away or misbehaved: free once not busy */
};

struct control {
	struct ev_loop *loop;
	ev_io io;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	control_handler handler;
	void *ctx;
	double idle_timeout; /* seconds; 0: never */
	struct control_conn *conns;
	unsigned nr_conns;
};

static void conn_free(struct control_conn *conn)
{
	struct control_conn **p;

	for (p = &conn->control->conns; *p; p = &(*p)->next) {
		if (*p == conn) {
			*p = conn->next;
			break;
		}
	}
	conn->control->nr_conns--;
	ev_io_stop(conn->control->loop, &conn->io);
	ev_timer_stop(conn->control->loop, &conn->idle);
	if (conn->fd >= 0)
		close(conn->fd);
	rpc_request_destroy(&conn->req);
	free(conn->in);
	free(conn->out);
	free(conn);
}

static size_t conn_pending(const struct control_conn *conn)
{
	return conn->out_len - conn->out_off;
}

/* The peer is gone or misbehaved: drop it now, or once its request is answered. */
static void conn_drop(struct control_conn *conn)
{
	conn->closed = 1;
	ev_io_stop(conn->control->loop, &conn->io);
	if (!conn->busy && !conn->dispatching)
		conn_free(conn);
}

static void conn_watch(struct control_conn *conn)
{
	int events = 0;

	if (conn->closed)
		return;
	if (conn_pending(conn))
		events |= EV_WRITE;
	if (!conn->busy && !conn->hangup && conn_pending(conn) < CONTROL_OUT_PAUSE)
		events |= EV_READ;
	ev_io_stop(conn->control->loop, &conn->io);
	if (events) {
		ev_io_set(&conn->io, conn->fd, events);
		ev_io_start(conn->control->loop, &conn->io);
	}
}

/* Only while busy or dispatching, so that a drop here never frees conn under its caller. */
static void conn_send(struct control_conn *conn, json_object *msg)
{
	size_t len, pending = conn_pending(conn);
	const char *text = NULL;
	char *grown;

	if (conn->closed) {
		json_object_put(msg);
		return;
	}
	if (msg)
		text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	/* A lost line would leave the client waiting forever: drop it instead. */
	if (!text)
		goto drop;
	len = strlen(text);
	/*
	 * The handlers bound what a request can ask for (docs/protocol.md);
	 * this is the backstop: the client learns why, and nothing that large
	 * stays in tierd's locked memory.
	 */
	if (len > CONTROL_REPLY_MAX) {
		char why[128];

		snprintf(why, sizeof(why), "the reply would be %zu bytes, more than %u; ask for less",
			 len, CONTROL_REPLY_MAX);
		json_object_put(msg);
		conn_send(conn, rpc_reply_error(E2BIG, why)); /* short: no recursion */
		return;
	}
	if (pending && pending + len + 1 > CONTROL_OUT_MAX)
		goto drop;
	/* Forget what was sent, so a reader that keeps just behind does not grow the buffer. */
	if (conn->out_off) {
		memmove(conn->out, conn->out + conn->out_off, pending);
		conn->out_off = 0;
		conn->out_len = pending;
	}
	grown = realloc(conn->out, pending + len + 1);
	if (!grown)
		goto drop;
	conn->out = grown;
	memcpy(conn->out + conn->out_len, text, len);
	conn->out[conn->out_len + len] = '\n';
	conn->out_len += len + 1;
	json_object_put(msg);
	conn_watch(conn);
	return;
drop:
	json_object_put(msg);
	conn_drop(conn);
}

static void conn_process(struct control_conn *conn);

void control_reply(struct control_conn *conn, json_object *reply)
{
	conn_send(conn, reply);
	rpc_request_destroy(&conn->req);
	conn->busy = 0;
	/*
	 * The loop's cached time is that of before the request when the method
	 * blocked it (pool create of a 16 TiB pool writes its map for minutes):
	 * without the update the idle timer, already due, would drop the
	 * connection before the reply is written.
	 */
	ev_now_update(conn->control->loop);
	conn->last_active = ev_now(conn->control->loop);
	/* A reply from a long operation: go on with what the client sent meanwhile. */
	if (!conn->dispatching)
		conn_process(conn);
}

void control_reply_error(struct control_conn *conn, int err, const char *fmt, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	control_reply(conn, rpc_reply_error(err, message));
}

void control_progress(struct control_conn *conn, json_object *progress)
{
	conn_send(conn, rpc_progress(progress));
}

uid_t control_conn_uid(const struct control_conn *conn)
{
	return conn->uid;
}

/*
 * Handle the complete lines of the input buffer until a request is in
 * progress or the client falls behind reading the replies; then free the
 * connection if it is finished with, or watch it. A loop, not a recursion
 * through control_reply: a buffer of short lines is thousands of requests.
 */
static void conn_process(struct control_conn *conn)
{
	char err[256];
	size_t line_len, tail;
	char *line, *nl;
	int r;

	conn->dispatching = 1;
	while (!conn->busy && !conn->closed && conn_pending(conn) < CONTROL_OUT_PAUSE) {
		line = conn->in + conn->in_off;
		tail = conn->in_len - conn->in_off;
		nl = memchr(line, '\n', tail);
		if (!nl) {
			/* No framing to trust in the rest of the stream: answer, then hang up. */
			if (tail == CONTROL_IN_MAX) {
				snprintf(err, sizeof(err), "request longer than %d bytes",
					 RPC_REQUEST_MAX);
				conn_send(conn, rpc_reply_error(EINVAL, err));
				conn->hangup = 1;
			} else if (tail && conn->hangup) {
				conn_send(conn, rpc_reply_error(EINVAL, "request does not end with"
								" a newline"));
			}
			if (conn->hangup)
				conn->in_off = conn->in_len = 0;
			break;
		}
		line_len = (size_t)(nl - line);
		conn->in_off += line_len + 1;
		/* Only whole requests count: a byte a minute must not keep a connection. */
		conn->last_active = ev_now(conn->control->loop);
		conn->busy = 1;
		r = rpc_decode(&conn->req, line, line_len, err, sizeof(err));
		if (r < 0)
			control_reply(conn, rpc_reply_error(r, err));
		else
			conn->control->handler(conn, &conn->req, conn->control->ctx);
	}
	conn->dispatching = 0;
	if (!conn->busy && (conn->closed || (conn->hangup && !conn_pending(conn)))) {
		conn_free(conn);
		return;
	}
	conn_watch(conn);
}

static void conn_read(struct control_conn *conn)
{
	ssize_t n;

	if (conn->in_off) {
		conn->in_len -= conn->in_off;
		memmove(conn->in, conn->in + conn->in_off, conn->in_len);
		conn->in_off = 0;
	}
	/* Never empty: a full buffer without a newline is refused in conn_process. */
	n = read(conn->fd, conn->in + conn->in_len, CONTROL_IN_MAX - conn->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_drop(conn);
		return;
	}
	/* End of input: the client may still read the replies to what it sent. */
	if (n == 0)
		conn->hangup = 1;
	conn->in_len += (size_t)n;
	conn_process(conn);
}

static void conn_write(struct control_conn *conn)
{
	ssize_t n = send(conn->fd, conn->out + conn->out_off, conn_pending(conn), MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_drop(conn);
		return;
	}
	conn->last_active = ev_now(conn->control->loop);
	conn->out_off += (size_t)n;
	if (conn->out_off == conn->out_len)
		conn->out_off = conn->out_len = 0;
	/* Output below the pause lets buffered requests go on; a hangup may be complete. */
	conn_process(conn);
}

/*
 * A client that neither sends whole requests nor reads its replies holds one
 * of the CONTROL_CONN_MAX connections for nothing: after idle_timeout it is
 * closed. A request in progress (a run with --wait, hours long) is not idle.
 */
static void conn_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct control_conn *conn = w->data;
	ev_tstamp left = conn->last_active + conn->control->idle_timeout - ev_now(loop);

	(void)revents;
	if (conn->busy || left > 0) {
		w->repeat = conn->busy ? conn->control->idle_timeout : left;
		ev_timer_again(loop, w);
		return;
	}
	conn_drop(conn);
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control_conn *conn = w->data;

	(void)loop;
	if (revents & EV_WRITE) {
		conn_write(conn);
		return; /* conn may be gone; the next iteration reads */
	}
	if (revents & EV_READ)
		conn_read(conn);
}

/* Turn a client away with a reply it can show, without keeping its socket. */
static void __attribute__((format(printf, 3, 4))) control_refuse(int fd, int err,
								 const char *fmt, ...)
{
	json_object *reply;
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	reply = rpc_reply_error(err, message);
	if (reply) {
		const char *text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
		char line[512];
		int n = snprintf(line, sizeof(line), "%s\n", text ? text : "");

		/* Best effort: the fresh socket's buffer takes one short line. */
		if (text && n > 0 && (size_t)n < sizeof(line))
			(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		json_object_put(reply);
	}
	close(fd);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct control *c = w->data;
	struct control_conn *conn;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	(void)revents;
	fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (c->nr_conns >= CONTROL_CONN_MAX) {
		control_refuse(fd, EAGAIN, "tierd already serves %d connections; try again later",
			       CONTROL_CONN_MAX);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (conn)
		conn->in = malloc(CONTROL_IN_MAX);
	if (!conn || !conn->in) {
		free(conn);
		control_refuse(fd, ENOMEM, "tierd is out of memory");
		return;
	}
	conn->control = c;
	conn->fd = fd;
	conn->uid = cred.uid;
	conn->next = c->conns;
	c->conns = conn;
	c->nr_conns++;
	ev_io_init(&conn->io, conn_cb, fd, EV_READ);
	conn->io.data = conn;
	ev_io_start(loop, &conn->io);
	ev_init(&conn->idle, conn_idle_cb);
	conn->idle.data = conn;
	conn->last_active = ev_now(loop);
	if (c->idle_timeout > 0) {
		conn->idle.repeat = c->idle_timeout;
		ev_timer_again(loop, &conn->idle);
	}
}

/* A socket file nobody answers on is left over from a crash: replace it. */
static int control_claim_path(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, r;

	if (lstat(addr->sun_path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return -EEXIST; /* never unlink what is not a socket */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	close(fd);
	if (r == 0)
		return -EADDRINUSE;
	if (unlink(addr->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

void control_set_client_timeout(struct control *c, unsigned seconds)
{
	if (c)
		c->idle_timeout = seconds;
}

int control_open(struct control **out, struct ev_loop *loop, const char *path,
		 unsigned idle_timeout, control_handler handler, void *ctx)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct control *c;
	int r;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->handler = handler;
	c->ctx = ctx;
	c->idle_timeout = idle_timeout;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		goto fail;
	}
	r = control_claim_path(&addr);
	if (r < 0)
		goto fail;
	if (bind(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(path, 0660) < 0 || listen(c->fd, 16) < 0) {
		r = -errno;
		goto fail;
	}
	ev_io_init(&c->io, accept_cb, c->fd, EV_READ);
	c->io.data = c;
	ev_io_start(loop, &c->io);
	*out = c;
	return 0;
fail:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return r;
}

void control_close(struct control *c)
{
	if (!c)
		return;
	while (c->conns)
		conn_free(c->conns);
	ev_io_stop(c->loop, &c->io);
	close(c->fd);
	unlink(c->path);
	free(c);
}
