/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fault_point(const char *step)
{
	const char *want = getenv("TIERD_FAULT");

	if (want && strcmp(want, step) == 0) {
		static const char msg[] = "tierd: TIERD_FAULT: dying at a fault point\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* Dying anyway. */
		}
		raise(SIGKILL);
	}
}
