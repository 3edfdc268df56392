/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "collector.h"
#include "exporter.h"
#include "metrics.h"

static char *render(struct metrics *m)
{
	size_t len = 0;
	char *text = NULL;

	CHECK_OK(metrics_render(m, &text, &len));
	CHECK_UINT(len, strlen(text));
	return text;
}

static void test_exposition(void)
{
	static const struct metrics_def defs[] = {
		{ "demo_moved_bytes_total", METRICS_COUNTER, "Bytes moved." },
		{ "demo_up", METRICS_GAUGE, "1 when up." },
		{ "demo_empty_extents", METRICS_GAUGE, "No sample." },
	};
	const struct metrics_label promote[] = { { "pool", "tank" }, { "direction", "promote" } };
	const struct metrics_label demote[] = { { "pool", "tank" }, { "direction", "demote" } };
	struct metrics *m;
	char *text;

	CHECK_OK(metrics_new(&m, defs, 3));
	/* Out of family order: the text groups them anyway. */
	CHECK_OK(metrics_add(m, 1, NULL, 0, 1));
	CHECK_OK(metrics_add(m, 0, promote, 2, 12582912));
	CHECK_OK(metrics_add(m, 0, demote, 2, UINT64_MAX));
	text = render(m);
	CHECK_STR(text, "# HELP demo_moved_bytes_total Bytes moved.\n"
			"# TYPE demo_moved_bytes_total counter\n"
			"demo_moved_bytes_total{pool=\"tank\",direction=\"promote\"} 12582912\n"
			"demo_moved_bytes_total{pool=\"tank\",direction=\"demote\"} 18446744073709551615\n"
			"# HELP demo_up 1 when up.\n"
			"# TYPE demo_up gauge\n"
			"demo_up 1\n"
			"# HELP demo_empty_extents No sample.\n"
			"# TYPE demo_empty_extents gauge\n");
	free(text);
	metrics_free(m);

	CHECK_OK(metrics_new(&m, NULL, 0));
	text = render(m);
	CHECK_STR(text, "");
	free(text);
	metrics_free(m);
	metrics_free(NULL);
}

static void test_escaping(void)
{
	static const struct metrics_def defs[] = {
		{ "demo_info", METRICS_GAUGE, "A \\ backslash\nand a \"quote\"." },
	};
	const struct metrics_label l[] = { { "path", "C:\\dir \"x\"\nnext" } };
	struct metrics *m;
	char *text;

	CHECK_OK(metrics_new(&m, defs, 1));
	CHECK_OK(metrics_add(m, 0, l, 1, 1));
	text = render(m);
	/* HELP escapes backslash and newline but not the quote; label values all three. */
	CHECK_STR(text, "# HELP demo_info A \\\\ backslash\\nand a \"quote\".\n"
			"# TYPE demo_info gauge\n"
			"demo_info{path=\"C:\\\\dir \\\"x\\\"\\nnext\"} 1\n");
	free(text);
	metrics_free(m);
}

static void test_doubles(void)
{
	static const struct metrics_def defs[] = { { "demo_ratio", METRICS_GAUGE, "A share." } };
	const double values[] = { 0.1, 0.5, -2, 1e300, 1.0 / 3, NAN, INFINITY, -INFINITY };
	struct metrics *m;
	char *text;

	CHECK_OK(metrics_new(&m, defs, 1));
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		CHECK_OK(metrics_add_double(m, 0, NULL, 0, values[i]));
	text = render(m);
	CHECK_STR(text, "# HELP demo_ratio A share.\n"
			"# TYPE demo_ratio gauge\n"
			"demo_ratio 0.1\n"
			"demo_ratio 0.5\n"
			"demo_ratio -2\n"
			"demo_ratio 1e+300\n"
			"demo_ratio 0.33333333333333331\n"
			"demo_ratio NaN\n"
			"demo_ratio +Inf\n"
			"demo_ratio -Inf\n");
	free(text);
	metrics_free(m);
}

static void test_bad_samples(void)
{
	static const struct metrics_def defs[] = { { "demo_up", METRICS_GAUGE, "Up." } };
	const struct metrics_label good[] = { { "pool", "tank" } };
	const struct metrics_label bad[][2] = {
		{ { "pool-name", "tank" } },
		{ { "0pool", "tank" } },
		{ { "__name__", "tank" } },
		{ { "", "tank" } },
		{ { "pool", NULL } },
		{ { "pool", "a" }, { "pool", "b" } },
	};
	struct metrics *m;
	size_t len;
	char *text;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_OK(metrics_new(&m, defs, 1));
		CHECK_OK(metrics_add(m, 0, good, 1, 1));
		CHECK_INT(metrics_add(m, 0, bad[i], bad[i][1].name ? 2 : 1, 1), -EINVAL);
		/* The first failure sticks: a collector checks once, at the end. */
		CHECK_INT(metrics_add(m, 0, good, 1, 1), -EINVAL);
		CHECK_INT(metrics_render(m, &text, &len), -EINVAL);
		metrics_free(m);
	}
	CHECK_OK(metrics_new(&m, defs, 1));
	CHECK_INT(metrics_add(m, 1, NULL, 0, 1), -EINVAL);
	metrics_free(m);
	CHECK_OK(metrics_check_label("direction"));
	CHECK_OK(metrics_check_label("_x9"));
}

static void test_names(void)
{
	static const struct {
		const char *name;
		enum metrics_type type;
	} good[] = {
		{ "tierd_runs_total", METRICS_COUNTER },
		{ "tierd_migrated_bytes_total", METRICS_COUNTER },
		{ "tierd_tier_size_bytes", METRICS_GAUGE },
		{ "tierd_heat_half_life_seconds", METRICS_GAUGE },
		{ "tierd_build_info", METRICS_GAUGE },
		{ "x", METRICS_GAUGE },
		{ "http2_requests_total", METRICS_COUNTER },
	};
	static const struct {
		const char *name;
		enum metrics_type type;
	} bad[] = {
		{ "", METRICS_GAUGE },
		{ "tierd_runs", METRICS_COUNTER },            /* a counter without _total */
		{ "_total", METRICS_COUNTER },                /* nothing before _total */
		{ "tierd_used_total", METRICS_GAUGE },        /* a gauge with _total */
		{ "tierd-runs_total", METRICS_COUNTER },      /* '-' */
		{ "tierd runs_total", METRICS_COUNTER },
		{ "9tierd_up", METRICS_GAUGE },
		{ "tierd:runs_total", METRICS_COUNTER },      /* recording rules' colon */
		{ "tierdRuns_total", METRICS_COUNTER },       /* camel case */
		{ "__tierd_up", METRICS_GAUGE },
		{ "tierd__up", METRICS_GAUGE },
		{ "tierd_up_", METRICS_GAUGE },
		{ "tierd_latency_milliseconds", METRICS_GAUGE }, /* not a base unit */
		{ "tierd_moved_kib_total", METRICS_COUNTER },
		{ "tierd_wait_ms", METRICS_GAUGE },
		{ "tierd_bytes_moved_total", METRICS_COUNTER },  /* the unit is not last */
		{ "tierd_seconds_idle", METRICS_GAUGE },
		{ "tierd_moves_count", METRICS_GAUGE },          /* a summary's suffix */
		{ "tierd_moves_sum", METRICS_GAUGE },
		{ "tierd_moves_bucket", METRICS_GAUGE },
		{ "tierd_ssd_percent", METRICS_GAUGE },
	};
	static const struct metrics_def twice[] = {
		{ "tierd_up", METRICS_GAUGE, "Up." },
		{ "tierd_up", METRICS_GAUGE, "Up again." },
	};
	static const struct metrics_def bad_def[] = { { "tierd_runs", METRICS_COUNTER, "Runs." } };
	struct metrics *m;
	const char *why;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		why = NULL;
		if (metrics_check_name(good[i].name, good[i].type, &why) < 0)
			fprintf(stderr, "%s: %s\n", good[i].name, why);
		CHECK_OK(metrics_check_name(good[i].name, good[i].type, NULL));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (metrics_check_name(bad[i].name, bad[i].type, &why) == 0)
			fprintf(stderr, "'%s' passed\n", bad[i].name);
		CHECK_INT(metrics_check_name(bad[i].name, bad[i].type, &why), -EINVAL);
		CHECK(why && *why);
	}
	CHECK_INT(metrics_check_name(NULL, METRICS_GAUGE, NULL), -EINVAL);
	CHECK_INT(metrics_new(&m, twice, 2), -EINVAL);
	CHECK_INT(metrics_new(&m, bad_def, 1), -EINVAL);
}

/* What the daemon serves obeys the rules, and names its units where it has one. */
static void test_daemon_names(void)
{
	size_t nr;
	const struct metrics_def *defs = collector_families(&nr);
	struct metrics *m;

	CHECK(nr >= 15);
	for (size_t i = 0; i < nr; i++) {
		const char *why = NULL;
		size_t len = strlen(defs[i].name);

		if (metrics_check_name(defs[i].name, defs[i].type, &why) < 0)
			fprintf(stderr, "%s: %s\n", defs[i].name, why);
		CHECK_OK(metrics_check_name(defs[i].name, defs[i].type, NULL));
		CHECK(!strncmp(defs[i].name, "tierd_", 6));
		CHECK(defs[i].help && *defs[i].help);
		/* A size is in bytes; a count of extents says so. */
		if (strstr(defs[i].name, "size") || strstr(defs[i].name, "kernel"))
			CHECK(!strcmp(defs[i].name + len - 6, "_bytes"));
		if (strstr(defs[i].name, "extents"))
			CHECK(strstr(defs[i].name, "_extents") + 8 == defs[i].name + len ||
			      !strcmp(defs[i].name + len - 14, "_extents_total"));
	}
	CHECK_OK(metrics_new(&m, defs, nr));
	metrics_free(m);
}

/*
 * One sample line of family name, as a scraper reads it: the name, then
 * optionally {label="value",...} with only \\, \" and \n escaped in a
 * value, a space and a number. The line's end is returned, NULL if it
 * does not parse.
 */
static const char *lint_sample(const char *line, const char *name)
{
	size_t n = strlen(name);
	const char *p = line;
	char *end;

	if (strncmp(p, name, n))
		return NULL;
	p += n;
	if (*p == '{') {
		do {
			p++;
			if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
				return NULL;
			while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')
				p++;
			if (*p++ != '=' || *p++ != '"')
				return NULL;
			for (; *p != '"'; p++) {
				if (!*p || *p == '\n')
					return NULL;
				if (*p == '\\' && (!*++p || !strchr("\\\"n", *p)))
					return NULL;
			}
			p++;
		} while (*p == ',');
		if (*p++ != '}')
			return NULL;
	}
	if (*p++ != ' ')
		return NULL;
	strtod(p, &end);
	if (end == p || *end != '\n')
		return NULL;
	return end;
}

/*
 * What promtool check metrics would say of the daemon's exposition: a
 * sample of every family, with label values that need escaping, read back
 * line by line. HELP and TYPE once per family and in that order, every
 * sample under its own family's TYPE, every line parses.
 */
static void test_daemon_exposition(void)
{
	const struct metrics_label l[] = {
		{ "pool", "ta\"nk" }, { "tier", "back\\slash" }, { "uuid", "new\nline" },
	};
	size_t nr, lines = 0;
	const struct metrics_def *defs = collector_families(&nr);
	const char *p;
	struct metrics *m;
	char *text;

	CHECK_OK(metrics_new(&m, defs, nr));
	for (size_t i = nr; i-- > 0;) {
		CHECK_OK(metrics_add(m, i, l, 3, i));
		CHECK_OK(metrics_add_double(m, i, l, 1, 0.25));
	}
	text = render(m);
	p = text;
	for (size_t i = 0; i < nr; i++) {
		char help[256], type[128];
		const char *kind = defs[i].type == METRICS_COUNTER ? "counter" : "gauge";
		int samples = 0;

		snprintf(help, sizeof(help), "# HELP %s ", defs[i].name);
		snprintf(type, sizeof(type), "# TYPE %s %s\n", defs[i].name, kind);
		CHECK(!strncmp(p, help, strlen(help)));
		/* A HELP text has no raw newline: it ends its line. */
		p = strchr(p, '\n') + 1;
		CHECK(!strncmp(p, type, strlen(type)));
		p += strlen(type);
		lines += 2;
		while (*p && *p != '#') {
			const char *end = lint_sample(p, defs[i].name);

			if (!end)
				fprintf(stderr, "does not parse: %.*s\n", (int)strcspn(p, "\n"), p);
			CHECK(end != NULL);
			p = end + 1;
			samples++;
			lines++;
		}
		CHECK_INT(samples, 2);
	}
	CHECK(*p == '\0');
	CHECK_UINT(lines, 4 * nr);
	CHECK(strstr(text, "{pool=\"ta\\\"nk\",tier=\"back\\\\slash\",uuid=\"new\\nline\"}"));
	free(text);
	metrics_free(m);
}

static void test_listen_addr(void)
{
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", ":9477", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:0x50", "127.0.0.1:123456",
		"localhost:9477", "::1:9477", "[::1]9477", "[::1]:", "[127.0.0.1]:9477",
		"[::1:9477", "256.0.0.1:9477", "[fe80::1%eth0]:9477",
	};
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	CHECK_OK(exporter_parse_addr("127.0.0.1:9477", &ss, &len));
	CHECK_INT(ss.ss_family, AF_INET);
	CHECK_UINT(len, sizeof(*in));
	CHECK_UINT(ntohs(in->sin_port), 9477);
	CHECK_UINT(ntohl(in->sin_addr.s_addr), 0x7f000001);
	CHECK_OK(exporter_parse_addr("0.0.0.0:65535", &ss, &len));
	CHECK_UINT(ntohs(in->sin_port), 65535);
	CHECK_OK(exporter_parse_addr("[::1]:9477", &ss, &len));
	CHECK_INT(ss.ss_family, AF_INET6);
	CHECK_UINT(len, sizeof(*in6));
	CHECK_UINT(ntohs(in6->sin6_port), 9477);
	CHECK(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
	CHECK_OK(exporter_parse_addr("[::]:1", &ss, &len));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (exporter_parse_addr(bad[i], &ss, &len) == 0)
			fprintf(stderr, "'%s' passed\n", bad[i]);
		CHECK_INT(exporter_parse_addr(bad[i], &ss, &len), -EINVAL);
	}
}

int main(void)
{
	test_exposition();
	test_escaping();
	test_doubles();
	test_bad_samples();
	test_names();
	test_daemon_names();
	test_daemon_exposition();
	test_listen_addr();
	return 0;
}
