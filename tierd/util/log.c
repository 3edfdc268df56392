/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int max_priority = LOG_INFO;

void log_set_max_priority(int priority)
{
	max_priority = priority;
}

bool log_enabled(int priority)
{
	return priority <= max_priority;
}

void log_msg(int priority, const char *fmt, ...)
{
	static const char *const label[] = {
		[LOG_EMERG] = "emergency", [LOG_ALERT] = "alert", [LOG_CRIT] = "critical",
		[LOG_ERR] = "error",       [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info",       [LOG_DEBUG] = "debug",
	};
	char line[2048];
	va_list ap;

	if (!log_enabled(priority))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Under systemd the journal reads the priority from a "<N>" prefix. */
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>%s\n", priority, line);
	else
		fprintf(stderr, "tierd: %s: %s\n", label[priority & 7], line);
}
