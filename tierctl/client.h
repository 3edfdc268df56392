/* SPDX-License-Identifier: GPL-2.0-or-later */
/* client: one connection to tierd's control socket, as docs/protocol.md says. */
#ifndef TIERCTL_CLIENT_H
#define TIERCTL_CLIENT_H

#include <stddef.h>

struct json_object;
struct client;

/* The protocol version this client speaks. */
#define CLIENT_PROTOCOL 2

/* tierd refuses longer requests, so failing here gives the clearer message. */
#define CLIENT_REQUEST_MAX 65536

/*
 * The longest reply or progress line accepted.  A list of many pools stays far
 * below it; a daemon gone wrong is not followed into exhausting memory.
 */
#define CLIENT_REPLY_MAX ((size_t)64 << 20)

/* Why a call failed, for people; filled by every failing client_* function. */
struct client_error {
	/* tierd's symbolic errno ("EBUSY") if tierd refused the request, else "". */
	char name[32];
	/* A sentence naming the object and the reason; NULL only if out of memory. */
	char *message;
};

/* Called once per progress line, with the "progress" member (borrowed). */
typedef void client_progress_fn(struct json_object *progress, void *userdata);

/* The socket to use: path if not NULL, else $TIERD_SOCKET if set, else the default. */
const char *client_socket_path(const char *path);

/* Connect to tierd at path, which must outlive the client (its messages name it). */
int client_open(const char *path, struct client **out, struct client_error *error);

void client_close(struct client *c);

/*
 * Send one request and wait for its reply, handing each progress object to
 * progress (may be NULL).  params (may be NULL) is borrowed.  On success
 * returns 0 and *result, which the caller puts.  Otherwise returns -errno:
 * tierd's own errno when it refused the request (-EREMOTEIO for a name this
 * libc does not know), else the local failure; error says which.
 */
int client_call(struct client *c, const char *method, struct json_object *params,
		client_progress_fn *progress, void *userdata, struct json_object **result,
		struct client_error *error);

/* Release error's message and reset it for reuse. */
void client_error_clear(struct client_error *error);

#endif
