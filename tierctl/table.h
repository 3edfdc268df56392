/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * table: the one formatter behind tierctl's output.  A table is a list of
 * columns and rows of cells; it renders as aligned text for people (through
 * libsmartcols, as lsblk's tables) or as JSON for programs, so both always
 * show the same data.  The text follows one process-wide format, tierctl's
 * -o, --noheadings, --raw and --bytes, which the command code never sees.
 */
#ifndef TIERCTL_TABLE_H
#define TIERCTL_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct table;

enum table_kind {
	TABLE_STRING,
	/* A count: decimal in text, an integer in JSON. */
	TABLE_UINT,
	/* A byte count: "4.0 MiB" in text, an integer in JSON. */
	TABLE_BYTES,
	/* "yes"/"no" in text, true/false in JSON. */
	TABLE_BOOL,
};

struct table_column {
	/* "Size": "SIZE" over a table, "Size:" in front of a field. */
	const char *header;
	/* Member name in JSON. */
	const char *key;
	enum table_kind kind;
	/* Shown only when -o names it; JSON always has it. */
	bool hidden;
};

/*
 * The name -o takes and a table's heading shows: the header in capitals,
 * blanks as '-' ("Min residency": "MIN-RESIDENCY").  Returns its length;
 * the name is cut to fit size (with its NUL) as by snprintf.
 */
size_t table_column_name(const struct table_column *column, char *buf, size_t size);

/* How the text of every table is laid out: tierctl's table options. */
struct table_format {
	/*
	 * Column names, comma-separated, in any case: show these in this order
	 * ("NAME,SIZE"), or with a leading '+' add them to the default ones
	 * ("+UUID").  NULL: the columns not hidden.  Copied.
	 */
	const char *columns;
	bool noheadings;
	/* Cells one space apart, blanks and unsafe bytes escaped as \x20 (lsblk --raw). */
	bool raw;
	/* Sizes as a number of bytes instead of "4.0 MiB". */
	bool bytes;
	/* Each table prints its columns (name, type, JSON member) instead of its rows. */
	bool list_columns;
};

/*
 * The format of the tables printed from now on, and forget the columns met
 * so far; NULL: the default.  -EINVAL when columns is empty or has an empty
 * name, -ENOMEM.
 */
int table_set_format(const struct table_format *format);

/*
 * Under -o a table prints only when it has every column named, so that of a
 * command's several tables -o picks one; the names must then all be in one of
 * them.  This says whether they were, over the tables printed since the last
 * check: 0 when they were (or no -o, or no table), else -ENOKEY with *message
 * (the caller frees it; NULL when out of memory) naming the unknown columns,
 * or the ones not in one table, and the columns there are.  Starts over.
 */
int table_check_format(char **message);

/* columns is borrowed and must outlive the table (a static array, usually). */
int table_new(const struct table_column *columns, size_t n_columns, struct table **out);
void table_free(struct table *t);

/*
 * Cells are added in reading order: the next cell goes into the next column of
 * the last row, or starts a new row when that one is full.  A cell of the wrong
 * kind for its column is -EINVAL.  An absent cell shows as "-" and null.
 * The first failure sticks: later adds return it and do nothing, and so does
 * printing, so a caller filling many cells may check only the result of print.
 */
int table_add_string(struct table *t, const char *value);  /* copied; NULL: absent */
int table_add_uint(struct table *t, uint64_t value);       /* UINT or BYTES */
int table_add_bool(struct table *t, bool value);
int table_add_absent(struct table *t);

/* A JSON value of the column's kind (string, integer >= 0, boolean), or NULL: absent. */
int table_add_json(struct table *t, struct json_object *value);

/*
 * The next n cells from obj's members named by their columns' keys, as by
 * table_add_json (a missing member is absent).
 */
int table_add_members(struct table *t, struct json_object *obj, size_t n);

/* Rows so far; cells not yet added to the last one show as absent. */
size_t table_rows(const struct table *t);

/*
 * Aligned text: the column names as headers, two spaces between columns,
 * numbers right-aligned; or as the format says.  An empty table is its
 * header line.  Returns 0, the first failed add's error, -ENOMEM or -EIO.
 */
int table_print(const struct table *t, FILE *out);

/*
 * Each row as a block of "Header:  value" lines, blocks apart by an empty
 * line: the format's columns; with --noheadings only the values, with --raw
 * as table_print does.
 */
int table_print_fields(const struct table *t, FILE *out);

/*
 * The empty line between two parts of an output.  Under -o, where tables are
 * left out, it waits for the next table printed and goes before it only when
 * one was printed already, so that what -o picked comes without blank lines.
 */
void table_gap(FILE *out);

/* JSON has every column, whatever the format: */

/* One row as a JSON object keyed by the columns' keys; the caller puts it. */
int table_row_to_json(const struct table *t, size_t row, struct json_object **out);

/* The rows as a JSON array of objects; the caller puts it. */
int table_to_json(const struct table *t, struct json_object **out);

#endif
