/* SPDX-License-Identifier: GPL-2.0-or-later */
/* notify: sd_notify(3) messages to the service manager. */
#include "notify.h"

#include <stdarg.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

/* Errors are ignored: a manager that cannot be told anything still runs tierd. */
static void notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notify_send(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sd_notify(0, text);
}

void notify_ready(const char *status)
{
	notify_send("READY=1\nSTATUS=%s", status);
}

void notify_status(const char *fmt, ...)
{
	char status[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(status, sizeof(status), fmt, ap);
	va_end(ap);
	notify_send("STATUS=%s", status);
}

void notify_reloading(void)
{
	struct timespec ts;

	/* systemd 253 and later want the time the reload started; 252 ignores it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify_send("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the configuration",
	     (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
}

void notify_reloaded(const char *status)
{
	notify_send("READY=1\nSTATUS=%s", status);
}

void notify_stopping(void)
{
	notify_send("STOPPING=1\nSTATUS=stopping (volumes stay active)");
}

void notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}
