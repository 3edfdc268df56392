/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "table.h"
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Longest rendered cell that is not a string: a size or a 64-bit decimal. */
#define TABLE_CELL_MAX SIZE_FORMAT_MAX

struct table_cell {
	bool present;
	char *text;      /* TABLE_STRING */
	uint64_t value;  /* TABLE_UINT, TABLE_BYTES, TABLE_BOOL */
};

struct table {
	const struct table_column *columns;
	size_t n_columns;
	struct table_cell *cells;
	size_t n_cells, cap_cells;
	/* The first failed add's error. */
	int error;
};

int table_new(const struct table_column *columns, size_t n_columns, struct table **out)
{
	struct table *t;

	if (!columns || !n_columns)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->columns = columns;
	t->n_columns = n_columns;
	*out = t;
	return 0;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i].text);
	free(t->cells);
	free(t);
}

static int table_fail(struct table *t, int r)
{
	if (!t->error)
		t->error = r;
	return t->error;
}

/* The next cell, checked against its column's kind. */
static int table_next(struct table *t, bool is_kind, struct table_cell **out)
{
	if (t->error)
		return t->error;
	if (!is_kind)
		return table_fail(t, -EINVAL);
	if (t->n_cells == t->cap_cells) {
		size_t cap = t->cap_cells ? t->cap_cells * 2 : t->n_columns * 8;
		struct table_cell *cells = reallocarray(t->cells, cap, sizeof(*cells));

		if (!cells)
			return table_fail(t, -ENOMEM);
		t->cells = cells;
		t->cap_cells = cap;
	}
	*out = &t->cells[t->n_cells];
	**out = (struct table_cell){ 0 };
	return 0;
}

static enum table_kind table_next_kind(const struct table *t)
{
	return t->columns[t->n_cells % t->n_columns].kind;
}

static bool table_next_is_number(const struct table *t)
{
	return table_next_kind(t) == TABLE_UINT || table_next_kind(t) == TABLE_BYTES;
}

int table_add_string(struct table *t, const char *value)
{
	struct table_cell *cell;
	int r;

	if (!value)
		return table_add_absent(t);
	r = table_next(t, table_next_kind(t) == TABLE_STRING, &cell);
	if (r < 0)
		return r;
	cell->text = strdup(value);
	if (!cell->text)
		return table_fail(t, -ENOMEM);
	cell->present = true;
	t->n_cells++;
	return 0;
}

static int table_add_value(struct table *t, bool is_kind, uint64_t value)
{
	struct table_cell *cell;
	int r;

	r = table_next(t, is_kind, &cell);
	if (r < 0)
		return r;
	cell->value = value;
	cell->present = true;
	t->n_cells++;
	return 0;
}

int table_add_uint(struct table *t, uint64_t value)
{
	return table_add_value(t, table_next_is_number(t), value);
}

int table_add_bool(struct table *t, bool value)
{
	return table_add_value(t, table_next_kind(t) == TABLE_BOOL, value);
}

int table_add_absent(struct table *t)
{
	struct table_cell *cell;
	int r;

	r = table_next(t, true, &cell);
	if (r < 0)
		return r;
	t->n_cells++;
	return 0;
}

int table_add_json(struct table *t, struct json_object *value)
{
	if (!value || json_object_is_type(value, json_type_null))
		return table_add_absent(t);
	switch (json_object_get_type(value)) {
	case json_type_string:
		return table_add_string(t, json_object_get_string(value));
	case json_type_int:
		/* A negative count or size is a bug upstream, not something to print as 2^64-1. */
		if (json_object_get_int64(value) < 0)
			return table_fail(t, -EINVAL);
		return table_add_uint(t, json_object_get_uint64(value));
	case json_type_boolean:
		return table_add_bool(t, json_object_get_boolean(value));
	default:
		return table_fail(t, -EINVAL);
	}
}

int table_add_members(struct table *t, struct json_object *obj, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && !r; i++) {
		struct json_object *value = NULL;

		json_object_object_get_ex(obj, t->columns[t->n_cells % t->n_columns].key, &value);
		r = table_add_json(t, value);
	}
	return r;
}

size_t table_rows(const struct table *t)
{
	return (t->n_cells + t->n_columns - 1) / t->n_columns;
}

/* The cell at row, column, or NULL when it was never added. */
static const struct table_cell *table_cell(const struct table *t, size_t row, size_t column)
{
	size_t i = row * t->n_columns + column;

	return i < t->n_cells ? &t->cells[i] : NULL;
}

static const char *table_cell_text(const struct table_column *column,
				   const struct table_cell *cell, char buf[TABLE_CELL_MAX])
{
	if (!cell || !cell->present)
		return "-";
	switch (column->kind) {
	case TABLE_STRING:
		return cell->text;
	case TABLE_UINT:
		snprintf(buf, TABLE_CELL_MAX, "%" PRIu64, cell->value);
		return buf;
	case TABLE_BYTES:
		return size_format(cell->value, buf, TABLE_CELL_MAX);
	case TABLE_BOOL:
		return cell->value ? "yes" : "no";
	}
	return "-";
}

static bool table_right_aligned(const struct table_column *column)
{
	return column->kind == TABLE_UINT || column->kind == TABLE_BYTES;
}

static void table_pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* Headers go through here too, in capitals: one definition serves tables and fields. */
static void table_put(FILE *out, const char *text, size_t width, bool right, bool last,
		      bool capitals)
{
	size_t len = strlen(text);

	if (right)
		table_pad(out, width - len);
	for (const char *p = text; *p; p++)
		fputc(capitals ? toupper((unsigned char)*p) : *p, out);
	/* Trailing blanks would only get in the way of diff and grep. */
	if (!right && !last)
		table_pad(out, width - len);
}

static int table_finish(FILE *out)
{
	return fflush(out) || ferror(out) ? -EIO : 0;
}

int table_print(const struct table *t, FILE *out)
{
	size_t rows = table_rows(t);
	size_t *widths;
	char buf[TABLE_CELL_MAX];

	if (t->error)
		return t->error;
	/* Widths count bytes: all but device paths is ASCII, and those nearly always are. */
	widths = calloc(t->n_columns, sizeof(*widths));
	if (!widths)
		return -ENOMEM;
	for (size_t c = 0; c < t->n_columns; c++) {
		widths[c] = strlen(t->columns[c].header);
		for (size_t row = 0; row < rows; row++) {
			size_t len = strlen(table_cell_text(&t->columns[c], table_cell(t, row, c), buf));

			if (len > widths[c])
				widths[c] = len;
		}
	}
	/* Line 0 is the header, line n shows row n - 1. */
	for (size_t row = 0; row <= rows; row++) {
		for (size_t c = 0; c < t->n_columns; c++) {
			const struct table_column *column = &t->columns[c];
			const char *text = row ? table_cell_text(column, table_cell(t, row - 1, c), buf) :
						 column->header;

			if (c)
				fputs("  ", out);
			table_put(out, text, widths[c], table_right_aligned(column),
				  c + 1 == t->n_columns, !row);
		}
		fputc('\n', out);
	}
	free(widths);
	return table_finish(out);
}

int table_print_fields(const struct table *t, FILE *out)
{
	size_t rows = table_rows(t);
	size_t width = 0;
	char buf[TABLE_CELL_MAX];

	if (t->error)
		return t->error;
	for (size_t c = 0; c < t->n_columns; c++) {
		size_t len = strlen(t->columns[c].header);

		if (len > width)
			width = len;
	}
	for (size_t row = 0; row < rows; row++) {
		if (row)
			fputc('\n', out);
		for (size_t c = 0; c < t->n_columns; c++) {
			const struct table_column *column = &t->columns[c];

			fprintf(out, "%s:", column->header);
			table_pad(out, width - strlen(column->header) + 2);
			fprintf(out, "%s\n", table_cell_text(column, table_cell(t, row, c), buf));
		}
	}
	return table_finish(out);
}

static struct json_object *table_cell_json(const struct table_column *column,
					   const struct table_cell *cell, bool *failed)
{
	struct json_object *v;

	if (!cell || !cell->present)
		return NULL;
	switch (column->kind) {
	case TABLE_STRING:
		v = json_object_new_string(cell->text);
		break;
	case TABLE_BOOL:
		v = json_object_new_boolean(cell->value != 0);
		break;
	default:
		v = json_object_new_uint64(cell->value);
		break;
	}
	*failed = !v;
	return v;
}

int table_row_to_json(const struct table *t, size_t row, struct json_object **out)
{
	struct json_object *obj;
	int r = -ENOMEM;

	if (t->error)
		return t->error;
	if (row >= table_rows(t))
		return -EINVAL;
	obj = json_object_new_object();
	if (!obj)
		goto out;
	for (size_t c = 0; c < t->n_columns; c++) {
		const struct table_column *column = &t->columns[c];
		bool failed = false;
		struct json_object *v = table_cell_json(column, table_cell(t, row, c), &failed);

		if (failed || json_object_object_add(obj, column->key, v))
			goto out;
	}
	*out = obj;
	obj = NULL;
	r = 0;
out:
	json_object_put(obj);
	return r;
}

int table_to_json(const struct table *t, struct json_object **out)
{
	struct json_object *array = json_object_new_array();
	size_t rows = table_rows(t);
	int r = t->error ? t->error : -ENOMEM;

	if (!array || t->error)
		goto out;
	for (size_t row = 0; row < rows; row++) {
		struct json_object *obj;

		r = table_row_to_json(t, row, &obj);
		if (r < 0)
			goto out;
		if (json_object_array_add(array, obj)) {
			json_object_put(obj);
			r = -ENOMEM;
			goto out;
		}
	}
	*out = array;
	array = NULL;
	r = 0;
out:
	json_object_put(array);
	return r;
}
