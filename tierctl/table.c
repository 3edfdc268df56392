/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "table.h"
#include "array.h"
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <libsmartcols.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Longest column name -o matches; the headers are a few words. */
#define TABLE_NAME_MAX 64
/* Tables whose columns the message of a wrong -o lists: a command prints at most a few. */
#define TABLE_MET_MAX 8

struct table_wanted {
	char *name;
	/* A table printed since had it. */
	bool found;
};

/*
 * The format and what the tables printed under it made of -o: one per
 * process, because tierctl parses the options far from where its commands
 * print, and one command's output is checked as a whole.
 */
static struct {
	struct table_format format;
	/* -o's names, and whether it started with '+'. */
	struct table_wanted *wanted;
	size_t n_wanted;
	bool add;
	/* A table had some of the names but not all; one had all of them. */
	bool split, whole;
	const struct table_column *met[TABLE_MET_MAX];
	size_t n_met[TABLE_MET_MAX];
	size_t n_tables;
	/* A table printed, and table_gap since. */
	bool printed, gap;
} table_out;

size_t table_column_name(const struct table_column *column, char *buf, size_t size)
{
	size_t len = strlen(column->header), i;

	if (!size)
		return len;
	for (i = 0; i < len && i + 1 < size; i++) {
		char c = column->header[i];

		buf[i] = c == ' ' ? '-' : (char)toupper((unsigned char)c);
	}
	buf[i] = '\0';
	return len;
}

static void table_forget_format(void)
{
	for (size_t i = 0; i < table_out.n_wanted; i++)
		free(table_out.wanted[i].name);
	free(table_out.wanted);
	free((char *)table_out.format.columns);
	memset(&table_out, 0, sizeof(table_out));
}

/* Splits list at the commas into table_out.wanted. */
static int table_parse_columns(const char *list)
{
	size_t n = 1;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	table_out.wanted = calloc(n, sizeof(*table_out.wanted));
	if (!table_out.wanted)
		return -ENOMEM;
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		struct table_wanted *w = &table_out.wanted[table_out.n_wanted];

		if (!len || len >= TABLE_NAME_MAX)
			return -EINVAL;
		w->name = strndup(p, len);
		if (!w->name)
			return -ENOMEM;
		table_out.n_wanted++;
		p += len;
		if (!*p)
			return 0;
	}
}

int table_set_format(const struct table_format *format)
{
	const char *list;
	int r;

	table_forget_format();
	if (!format)
		return 0;
	table_out.format = *format;
	table_out.format.columns = NULL;
	list = format->columns;
	if (!list)
		return 0;
	table_out.format.columns = strdup(list);
	if (!table_out.format.columns) {
		r = -ENOMEM;
		goto fail;
	}
	table_out.add = *list == '+';
	r = table_parse_columns(list + table_out.add);
	if (r < 0)
		goto fail;
	return 0;
fail:
	table_forget_format();
	return r;
}

static bool table_column_is(const struct table_column *column, const char *name)
{
	char buf[TABLE_NAME_MAX];

	return table_column_name(column, buf, sizeof(buf)) < sizeof(buf) && !strcasecmp(buf, name);
}

static void table_meet(const struct table *t)
{
	size_t i;

	table_out.n_tables++;
	for (i = 0; i < TABLE_MET_MAX && table_out.met[i]; i++)
		if (table_out.met[i] == t->columns)
			return;
	if (i < TABLE_MET_MAX) {
		table_out.met[i] = t->columns;
		table_out.n_met[i] = t->n_columns;
	}
}

/*
 * The columns of t to show, by index into shown (room for n_columns +
 * n_wanted); false when the table is to be left out.
 */
static bool table_select(const struct table *t, size_t *shown, size_t *n_shown)
{
	size_t n = 0, matched = 0;

	table_meet(t);
	if (!table_out.n_wanted || table_out.add) {
		for (size_t c = 0; c < t->n_columns; c++)
			if (!t->columns[c].hidden)
				shown[n++] = c;
	}
	for (size_t i = 0; i < table_out.n_wanted; i++) {
		struct table_wanted *w = &table_out.wanted[i];

		for (size_t c = 0; c < t->n_columns; c++) {
			if (!table_column_is(&t->columns[c], w->name))
				continue;
			w->found = true;
			shown[n++] = c;
			matched++;
			break;
		}
	}
	*n_shown = n;
	if (!table_out.n_wanted)
		return true;
	if (matched && matched < table_out.n_wanted)
		table_out.split = true;
	if (matched == table_out.n_wanted)
		table_out.whole = true;
	return matched == table_out.n_wanted;
}

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
		if (table_out.format.bytes) {
			snprintf(buf, TABLE_CELL_MAX, "%" PRIu64, cell->value);
			return buf;
		}
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

static int table_finish(FILE *out)
{
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/*
 * libsmartcols prints nothing for a table without rows; the header alone
 * still says what would be there.  Names have no blanks, so raw or not the
 * header needs no escaping, and it is its own width.
 */
static int table_print_header(const struct table *t, const size_t *shown, size_t n, FILE *out)
{
	char name[TABLE_NAME_MAX];

	if (table_out.format.noheadings)
		return 0;
	for (size_t i = 0; i < n; i++) {
		table_column_name(&t->columns[shown[i]], name, sizeof(name));
		fprintf(out, "%s%s", i ? (table_out.format.raw ? " " : "  ") : "", name);
	}
	fputc('\n', out);
	return table_finish(out);
}

/* A cell's text for libsmartcols, which copies it; raw output drops padding meant for eyes. */
static int table_set_cell(struct libscols_line *line, size_t i, const char *text)
{
	size_t len;
	char *trimmed;
	int r;

	if (!table_out.format.raw)
		return scols_line_set_data(line, i, text);
	while (*text == ' ')
		text++;
	len = strlen(text);
	while (len && text[len - 1] == ' ')
		len--;
	trimmed = strndup(text, len);
	if (!trimmed)
		return -ENOMEM;
	r = scols_line_set_data(line, i, trimmed);
	free(trimmed);
	return r;
}

static int table_render(const struct table *t, const size_t *shown, size_t n, FILE *out)
{
	size_t rows = table_rows(t);
	struct libscols_table *tb;
	char buf[TABLE_CELL_MAX], name[TABLE_NAME_MAX];
	int r = -ENOMEM;

	if (!rows)
		return table_print_header(t, shown, n, out);
	tb = scols_new_table();
	if (!tb)
		return -ENOMEM;
	if (table_out.format.raw)
		r = scols_table_enable_raw(tb, 1);
	else
		r = scols_table_set_column_separator(tb, "  ");
	if (!r)
		r = scols_table_enable_noheadings(tb, table_out.format.noheadings);
	for (size_t i = 0; !r && i < n; i++) {
		const struct table_column *column = &t->columns[shown[i]];
		int flags = table_right_aligned(column) && !table_out.format.raw ? SCOLS_FL_RIGHT : 0;

		table_column_name(column, name, sizeof(name));
		if (!scols_table_new_column(tb, name, 0, flags))
			r = -ENOMEM;
	}
	for (size_t row = 0; !r && row < rows; row++) {
		struct libscols_line *line = scols_table_new_line(tb, NULL);

		if (!line) {
			r = -ENOMEM;
			break;
		}
		for (size_t i = 0; !r && i < n; i++) {
			const struct table_column *column = &t->columns[shown[i]];

			r = table_set_cell(line, i, table_cell_text(column,
					   table_cell(t, row, shown[i]), buf));
		}
	}
	if (!r)
		r = scols_table_set_stream(tb, out);
	if (!r)
		r = scols_print_table(tb);
	scols_unref_table(tb);
	/* libsmartcols says -errno, but a failed write is only sure to show in out. */
	if (r < 0 && r != -ENOMEM)
		r = -EIO;
	return r ? r : table_finish(out);
}

static const char *table_kind_name(enum table_kind kind)
{
	switch (kind) {
	case TABLE_STRING:
		return "text";
	case TABLE_UINT:
		return "count";
	case TABLE_BYTES:
		return "size";
	case TABLE_BOOL:
		return "yes/no";
	}
	return "-";
}

/* --list-columns: what -o can name in t, as a table of its own. */
static int table_print_columns(const struct table *t, FILE *out)
{
	static const struct table_column columns[] = {
		{ "Column", "column", TABLE_STRING },
		{ "Type", "type", TABLE_STRING },
		{ "JSON", "json", TABLE_STRING },
		{ "Default", "default", TABLE_BOOL },
	};
	static const size_t all[] = { 0, 1, 2, 3 };
	struct table *list;
	char name[TABLE_NAME_MAX];
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &list);
	if (r < 0)
		return r;
	for (size_t c = 0; c < t->n_columns; c++) {
		table_column_name(&t->columns[c], name, sizeof(name));
		table_add_string(list, name);
		table_add_string(list, table_kind_name(t->columns[c].kind));
		table_add_string(list, t->columns[c].key);
		table_add_bool(list, !t->columns[c].hidden);
	}
	r = list->error ? list->error : table_render(list, all, ARRAY_SIZE(all), out);
	table_free(list);
	return r;
}

/*
 * What table_print and table_print_fields share: the format's columns of t
 * into *shown (the caller frees it), or 1 when t is not to be printed as
 * rows: left out, or its columns listed instead.
 */
static int table_prepare(const struct table *t, FILE *out, size_t **shown, size_t *n)
{
	if (t->error)
		return t->error;
	if (table_out.format.list_columns) {
		int r = table_print_columns(t, out);

		table_meet(t);
		return r < 0 ? r : 1;
	}
	*shown = calloc(t->n_columns + table_out.n_wanted, sizeof(**shown));
	if (!*shown)
		return -ENOMEM;
	if (table_select(t, *shown, n)) {
		if (table_out.gap && table_out.printed)
			fputc('\n', out);
		table_out.gap = false;
		table_out.printed = true;
		return 0;
	}
	free(*shown);
	*shown = NULL;
	return 1;
}

void table_gap(FILE *out)
{
	if (table_out.n_wanted)
		table_out.gap = true;
	else
		fputc('\n', out);
}

int table_print(const struct table *t, FILE *out)
{
	size_t *shown = NULL, n = 0;
	int r;

	r = table_prepare(t, out, &shown, &n);
	if (r)
		return r < 0 ? r : 0;
	r = table_render(t, shown, n, out);
	free(shown);
	return r;
}

static void table_pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

int table_print_fields(const struct table *t, FILE *out)
{
	size_t rows = table_rows(t);
	size_t width = 0, *shown = NULL, n = 0;
	char buf[TABLE_CELL_MAX];
	int r;

	/* Raw is for programs, which want rows and columns, not blocks to parse. */
	if (table_out.format.raw && !table_out.format.list_columns)
		return table_print(t, out);
	r = table_prepare(t, out, &shown, &n);
	if (r)
		return r < 0 ? r : 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(t->columns[shown[i]].header);

		if (len > width)
			width = len;
	}
	for (size_t row = 0; row < rows; row++) {
		if (row)
			fputc('\n', out);
		for (size_t i = 0; i < n; i++) {
			const struct table_column *column = &t->columns[shown[i]];

			if (!table_out.format.noheadings) {
				fprintf(out, "%s:", column->header);
				table_pad(out, width - strlen(column->header) + 2);
			}
			fprintf(out, "%s\n", table_cell_text(column, table_cell(t, row, shown[i]), buf));
		}
	}
	free(shown);
	return table_finish(out);
}

/* "'A', 'B'": the names wanted (found or not), for the message. */
static void table_put_wanted(FILE *f, bool found)
{
	const char *sep = "";

	for (size_t i = 0; i < table_out.n_wanted; i++) {
		if (table_out.wanted[i].found != found)
			continue;
		fprintf(f, "%s'%s'", sep, table_out.wanted[i].name);
		sep = ", ";
	}
}

static size_t table_count_unfound(void)
{
	size_t n = 0;

	for (size_t i = 0; i < table_out.n_wanted; i++)
		n += !table_out.wanted[i].found;
	return n;
}

/* After a check: a new command's output starts from nothing met. */
static void table_start_over(void)
{
	table_out.n_tables = 0;
	table_out.split = false;
	table_out.whole = false;
	table_out.printed = false;
	table_out.gap = false;
	for (size_t i = 0; i < table_out.n_wanted; i++)
		table_out.wanted[i].found = false;
	memset(table_out.met, 0, sizeof(table_out.met));
}

/* What table_check_format says, or NULL when out of memory. */
static char *table_format_message(size_t unfound)
{
	char *text = NULL, name[TABLE_NAME_MAX];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (unfound) {
		fprintf(f, "unknown column%s ", unfound > 1 ? "s" : "");
		table_put_wanted(f, false);
	} else {
		fputs("the columns ", f);
		table_put_wanted(f, true);
		fputs(" are not all in one table", f);
	}
	fputs("; the columns:", f);
	for (size_t m = 0; m < TABLE_MET_MAX && table_out.met[m]; m++) {
		fputs(m ? "; or" : "", f);
		for (size_t c = 0; c < table_out.n_met[m]; c++) {
			table_column_name(&table_out.met[m][c], name, sizeof(name));
			fprintf(f, "%s %s", c ? "," : "", name);
		}
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int table_check_format(char **message)
{
	size_t unfound = table_count_unfound();
	bool wrong = table_out.n_tables && !table_out.format.list_columns &&
		     (unfound || (table_out.split && !table_out.whole));

	if (wrong)
		*message = table_format_message(unfound);
	table_start_over();
	return wrong ? -ENOKEY : 0;
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
