/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "table.h"
#include "array.h"


static const struct table_column columns[] = {
	{ "Name", "name", TABLE_STRING },
	{ "Size", "size_bytes", TABLE_BYTES },
	{ "Extents", "extents", TABLE_UINT },
	{ "Grows", "grows", TABLE_BOOL },
	{ "Device", "dev", TABLE_STRING },
};

/* What a print function wrote, as a string the caller frees. */
static char *render(int (*print)(const struct table *, FILE *), const struct table *t, int *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	*r = print(t, f);
	CHECK_OK(fclose(f));
	return text;
}

static void check_print(int (*print)(const struct table *, FILE *), const struct table *t,
			const char *expected)
{
	int r;
	char *text = render(print, t, &r);

	CHECK_OK(r);
	CHECK_STR(text, expected);
	free(text);
}

static void check_json(const struct table *t, const char *expected)
{
	struct json_object *json = NULL;

	CHECK_OK(table_to_json(t, &json));
	CHECK_STR(json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE),
		  expected);
	json_object_put(json);
}

/* Two rows, the second with absent cells, the last column wider than its header. */
static struct table *make_table(void)
{
	struct table *t = NULL;

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_OK(table_add_string(t, "tank"));
	CHECK_OK(table_add_uint(t, UINT64_C(1) << 30));
	CHECK_OK(table_add_uint(t, 256));
	CHECK_OK(table_add_bool(t, true));
	CHECK_OK(table_add_string(t, "/dev/mapper/tank"));
	CHECK_OK(table_add_string(t, "archive-2"));
	CHECK_OK(table_add_absent(t));
	CHECK_OK(table_add_uint(t, 7));
	CHECK_OK(table_add_bool(t, false));
	CHECK_OK(table_add_string(t, NULL));
	CHECK_UINT(table_rows(t), 2);
	return t;
}

static void test_text(void)
{
	struct table *t = make_table();

	/* Numbers right-aligned under right-aligned headers; no trailing blanks. */
	check_print(table_print, t,
		    "NAME          SIZE  EXTENTS  GROWS  DEVICE\n"
		    "tank       1.0 GiB      256  yes    /dev/mapper/tank\n"
		    "archive-2        -        7  no     -\n");
	table_free(t);
}

static void test_json(void)
{
	struct table *t = make_table();

	/* Bytes stay exact integers; absent cells are null, not "-". */
	check_json(t, "[{\"name\":\"tank\",\"size_bytes\":1073741824,\"extents\":256,"
		      "\"grows\":true,\"dev\":\"/dev/mapper/tank\"},"
		      "{\"name\":\"archive-2\",\"size_bytes\":null,\"extents\":7,"
		      "\"grows\":false,\"dev\":null}]");
	table_free(t);
}

static void test_fields(void)
{
	struct table *t = make_table();
	struct json_object *row = NULL;

	check_print(table_print_fields, t,
		    "Name:     tank\n"
		    "Size:     1.0 GiB\n"
		    "Extents:  256\n"
		    "Grows:    yes\n"
		    "Device:   /dev/mapper/tank\n"
		    "\n"
		    "Name:     archive-2\n"
		    "Size:     -\n"
		    "Extents:  7\n"
		    "Grows:    no\n"
		    "Device:   -\n");
	CHECK_OK(table_row_to_json(t, 1, &row));
	CHECK_STR(json_object_to_json_string_ext(row, JSON_C_TO_STRING_PLAIN),
		  "{\"name\":\"archive-2\",\"size_bytes\":null,\"extents\":7,\"grows\":false,"
		  "\"dev\":null}");
	json_object_put(row);
	CHECK_INT(table_row_to_json(t, 2, &row), -EINVAL);
	table_free(t);
}

/* A number column's header sits right-aligned over it even when the header is the wider. */
static void test_last_column_number(void)
{
	static const struct table_column cols[] = {
		{ "Tier", "tier", TABLE_STRING },
		{ "Reserved", "reserved", TABLE_UINT },
	};
	struct table *t = NULL;

	CHECK_OK(table_new(cols, ARRAY_SIZE(cols), &t));
	CHECK_OK(table_add_string(t, "ssd"));
	CHECK_OK(table_add_uint(t, 4));
	CHECK_OK(table_add_string(t, "hdd"));
	CHECK_OK(table_add_uint(t, 123456789012));
	check_print(table_print, t,
		    "TIER      RESERVED\n"
		    "ssd              4\n"
		    "hdd   123456789012\n");
	table_free(t);
}

static void test_empty(void)
{
	struct table *t = NULL;

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_UINT(table_rows(t), 0);
	check_print(table_print, t, "NAME  SIZE  EXTENTS  GROWS  DEVICE\n");
	check_print(table_print_fields, t, "");
	check_json(t, "[]");
	table_free(t);
}

/* Cells not added yet in the last row show as absent. */
static void test_partial_row(void)
{
	struct table *t = NULL;

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_OK(table_add_string(t, "x"));
	CHECK_OK(table_add_uint(t, 1536));
	CHECK_UINT(table_rows(t), 1);
	check_print(table_print, t,
		    "NAME     SIZE  EXTENTS  GROWS  DEVICE\n"
		    "x     1.5 KiB        -  -      -\n");
	check_json(t, "[{\"name\":\"x\",\"size_bytes\":1536,\"extents\":null,\"grows\":null,"
		      "\"dev\":null}]");
	table_free(t);
}

static void test_members(void)
{
	struct json_object *obj = json_tokener_parse(
		"{\"name\":\"tank\",\"size_bytes\":4194304,\"extents\":18446744073709551615,"
		"\"grows\":true,\"unused\":1}");
	struct table *t = NULL;

	CHECK(obj);
	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	/* "dev" is missing: absent, not an error. */
	CHECK_OK(table_add_members(t, obj, ARRAY_SIZE(columns)));
	CHECK_OK(table_add_json(t, json_object_object_get(obj, "name")));
	CHECK_OK(table_add_json(t, NULL));
	CHECK_OK(table_add_members(t, obj, 2));
	check_print(table_print, t,
		    "NAME     SIZE               EXTENTS  GROWS  DEVICE\n"
		    "tank  4.0 MiB  18446744073709551615  yes    -\n"
		    "tank        -  18446744073709551615  yes    -\n");
	check_json(t, "[{\"name\":\"tank\",\"size_bytes\":4194304,\"extents\":18446744073709551615,"
		      "\"grows\":true,\"dev\":null},"
		      "{\"name\":\"tank\",\"size_bytes\":null,\"extents\":18446744073709551615,"
		      "\"grows\":true,\"dev\":null}]");
	table_free(t);
	json_object_put(obj);
}

/* A wrong cell fails, and keeps failing: a caller may check once, at print. */
static void test_errors_stick(void)
{
	static const char *const wrong[] = {
		"\"text\"",  /* a string into a bytes column */
		"-1",        /* a negative size */
		"1.5",
		"[1]",
		"true",
	};
	struct table *t = NULL;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(wrong); i++) {
		struct json_object *v = json_tokener_parse(wrong[i]);
		char *text;

		CHECK(v);
		CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
		CHECK_OK(table_add_string(t, "tank"));
		CHECK_INT(table_add_json(t, v), -EINVAL);
		CHECK_INT(table_add_uint(t, 1), -EINVAL);
		CHECK_UINT(table_rows(t), 1);
		text = render(table_print, t, &r);
		CHECK_INT(r, -EINVAL);
		CHECK_STR(text, "");
		free(text);
		table_free(t);
		json_object_put(v);
	}

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_INT(table_add_uint(t, 1), -EINVAL);
	CHECK_INT(table_add_string(t, "tank"), -EINVAL);
	table_free(t);

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_OK(table_add_string(t, "tank"));
	CHECK_INT(table_add_bool(t, true), -EINVAL);
	table_free(t);

	CHECK_OK(table_new(columns, ARRAY_SIZE(columns), &t));
	CHECK_OK(table_add_string(t, "tank"));
	CHECK_OK(table_add_uint(t, 1));
	CHECK_INT(table_add_string(t, "7"), -EINVAL);
	CHECK_INT(table_to_json(t, &(struct json_object *){ NULL }), -EINVAL);
	CHECK_INT(table_row_to_json(t, 0, &(struct json_object *){ NULL }), -EINVAL);
	table_free(t);

	CHECK_INT(table_new(columns, 0, &t), -EINVAL);
	table_free(NULL);
}

static void test_write_error(void)
{
	struct table *t = make_table();
	char buf[16];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	CHECK(f);
	/* fmemopen buffers more than 16 bytes, so the failure shows at the flush. */
	CHECK_INT(table_print(t, f), -EIO);
	fclose(f);
	table_free(t);
}


/* Sets -o and the rest; the tests put the default back with table_set_format(NULL). */
static void set_format(const char *list, bool noheadings, bool raw, bool bytes)
{
	struct table_format f = {
		.columns = list, .noheadings = noheadings, .raw = raw, .bytes = bytes,
	};

	CHECK_OK(table_set_format(&f));
}

/* table_check_format's result, with its message compared when there is one. */
static void check_format(const char *expected)
{
	char *message = NULL;

	if (!expected) {
		CHECK_OK(table_check_format(&message));
		return;
	}
	CHECK_INT(table_check_format(&message), -ENOKEY);
	CHECK(message);
	CHECK_STR(message, expected);
	free(message);
}

static void test_column_names(void)
{
	static const struct table_column col = { "Min residency", "min_residency_seconds",
						 TABLE_STRING };
	char buf[8];

	CHECK_UINT(table_column_name(&col, buf, sizeof(buf)), 13);
	CHECK_STR(buf, "MIN-RES");
	CHECK_UINT(table_column_name(&col, buf, 1), 13);
	CHECK_STR(buf, "");
}

static void test_output_columns(void)
{
	struct table *t = make_table();

	/* Chosen and reordered, in any case; numbers stay right-aligned. */
	set_format("device,Size,NAME", false, false, false);
	check_print(table_print, t,
		    "DEVICE               SIZE  NAME\n"
		    "/dev/mapper/tank  1.0 GiB  tank\n"
		    "-                       -  archive-2\n");
	check_format(NULL);
	/* '+': the default ones, then these. */
	set_format("+name", false, false, false);
	check_print(table_print, t,
		    "NAME          SIZE  EXTENTS  GROWS  DEVICE            NAME\n"
		    "tank       1.0 GiB      256  yes    /dev/mapper/tank  tank\n"
		    "archive-2        -        7  no     -                 archive-2\n");
	check_format(NULL);
	/* JSON is the whole reply whatever -o says. */
	check_json(t, "[{\"name\":\"tank\",\"size_bytes\":1073741824,\"extents\":256,"
		      "\"grows\":true,\"dev\":\"/dev/mapper/tank\"},"
		      "{\"name\":\"archive-2\",\"size_bytes\":null,\"extents\":7,"
		      "\"grows\":false,\"dev\":null}]");
	CHECK_OK(table_set_format(NULL));
	table_free(t);
}

static void test_hidden(void)
{
	static const struct table_column cols[] = {
		{ "Name", "name", TABLE_STRING },
		{ "UUID", "uuid", TABLE_STRING, .hidden = true },
		{ "Size", "size_bytes", TABLE_BYTES },
	};
	struct table *t = NULL;

	CHECK_OK(table_new(cols, ARRAY_SIZE(cols), &t));
	CHECK_OK(table_add_string(t, "tank"));
	CHECK_OK(table_add_string(t, "8d1c"));
	CHECK_OK(table_add_uint(t, 4096));
	check_print(table_print, t,
		    "NAME     SIZE\n"
		    "tank  4.0 KiB\n");
	set_format("+UUID", false, false, false);
	check_print(table_print, t,
		    "NAME     SIZE  UUID\n"
		    "tank  4.0 KiB  8d1c\n");
	check_print(table_print_fields, t,
		    "Name:  tank\n"
		    "Size:  4.0 KiB\n"
		    "UUID:  8d1c\n");
	check_format(NULL);
	CHECK_OK(table_set_format(NULL));
	check_json(t, "[{\"name\":\"tank\",\"uuid\":\"8d1c\",\"size_bytes\":4096}]");
	table_free(t);
}

static void test_noheadings_bytes(void)
{
	struct table *t = make_table();

	/* As lsblk -n: the names still count for the widths (libsmartcols does so). */
	set_format(NULL, true, false, true);
	check_print(table_print, t,
		    "tank       1073741824      256  yes    /dev/mapper/tank\n"
		    "archive-2           -        7  no     -\n");
	check_print(table_print_fields, t,
		    "tank\n1073741824\n256\nyes\n/dev/mapper/tank\n"
		    "\n"
		    "archive-2\n-\n7\nno\n-\n");
	CHECK_OK(table_set_format(NULL));
	table_free(t);
}

/* As lsblk --raw: one space apart, blanks and backslashes escaped, padding dropped. */
static void test_raw(void)
{
	static const struct table_column cols[] = {
		{ "Name", "name", TABLE_STRING },
		{ "SSD share", "ssd_io_share", TABLE_STRING },
		{ "Size", "size_bytes", TABLE_BYTES },
	};
	struct table *t = NULL;

	CHECK_OK(table_new(cols, ARRAY_SIZE(cols), &t));
	CHECK_OK(table_add_string(t, "my pool\\x"));
	CHECK_OK(table_add_string(t, "  5.0%"));
	CHECK_OK(table_add_uint(t, 1536));
	CHECK_OK(table_add_string(t, "tab\there"));
	CHECK_OK(table_add_absent(t));
	CHECK_OK(table_add_uint(t, 3));
	/* Aligned text escapes what would break the columns too, but keeps blanks. */
	check_print(table_print, t,
		    "NAME          SSD-SHARE     SIZE\n"
		    "my pool\\x5cx    5.0%     1.5 KiB\n"
		    "tab\\x09here   -              3 B\n");
	set_format(NULL, false, true, false);
	check_print(table_print, t,
		    "NAME SSD-SHARE SIZE\n"
		    "my\\x20pool\\x5cx 5.0% 1.5\\x20KiB\n"
		    "tab\\x09here - 3\\x20B\n");
	/* Fields for programs are rows too. */
	check_print(table_print_fields, t,
		    "NAME SSD-SHARE SIZE\n"
		    "my\\x20pool\\x5cx 5.0% 1.5\\x20KiB\n"
		    "tab\\x09here - 3\\x20B\n");
	set_format("size", true, true, true);
	check_print(table_print, t, "1536\n3\n");
	CHECK_OK(table_set_format(NULL));
	table_free(t);
}

/* Of a command's several tables, -o picks the one with all its columns. */
static void test_several_tables(void)
{
	static const struct table_column other[] = {
		{ "Tier", "tier", TABLE_STRING },
		{ "Reserved", "reserved", TABLE_UINT },
	};
	struct table *a = make_table(), *b = NULL, *c = NULL;

	CHECK_OK(table_new(other, 1, &c));
	CHECK_OK(table_add_string(c, "hdd"));
	CHECK_OK(table_new(other, ARRAY_SIZE(other), &b));
	CHECK_OK(table_add_string(b, "ssd"));
	CHECK_OK(table_add_uint(b, 4));

	set_format("reserved", false, false, false);
	check_print(table_print, a, "");
	check_print(table_print_fields, a, "");
	check_print(table_print, b, "RESERVED\n       4\n");
	check_format(NULL);

	/* Each name is in some table, but not in one. */
	set_format("TIER,name", false, false, false);
	check_print(table_print, a, "");
	check_print(table_print, b, "");
	check_format("the columns 'TIER', 'name' are not all in one table; the columns: NAME, SIZE,"
		     " EXTENTS, GROWS, DEVICE; or TIER, RESERVED");

	/* A table with some of the names is left out when another has them all. */
	set_format("Tier,Reserved", false, false, false);
	check_print(table_print, c, "");
	check_print(table_print, b, "TIER  RESERVED\nssd          4\n");
	check_format(NULL);

	/* An unknown name: a usage error naming it, and the table is not printed. */
	set_format("+nope,Size,bad", false, false, false);
	check_print(table_print, a, "");
	check_format("unknown columns 'nope', 'bad'; the columns: NAME, SIZE, EXTENTS, GROWS, DEVICE");
	/* The check starts over; a table met twice is listed once. */
	check_format(NULL);
	check_print(table_print, a, "");
	check_print(table_print, a, "");
	check_format("unknown columns 'nope', 'bad'; the columns: NAME, SIZE, EXTENTS, GROWS, DEVICE");

	/* No table printed: nothing to hold the names against. */
	set_format("nope", false, false, false);
	check_format(NULL);
	CHECK_OK(table_set_format(NULL));
	check_format(NULL);
	table_free(a);
	table_free(b);
	table_free(c);
}

static void test_list_columns(void)
{
	struct table *t = make_table();
	struct table_format f = { .columns = "nope", .list_columns = true };

	CHECK_OK(table_set_format(&f));
	check_print(table_print, t,
		    "COLUMN   TYPE    JSON        DEFAULT\n"
		    "NAME     text    name        yes\n"
		    "SIZE     size    size_bytes  yes\n"
		    "EXTENTS  count   extents     yes\n"
		    "GROWS    yes/no  grows       yes\n"
		    "DEVICE   text    dev         yes\n");
	f.raw = true;
	f.noheadings = true;
	CHECK_OK(table_set_format(&f));
	check_print(table_print_fields, t,
		    "NAME text name yes\n"
		    "SIZE size size_bytes yes\n"
		    "EXTENTS count extents yes\n"
		    "GROWS yes/no grows yes\n"
		    "DEVICE text dev yes\n");
	/* Listing is not showing: -o is not held against the list. */
	check_format(NULL);
	CHECK_OK(table_set_format(NULL));
	table_free(t);
}

static void test_bad_format(void)
{
	static const char *const bad[] = { "", "+", "a,,b", "a,", ",a" };
	struct table_format f = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		f.columns = bad[i];
		CHECK_INT(table_set_format(&f), -EINVAL);
	}
	/* A failed set leaves the default. */
	check_format(NULL);
}

/* What a view with a gap between its parts prints: parts a, b, a again. */
static char *render_parts(struct table *a, struct table *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	CHECK_OK(table_print_fields(a, f));
	table_gap(f);
	CHECK_OK(table_print(b, f));
	table_gap(f);
	CHECK_OK(table_print(a, f));
	CHECK_OK(fclose(f));
	return text;
}

static void test_gap(void)
{
	static const struct table_column other[] = {
		{ "Tier", "tier", TABLE_STRING },
	};
	struct table *a = NULL, *b = NULL;
	char *text;

	CHECK_OK(table_new(columns, 1, &a));
	CHECK_OK(table_add_string(a, "tank"));
	CHECK_OK(table_new(other, ARRAY_SIZE(other), &b));
	CHECK_OK(table_add_string(b, "ssd"));
	text = render_parts(a, b);
	CHECK_STR(text, "Name:  tank\n\nTIER\nssd\n\nNAME\ntank\n");
	free(text);
	/* Under -o no blank line leads, and one stands between two parts shown. */
	set_format("name", false, false, false);
	text = render_parts(a, b);
	CHECK_STR(text, "Name:  tank\n\nNAME\ntank\n");
	free(text);
	check_format(NULL);
	set_format("tier", false, false, false);
	text = render_parts(a, b);
	CHECK_STR(text, "TIER\nssd\n");
	free(text);
	check_format(NULL);
	CHECK_OK(table_set_format(NULL));
	table_free(a);
	table_free(b);
}

int main(void)
{
	test_text();
	test_json();
	test_fields();
	test_last_column_number();
	test_empty();
	test_partial_row();
	test_members();
	test_errors_stick();
	test_write_error();
	test_column_names();
	test_output_columns();
	test_hidden();
	test_noheadings_bytes();
	test_raw();
	test_several_tables();
	test_list_columns();
	test_bad_format();
	test_gap();
	return 0;
}
