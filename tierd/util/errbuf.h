/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * errbuf: the daemon's error sentences. Functions that can fail return
 * -errno and fill a caller's buffer with a sentence naming the pool or device
 * and the reason; program code decides whether and where it is shown.
 */
#ifndef TIERD_ERRBUF_H
#define TIERD_ERRBUF_H

#include <stddef.h>

/* Format the sentence into err (truncated to err_len). */
void errbuf_set(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* errbuf_set(), then r: `return errbuf_fail(-EINVAL, err, err_len, "...", ...)`. */
int errbuf_fail(int r, char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
