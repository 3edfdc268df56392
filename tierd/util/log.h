/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log: the daemon's messages, to stderr (the journal under systemd). */
#ifndef TIERD_LOG_H
#define TIERD_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* Messages below this priority (LOG_DEBUG > LOG_INFO > ...) are dropped. */
void log_set_max_priority(int priority);
/* Whether a message of this priority would be written: lets a caller skip formatting it. */
bool log_enabled(int priority);
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
