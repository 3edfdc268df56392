/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fault_point(const char *step)
{
	static const char stop[] = "stop:";
	const char *want = getenv("TIERD_FAULT");

	if (want && strcmp(want, step) == 0) {
		static const char msg[] = "tierd: TIERD_FAULT: dying at a fault point\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* Dying anyway. */
		}
		raise(SIGKILL);
	}
	/*
	 * A test changes the devices under a stopped tierd, then continues it;
	 * once: the steps after it run as they would.
	 */
	if (want && strncmp(want, stop, sizeof(stop) - 1) == 0 &&
	    strcmp(want + sizeof(stop) - 1, step) == 0) {
		unsetenv("TIERD_FAULT");
		raise(SIGSTOP);
	}
}

int fault_fail(const char *step)
{
	static const char prefix[] = "fail:";
	const char *want = getenv("TIERD_FAULT");

	if (want && strncmp(want, prefix, sizeof(prefix) - 1) == 0 &&
	    strcmp(want + sizeof(prefix) - 1, step) == 0)
		return -EIO;
	return 0;
}
