/* SPDX-License-Identifier: GPL-2.0-or-later */
/* schema: the SQLite migrations of schema/, embedded at build time. */
#ifndef TIERD_SCHEMA_H
#define TIERD_SCHEMA_H

struct schema_migration {
	unsigned number; /* becomes PRAGMA user_version once applied */
	const char *name;
	const char *sql;
};

extern const struct schema_migration schema_migrations[];
extern const unsigned schema_nr_migrations;

#endif
