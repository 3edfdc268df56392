/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
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
	return 0;
}
