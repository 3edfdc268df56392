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

struct control_conn {
	struct control *control;
	struct control_conn *next;
	ev_io io;
	int fd;
	uid_t uid;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	struct rpc_request req;
	int busy;   /* a request is being handled: read nothing more */
	int closed; /* the peer went away while busy: free at the reply */
};

struct control {
	struct ev_loop *loop;
	ev_io io;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	control_handler handler;
	void *ctx;
	struct control_conn *conns;
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
	ev_io_stop(conn->control->loop, &conn->io);
	if (conn->fd >= 0)
		close(conn->fd);
	rpc_request_destroy(&conn->req);
	free(conn->in);
	free(conn->out);
	free(conn);
}

/* The peer is gone or misbehaved: drop it now, or at the reply if busy. */
static void conn_drop(struct control_conn *conn)
{
	if (conn->busy) {
		ev_io_stop(conn->control->loop, &conn->io);
		conn->closed = 1;
		return;
	}
	conn_free(conn);
}

static void conn_watch(struct control_conn *conn)
{
	int events = 0;

	if (conn->out_len > conn->out_off)
		events |= EV_WRITE;
	if (!conn->busy)
		events |= EV_READ;
	ev_io_stop(conn->control->loop, &conn->io);
	if (events) {
		ev_io_set(&conn->io, conn->fd, events);
		ev_io_start(conn->control->loop, &conn->io);
	}
}

static void conn_send(struct control_conn *conn, json_object *msg)
{
	const char *text;
	size_t len;
	char *grown;

	if (!msg)
		return;
	if (conn->closed) {
		json_object_put(msg);
		return;
	}
	text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	len = strlen(text);
	grown = realloc(conn->out, conn->out_len + len + 1);
	if (grown) {
		conn->out = grown;
		memcpy(conn->out + conn->out_len, text, len);
		conn->out[conn->out_len + len] = '\n';
		conn->out_len += len + 1;
	}
	json_object_put(msg);
	conn_watch(conn);
}

static void conn_dispatch(struct control_conn *conn);

void control_reply(struct control_conn *conn, json_object *reply)
{
	rpc_request_destroy(&conn->req);
	conn->busy = 0;
	if (conn->closed) {
		json_object_put(reply);
		conn_free(conn);
		return;
	}
	conn_send(conn, reply);
	/* A pipelined request may already be buffered. */
	conn_dispatch(conn);
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

/* Handle one complete line from the input buffer, if there is one. */
static void conn_dispatch(struct control_conn *conn)
{
	char err[256];
	char *nl;
	size_t line_len;
	int r;

	if (conn->busy || conn->closed)
		return;
	nl = memchr(conn->in, '\n', conn->in_len);
	if (!nl) {
		if (conn->in_len > RPC_REQUEST_MAX) {
			/* Answer, then hang up: the rest of the stream has no framing we trust. */
			conn_send(conn, rpc_reply_error(EINVAL, "request too long"));
			conn->in_len = 0;
			shutdown(conn->fd, SHUT_RD);
		}
		return;
	}
	line_len = (size_t)(nl - conn->in);
	conn->busy = 1;
	r = rpc_decode(&conn->req, conn->in, line_len, err, sizeof(err));
	memmove(conn->in, nl + 1, conn->in_len - line_len - 1);
	conn->in_len -= line_len + 1;
	conn_watch(conn);
	if (r < 0) {
		control_reply(conn, rpc_reply_error(r, err));
		return;
	}
	conn->control->handler(conn, &conn->req, conn->control->ctx);
}

static void conn_read(struct control_conn *conn)
{
	char *grown;
	ssize_t n;

	/* Bounded: past RPC_REQUEST_MAX without a newline the request is refused. */
	grown = realloc(conn->in, conn->in_len + 4096 + 1);
	if (!grown) {
		conn_drop(conn);
		return;
	}
	conn->in = grown;
	n = read(conn->fd, conn->in + conn->in_len, 4096);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_drop(conn);
		return;
	}
	conn->in_len += (size_t)n;
	conn_dispatch(conn);
}

static void conn_write(struct control_conn *conn)
{
	ssize_t n = send(conn->fd, conn->out + conn->out_off, conn->out_len - conn->out_off,
			 MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_drop(conn);
		return;
	}
	conn->out_off += (size_t)n;
	if (conn->out_off == conn->out_len)
		conn->out_off = conn->out_len = 0;
	conn_watch(conn);
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
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		close(fd);
		return;
	}
	conn->control = c;
	conn->fd = fd;
	conn->uid = cred.uid;
	conn->next = c->conns;
	c->conns = conn;
	ev_io_init(&conn->io, conn_cb, fd, EV_READ);
	conn->io.data = conn;
	ev_io_start(loop, &conn->io);
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

int control_open(struct control **out, struct ev_loop *loop, const char *path,
		 control_handler handler, void *ctx)
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
