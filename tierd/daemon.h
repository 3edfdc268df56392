/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon: owns the event loop and every object of tierd: the state, its
 * lock, the pools, the tiering, the timers, the control socket and the
 * metrics endpoint. They start in that order and stop in the reverse one.
 */
#ifndef TIERD_DAEMON_H
#define TIERD_DAEMON_H

#include <stdbool.h>

#include "settings.h"

/* Where the settings came from, so that SIGHUP can read them again. */
struct daemon_config {
	const char *path;                     /* tierd.conf */
	bool must_exist;                      /* given with --config */
	const struct settings_overrides *ov;  /* the command line's */
};

/*
 * Run with the settings s (loaded from cfg; the daemon owns them from here)
 * until SIGTERM or SIGINT; the volumes stay active.  SIGHUP reloads cfg.
 * 0, or -errno (logged).
 */
int daemon_run(struct settings *s, const struct daemon_config *cfg);

#endif
