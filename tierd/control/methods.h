/* SPDX-License-Identifier: GPL-2.0-or-later */
/* methods: the control protocol's methods (docs/protocol.md) on the daemon's pools. */
#ifndef TIERD_METHODS_H
#define TIERD_METHODS_H

#include "control.h"
#include "pool.h"
#include "tiering.h"

struct methods_ctx {
	struct pools *pools;
	struct tierings *tierings;
	struct ev_loop *loop; /* long operations run on it */
};

/* The control_handler of the daemon's socket; ctx is a struct methods_ctx. */
void methods_handle(struct control_conn *conn, const struct rpc_request *req, void *ctx);

#endif
