/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon: owns the event loop and every object of tierd: the state, its
 * lock, the pools, the tiering, the timers, the control socket and the
 * metrics endpoint. They start in that order and stop in the reverse one.
 */
#ifndef TIERD_DAEMON_H
#define TIERD_DAEMON_H

#include <stdbool.h>

struct daemon_options {
	const char *state_dir;
	const char *socket;
	unsigned sample_interval;   /* seconds between heat samples */
	unsigned flush_interval;    /* seconds between stores of heat and I/O history */
	unsigned history_days;
	unsigned half_life;         /* seconds */
	const char *policy_dir;     /* NULL: /etc/tierd/policies, then the installed ones */
	const char *metrics_listen; /* NULL: no metrics endpoint */
	bool verify_moves;
	bool activate_degraded;     /* at start, also pools with a device missing */
	unsigned client_timeout;    /* seconds before an idle control client is closed; 0: never */
};

/* Run until SIGTERM or SIGINT; the volumes stay active. 0, or -errno (logged). */
int daemon_run(const struct daemon_options *o);

#endif
