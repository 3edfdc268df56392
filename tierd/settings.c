/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "settings.h"

#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "conffile.h"
#include "exporter.h"
#include "size.h"

enum setting_kind {
	SETTING_PATH,
	SETTING_ADDR, /* ADDRESS:PORT, as exporter_parse_addr() takes it */
	SETTING_NAME, /* a user or group name: no '/', ':', space or control character */
	SETTING_UINT,
	SETTING_BOOL,
	SETTING_SIZE, /* bytes with a unit (64M, 1.5G), or "auto": 0, the built-in default */
	SETTING_CHOICE, /* one of the words of choices, stored as its index (unsigned) */
	SETTING_POW2_KIB, /* bytes with a unit, a power of two from min to max KiB (uint64_t) */
};

struct setting {
	const char *name;
	enum setting_kind kind;
	size_t offset;
	unsigned min, max; /* SETTING_UINT; SETTING_SIZE in MiB; SETTING_POW2_KIB in KiB */
	bool reloadable;
	bool nullable;     /* a string setting that may be unset ("" in the file unsets it) */
	const char *const *choices; /* SETTING_CHOICE, NULL-terminated */
};

static const char *const piece_copy_words[] = { "held", "mirror", NULL };

#define AT(field) offsetof(struct settings, field)

static const struct setting table[] = {
	{ "state-dir", SETTING_PATH, AT(state_dir) },
	{ "socket", SETTING_PATH, AT(socket) },
	{ "policy-dir", SETTING_PATH, AT(policy_dir), .nullable = true },
	{ "metrics-listen", SETTING_ADDR, AT(metrics_listen), .nullable = true },
	{ "socket-group", SETTING_NAME, AT(socket_group), .nullable = true },
	{ "sample-interval", SETTING_UINT, AT(sample_interval), 1, 86400, true },
	{ "flush-interval", SETTING_UINT, AT(flush_interval), 1, 86400, true },
	{ "heat-half-life", SETTING_UINT, AT(half_life), 60, 365 * 86400, true },
	{ "history-days", SETTING_UINT, AT(history_days), 1, 3650, true },
	{ "client-timeout", SETTING_UINT, AT(client_timeout), 0, 86400, true },
	{ "device-timeout", SETTING_UINT, AT(device_timeout), 0, 86400 },
	{ "heat-kernel-memory", SETTING_SIZE, AT(heat_kernel_memory), 1, 65536 },
	/* Above some 524,288 libdevmapper can no longer read the table back (docs/scale.md). */
	{ "table-targets", SETTING_UINT, AT(table_targets), 64, 524288, true },
	{ "verify-moves", SETTING_BOOL, AT(verify_moves), .reloadable = true },
	{ "piece-copy", SETTING_CHOICE, AT(piece_copy), .reloadable = true,
	  .choices = piece_copy_words },
	{ "piece-heat", SETTING_BOOL, AT(piece_heat) },
	/*
	 * Held batches and the planner count pieces (up to 64 a batch, copied
	 * while the volume is suspended): larger pieces would hold I/O for
	 * an extent's copy.
	 */
	{ "piece-size", SETTING_POW2_KIB, AT(piece_size), 4, 64 },
	{ "activate-degraded", SETTING_BOOL, AT(activate_degraded), .reloadable = true },
	{ "verbose", SETTING_BOOL, AT(verbose), .reloadable = true },
};

static char **string_at(struct settings *s, const struct setting *t)
{
	return (char **)((char *)s + t->offset);
}

static const char *const *cstring_at(const struct settings *s, const struct setting *t)
{
	return (const char *const *)((const char *)s + t->offset);
}

static unsigned *uint_at(struct settings *s, const struct setting *t)
{
	return (unsigned *)((char *)s + t->offset);
}

static uint64_t *u64_at(struct settings *s, const struct setting *t)
{
	return (uint64_t *)((char *)s + t->offset);
}

static bool *bool_at(struct settings *s, const struct setting *t)
{
	return (bool *)((char *)s + t->offset);
}

static const struct setting *setting_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

void settings_free(struct settings *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		if (table[i].kind == SETTING_PATH || table[i].kind == SETTING_ADDR ||
		    table[i].kind == SETTING_NAME) {
			free(*string_at(s, &table[i]));
			*string_at(s, &table[i]) = NULL;
		}
	}
}

int settings_init(struct settings *s)
{
	*s = (struct settings){
		.sample_interval = 10,
		.flush_interval = 60,
		.history_days = 30,
		.half_life = 86400,
		.client_timeout = 60,
		.device_timeout = 30,
		.table_targets = 65536,
		.piece_heat = true,
		.piece_size = 16384,
	};
	s->state_dir = strdup(TIERD_DEFAULT_STATE_DIR);
	s->socket = strdup(TIERD_DEFAULT_SOCKET);
	if (!s->state_dir || !s->socket) {
		settings_free(s);
		return -ENOMEM;
	}
	return 0;
}

static int parse_uint(const char *text, unsigned min, unsigned max, unsigned *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || text[0] == '+' || text[0] == ' ' ||
	    v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_bool(const char *text, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(text, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(text, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int settings_set(struct settings *s, const char *name, const char *value, char *err,
		 size_t err_len)
{
	const struct setting *t = setting_find(name);
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char *copy;

	if (!t) {
		snprintf(err, err_len, "there is no setting '%s'", name);
		return -ENOENT;
	}
	switch (t->kind) {
	case SETTING_UINT:
		if (parse_uint(value, t->min, t->max, uint_at(s, t)) < 0) {
			snprintf(err, err_len, "%s takes %u to %u, not '%s'", name, t->min, t->max,
				 value);
			return -EINVAL;
		}
		return 0;
	case SETTING_SIZE: {
		uint64_t v = 0;

		if (strcmp(value, "auto") != 0 &&
		    (size_parse(value, &v) < 0 || v < ((uint64_t)t->min << 20) ||
		     v > ((uint64_t)t->max << 20))) {
			snprintf(err, err_len, "%s takes auto or a size from %u MiB to %u GiB"
				 " (64M, 1.5G), not '%s'", name, t->min, t->max >> 10, value);
			return -EINVAL;
		}
		*u64_at(s, t) = v;
		return 0;
	}
	case SETTING_POW2_KIB: {
		uint64_t v = 0;

		if (size_parse(value, &v) < 0 || v < ((uint64_t)t->min << 10) ||
		    v > ((uint64_t)t->max << 10) || (v & (v - 1))) {
			snprintf(err, err_len, "%s takes a power of two from %u KiB to %u KiB"
				 " (4K, 16K, 64K), not '%s'", name, t->min, t->max, value);
			return -EINVAL;
		}
		*u64_at(s, t) = v;
		return 0;
	}
	case SETTING_CHOICE:
		for (unsigned i = 0; t->choices[i]; i++) {
			if (strcmp(value, t->choices[i]) == 0) {
				*uint_at(s, t) = i;
				return 0;
			}
		}
		snprintf(err, err_len, "%s takes %s or %s, not '%s'", name, t->choices[0],
			 t->choices[1], value);
		return -EINVAL;
	case SETTING_BOOL:
		if (parse_bool(value, bool_at(s, t)) < 0) {
			snprintf(err, err_len, "%s takes yes or no, not '%s'", name, value);
			return -EINVAL;
		}
		return 0;
	case SETTING_ADDR:
		if (*value && exporter_parse_addr(value, &addr, &addr_len) < 0) {
			snprintf(err, err_len, "%s takes ADDRESS:PORT with an IP address"
				 " (127.0.0.1:9477, [::1]:9477), not '%s'", name, value);
			return -EINVAL;
		}
		break;
	case SETTING_NAME:
		for (const char *c = value; *c; c++) {
			if (*c == '/' || *c == ':' || (unsigned char)*c <= ' ' || *c == 0x7f) {
				snprintf(err, err_len, "%s takes a group name, not '%s'", name, value);
				return -EINVAL;
			}
		}
		break;
	case SETTING_PATH:
		if (*value != '/' && !(t->nullable && !*value)) {
			snprintf(err, err_len, "%s takes an absolute path, not '%s'", name, value);
			return -EINVAL;
		}
		break;
	}
	if (!*value && !t->nullable) {
		snprintf(err, err_len, "%s cannot be empty", name);
		return -EINVAL;
	}
	copy = *value ? strdup(value) : NULL;
	if (*value && !copy)
		return -ENOMEM;
	free(*string_at(s, t));
	*string_at(s, t) = copy;
	return 0;
}

struct parse_ctx {
	struct settings *s;
	unsigned seen_line[ARRAY_SIZE(table)];
};

static int parse_one(unsigned line, const char *name, const char *value, void *ctx, char *err,
		     size_t err_len)
{
	struct parse_ctx *pc = ctx;
	const struct setting *t = setting_find(name);
	char why[512];
	size_t i;
	int r;

	if (!t) {
		snprintf(err, err_len, "line %u: there is no setting '%s' (tierd.conf(5) lists them)",
			 line, name);
		return -EINVAL;
	}
	i = (size_t)(t - table);
	/* Which one would win is not obvious to the one who edits the file. */
	if (pc->seen_line[i]) {
		snprintf(err, err_len, "line %u: %s is already set on line %u", line, name,
			 pc->seen_line[i]);
		return -EINVAL;
	}
	pc->seen_line[i] = line;
	r = settings_set(pc->s, name, value, why, sizeof(why));
	if (r < 0) {
		snprintf(err, err_len, "line %u: %s", line, why);
		return r == -ENOMEM ? r : -EINVAL;
	}
	return 0;
}

int settings_parse(struct settings *s, const char *text, size_t len, char *err, size_t err_len)
{
	struct parse_ctx pc = { .s = s };

	return conffile_parse(text, len, parse_one, &pc, err, err_len);
}

/* The file is small; one larger than this is not a tierd.conf. */
#define SETTINGS_FILE_MAX (256 * 1024)

static int read_file(const char *path, char **text, size_t *len)
{
	struct stat st;
	ssize_t n;
	char *buf;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > SETTINGS_FILE_MAX) {
		r = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	n = read(fd, buf, (size_t)st.st_size + 1);
	if (n < 0 || n > st.st_size) {
		r = n < 0 ? -errno : -EAGAIN; /* it grew while read: a half-written file */
		free(buf);
		goto out;
	}
	*text = buf;
	*len = (size_t)n;
	r = 0;
out:
	close(fd);
	return r;
}

int settings_load(struct settings *out, const char *path, bool must_exist,
		  const struct settings_overrides *ov, char *err, size_t err_len)
{
	char *text = NULL;
	char why[600];
	size_t len = 0;
	int r;

	r = settings_init(out);
	if (r < 0) {
		snprintf(err, err_len, "out of memory");
		return r;
	}
	r = read_file(path, &text, &len);
	if (r == -ENOENT && !must_exist) {
		r = 0;
	} else if (r < 0) {
		snprintf(err, err_len, "cannot read %s: %s", path,
			 r == -EINVAL ? "not a regular file" :
			 r == -EFBIG ? "larger than 256 KiB" :
			 r == -EAGAIN ? "it changed while being read" : strerror(-r));
	} else {
		r = settings_parse(out, text, len, why, sizeof(why));
		if (r < 0)
			snprintf(err, err_len, "%s %s", path, why);
	}
	free(text);
	for (size_t i = 0; r == 0 && ov && i < ov->nr; i++) {
		r = settings_set(out, ov->v[i].name, ov->v[i].value, why, sizeof(why));
		if (r < 0)
			snprintf(err, err_len, "--%s", why);
	}
	return r;
}

static void setting_text(const struct settings *s, const struct setting *t, char *buf, size_t len)
{
	const char *str;

	switch (t->kind) {
	case SETTING_UINT:
		snprintf(buf, len, "%u", *uint_at((struct settings *)s, t));
		break;
	case SETTING_BOOL:
		snprintf(buf, len, "%s", *bool_at((struct settings *)s, t) ? "yes" : "no");
		break;
	case SETTING_CHOICE:
		snprintf(buf, len, "%s", t->choices[*uint_at((struct settings *)s, t)]);
		break;
	case SETTING_POW2_KIB:
		snprintf(buf, len, "%" PRIu64 "K", *u64_at((struct settings *)s, t) >> 10);
		break;
	case SETTING_SIZE:
		if (*u64_at((struct settings *)s, t))
			snprintf(buf, len, "%" PRIu64, *u64_at((struct settings *)s, t));
		else
			snprintf(buf, len, "auto");
		break;
	default:
		str = *cstring_at(s, t);
		snprintf(buf, len, "%s", str ? str : "(unset)");
		break;
	}
}

void settings_diff(const struct settings *a, const struct settings *b, settings_diff_fn fn,
		   void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		char was[512], now[512];

		setting_text(a, &table[i], was, sizeof(was));
		setting_text(b, &table[i], now, sizeof(now));
		if (strcmp(was, now) != 0)
			fn(table[i].name, was, now, table[i].reloadable, ctx);
	}
}
