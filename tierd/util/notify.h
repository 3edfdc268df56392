/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * notify: tell the service manager how tierd is doing (sd_notify(3)): ready
 * once the start-up activation pass is done, a status line while working,
 * watchdog pings, reloading and stopping.  Without systemd (no
 * $NOTIFY_SOCKET) every call does nothing.
 */
#ifndef TIERD_NOTIFY_H
#define TIERD_NOTIFY_H

#include <stdint.h>

void notify_ready(const char *status);
/* One line for `systemctl status`; the last one sent stays shown. */
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_reloading(void);
/* After a reload: ready again, with a status line. */
void notify_reloaded(const char *status);
void notify_stopping(void);
void notify_watchdog(void);
/* The watchdog interval the manager asked for (WatchdogSec=), in microseconds; 0: none. */
uint64_t notify_watchdog_usec(void);

#endif
