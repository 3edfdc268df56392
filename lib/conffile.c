/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "conffile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* line: one NUL-terminated line without its '\n'; modified in place. */
static int parse_line(char *line, unsigned nr, conffile_fn fn, void *ctx, char *err,
		      size_t err_len)
{
	char *name, *eq, *end, *value;

	name = line;
	while (is_blank(*name))
		name++;
	if (!*name || *name == '#')
		return 0;
	eq = strchr(name, '=');
	if (!eq) {
		snprintf(err, err_len, "line %u: expected NAME = VALUE", nr);
		return -EINVAL;
	}
	end = eq;
	while (end > name && is_blank(end[-1]))
		end--;
	*end = '\0';
	if (!*name) {
		snprintf(err, err_len, "line %u: a setting without a name", nr);
		return -EINVAL;
	}
	for (const char *c = name; *c; c++) {
		if (!is_name_char(*c)) {
			snprintf(err, err_len, "line %u: '%s' is not a setting name (lower-case"
				 " letters, digits and '-')", nr, name);
			return -EINVAL;
		}
	}
	value = eq + 1;
	while (is_blank(*value))
		value++;
	end = value + strlen(value);
	while (end > value && is_blank(end[-1]))
		end--;
	*end = '\0';
	if (*value == '"') {
		if (end - value < 2 || end[-1] != '"') {
			snprintf(err, err_len, "line %u: the quote in %s's value is not closed", nr,
				 name);
			return -EINVAL;
		}
		end[-1] = '\0';
		value++;
	}
	return fn(nr, name, value, ctx, err, err_len);
}

int conffile_parse(const char *text, size_t len, conffile_fn fn, void *ctx, char *err,
		   size_t err_len)
{
	char line[CONFFILE_LINE_MAX + 1];
	unsigned nr = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int r;

		nr++;
		if (n > CONFFILE_LINE_MAX) {
			snprintf(err, err_len, "line %u: longer than %d bytes", nr, CONFFILE_LINE_MAX);
			return -EINVAL;
		}
		if (memchr(text + pos, '\0', n)) {
			snprintf(err, err_len, "line %u: a NUL byte (not a text file?)", nr);
			return -EINVAL;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		r = parse_line(line, nr, fn, ctx, err, err_len);
		if (r < 0)
			return r;
		pos += n + (nl != NULL);
	}
	return 0;
}
