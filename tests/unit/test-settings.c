/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tierd.conf: the line parser (lib/conffile.c) and the settings over it (tierd/settings.c). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "conffile.h"
#include "settings.h"

struct seen {
	char text[1024];
};

static int record(unsigned line, const char *name, const char *value, void *ctx, char *err,
		  size_t err_len)
{
	struct seen *s = ctx;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%u:%s=[%s];", line, name, value);
	return 0;
}

static int parse(const char *text, struct seen *s, char *err, size_t err_len)
{
	s->text[0] = '\0';
	return conffile_parse(text, strlen(text), record, s, err, err_len);
}

static void test_conffile_good(void)
{
	struct seen s;
	char err[256];

	CHECK_OK(parse("", &s, err, sizeof(err)));
	CHECK_STR(s.text, "");
	CHECK_OK(parse("# a comment\n\n   \t\n  # indented comment\n", &s, err, sizeof(err)));
	CHECK_STR(s.text, "");
	CHECK_OK(parse("a = 1\nb-c=two words  \n\tverbose =yes\r\n", &s, err, sizeof(err)));
	CHECK_STR(s.text, "1:a=[1];2:b-c=[two words];3:verbose=[yes];");
	/* No newline at the end; an empty value; quotes keep inner and outer spaces. */
	CHECK_OK(parse("x =\ny = \" a b \"\nz = 5", &s, err, sizeof(err)));
	CHECK_STR(s.text, "1:x=[];2:y=[ a b ];3:z=[5];");
	/* '#' inside a value is part of it: paths may hold one. */
	CHECK_OK(parse("p = /srv/a#b\n", &s, err, sizeof(err)));
	CHECK_STR(s.text, "1:p=[/srv/a#b];");
}

static void test_conffile_bad(void)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "a = 1\njust words\n", "line 2: expected NAME = VALUE" },
		{ " = 3\n", "line 1: a setting without a name" },
		{ "Sample = 3\n", "line 1: 'Sample' is not a setting name (lower-case letters, digits and '-')" },
		{ "a b = 3\n", "line 1: 'a b' is not a setting name (lower-case letters, digits and '-')" },
		{ "\n\np = \"/srv\n", "line 3: the quote in p's value is not closed" },
		{ "p = \"\n", "line 1: the quote in p's value is not closed" },
	};
	struct seen s;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(parse(cases[i].text, &s, err, sizeof(err)), -EINVAL);
		CHECK_STR(err, cases[i].err);
	}
	/* A NUL byte, and a line past the limit. */
	CHECK_INT(conffile_parse("a = 1\nb\0= 2\n", 12, record, &s, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "line 2: a NUL byte (not a text file?)");
	{
		char *big = malloc(CONFFILE_LINE_MAX + 10);

		CHECK(big);
		memset(big, 'a', CONFFILE_LINE_MAX + 9);
		big[CONFFILE_LINE_MAX + 9] = '\0';
		CHECK_INT(parse(big, &s, err, sizeof(err)), -EINVAL);
		CHECK_STR(err, "line 1: longer than 1024 bytes");
		free(big);
	}
}

static void test_settings_parse(void)
{
	static const char file[] = "state-dir = /srv/tierd state\n"
				   "sample-interval = 5\n"
				   "verify-moves = yes\n"
				   "activate-degraded = on\n"
				   "metrics-listen = [::1]:9477\n"
				   "client-timeout = 0\n"
				   "heat-kernel-memory = 1.5G\n"
				   "table-targets = 4096\n"
				   "piece-copy = mirror\n"
				   "piece-size = 4KiB\n";
	struct settings s;
	char err[512];

	CHECK_OK(settings_init(&s));
	CHECK_STR(s.state_dir, TIERD_DEFAULT_STATE_DIR);
	CHECK_UINT(s.sample_interval, 10);
	CHECK_UINT(s.device_timeout, 30);
	CHECK_UINT(s.heat_kernel_memory, 0);
	CHECK_UINT(s.table_targets, 65536);
	CHECK(!s.verify_moves && !s.policy_dir && !s.metrics_listen);
	CHECK_UINT(s.piece_copy, SETTINGS_PIECE_COPY_HELD);
	CHECK_UINT(s.piece_size, 16384);
	CHECK_OK(settings_parse(&s, file, strlen(file), err, sizeof(err)));
	CHECK_STR(s.state_dir, "/srv/tierd state");
	CHECK_UINT(s.sample_interval, 5);
	CHECK(s.verify_moves && s.activate_degraded);
	CHECK_STR(s.metrics_listen, "[::1]:9477");
	CHECK_UINT(s.client_timeout, 0);
	CHECK_UINT(s.heat_kernel_memory, UINT64_C(3) << 29);
	CHECK_UINT(s.table_targets, 4096);
	CHECK_UINT(s.piece_copy, SETTINGS_PIECE_COPY_MIRROR);
	CHECK_UINT(s.piece_size, 4096);
	CHECK_OK(settings_set(&s, "piece-size", "64K", err, sizeof(err)));
	CHECK_UINT(s.piece_size, 65536);
	CHECK_OK(settings_set(&s, "piece-copy", "held", err, sizeof(err)));
	CHECK_UINT(s.piece_copy, SETTINGS_PIECE_COPY_HELD);
	CHECK_OK(settings_set(&s, "heat-kernel-memory", "auto", err, sizeof(err)));
	CHECK_UINT(s.heat_kernel_memory, 0);
	/* An empty value unsets what may be unset. */
	CHECK_OK(settings_set(&s, "metrics-listen", "", err, sizeof(err)));
	CHECK(!s.metrics_listen);
	settings_free(&s);
	settings_free(&s); /* twice, and NULL, are fine */
	settings_free(NULL);
}

static void test_settings_bad(void)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "sample-interval = 0\n", "line 1: sample-interval takes 1 to 86400, not '0'" },
		{ "sample-interval = 10s\n", "line 1: sample-interval takes 1 to 86400, not '10s'" },
		{ "sample-interval = -1\n", "line 1: sample-interval takes 1 to 86400, not '-1'" },
		{ "sample-interval = 99999999999999999999\n",
		  "line 1: sample-interval takes 1 to 86400, not '99999999999999999999'" },
		{ "heat-half-life = 59\n", "line 1: heat-half-life takes 60 to 31536000, not '59'" },
		{ "heat-kernel-memory = 512K\n", "line 1: heat-kernel-memory takes auto or a size"
		  " from 1 MiB to 64 GiB (64M, 1.5G), not '512K'" },
		{ "heat-kernel-memory = lots\n", "line 1: heat-kernel-memory takes auto or a size"
		  " from 1 MiB to 64 GiB (64M, 1.5G), not 'lots'" },
		{ "table-targets = 1000000\n",
		  "line 1: table-targets takes 64 to 524288, not '1000000'" },
		{ "verify-moves = maybe\n", "line 1: verify-moves takes yes or no, not 'maybe'" },
		{ "piece-copy = Held\n", "line 1: piece-copy takes held or mirror, not 'Held'" },
		{ "piece-size = 12K\n", "line 1: piece-size takes a power of two from 4 KiB to"
		  " 64 KiB (4K, 16K, 64K), not '12K'" },
		{ "piece-size = 2K\n", "line 1: piece-size takes a power of two from 4 KiB to"
		  " 64 KiB (4K, 16K, 64K), not '2K'" },
		{ "piece-size = 128K\n", "line 1: piece-size takes a power of two from 4 KiB to"
		  " 64 KiB (4K, 16K, 64K), not '128K'" },
		{ "state-dir = var/lib\n", "line 1: state-dir takes an absolute path, not 'var/lib'" },
		{ "state-dir =\n", "line 1: state-dir takes an absolute path, not ''" },
		{ "metrics-listen = localhost:9477\n",
		  "line 1: metrics-listen takes ADDRESS:PORT with an IP address (127.0.0.1:9477,"
		  " [::1]:9477), not 'localhost:9477'" },
		{ "config = /etc/x\n", "line 1: there is no setting 'config' (tierd.conf(5) lists them)" },
		{ "# ok\nflush-interval = 5\n\nflush-interval = 6\n",
		  "line 4: flush-interval is already set on line 2" },
	};
	struct settings s;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_OK(settings_init(&s));
		CHECK_INT(settings_parse(&s, cases[i].text, strlen(cases[i].text), err, sizeof(err)),
			  -EINVAL);
		CHECK_STR(err, cases[i].err);
		settings_free(&s);
	}
	CHECK_OK(settings_init(&s));
	CHECK_INT(settings_set(&s, "no-such", "1", err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "there is no setting 'no-such'");
	settings_free(&s);
}

struct diffs {
	char text[1024];
};

static void record_diff(const char *name, const char *was, const char *now, bool reloadable,
			void *ctx)
{
	struct diffs *d = ctx;
	size_t n = strlen(d->text);

	snprintf(d->text + n, sizeof(d->text) - n, "%s:%s>%s%s;", name, was, now,
		 reloadable ? "" : "(restart)");
}

static void test_settings_load(void)
{
	char dir[] = "/tmp/test-settings.XXXXXX", path[128], err[1024];
	struct settings_overrides ov = { 0 };
	struct settings a, b;
	struct diffs d = { "" };
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tierd.conf", dir);
	/* A missing file: the defaults, unless it was asked for by name. */
	CHECK_OK(settings_load(&a, path, false, NULL, err, sizeof(err)));
	CHECK_UINT(a.sample_interval, 10);
	settings_free(&a);
	CHECK_INT(settings_load(&a, path, true, NULL, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "cannot read ") && strstr(err, "No such file or directory"));
	settings_free(&a);

	f = fopen(path, "w");
	CHECK(f);
	fputs("sample-interval = 5\nsocket = /run/x.sock\nverbose = yes\npiece-copy = mirror\n"
	      "piece-size = 64K\n", f);
	fclose(f);
	ov.v[ov.nr].name = "sample-interval";
	ov.v[ov.nr++].value = "7"; /* the command line wins */
	CHECK_OK(settings_load(&a, path, true, &ov, err, sizeof(err)));
	CHECK_UINT(a.sample_interval, 7);
	CHECK_STR(a.socket, "/run/x.sock");
	CHECK(a.verbose);

	CHECK_OK(settings_init(&b));
	settings_diff(&b, &a, record_diff, &d);
	CHECK_STR(d.text, "socket:/run/tierd/tierd.sock>/run/x.sock(restart);"
			  "sample-interval:10>7;piece-copy:held>mirror;piece-size:16K>64K(restart);"
			  "verbose:no>yes;");
	d.text[0] = '\0';
	settings_diff(&a, &a, record_diff, &d);
	CHECK_STR(d.text, "");
	settings_free(&b);

	/* A bad file names itself and its line; a bad override its option. */
	f = fopen(path, "w");
	CHECK(f);
	fputs("\nflush-interval = never\n", f);
	fclose(f);
	CHECK_INT(settings_load(&b, path, true, &ov, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "/tierd.conf line 2: flush-interval takes 1 to 86400, not 'never'"));
	settings_free(&b);
	unlink(path);
	ov.v[0].value = "0";
	CHECK_INT(settings_load(&b, path, false, &ov, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "--sample-interval takes 1 to 86400, not '0'");
	settings_free(&b);
	/* A folder where the file should be. */
	CHECK_INT(settings_load(&b, dir, true, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a regular file"));
	settings_free(&b);
	settings_free(&a);
	rmdir(dir);
}

int main(void)
{
	test_conffile_good();
	test_conffile_bad();
	test_settings_parse();
	test_settings_bad();
	test_settings_load();
	return 0;
}
