/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * table: the one formatter behind tierctl's output.  A table is a list of
 * columns and rows of cells; it renders as aligned text for people or as
 * JSON for programs, so both always show the same data.
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
};

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
 * Aligned text: the headers in capitals, two spaces between columns, numbers
 * right-aligned.  Returns 0, the first failed add's error, or -EIO.
 */
int table_print(const struct table *t, FILE *out);

/* Each row as a block of "Header:  value" lines, blocks apart by an empty line. */
int table_print_fields(const struct table *t, FILE *out);

/* One row as a JSON object keyed by the columns' keys; the caller puts it. */
int table_row_to_json(const struct table *t, size_t row, struct json_object **out);

/* The rows as a JSON array of objects; the caller puts it. */
int table_to_json(const struct table *t, struct json_object **out);

#endif
