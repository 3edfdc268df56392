/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conffile: the text of tierd.conf(5), split into settings.  Pure.
 *
 * One "name = value" per line; blank lines and lines whose first non-blank
 * character is '#' are ignored; spaces around the name and the value are
 * dropped; a value in double quotes keeps its inner spaces (no escapes).
 * Names are lower-case letters, digits and '-'.
 */
#ifndef TIERD_CONFFILE_H
#define TIERD_CONFFILE_H

#include <stddef.h>

#define CONFFILE_LINE_MAX 1024

/*
 * Called for each setting in file order, with the line number (from 1);
 * a negative return stops the parse and is returned, with the callback's
 * message already in err.
 */
typedef int (*conffile_fn)(unsigned line, const char *name, const char *value, void *ctx,
			   char *err, size_t err_len);

/*
 * 0, the callback's error, or -EINVAL with "line N: why" in err for a line
 * that is not a setting (no '=', a bad name, an unclosed quote, a NUL byte,
 * a line longer than CONFFILE_LINE_MAX).
 */
int conffile_parse(const char *text, size_t len, conffile_fn fn, void *ctx, char *err,
		   size_t err_len);

#endif
