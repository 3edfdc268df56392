/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy: the shipped files, the file format, every error with its line. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"

#define ERR_LEN 256

/* The policies directory of the source tree: argv[1], from meson. */
static const char *policies_dir;

/* Parsed numbers are one correctly rounded division: they must be exact. */
#define CHECK_DOUBLE(a, b) CHECK_NEAR(a, b, 0)

static int parse(const char *text, struct policy *p, char *err)
{
	return policy_parse("test", text, strlen(text), p, err, ERR_LEN);
}

/* The whole file, NUL-terminated for the messages only: policy_parse gets the length. */
static char *read_policy_file(const char *name, size_t *len)
{
	char path[4096];
	size_t cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	CHECK(buf != NULL);
	snprintf(path, sizeof(path), "%s/%s.policy", policies_dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	*len = 0;
	while ((n = read(fd, buf + *len, cap - *len - 1)) > 0) {
		*len += (size_t)n;
		if (*len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			CHECK(buf != NULL);
		}
	}
	CHECK(n == 0);
	close(fd);
	buf[*len] = '\0';
	return buf;
}

static void parse_shipped(const char *name, struct policy *p)
{
	char err[ERR_LEN];
	size_t len;
	char *text = read_policy_file(name, &len);
	int r = policy_parse(name, text, len, p, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "%s.policy: %s\n", name, err);
	CHECK_OK(r);
	CHECK_OK(policy_valid(p));
	CHECK_STR(p->name, name);
	/* tierctl policy list shows it: every shipped policy says what it is for. */
	CHECK(strlen(p->description) > 10);
	free(text);
}

static void test_shipped(void)
{
	struct policy def, p;

	policy_default(&def);
	parse_shipped("auto", &p);
	/* The file and the built-in must not drift apart. */
	CHECK_STR(p.description, def.description);
	CHECK_INT(p.promote, def.promote);
	CHECK_INT(p.demote, def.demote);
	CHECK_DOUBLE(p.ssd_headroom, def.ssd_headroom);
	CHECK_DOUBLE(p.hysteresis, def.hysteresis);
	CHECK_UINT(p.min_residency_s, def.min_residency_s);
	CHECK_DOUBLE(p.min_heat, def.min_heat);

	parse_shipped("highest", &p);
	CHECK_INT(p.promote, POLICY_PROMOTE_ALL);
	CHECK_INT(p.demote, POLICY_DEMOTE_NEEDED);
	CHECK_DOUBLE(p.ssd_headroom, 0);
	CHECK_DOUBLE(p.hysteresis, 1.5);
	CHECK_UINT(p.min_residency_s, 3600);

	parse_shipped("lowest", &p);
	CHECK_INT(p.promote, POLICY_PROMOTE_NONE);
	CHECK_INT(p.demote, POLICY_DEMOTE_ALL);
	CHECK_UINT(p.min_residency_s, 0);
}

static void test_default(void)
{
	struct policy p;

	policy_default(&p);
	CHECK_STR(p.name, "auto");
	CHECK_INT(p.promote, POLICY_PROMOTE_HEAT);
	CHECK_INT(p.demote, POLICY_DEMOTE_NEEDED);
	CHECK_DOUBLE(p.ssd_headroom, 0.1);
	CHECK_DOUBLE(p.hysteresis, 1.5);
	CHECK_UINT(p.min_residency_s, 3600);
	CHECK_DOUBLE(p.min_heat, 1);
	CHECK_OK(policy_valid(&p));
}

static void test_names(void)
{
	static const char *const good[] = { "auto", "a", "my-policy_2", "0", "x-" };
	static const char *const bad[] = { "", "-x", "Auto", "a b", "a/b", "..", "a.policy", "é" };
	char longest[POLICY_NAME_MAX], too_long[POLICY_NAME_MAX + 1];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK_INT(policy_name_valid(good[i]), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(policy_name_valid(bad[i]), 0);
	CHECK_INT(policy_name_valid(NULL), 0);
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	CHECK_INT(policy_name_valid(longest), 1);
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	CHECK_INT(policy_name_valid(too_long), 0);

	CHECK_STR(policy_promote_name(POLICY_PROMOTE_HEAT), "heat");
	CHECK_STR(policy_promote_name(POLICY_PROMOTE_ALL), "all");
	CHECK_STR(policy_promote_name(POLICY_PROMOTE_NONE), "none");
	CHECK_STR(policy_promote_name((enum policy_promote)7), "?");
	CHECK_STR(policy_demote_name(POLICY_DEMOTE_NEEDED), "needed");
	CHECK_STR(policy_demote_name(POLICY_DEMOTE_ALL), "all");
	CHECK_STR(policy_demote_name((enum policy_demote)-1), "?");
}

static void test_valid(void)
{
	struct policy def, p;

	policy_default(&def);
#define CHECK_BAD(field, value)                       \
	do {                                          \
		p = def;                              \
		p.field = (value);                    \
		CHECK_INT(policy_valid(&p), -EINVAL); \
	} while (0)
	CHECK_BAD(ssd_headroom, -0.01);
	CHECK_BAD(ssd_headroom, 0.51);
	CHECK_BAD(ssd_headroom, 0.0 / 0.0);
	CHECK_BAD(hysteresis, 0.99);
	CHECK_BAD(hysteresis, 101);
	CHECK_BAD(min_residency_s, POLICY_RESIDENCY_MAX_S + 1);
	CHECK_BAD(min_heat, -1);
	CHECK_BAD(min_heat, 1.0 / 0.0);
	CHECK_BAD(promote, (enum policy_promote)3);
	CHECK_BAD(demote, (enum policy_demote)2);
	CHECK_BAD(demote, POLICY_DEMOTE_ALL); /* with promote = heat */
	CHECK_BAD(name[0], '\0');
#undef CHECK_BAD
	p = def;
	memset(p.description, 'x', sizeof(p.description));
	CHECK_INT(policy_valid(&p), -EINVAL);
	CHECK_INT(policy_valid(NULL), -EINVAL);
	p = def;
	p.promote = POLICY_PROMOTE_NONE;
	p.demote = POLICY_DEMOTE_ALL;
	CHECK_OK(policy_valid(&p));
}

static void test_format(void)
{
	struct policy p;
	char err[ERR_LEN];
	const char *text;

	/* Nothing at all: the defaults, named after the file, without auto's description. */
	CHECK_OK(policy_parse("empty", "", 0, &p, err, sizeof(err)));
	CHECK_STR(p.name, "empty");
	CHECK_STR(p.description, "");
	CHECK_INT(p.promote, POLICY_PROMOTE_HEAT);
	CHECK_DOUBLE(p.ssd_headroom, 0.1);
	CHECK_UINT(p.min_residency_s, 3600);
	CHECK_OK(policy_parse("empty", NULL, 0, &p, err, sizeof(err)));

	text = "# a comment\n"
	       "\n"
	       "   \t\n"
	       "  # an indented comment\n"
	       "description =   Fast:  the # stays,  inner  blanks too  \n"
	       "promote=all\n"
	       "\tdemote\t=\tneeded\t\n"
	       "ssd_headroom = 12.5%\r\n"
	       "hysteresis = 2\n"
	       "min_residency = 1h30m\n"
	       "min_heat = 0.25"; /* no newline at the end */
	CHECK_OK(parse(text, &p, err));
	CHECK_STR(err, "");
	CHECK_STR(p.name, "test");
	CHECK_STR(p.description, "Fast:  the # stays,  inner  blanks too");
	CHECK_INT(p.promote, POLICY_PROMOTE_ALL);
	CHECK_INT(p.demote, POLICY_DEMOTE_NEEDED);
	CHECK_DOUBLE(p.ssd_headroom, 0.125);
	CHECK_DOUBLE(p.hysteresis, 2);
	CHECK_UINT(p.min_residency_s, 5400);
	CHECK_DOUBLE(p.min_heat, 0.25);

	/* The length counts, not a terminating NUL: the rest of the buffer is not read. */
	text = "promote = none\ngarbage";
	CHECK_OK(policy_parse("t", text, strlen("promote = none\n"), &p, err, sizeof(err)));
	CHECK_INT(p.promote, POLICY_PROMOTE_NONE);
	text = "promote = nonesense";
	CHECK_OK(policy_parse("t", text, strlen("promote = none"), &p, err, sizeof(err)));

	CHECK_OK(parse("description =\n", &p, err));
	CHECK_STR(p.description, "");
	CHECK_OK(parse("promote = none\ndemote = all\n", &p, err));
	CHECK_INT(p.demote, POLICY_DEMOTE_ALL);
	CHECK_OK(parse("demote = all\npromote = none\n", &p, err));
}

/* One value of one key: accepted with this result, or refused with the key's message. */
struct value_case {
	const char *value;
	double want; /* < 0: refused */
};

static double value_of(const struct policy *p, const char *key)
{
	if (!strcmp(key, "ssd_headroom"))
		return p->ssd_headroom;
	if (!strcmp(key, "hysteresis"))
		return p->hysteresis;
	if (!strcmp(key, "min_residency"))
		return p->min_residency_s;
	return p->min_heat;
}

static void check_values(const char *key, const struct value_case *cases, size_t nr,
			 const char *message)
{
	struct policy p, before;
	char text[256], err[ERR_LEN], want_err[ERR_LEN];

	snprintf(want_err, sizeof(want_err), "line 2: %s", message);
	for (size_t i = 0; i < nr; i++) {
		snprintf(text, sizeof(text), "# value\n%s = %s\n", key, cases[i].value);
		memset(&p, 0x5a, sizeof(p));
		before = p;
		if (cases[i].want >= 0) {
			if (parse(text, &p, err) < 0)
				fprintf(stderr, "%s: %s\n", text, err);
			CHECK_OK(parse(text, &p, err));
			CHECK_DOUBLE(value_of(&p, key), cases[i].want);
		} else {
			if (parse(text, &p, err) == 0)
				fprintf(stderr, "accepted: %s", text);
			CHECK_INT(parse(text, &p, err), -EINVAL);
			CHECK_STR(err, want_err);
			/* Nothing half-parsed reaches the caller. */
			CHECK(!memcmp(&p, &before, sizeof(p)));
		}
	}
}

#define CHECK_VALUES(key, cases, message) \
	check_values(key, cases, sizeof(cases) / sizeof(cases[0]), message)

static void test_values(void)
{
	static const struct value_case headroom[] = {
		{ "10%", 0.1 }, { "0.1", 0.1 }, { "0", 0 }, { "0%", 0 }, { "50%", 0.5 },
		{ "0.5", 0.5 }, { "12.5%", 0.125 }, { "007%", 0.07 }, { "0.000001", 0.000001 },
		{ "51%", -1 }, { "0.51", -1 }, { "-1%", -1 }, { "10 %", -1 }, { "%", -1 },
		{ "1e-1", -1 }, { ".1", -1 }, { "1.", -1 }, { "0,1", -1 }, { "ten", -1 },
		{ "", -1 }, { "10%%", -1 }, { "+0.1", -1 }, { "0.1234567890123456", -1 },
	};
	static const struct value_case hysteresis[] = {
		{ "1", 1 }, { "1.5", 1.5 }, { "100", 100 }, { "100.0", 100 }, { "2.25", 2.25 },
		{ "0.99", -1 }, { "0", -1 }, { "100.01", -1 }, { "inf", -1 }, { "nan", -1 },
		{ "1e1", -1 }, { "0x2", -1 }, { "2x", -1 }, { "", -1 }, { "1 .5", -1 },
		{ "9999999999999999999999", -1 },
	};
	static const struct value_case residency[] = {
		{ "0", 0 }, { "0s", 0 }, { "0m", 0 }, { "30m", 1800 }, { "6h", 21600 },
		{ "1d", 86400 }, { "1h30m", 5400 }, { "1d2h3m4s", 93784 }, { "90s", 90 },
		{ "120m", 7200 }, { "365d", 365 * 86400.0 }, { "364d24h", 365 * 86400.0 },
		{ "366d", -1 }, { "365d1s", -1 }, { "30", -1 }, { "1m1h", -1 }, { "1h1h", -1 },
		{ "h", -1 }, { "1x", -1 }, { "1H", -1 }, { "", -1 }, { "1.5h", -1 }, { "1 h", -1 },
		{ "1h 30m", -1 }, { "-1h", -1 }, { "00", -1 }, { "9999999999s", -1 },
	};
	static const struct value_case min_heat[] = {
		{ "0", 0 }, { "1", 1 }, { "2.5", 2.5 }, { "1000000000", 1e9 },
		{ "1000000000.1", -1 }, { "-1", -1 }, { "1e3", -1 }, { "", -1 }, { "one", -1 },
	};

	CHECK_VALUES("ssd_headroom", headroom,
		     "ssd_headroom must be a percentage from 0% to 50% "
		     "or a fraction from 0 to 0.5");
	CHECK_VALUES("hysteresis", hysteresis, "hysteresis must be a number from 1 to 100");
	CHECK_VALUES("min_residency", residency,
		     "min_residency must be a duration from 0 to 365d, like 30m, 6h, 1d or 1h30m");
	CHECK_VALUES("min_heat", min_heat, "min_heat must be a number from 0 to 1000000000");
}

struct error_case {
	const char *text;
	size_t len; /* 0: strlen(text) */
	const char *err;
};

static void test_errors(void)
{
	static const struct error_case cases[] = {
		{ "foo = 1\n", 0, "line 1: unknown key \"foo\"" },
		{ "# x\n\nPromote = heat\n", 0, "line 3: unknown key \"Promote\"" },
		{ "promote = heat\npromote = all\n", 0,
		  "line 2: duplicate key \"promote\" (first on line 1)" },
		{ "description = a\n\n\ndescription = a\n", 0,
		  "line 4: duplicate key \"description\" (first on line 1)" },
		{ "promote = heat\nmin_heat 1\n", 0, "line 2: expected \"key = value\"" },
		{ "= heat\n", 0, "line 1: expected \"key = value\"" },
		{ "promote\n", 0, "line 1: expected \"key = value\"" },
		{ "promote : heat\n", 0, "line 1: expected \"key = value\"" },
		{ "promote = hot\n", 0, "line 1: promote must be heat, all or none" },
		{ "promote = HEAT\n", 0, "line 1: promote must be heat, all or none" },
		{ "promote = heat # hottest\n", 0, "line 1: promote must be heat, all or none" },
		{ "demote = some\n", 0, "line 1: demote must be needed or all" },
		{ "demote = all\n", 0, "line 1: demote = all needs promote = none" },
		{ "demote = all\n#\npromote = all\n", 0,
		  "line 3: demote = all needs promote = none" },
		{ "promote = heat\n\ndemote = all\n", 0,
		  "line 3: demote = all needs promote = none" },
		{ "# fine\npromote = heat\0\n", sizeof("# fine\npromote = heat\0\n") - 1,
		  "line 2: NUL byte" },
		{ "\0", 1, "line 1: NUL byte" },
		{ "# ok\n# a\0comment\n", sizeof("# ok\n# a\0comment\n") - 1, "line 2: NUL byte" },
		{ "description = bell\a\n", 0, "line 1: control character 0x07" },
		{ "# x\r\rpromote = heat\n", 0, "line 1: control character 0x0d" },
		{ "#\n#\x7f\n", 0, "line 2: control character 0x7f" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa = 1", 0,
		  "line 1: unknown key \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"" },
	};
	struct policy p, before;
	char err[ERR_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);

		memset(&p, 0x5a, sizeof(p));
		before = p;
		CHECK_INT(policy_parse("t", cases[i].text, len, &p, err, sizeof(err)), -EINVAL);
		CHECK_STR(err, cases[i].err);
		CHECK(!memcmp(&p, &before, sizeof(p)));
	}
}

static void test_description_length(void)
{
	char text[400], err[ERR_LEN];
	struct policy p;
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "description = ");
	memset(text + n, 'd', POLICY_DESCRIPTION_MAX - 1);
	text[n + POLICY_DESCRIPTION_MAX - 1] = '\0';
	CHECK_OK(parse(text, &p, err));
	CHECK_UINT(strlen(p.description), POLICY_DESCRIPTION_MAX - 1);
	strcat(text, "d");
	CHECK_INT(parse(text, &p, err), -EINVAL);
	CHECK_STR(err, "line 1: description must be at most 255 bytes");
	/* UTF-8 is text, not control characters. */
	CHECK_OK(parse("description = für die Ablage\n", &p, err));
	CHECK_STR(p.description, "für die Ablage");
}

static void test_arguments(void)
{
	struct policy p;
	char err[ERR_LEN], tiny[12];

	CHECK_INT(policy_parse("bad name", "", 0, &p, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "invalid policy name");
	CHECK_INT(policy_parse(NULL, "", 0, &p, err, sizeof(err)), -EINVAL);
	CHECK_INT(policy_parse("ok", "", 0, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT(policy_parse("ok", NULL, 1, &p, err, sizeof(err)), -EINVAL);
	/* No room for a message is no reason to crash or to accept. */
	CHECK_INT(policy_parse("ok", "x", 1, &p, NULL, 0), -EINVAL);
	CHECK_INT(policy_parse("ok", "x", 1, &p, err, 0), -EINVAL);
	CHECK_INT(policy_parse("ok", "foo = 1", 7, &p, tiny, sizeof(tiny)), -EINVAL);
	CHECK_STR(tiny, "line 1: unk");
	CHECK_INT(policy_parse("ok", "foo = 1", 7, &p, tiny, 5), -EINVAL);
	CHECK_STR(tiny, "line");
	/* A successful parse leaves an empty message. */
	strcpy(err, "stale");
	CHECK_OK(policy_parse("ok", "", 0, &p, err, sizeof(err)));
	CHECK_STR(err, "");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POLICIES-DIR\n", argv[0]);
		return 1;
	}
	policies_dir = argv[1];
	test_default();
	test_names();
	test_valid();
	test_format();
	test_values();
	test_errors();
	test_description_length();
	test_arguments();
	test_shipped();
	return 0;
}
