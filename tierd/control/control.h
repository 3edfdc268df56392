/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control: the daemon's Unix socket, one JSON request per line (docs/protocol.md). */
#ifndef TIERD_CONTROL_H
#define TIERD_CONTROL_H

#include <ev.h>
#include <json-c/json.h>
#include <sys/types.h>

#include "rpc.h"

struct control;
struct control_conn;

/*
 * Called once per decoded request. The handler answers with control_reply()
 * now or later (long work); until then the connection reads nothing more. req
 * is valid until the reply.
 */
typedef void (*control_handler)(struct control_conn *conn, const struct rpc_request *req,
				void *ctx);

/*
 * Listen on path (mode 0660; a stale socket is replaced, a live one is
 * -EADDRINUSE). Clients are bounded in number, request size, reply size and
 * unread output, and closed after idle_timeout seconds with no request in
 * progress and nothing read or sent (0: never) (docs/protocol.md, "Limits
 * and bad input").
 */
int control_open(struct control **out, struct ev_loop *loop, const char *path,
		 unsigned idle_timeout, control_handler handler, void *ctx);
/* Clients that connect from now on are closed after this many idle seconds (0: never). */
void control_set_client_timeout(struct control *c, unsigned seconds);
/* Closes the listener and every connection; pending requests are dropped. */
void control_close(struct control *c);

/* The peer's uid, from SO_PEERCRED at accept. */
uid_t control_conn_uid(const struct control_conn *conn);
/* Send the final reply (takes ownership; from rpc_reply_ok/rpc_reply_error).
 * conn may be freed by it: do not use conn afterwards. */
void control_reply(struct control_conn *conn, json_object *reply);
void control_reply_error(struct control_conn *conn, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A progress line before the reply (takes ownership of progress). */
void control_progress(struct control_conn *conn, json_object *progress);

#endif
