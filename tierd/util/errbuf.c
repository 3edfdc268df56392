/* SPDX-License-Identifier: GPL-2.0-or-later */
/* errbuf: the daemon's error sentences. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void errbuf_set(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

int errbuf_fail(int r, char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return r;
}
