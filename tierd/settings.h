/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * settings: the daemon's settings, from their defaults, tierd.conf(5) and
 * the command line, in that order of precedence from low to high.  A
 * setting's name is its long option's; the same checks apply to both.
 * No I/O but settings_load()'s read of the file.
 */
#ifndef TIERD_SETTINGS_H
#define TIERD_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct settings {
	char *state_dir;
	char *socket;
	char *policy_dir;     /* NULL: sysconfdir's tierd/policies, then the installed ones */
	char *metrics_listen; /* NULL: no metrics endpoint */
	char *socket_group;   /* NULL: the socket's group is root's */
	unsigned sample_interval; /* seconds between heat samples */
	unsigned flush_interval;  /* seconds between stores of heat and I/O history */
	unsigned history_days;
	unsigned half_life;       /* seconds */
	unsigned client_timeout;  /* seconds before an idle control client is closed; 0: never */
	unsigned device_timeout;  /* seconds a pool waits for a missing device */
	uint64_t heat_kernel_memory; /* bytes all pools' dm-stats may take; 0: the default */
	unsigned table_targets;   /* the most targets a move may leave a volume's table */
	bool verify_moves;
	unsigned piece_copy;      /* enum settings_piece_copy */
	bool piece_heat;          /* watch how extents' I/O spreads over their pieces */
	uint64_t piece_size;      /* bytes of the pieces a pool without any splits into */
	bool activate_degraded;   /* after device_timeout, activate with a device missing */
	bool verbose;
};

/*
 * How a batch of pieces is copied (docs/migration.md, "Held copies of
 * pieces"): while the volume is suspended, or through dm-mirror as whole
 * extents are. The order is the setting's words'.
 */
enum settings_piece_copy { SETTINGS_PIECE_COPY_HELD, SETTINGS_PIECE_COPY_MIRROR };

/* name = value pairs from the command line, applied over the file's. */
struct settings_overrides {
	size_t nr;
	struct {
		const char *name, *value;
	} v[32];
};

/* The defaults; strings owned by s (settings_free). */
int settings_init(struct settings *s);
void settings_free(struct settings *s);

/*
 * Set NAME to the text VALUE (a boolean takes yes/no, true/false, on/off,
 * 1/0).  -ENOENT: no such setting; -EINVAL: a value it does not take; err
 * names the setting and what it takes.
 */
int settings_set(struct settings *s, const char *name, const char *value, char *err,
		 size_t err_len);

/* The file's text over s; err starts "line N: ".  A setting given twice is an error. */
int settings_parse(struct settings *s, const char *text, size_t len, char *err, size_t err_len);

/*
 * Defaults, then the file at path (missing: skipped, unless must_exist),
 * then the overrides, into *out (initialised here, even on failure).  err
 * names the file and the line.
 */
int settings_load(struct settings *out, const char *path, bool must_exist,
		  const struct settings_overrides *ov, char *err, size_t err_len);

/* Whether a new value of the setting takes effect on SIGHUP (else at the next start). */
typedef void (*settings_diff_fn)(const char *name, const char *was, const char *now,
				 bool reloadable, void *ctx);
/* fn for each setting whose value differs between a and b, in the table's order. */
void settings_diff(const struct settings *a, const struct settings *b, settings_diff_fn fn,
		   void *ctx);

#endif
