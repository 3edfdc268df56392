/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "schedule.h"

/* POSIX rules, so that no tzdata is needed. */
#define TZ_BERLIN "CET-1CEST,M3.5.0,M10.5.0/3"
#define TZ_NEW_YORK "EST5EDT,M3.2.0,M11.1.0"
#define TZ_UTC "UTC0"
/*
 * Clocks change at midnight: 00:00 -> 01:00 in October, 00:00 -> 23:00
 * the day before in February.
 */
#define TZ_BRASILIA_OLD "BRT3BRST,M10.3.0/0,M2.3.0/0"
/* Lord Howe Island: a 30-minute change. */
#define TZ_LORD_HOWE "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0"

#define HOUR 3600
#define DAY 86400

#define USAGE "use manual, auto, every DURATION, daily HH:MM or cron \"MIN HOUR DOM MON DOW\""

static void set_tz(const char *tz)
{
	CHECK(setenv("TZ", tz, 1) == 0);
	tzset();
}

/* A UTC time as unix seconds. */
static int64_t utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi };

	return (int64_t)timegm(&tm);
}

static int64_t local_of(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	CHECK(localtime_r(&tt, &tm));
	return t + tm.tm_gmtoff;
}

static struct schedule parse(const char *spec, const char *window)
{
	struct schedule s;
	char err[256] = "";

	if (schedule_parse(spec, &s, err, sizeof(err)))
		check_fail_(__FILE__, __LINE__, err);
	if (window)
		CHECK_OK(schedule_parse_window(window, &s, err, sizeof(err)));
	return s;
}

static int64_t next_of(const struct schedule *s, int64_t after, int64_t last_start)
{
	int64_t t = -42;

	CHECK_OK(schedule_next(s, after, last_start, &t));
	return t;
}

static void test_parse_format(void)
{
	static const struct {
		const char *spec, *canonical;
	} cases[] = {
		{ "manual", "manual" },
		{ "  AUTO\t", "auto" },
		{ "auto", "auto" },
		{ "every 30m", "every 30m" },
		{ "every 6h", "every 6h" },
		{ "every 1d", "every 1d" },
		{ "Every   1h30m ", "every 1h30m" },
		{ "every 90m", "every 1h30m" },
		{ "every 1m", "every 1m" },
		{ "every 60s", "every 1m" },
		{ "every 90s", "every 1m30s" },
		{ "every 1d0h", "every 1d" },
		{ "every 31d", "every 31d" },
		{ "every 30d24h", "every 31d" },
		{ "every 1d2h3m4s", "every 1d2h3m4s" },
		{ "daily 01:00", "daily 01:00" },
		{ "daily 1:05", "daily 01:05" },
		{ "daily 00:00", "daily 00:00" },
		{ "daily 23:59", "daily 23:59" },
		{ "cron 0 1 * * 1-5", "cron 0 1 * * 1-5" },
		{ "cron \"0 1 * * 1-5\"", "cron 0 1 * * 1-5" },
		{ "cron '0 1 * * 1-5'", "cron 0 1 * * 1-5" },
		{ "cron \" 0  1 * *\t1-5 \"", "cron 0 1 * * 1-5" },
		{ "CRON 0 1 * * MON-fri", "cron 0 1 * * 1-5" },
		{ "cron * * * * *", "cron * * * * *" },
		{ "cron 0-59 0-23 * 1-12 *", "cron * * * * *" },
		{ "cron */15 * * * *", "cron */15 * * * *" },
		{ "cron 0,15,30,45 * * * *", "cron */15 * * * *" },
		{ "cron 0-59/20 */6 * * *", "cron */20 */6 * * *" },
		{ "cron 0 0 1-31 * *", "cron 0 0 1-31 * *" },
		{ "cron 0 0 */1 * *", "cron 0 0 * * *" },
		{ "cron 0 0 */2 * *", "cron 0 0 */2 * *" },
		{ "cron 0 0 1-31/2 * *",
		  "cron 0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 * *" },
		{ "cron 0 0 */31 * *", "cron 0 0 */31 * *" },
		{ "cron 0 0 1 * *", "cron 0 0 1 * *" },
		{ "cron 0 0 * jan-mar,DEC mon-fri", "cron 0 0 * 1-3,12 1-5" },
		{ "cron 0 0 * * 7", "cron 0 0 * * 0" },
		{ "cron 0 0 * * 5-7", "cron 0 0 * * 0,5,6" },
		{ "cron 0 0 * * 0-7", "cron 0 0 * * 0-6" },
		{ "cron 0 0 * * */2", "cron 0 0 * * */2" },
		{ "cron 0 0 * * */7", "cron 0 0 * * */7" },
		{ "cron 0 0 * * 1-7/3", "cron 0 0 * * 0,1,4" },
		{ "cron 5,10,15 8-18/2 * * sun", "cron 5,10,15 8,10,12,14,16,18 * * 0" },
		{ "cron 1,2 * * * *", "cron 1,2 * * * *" },
		{ "cron 59,0,1 * * * *", "cron 0,1,59 * * * *" },
		{ "cron 0 0 */10,5 * *", "cron 0 0 1,5,11,21,31 * *" },
		{ "cron 30 2 29 2 *", "cron 30 2 29 2 *" },
		{ "cron 0 0 13 * fri", "cron 0 0 13 * 5" },
		{ "cron 0 12 * * *", "cron 0 12 * * *" },
		{ "cron 0 23 * * *", "cron 0 23 * * *" },
	};
	char buf[SCHEDULE_FORMAT_MAX], again[SCHEDULE_FORMAT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct schedule s = parse(cases[i].spec, NULL), t;

		CHECK(!s.has_window);
		CHECK_OK(schedule_format(&s, buf, sizeof(buf)));
		CHECK_STR(buf, cases[i].canonical);
		t = parse(buf, NULL);
		CHECK(schedule_equal(&s, &t));
		CHECK_OK(schedule_format(&t, again, sizeof(again)));
		CHECK_STR(again, buf);
	}
}

static void test_parse_fields(void)
{
	struct schedule s = parse("cron 0 1 * * 1-5", NULL);

	CHECK_INT(s.kind, SCHEDULE_CRON);
	CHECK_UINT(s.cron_minute, 1);
	CHECK_UINT(s.cron_hour, 1u << 1);
	CHECK_UINT(s.cron_dom, 0xfffffffeu);
	CHECK_UINT(s.cron_month, 0x1ffe);
	CHECK_UINT(s.cron_dow, 0x3e);
	CHECK(s.cron_dom_star && !s.cron_dow_star);

	s = parse("cron * * */2 * *", NULL);
	CHECK(s.cron_dom_star && s.cron_dow_star);
	CHECK_UINT(s.cron_minute, (UINT64_C(1) << 60) - 1);
	CHECK_UINT(s.cron_hour, 0xffffff);
	CHECK_UINT(s.cron_dom, 0xaaaaaaaau);
	/* A list is a restriction even when it starts with a star. */
	CHECK(!parse("cron * * */2,4 * *", NULL).cron_dom_star);
	CHECK(!parse("cron * * 1-31 * *", NULL).cron_dom_star);

	s = parse("daily 21:45", NULL);
	CHECK_INT(s.kind, SCHEDULE_DAILY);
	CHECK_UINT(s.daily_minute, 21 * 60 + 45);
	s = parse("every 1h30m", NULL);
	CHECK_INT(s.kind, SCHEDULE_EVERY);
	CHECK_UINT(s.every_s, 5400);
	CHECK_INT(parse("manual", NULL).kind, SCHEDULE_MANUAL);
	CHECK_INT(parse("auto", NULL).kind, SCHEDULE_AUTO);

	/* A new spec replaces a window along with everything else. */
	s = parse("daily 01:00", "22:00-06:00");
	CHECK(s.has_window);
	CHECK_OK(schedule_parse("auto", &s, NULL, 0));
	CHECK(!s.has_window);
}

static void test_parse_bad(void)
{
	static const struct {
		const char *spec, *msg;
	} cases[] = {
		{ "", "empty schedule: " USAGE },
		{ " \t ", "empty schedule: " USAGE },
		{ "weekly", "unknown schedule \"weekly\": " USAGE },
		{ "hourly 5", "unknown schedule \"hourly\": " USAGE },
		{ "manual now", "manual takes no argument (got \"now\")" },
		{ "auto 5m", "auto takes no argument (got \"5m\")" },
		{ "every", "every needs a duration, e.g. every 6h" },
		{ "every 0", "every 0: the interval must be at least 1m" },
		{ "every 0m", "every 0m: the interval must be at least 1m" },
		{ "every 30s", "every 30s: the interval must be at least 1m" },
		{ "every 59s", "every 59s: the interval must be at least 1m" },
		{ "every 40d", "every 40d: the interval must be at most 31d" },
		{ "every 31d1s", "every 31d1s: the interval must be at most 31d" },
		{ "every 99999999999d", "every 99999999999d: the interval must be at most 31d" },
		{ "every 30", "every 30: a number needs a unit: d, h, m or s (e.g. 30m)" },
		{ "every 5x",
		  "every 5x: use a number and a unit (d, h, m or s), e.g. 30m, 6h or 1h30m" },
		{ "every 1h 30m",
		  "every 1h 30m: use a number and a unit (d, h, m or s), e.g. 30m, 6h or 1h30m" },
		{ "every 30m1h", "every 30m1h: put larger units first, each once (e.g. 1h30m)" },
		{ "every 1h1h", "every 1h1h: put larger units first, each once (e.g. 1h30m)" },
		{ "every -5m", NULL },
		{ "every 1.5h", NULL },
		{ "every 5M", NULL },
		{ "every h", NULL },
		{ "daily", "daily needs a time, e.g. daily 01:00" },
		{ "daily 24:00", "daily 24:00: hour 24 is out of range 0-23" },
		{ "daily 12:60", "daily 12:60: minute 60 is out of range 0-59" },
		{ "daily 1:5x", "daily 1:5x: bad time: use HH:MM, e.g. 01:00" },
		{ "daily 1:5", "daily 1:5: bad time: use HH:MM, e.g. 01:00" },
		{ "daily 001:00", NULL },
		{ "daily 0100", NULL },
		{ "daily 01:00 13:00", NULL },
		{ "daily :30", NULL },
		{ "cron", "cron needs 5 fields (MIN HOUR DOM MON DOW), got 0" },
		{ "cron 0 1 * *", "cron needs 5 fields (MIN HOUR DOM MON DOW), got 4" },
		{ "cron 0 1 * * * *", "cron needs 5 fields (MIN HOUR DOM MON DOW), got 6" },
		{ "cron \"0 1 * *\"", "cron needs 5 fields (MIN HOUR DOM MON DOW), got 4" },
		{ "cron \"0 1 * * 1-5", "cron: unbalanced quote in \"0 1 * * 1-5" },
		{ "cron \"0 1 * * 1-5'", "cron: unbalanced quote in \"0 1 * * 1-5'" },
		{ "cron 61 * * * *", "cron: minute 61 is out of range 0-59" },
		{ "cron 0-61 * * * *", "cron: minute 61 is out of range 0-59" },
		{ "cron * 24 * * *", "cron: hour 24 is out of range 0-23" },
		{ "cron * * 0 * *", "cron: day of month 0 is out of range 1-31" },
		{ "cron * * 32 * *", "cron: day of month 32 is out of range 1-31" },
		{ "cron * * * 0 *", "cron: month 0 is out of range 1-12" },
		{ "cron * * * 13 *", "cron: month 13 is out of range 1-12" },
		{ "cron * * * * 8", "cron: day of week 8 is out of range 0-7" },
		{ "cron 99999999999999999999 * * * *",
		  "cron: minute 99999999999999999999 is out of range 0-59" },
		{ "cron */0 * * * *",
		  "cron: bad step \"*/0\" in the minute field: the step must be 1-59" },
		{ "cron */60 * * * *",
		  "cron: bad step \"*/60\" in the minute field: the step must be 1-59" },
		{ "cron * * * * */8",
		  "cron: bad step \"*/8\" in the day of week field: the step must be 1-7" },
		{ "cron 5/10 * * * *",
		  "cron: bad step \"5/10\" in the minute field: use */n or a-b/n" },
		{ "cron */ * * * *", "cron: bad step \"*/\" in the minute field" },
		{ "cron */x * * * *", "cron: bad step \"*/x\" in the minute field" },
		{ "cron 1-5/2x * * * *", "cron: bad step \"1-5/2x\" in the minute field" },
		{ "cron * 5-3 * * *",
		  "cron: bad range 5-3 in the hour field: the start is after the end" },
		{ "cron * * * dec-jan *",
		  "cron: bad range dec-jan in the month field: the start is after the end" },
		{ "cron * * * * sat-sun",
		  "cron: bad range sat-sun in the day of week field: the start is after the end "
		  "(Sunday is 0 or 7)" },
		{ "cron * * * foo *", "cron: unknown month name \"foo\": use jan..dec" },
		{ "cron * * * * funday",
		  "cron: unknown day of week name \"funday\": use sun..sat" },
		{ "cron * * * * monday",
		  "cron: unknown day of week name \"monday\": use sun..sat" },
		{ "cron * * * january *", "cron: unknown month name \"january\": use jan..dec" },
		{ "cron mon * * * *", "cron: minute \"mon\" is not a number" },
		{ "cron * * jan * *", "cron: day of month \"jan\" is not a number" },
		{ "cron 1,,2 * * * *", "cron: empty list element in the minute field" },
		{ "cron 1, * * * *", "cron: empty list element in the minute field" },
		{ "cron 1- * * * *", "cron: bad minute \"1-\"" },
		{ "cron 1-5x * * * *", "cron: bad minute \"1-5x\"" },
		{ "cron -1 * * * *", "cron: bad minute \"-1\"" },
		{ "cron ** * * * *", "cron: bad minute \"**\"" },
		{ "cron 0 0 30 2 *", "cron: day of month 30 never occurs in month 2" },
		{ "cron 0 0 31 apr,jun,sep,nov *",
		  "cron: day of month 31 never occurs in month apr,jun,sep,nov" },
		{ "cron 0 0 30,31 feb */2", "cron: day of month 30,31 never occurs in month feb" },
	};
	struct schedule s, before;
	char err[512];

	memset(&before, 0x5a, sizeof(before));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = before;
		strcpy(err, "untouched");
		CHECK_INT(schedule_parse(cases[i].spec, &s, err, sizeof(err)), -EINVAL);
		if (cases[i].msg) {
			CHECK_STR(err, cases[i].msg);
		} else if (!strcmp(err, "untouched") || !*err) {
			check_fail_(__FILE__, __LINE__, cases[i].spec);
		}
		/* A failed parse leaves *out alone. */
		CHECK(!memcmp(&s, &before, sizeof(s)));
		/* And copes without a message buffer. */
		CHECK_INT(schedule_parse(cases[i].spec, &s, NULL, 0), -EINVAL);
	}
	CHECK_INT(schedule_parse(NULL, &s, err, sizeof(err)), -EINVAL);
	CHECK_INT(schedule_parse("auto", NULL, err, sizeof(err)), -EINVAL);

	/* A small message buffer truncates. */
	CHECK_INT(schedule_parse("weekly", &s, err, 8), -EINVAL);
	CHECK_STR(err, "unknown");
}

static void test_duration(void)
{
	static const struct {
		const char *text;
		int ret;
		uint32_t seconds;
		const char *canonical;
	} cases[] = {
		{ "0", 0, 0, "0s" },
		{ "0s", 0, 0, "0s" },
		{ "45s", 0, 45, "45s" },
		{ "30m", 0, 1800, "30m" },
		{ "6h", 0, 21600, "6h" },
		{ "1d", 0, 86400, "1d" },
		{ "1h30m", 0, 5400, "1h30m" },
		{ "1d1s", 0, 86401, "1d1s" },
		{ "49710d6h28m15s", 0, UINT32_MAX, "49710d6h28m15s" },
		{ "4294967295s", 0, UINT32_MAX, "49710d6h28m15s" },
		{ "4294967296s", -ERANGE, 0, NULL },
		{ "49710d6h28m16s", -ERANGE, 0, NULL },
		{ "99999999999999999999d", -ERANGE, 0, NULL },
		{ "", -EINVAL, 0, NULL },
		{ "30", -EINVAL, 0, NULL },
		{ "m", -EINVAL, 0, NULL },
		{ "1w", -EINVAL, 0, NULL },
		{ "1H", -EINVAL, 0, NULL },
		{ " 1h", -EINVAL, 0, NULL },
		{ "1h ", -EINVAL, 0, NULL },
		{ "1m1h", -EINVAL, 0, NULL },
		{ "1s1s", -EINVAL, 0, NULL },
		{ "00", -EINVAL, 0, NULL },
	};
	char buf[SCHEDULE_DURATION_FORMAT_MAX], err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = 12345;

		err[0] = '\0';
		CHECK_INT(schedule_parse_duration(cases[i].text, &v, err, sizeof(err)),
			  cases[i].ret);
		if (cases[i].ret) {
			CHECK_UINT(v, 12345);
			CHECK(err[0]);
			continue;
		}
		CHECK_UINT(v, cases[i].seconds);
		CHECK_OK(schedule_format_duration(v, buf, sizeof(buf)));
		CHECK_STR(buf, cases[i].canonical);
	}
	CHECK_INT(schedule_parse_duration("30", &(uint32_t){ 0 }, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "duration \"30\": a number needs a unit: d, h, m or s (e.g. 30m)");
	CHECK_INT(schedule_parse_duration(NULL, &(uint32_t){ 0 }, NULL, 0), -EINVAL);
	CHECK_INT(schedule_format_duration(90, buf, 3), -ENOSPC);
	CHECK_STR(buf, "1m");
}

static void test_window_parse(void)
{
	static const struct check_bad_input bad[] = {
		{ "", -EINVAL },
		{ "22:00", -EINVAL },
		{ "22:00-", -EINVAL },
		{ "-06:00", -EINVAL },
		{ "22:00-06:00-07:00", -EINVAL },
		{ "24:00-06:00", -EINVAL },
		{ "22:00-06:60", -EINVAL },
		{ "22.00-06.00", -EINVAL },
		{ "01:00-01:00", -EINVAL },
	};
	struct schedule s = parse("auto", NULL), before;
	char buf[SCHEDULE_WINDOW_FORMAT_MAX], err[256];

	CHECK_OK(schedule_format_window(&s, buf, sizeof(buf)));
	CHECK_STR(buf, "");
	CHECK_OK(schedule_parse_window("22:00-06:00", &s, err, sizeof(err)));
	CHECK(s.has_window);
	CHECK_UINT(s.window_start, 22 * 60);
	CHECK_UINT(s.window_end, 6 * 60);
	CHECK_OK(schedule_format_window(&s, buf, sizeof(buf)));
	CHECK_STR(buf, "22:00-06:00");
	CHECK_OK(schedule_parse_window(" 1:30-3:05 ", &s, err, sizeof(err)));
	CHECK_UINT(s.window_start, 90);
	CHECK_UINT(s.window_end, 185);
	CHECK_OK(schedule_format_window(&s, buf, sizeof(buf)));
	CHECK_STR(buf, "01:30-03:05");
	CHECK_OK(schedule_parse_window("22:00 - 6:00", &s, err, sizeof(err)));
	CHECK_OK(schedule_format_window(&s, buf, sizeof(buf)));
	CHECK_STR(buf, "22:00-06:00");
	CHECK_OK(schedule_parse_window("00:00-23:59", &s, err, sizeof(err)));
	CHECK_OK(schedule_format_window(&s, buf, sizeof(buf)));
	CHECK_STR(buf, "00:00-23:59");

	before = s;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT(schedule_parse_window(bad[i].text, &s, err, sizeof(err)), bad[i].err);
		CHECK(err[0]);
		CHECK(schedule_equal(&s, &before));
	}
	CHECK_INT(schedule_parse_window("01:00-01:00", &s, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "window 01:00-01:00: start and end are equal; leave the window out to "
		       "allow any time");
	CHECK_INT(schedule_parse_window("22:00", &s, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "window 22:00: use HH:MM-HH:MM, e.g. 22:00-06:00");
	CHECK_INT(schedule_parse_window("24:00-06:00", &s, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "window 24:00-06:00: hour 24 is out of range 0-23");

	/* The window takes part in equality, the spec text does not carry it. */
	{
		struct schedule a = parse("daily 01:00", "22:00-06:00");
		struct schedule b = parse("daily 01:00", NULL);

		CHECK(!schedule_equal(&a, &b));
		CHECK_OK(schedule_format(&a, buf, sizeof(buf)));
		CHECK_STR(buf, "daily 01:00");
	}
	s.window_start = s.window_end;
	CHECK_INT(schedule_format_window(&s, buf, sizeof(buf)), -EINVAL);
}

static void test_format_errors(void)
{
	struct schedule s = parse("every 1h30m", NULL), t;
	char buf[SCHEDULE_FORMAT_MAX], small[6];

	CHECK_INT(schedule_format(&s, small, sizeof(small)), -ENOSPC);
	CHECK_STR(small, "every");
	CHECK_INT(schedule_format(NULL, buf, sizeof(buf)), -EINVAL);

	s.every_s = 59;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	s.every_s = SCHEDULE_EVERY_MAX + 1;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	s.kind = (enum schedule_kind)42;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	CHECK(!schedule_kind_name(s.kind));

	s = parse("daily 01:00", NULL);
	s.daily_minute = 1440;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);

	s = parse("cron * * * * *", NULL);
	s.cron_minute |= UINT64_C(1) << 60;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	s = parse("cron * * * * *", NULL);
	s.cron_dom = 1;	/* day 0 */
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	s = parse("cron * * * * *", NULL);
	s.cron_hour = 0;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	/* A starred day field whose days no star gives. */
	s = parse("cron * * * * *", NULL);
	s.cron_dom = 1u << 5;
	CHECK_INT(schedule_format(&s, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(schedule_next(&s, utc(2026, 1, 1, 0, 0), 0, &(int64_t){ 0 }), 0);

	/* The longest canonical text: every field as long a list as it can be. */
	s = parse("cron 1,2,4,5,7,8,10,11,13,14,16,17,19,20,22,23,25,26,28,29,31,32,34,35,37,38,"
		  "40,41,43,44,46,47,49,50,52,53,55,56,58,59 1,2,4,5,7,8,10,11,13,14,16,17,19,20,"
		  "22,23 1,3,4,6,7,9,10,12,13,15,16,18,19,21,22,24,25,27,28,30,31 "
		  "2,3,5,6,8,9,11,12 0,2,3,5,6", NULL);
	CHECK_OK(schedule_format(&s, buf, sizeof(buf)));
	CHECK_UINT(strlen(buf), 245);
	t = parse(buf, NULL);
	CHECK(schedule_equal(&s, &t));
	CHECK_INT(schedule_format(&s, buf, 245), -ENOSPC);
	CHECK_UINT(strlen(buf), 244);
}

static void test_next_simple(void)
{
	int64_t t0 = utc(2026, 5, 9, 12, 0); /* a Saturday */
	struct schedule s;
	int64_t n;

	set_tz(TZ_UTC);
	s = parse("manual", NULL);
	CHECK_INT(schedule_next(&s, t0, 0, &n), -ENOENT);
	CHECK_INT(schedule_next(&s, t0, t0 - 10, &n), -ENOENT);

	s = parse("auto", NULL);
	CHECK_INT(next_of(&s, t0, 0), t0);
	CHECK_INT(next_of(&s, t0, t0 - 10), t0 + SCHEDULE_AUTO_INTERVAL - 10);
	CHECK_INT(next_of(&s, t0, t0 - SCHEDULE_AUTO_INTERVAL), t0);
	CHECK_INT(next_of(&s, t0, t0 - 3000), t0);
	CHECK_INT(next_of(&s, t0, t0), t0 + SCHEDULE_AUTO_INTERVAL);

	s = parse("every 30m", NULL);
	CHECK_INT(next_of(&s, t0, 0), t0);
	CHECK_INT(next_of(&s, t0, t0 - 600), t0 + 1200);
	CHECK_INT(next_of(&s, t0, t0 - 7200), t0);
	CHECK_INT(next_of(&s, t0 + 1, t0), t0 + 1800);
	/* The clock went back: one interval from now, not from a run in the "future". */
	CHECK_INT(next_of(&s, t0, t0 + 3600), t0 + 1800);
	CHECK_INT(next_of(&s, t0, t0 + 600), t0 + 1800);
	s = parse("every 31d", NULL);
	CHECK_INT(next_of(&s, t0, t0 - DAY), t0 + 30 * DAY);

	s = parse("daily 01:00", NULL);
	CHECK_INT(next_of(&s, t0, 0), utc(2026, 5, 10, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 1, 0), 0), utc(2026, 5, 10, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 1, 0) + 1, 0), utc(2026, 5, 11, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 0, 59), 0), utc(2026, 5, 10, 1, 0));
	/* Asked again at the run's own start, or after the clock stepped back over it. */
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 1, 0), utc(2026, 5, 10, 1, 0)),
		  utc(2026, 5, 11, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 0, 30), utc(2026, 5, 10, 1, 0)),
		  utc(2026, 5, 11, 1, 0));
	/* A last run days ahead means a clock that was wrong: it is ignored. */
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 0, 30), utc(2026, 5, 13, 1, 0)),
		  utc(2026, 5, 10, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 10, 0, 30), utc(2026, 5, 9, 1, 0)),
		  utc(2026, 5, 10, 1, 0));

	s = parse("cron 0 1 * * 1-5", NULL);
	CHECK_INT(next_of(&s, t0, 0), utc(2026, 5, 11, 1, 0)); /* Monday */
	CHECK_INT(next_of(&s, utc(2026, 5, 11, 1, 0) + 1, 0), utc(2026, 5, 12, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 15, 1, 0) + 1, 0), utc(2026, 5, 18, 1, 0));
	s = parse("cron */20 9-10 * * *", NULL);
	CHECK_INT(next_of(&s, utc(2026, 5, 9, 9, 41), 0), utc(2026, 5, 9, 10, 0));
	CHECK_INT(next_of(&s, utc(2026, 5, 9, 10, 40) + 1, 0), utc(2026, 5, 10, 9, 0));
	s = parse("cron 0 0 1 jan *", NULL);
	CHECK_INT(next_of(&s, t0, 0), utc(2027, 1, 1, 0, 0));
	s = parse("cron 0 0 31 * *", NULL);
	CHECK_INT(next_of(&s, utc(2026, 5, 31, 0, 0) + 1, 0), utc(2026, 7, 31, 0, 0));

	/* Errors. */
	s = parse("every 30m", NULL);
	CHECK_INT(schedule_next(&s, t0, 0, NULL), -EINVAL);
	CHECK_INT(schedule_next(NULL, t0, 0, &n), -EINVAL);
	s.every_s = 10;
	CHECK_INT(schedule_next(&s, t0, 0, &n), -EINVAL);
}

/* Before 1970 is refused; 1970 itself and year 9999 work. */
static void test_time_range(void)
{
	struct schedule s = parse("daily 00:30", NULL);
	int64_t n = 7;

	set_tz(TZ_BERLIN);
	CHECK_INT(schedule_next(&s, -1, 0, &n), -EINVAL);
	CHECK_INT(schedule_next(&s, INT64_MIN, 0, &n), -EINVAL);
	CHECK_INT(schedule_next(&s, 0, -60, &n), -EINVAL);
	CHECK_INT(n, 7);
	CHECK_INT(schedule_next(&s, SCHEDULE_TIME_MAX + 1, 0, &n), -ERANGE);
	CHECK_INT(schedule_next(&s, 0, SCHEDULE_TIME_MAX + 1, &n), -ERANGE);
	CHECK_INT(schedule_next(&s, INT64_MAX, 0, &n), -ERANGE);
	/* 1970-01-01 00:00 UTC is 01:00 in Berlin: 00:30 local has passed that day. */
	CHECK_INT(next_of(&s, 0, 0), utc(1970, 1, 1, 23, 30));
	s = parse("every 1h", NULL);
	CHECK_INT(next_of(&s, 0, 0), 0);
	s = parse("cron * * * * *", NULL);
	CHECK_INT(next_of(&s, 0, 0), 0);

	s = parse("daily 00:30", NULL);
	CHECK_INT(next_of(&s, SCHEDULE_TIME_MAX, 0), utc(10000, 1, 1, 23, 30));
	s = parse("cron 0 0 29 2 *", NULL);
	CHECK_INT(next_of(&s, SCHEDULE_TIME_MAX, 0), utc(10000, 2, 28, 23, 0));
	s = parse("every 31d", NULL);
	CHECK_INT(next_of(&s, SCHEDULE_TIME_MAX, SCHEDULE_TIME_MAX), SCHEDULE_TIME_MAX + 31 * DAY);
}

static void test_far_future(void)
{
	struct schedule s;
	int64_t t, prev;

	set_tz(TZ_UTC);
	s = parse("daily 03:15", NULL);
	CHECK_INT(next_of(&s, utc(2099, 12, 31, 12, 0), 0), utc(2100, 1, 1, 3, 15));
	s = parse("cron 0 0 29 2 *", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 1, 0, 0), 0), utc(2028, 2, 29, 0, 0));
	/* 2100 is no leap year: eight years to the next February 29. */
	CHECK_INT(next_of(&s, utc(2096, 3, 1, 0, 0), 0), utc(2104, 2, 29, 0, 0));
	s = parse("cron 0 12 * * mon", NULL);
	CHECK_INT(next_of(&s, utc(2099, 6, 1, 0, 0), 0), utc(2099, 6, 1, 12, 0)); /* a Monday */
	s = parse("every 6h", NULL);
	CHECK_INT(next_of(&s, utc(2099, 6, 1, 0, 0), utc(2099, 5, 31, 20, 0)),
		  utc(2099, 6, 1, 2, 0));

	/* The POSIX rule still changes the clocks in 2099: one run a day through March. */
	set_tz(TZ_BERLIN);
	s = parse("daily 02:30", NULL);
	t = utc(2099, 3, 20, 0, 0);
	prev = 0;
	for (int i = 0; i < 15; i++) {
		int64_t n = next_of(&s, t, prev);

		if (prev)
			CHECK(n - prev == DAY || n - prev == DAY - HOUR / 2);
		prev = n;
		t = n + 1;
	}
	/* The last Sunday of March 2099 is the 29th. */
	CHECK_INT(next_of(&s, utc(2099, 3, 29, 0, 0), 0), utc(2099, 3, 29, 1, 0));
}

static void test_cron_or_rule(void)
{
	static const struct {
		const char *spec;
		int days[8];
	} cases[] = {
		/* 2026-01-01 is a Thursday: Fridays are 2, 9, 16, 23, 30, then Feb 6, 13, 20. */
		{ "cron 0 12 13 * 5", { 2, 9, 13, 16, 23, 30, 37, 44 } },
		{ "cron 0 12 13 * *", { 13, 44, 72, 103, 133, 164, 194, 225 } },
		{ "cron 0 12 * * 5", { 2, 9, 16, 23, 30, 37, 44, 51 } },
		/* A starred day of month with a step still means AND (Vixie cron, cronie). */
		{ "cron 0 12 */2 * 5", { 9, 23, 44, 58, 72, 86, 93, 107 } },
		{ "cron 0 12 1,15 * sat,sun", { 1, 3, 4, 10, 11, 15, 17, 18 } },
	};

	set_tz(TZ_UTC);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct schedule s = parse(cases[i].spec, NULL);
		int64_t t = utc(2026, 1, 1, 0, 0);

		for (int k = 0; k < 8; k++) {
			int64_t n = next_of(&s, t, 0);

			CHECK_INT(n, utc(2026, 1, cases[i].days[k], 12, 0));
			t = n + 1;
		}
	}
}

static void test_cron_never(void)
{
	struct schedule s = parse("cron 0 0 * 2 *", NULL);
	int64_t n = 5;

	set_tz(TZ_UTC);
	/* What the parser refuses, built by hand. */
	s.cron_dom = 1u << 30;
	s.cron_dom_star = false;
	CHECK_INT(schedule_next(&s, utc(2026, 1, 1, 0, 0), 0, &n), -ENOENT);
	CHECK_INT(n, 5);
	s.cron_dow_star = false;
	s.cron_dow = 1u << 1;
	/* With a restricted day of week too, Mondays in February match. */
	CHECK_INT(next_of(&s, utc(2026, 1, 1, 0, 0), 0), utc(2026, 2, 2, 0, 0));
	s = parse("cron 0 0 31 * *", NULL);
	s.cron_month = 1u << 4 | 1u << 6 | 1u << 9 | 1u << 11;
	CHECK_INT(schedule_next(&s, utc(2026, 1, 1, 0, 0), 0, &n), -ENOENT);
	s.has_window = true;
	s.window_start = 60;
	s.window_end = 120;
	CHECK_INT(schedule_next(&s, utc(2026, 1, 1, 0, 0), 0, &n), -ENOENT);
}

/* Europe/Berlin 2026: 02:00 -> 03:00 on March 29, 03:00 -> 02:00 on October 25. */
static void test_dst_berlin(void)
{
	struct schedule s;
	int64_t t, n;

	set_tz(TZ_BERLIN);
	CHECK_INT(local_of(utc(2026, 3, 29, 1, 0)) - utc(2026, 3, 29, 1, 0), 2 * HOUR);
	CHECK_INT(local_of(utc(2026, 3, 29, 1, 0) - 1) - utc(2026, 3, 29, 1, 0), HOUR - 1);

	s = parse("daily 02:30", NULL);
	/* 02:30 does not exist on the 29th: it runs at 03:00 CEST, once. */
	t = utc(2026, 3, 27, 12, 0);
	n = next_of(&s, t, 0);
	CHECK_INT(n, utc(2026, 3, 28, 1, 30));	/* 02:30 CET */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 3, 29, 1, 0));	/* 03:00 CEST */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 3, 30, 0, 30));	/* 02:30 CEST */
	/* Asked from inside the gap's day, before and after. */
	CHECK_INT(next_of(&s, utc(2026, 3, 29, 0, 59), 0), utc(2026, 3, 29, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 3, 29, 1, 0), 0), utc(2026, 3, 29, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 3, 29, 1, 0) + 1, 0), utc(2026, 3, 30, 0, 30));
	/* The same minute is not run twice even if asked with `after` at it. */
	CHECK_INT(next_of(&s, utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 0)),
		  utc(2026, 3, 30, 0, 30));

	/* 02:30 happens twice on October 25: the first (CEST) one runs. */
	t = utc(2026, 10, 23, 12, 0);
	n = next_of(&s, t, 0);
	CHECK_INT(n, utc(2026, 10, 24, 0, 30));
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 10, 25, 0, 30));	/* 02:30 CEST */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 10, 26, 1, 30));	/* 02:30 CET, the next day */
	/* Asked during the repeated hour, after the first 02:30: not again that day. */
	CHECK_INT(next_of(&s, utc(2026, 10, 25, 1, 10), 0), utc(2026, 10, 26, 1, 30));
	/* Asked during the first pass, before 02:30: the first one. */
	CHECK_INT(next_of(&s, utc(2026, 10, 25, 0, 10), 0), utc(2026, 10, 25, 0, 30));

	s = parse("daily 03:00", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 28, 12, 0), 0), utc(2026, 3, 29, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 10, 24, 12, 0), 0), utc(2026, 10, 25, 2, 0));
	s = parse("daily 02:00", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 28, 12, 0), 0), utc(2026, 3, 29, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 10, 24, 12, 0), 0), utc(2026, 10, 25, 0, 0));
	s = parse("daily 01:59", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 28, 12, 0), 0), utc(2026, 3, 29, 0, 59));

	/* Every quarter hour of 02:xx on the spring day falls in the gap: one run at 03:00. */
	s = parse("cron */15 2 * * *", NULL);
	n = next_of(&s, utc(2026, 3, 28, 12, 0), 0);
	CHECK_INT(n, utc(2026, 3, 29, 1, 0));
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 3, 30, 0, 0));
	/* On the fall day, 02:00-02:45 run in the first pass only. */
	n = next_of(&s, utc(2026, 10, 24, 12, 0), 0);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(n, utc(2026, 10, 25, 0, 15 * i));
		n = next_of(&s, n + 1, n);
	}
	CHECK_INT(n, utc(2026, 10, 26, 1, 0));

	s = parse("cron 0,30 * * * *", NULL);
	n = next_of(&s, utc(2026, 3, 29, 0, 15), 0);
	CHECK_INT(n, utc(2026, 3, 29, 0, 30));	/* 01:30 CET */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 3, 29, 1, 0));	/* 02:00, 02:30 and 03:00 at 03:00 CEST */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 3, 29, 1, 30));	/* 03:30 CEST */

	/* Sunday 02:00 is the changing Sunday in both directions. */
	s = parse("cron 0 2 * * sun", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 23, 0, 0), 0), utc(2026, 3, 29, 1, 0));
	CHECK_INT(next_of(&s, utc(2026, 10, 19, 0, 0), 0), utc(2026, 10, 25, 0, 0));
	CHECK_INT(next_of(&s, utc(2026, 10, 25, 0, 0) + 1, 0), utc(2026, 11, 1, 1, 0));
}

/* America/New_York 2026: 02:00 -> 03:00 on March 8, 02:00 -> 01:00 on November 1. */
static void test_dst_new_york(void)
{
	struct schedule s;
	int64_t n;

	set_tz(TZ_NEW_YORK);
	s = parse("daily 02:30", NULL);
	CHECK_INT(next_of(&s, utc(2026, 3, 6, 12, 0), 0), utc(2026, 3, 7, 7, 30)); /* EST */
	/* 03:00 EDT */
	CHECK_INT(next_of(&s, utc(2026, 3, 7, 7, 30) + 1, 0), utc(2026, 3, 8, 7, 0));
	CHECK_INT(next_of(&s, utc(2026, 3, 8, 7, 0) + 1, 0), utc(2026, 3, 9, 6, 30));
	s = parse("daily 01:30", NULL);
	n = next_of(&s, utc(2026, 10, 31, 12, 0), 0);
	CHECK_INT(n, utc(2026, 11, 1, 5, 30));	/* 01:30 EDT */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 11, 2, 6, 30));	/* 01:30 EST, the next day */
	s = parse("cron 0 * * * *", NULL);
	n = next_of(&s, utc(2026, 11, 1, 4, 30), 0);
	CHECK_INT(n, utc(2026, 11, 1, 5, 0));	/* 01:00 EDT */
	n = next_of(&s, n + 1, n);
	CHECK_INT(n, utc(2026, 11, 1, 7, 0));	/* 02:00 EST: 01:00 EST is a repeat */
}

/*
 * An independent model of the rules: walk the real clock minute by minute
 * and run whenever the wall clock reaches or jumps over a matching minute
 * it has not shown before.
 */
static bool model_matches(const struct schedule *s, int64_t wall)
{
	time_t t = (time_t)wall;
	struct tm tm;
	bool dom, dow;

	CHECK(gmtime_r(&t, &tm));
	if (s->kind == SCHEDULE_DAILY)
		return tm.tm_hour * 60 + tm.tm_min == s->daily_minute;
	dom = s->cron_dom >> tm.tm_mday & 1;
	dow = s->cron_dow >> tm.tm_wday & 1;
	if (!(s->cron_minute >> tm.tm_min & 1) || !(s->cron_hour >> tm.tm_hour & 1) ||
	    !(s->cron_month >> (tm.tm_mon + 1) & 1))
		return false;
	return s->cron_dom_star || s->cron_dow_star ? dom && dow : dom || dow;
}

static size_t model_runs(const struct schedule *s, int64_t start, int64_t end, int64_t *out,
			 size_t max)
{
	int64_t shown = local_of(start - 60);
	size_t n = 0;

	for (int64_t x = start; x < end; x += 60) {
		int64_t l = local_of(x);
		bool run = false;

		for (int64_t w = shown + 60; w <= l && !run; w += 60)
			run = model_matches(s, w);
		if (l > shown)
			shown = l;
		if (run) {
			CHECK(n < max);
			out[n++] = x;
		}
	}
	return n;
}

/* Six days around clock changes (and a leap day, and a change in 2099). */
static const struct {
	const char *tz;
	int y, m, d;
} model_ranges[] = {
	{ TZ_UTC, 2028, 2, 26 },
	{ TZ_BERLIN, 2026, 3, 26 },
	{ TZ_BERLIN, 2026, 10, 22 },
	{ TZ_BERLIN, 2099, 3, 25 },
	{ TZ_NEW_YORK, 2026, 3, 5 },
	{ TZ_NEW_YORK, 2026, 10, 29 },
	{ TZ_BRASILIA_OLD, 2026, 2, 12 },
	{ TZ_BRASILIA_OLD, 2026, 10, 15 },
	{ TZ_LORD_HOWE, 2026, 4, 2 },
	{ TZ_LORD_HOWE, 2026, 10, 1 },
};

#define NR_MODEL_RANGES (sizeof(model_ranges) / sizeof(model_ranges[0]))

static void test_model(void)
{
	static const char *const specs[] = {
		"daily 02:30", "daily 02:00", "daily 03:00", "daily 01:59", "daily 00:00",
		"daily 23:30", "daily 00:30", "daily 02:15", "daily 01:00",
		"cron */15 * * * *", "cron 0 * * * *", "cron 30 2 * * *", "cron 0,30 1-3 * * *",
		"cron 59 1 * * *", "cron 0 2 * * 0", "cron * 2 * * *", "cron 45 23 * * *",
		"cron 0 3 25-31 3,10 sun", "cron 10 0 * * *", "cron */7 22-23,0-1 * * *",
		"cron 0 0 15 * 0", "cron 0 0 */2 * sun", "cron 0 0 29 2 *", "cron 2-58/8 * * * *",
	};
	enum { MAX_RUNS = 6 * 1440 + 8 };
	int64_t *runs = calloc(MAX_RUNS, sizeof(*runs));

	CHECK(runs);
	for (size_t r = 0; r < NR_MODEL_RANGES; r++) {
		int64_t start = utc(model_ranges[r].y, model_ranges[r].m, model_ranges[r].d, 0, 0);
		int64_t end = start + 6 * DAY;

		set_tz(model_ranges[r].tz);
		for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
			struct schedule s = parse(specs[i], NULL);
			size_t n = model_runs(&s, start, end, runs, MAX_RUNS), k;
			int64_t t = start, last = 0, got;

			/* Run after run, as the daemon asks. */
			for (k = 0; k < n; k++) {
				got = next_of(&s, t, last);
				if (got != runs[k])
					fprintf(stderr, "TZ=%s %s from %" PRId64 "\n",
						model_ranges[r].tz, specs[i], t);
				CHECK_INT(got, runs[k]);
				last = got;
				t = got + 1;
			}
			CHECK(next_of(&s, t, last) >= end);
			/* From arbitrary times, in the middle of minutes too. */
			k = 0;
			for (t = start; t < end - DAY; t += 7 * 60 + 13) {
				while (k < n && runs[k] < t)
					k++;
				if (k == n)
					break;
				got = next_of(&s, t, 0);
				if (got != runs[k])
					fprintf(stderr, "TZ=%s %s from %" PRId64 "\n",
						model_ranges[r].tz, specs[i], t);
				CHECK_INT(got, runs[k]);
			}
		}
	}
	free(runs);
}

static void test_windows(void)
{
	struct schedule s;
	int64_t d = utc(2026, 5, 9, 0, 0);

	set_tz(TZ_UTC);
	s = parse("auto", NULL);
	CHECK(schedule_in_window(&s, d));
	CHECK_INT(schedule_window_end(&s, d), INT64_MAX);
	CHECK_INT(schedule_window_next_open(&s, d), d);

	s = parse("every 30m", "22:00-06:00");
	CHECK(schedule_in_window(&s, d + 23 * HOUR));
	CHECK(schedule_in_window(&s, d + 22 * HOUR));
	CHECK(schedule_in_window(&s, d + 6 * HOUR - 1));
	CHECK(schedule_in_window(&s, d));
	CHECK(!schedule_in_window(&s, d + 6 * HOUR));
	CHECK(!schedule_in_window(&s, d + 22 * HOUR - 1));
	CHECK(!schedule_in_window(&s, d + 12 * HOUR));
	CHECK_INT(schedule_window_end(&s, d + 23 * HOUR), d + DAY + 6 * HOUR);
	CHECK_INT(schedule_window_end(&s, d + 3 * HOUR), d + 6 * HOUR);
	CHECK_INT(schedule_window_end(&s, d + 12 * HOUR), d + 12 * HOUR);
	CHECK_INT(schedule_window_next_open(&s, d + 12 * HOUR), d + 22 * HOUR);
	CHECK_INT(schedule_window_next_open(&s, d + 6 * HOUR), d + 22 * HOUR);
	CHECK_INT(schedule_window_next_open(&s, d + 23 * HOUR), d + 23 * HOUR);
	/* A run due at 05:50 starts then; one due at 06:10 waits for 22:00. */
	CHECK_INT(next_of(&s, d + 5 * HOUR + 50 * 60, d + 5 * HOUR + 20 * 60),
		  d + 5 * HOUR + 50 * 60);
	CHECK_INT(next_of(&s, d + 5 * HOUR + 50 * 60, d + 5 * HOUR + 40 * 60), d + 22 * HOUR);
	CHECK_INT(next_of(&s, d + 12 * HOUR, 0), d + 22 * HOUR);

	s = parse("daily 12:00", "22:00-06:00");
	CHECK_INT(next_of(&s, d, 0), d + 22 * HOUR);
	CHECK_INT(next_of(&s, d + 22 * HOUR + 1, d + 22 * HOUR), d + DAY + 22 * HOUR);
	s = parse("daily 01:00", "22:00-06:00");
	CHECK_INT(next_of(&s, d + 12 * HOUR, 0), d + DAY + HOUR);

	/* Hourly: the runs due outside the window become one at its opening. */
	s = parse("cron 0 * * * *", "22:00-06:00");
	CHECK_INT(next_of(&s, d + 6 * HOUR + 1, 0), d + 22 * HOUR);
	CHECK_INT(next_of(&s, d + 22 * HOUR + 1, d + 22 * HOUR), d + 23 * HOUR);
	CHECK_INT(next_of(&s, d + DAY + 5 * HOUR + 1, 0), d + DAY + 22 * HOUR);

	s = parse("auto", "01:00-03:00");
	CHECK_INT(next_of(&s, d + 2 * HOUR, d + 2 * HOUR - 10),
		  d + 2 * HOUR + SCHEDULE_AUTO_INTERVAL - 10);
	/* The next would be past the window's end: the next opening. */
	CHECK_INT(next_of(&s, d + 3 * HOUR - 5, d + 3 * HOUR - 10), d + DAY + HOUR);
	CHECK_INT(schedule_window_end(&s, d + HOUR), d + 3 * HOUR);

	s = parse("auto", "23:00-00:00");
	CHECK(!schedule_in_window(&s, d));
	CHECK_INT(schedule_window_end(&s, d + 23 * HOUR + 5), d + DAY);
	CHECK_INT(schedule_window_next_open(&s, d + 5), d + 23 * HOUR);
	s = parse("auto", "00:00-00:01");
	CHECK_INT(schedule_window_end(&s, d + 5), d + 60);
	CHECK_INT(schedule_window_next_open(&s, d + 60), d + DAY);
}

static void test_windows_dst(void)
{
	struct schedule s;

	set_tz(TZ_BERLIN);
	/* 01:00-03:00 on the fall-back day is three real hours. */
	s = parse("auto", "01:00-03:00");
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 10, 24, 12, 0)),
		  utc(2026, 10, 24, 23, 0));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 24, 23, 0)), utc(2026, 10, 25, 2, 0));
	CHECK(schedule_in_window(&s, utc(2026, 10, 25, 1, 30)));	/* 02:30 CET */
	/* ... and one real hour on the spring day. */
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 3, 28, 12, 0)), utc(2026, 3, 29, 0, 0));
	CHECK_INT(schedule_window_end(&s, utc(2026, 3, 29, 0, 0)), utc(2026, 3, 29, 1, 0));

	/* Inside the skipped hour: no window that day. */
	s = parse("auto", "02:00-02:30");
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 3, 28, 12, 0)), utc(2026, 3, 30, 0, 0));
	CHECK_INT(next_of(&s, utc(2026, 3, 28, 12, 0), 0), utc(2026, 3, 30, 0, 0));
	/* In the repeated hour: open in both passes. */
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 10, 24, 12, 0)), utc(2026, 10, 25, 0, 0));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 25, 0, 0)), utc(2026, 10, 25, 0, 30));
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 10, 25, 0, 30)), utc(2026, 10, 25, 1, 0));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 25, 1, 0)), utc(2026, 10, 25, 1, 30));

	/* The clock going back closes 02:30-04:00 at 03:00 CEST and reopens it at 02:30 CET. */
	s = parse("auto", "02:30-04:00");
	CHECK(schedule_in_window(&s, utc(2026, 10, 25, 0, 45)));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 25, 0, 45)), utc(2026, 10, 25, 1, 0));
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 10, 25, 1, 0)), utc(2026, 10, 25, 1, 30));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 25, 1, 30)), utc(2026, 10, 25, 3, 0));
	/* ... and jumps into 01:30-02:30 at 03:00 CEST -> 02:00 CET. */
	s = parse("auto", "01:30-02:30");
	CHECK_INT(schedule_window_next_open(&s, utc(2026, 10, 25, 0, 45)), utc(2026, 10, 25, 1, 0));
	CHECK_INT(schedule_window_end(&s, utc(2026, 10, 25, 1, 0)), utc(2026, 10, 25, 1, 30));
	/* Spring: the jump from 02:00 CET to 03:00 CEST closes it early. */
	CHECK_INT(schedule_window_end(&s, utc(2026, 3, 29, 0, 45)), utc(2026, 3, 29, 1, 0));

	/* A daily run moved into a window on the fall-back day. */
	s = parse("daily 12:00", "02:00-02:30");
	CHECK_INT(next_of(&s, utc(2026, 10, 24, 9, 0), 0), utc(2026, 10, 25, 0, 0));
	CHECK_INT(next_of(&s, utc(2026, 10, 25, 0, 0) + 1, utc(2026, 10, 25, 0, 0)),
		  utc(2026, 10, 26, 1, 0));
}

/* Window ends and openings against a minute-by-minute scan of schedule_in_window. */
static void test_window_model(void)
{
	static const char *const windows[] = {
		"22:00-06:00", "01:00-03:00", "02:00-02:30", "02:30-04:00", "01:30-02:30",
		"00:00-01:00", "23:00-00:00", "02:15-02:45", "00:30-23:30", "03:00-02:00",
	};
	enum { MAX_CHANGES = 64 };
	int64_t changes[MAX_CHANGES];

	for (size_t r = 0; r < NR_MODEL_RANGES; r++) {
		int64_t start = utc(model_ranges[r].y, model_ranges[r].m, model_ranges[r].d, 0, 0);
		int64_t end = start + 6 * DAY;

		set_tz(model_ranges[r].tz);
		for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
			struct schedule s = parse("auto", windows[w]);
			bool in = schedule_in_window(&s, start);
			size_t n = 0, k = 0;

			/* Every zone here changes its clocks on whole minutes. */
			for (int64_t x = start + 60; x < end; x += 60) {
				if (schedule_in_window(&s, x) == in)
					continue;
				in = !in;
				CHECK(n < MAX_CHANGES);
				changes[n++] = x;
			}
			for (int64_t t = start; t < end - 2 * DAY; t += 7 * 60 + 13) {
				int64_t got;

				while (k < n && changes[k] <= t)
					k++;
				CHECK(k < n);
				if (schedule_in_window(&s, t)) {
					got = schedule_window_end(&s, t);
					CHECK_INT(schedule_window_next_open(&s, t), t);
				} else {
					got = schedule_window_next_open(&s, t);
					CHECK_INT(schedule_window_end(&s, t), t);
				}
				if (got != changes[k])
					fprintf(stderr, "TZ=%s window %s at %" PRId64 "\n",
						model_ranges[r].tz, windows[w], t);
				CHECK_INT(got, changes[k]);
			}
		}
	}
}

/* A run the clock stepped over: late by up to three hours, and only inside the window. */
static void test_catch_up(void)
{
	int64_t d = utc(2026, 5, 9, 0, 0), due = d + 1 * HOUR;
	struct schedule s;

	set_tz(TZ_UTC);
	s = parse("daily 01:00", NULL);
	CHECK(schedule_catch_up(&s, due, due));
	CHECK(schedule_catch_up(&s, due, due + 90));
	CHECK(schedule_catch_up(&s, due, due + SCHEDULE_CATCH_UP_MAX));
	CHECK(!schedule_catch_up(&s, due, due + SCHEDULE_CATCH_UP_MAX + 1));
	CHECK(!schedule_catch_up(&s, due, due - 1));
	s = parse("daily 01:00", "01:00-02:00");
	CHECK(schedule_catch_up(&s, due, due + HOUR - 1));
	CHECK(!schedule_catch_up(&s, due, due + HOUR));
	/* An interval has no limit: overdue is overdue. */
	s = parse("every 6h", NULL);
	CHECK(schedule_catch_up(&s, due, due + 4 * HOUR));
	CHECK(!schedule_catch_up(&s, due, due - 1));
	s = parse("auto", "00:00-02:00");
	CHECK(schedule_catch_up(&s, due, due + HOUR - 1));
	CHECK(!schedule_catch_up(&s, due, due + HOUR));
}

static void test_young(void)
{
	int64_t h = utc(2026, 12, 6, 19, 0), next = -1;

	/* The first plan, with the first heat: its age counts as 1 s. */
	CHECK(schedule_young_next(h, h, h, &next) == 0 && next == h + 3);
	CHECK(schedule_young_next(h, h + 1, h + 1, &next) == 0 && next == h + 3);
	CHECK(schedule_young_next(h, h + 3, h + 4, &next) == 0 && next == h + 9);
	CHECK(schedule_young_next(h, h + 9, h + 12, &next) == 0 && next == h + 27);
	/* A run that ended after that time plans again at once. */
	CHECK(schedule_young_next(h, h + 3, h + 20, &next) == 0 && next == h + 21);
	CHECK(schedule_young_next(h, h + 10, h + 10, &next) == 0 && next == h + 30);
	/* From there the interval's plans take over. */
	next = -1;
	CHECK(schedule_young_next(h, h + 11, h + 11, &next) == -ERANGE && next == -1);
	CHECK(schedule_young_next(h, h + 27, h + 30, &next) == -ERANGE);
	/* A chain of plans each at the time the one before asked for ends. */
	int64_t at = h, plans = 0;

	while (schedule_young_next(h, at, at, &next) == 0) {
		CHECK(next > at);
		at = next;
		plans++;
	}
	CHECK(plans == 3 && at == h + 27);
	CHECK(schedule_young_next(h, h - 1, h, &next) == -EINVAL);
	CHECK(schedule_young_next(-1, h, h, &next) == -EINVAL);
	CHECK(schedule_young_next(h, h, h, NULL) == -EINVAL);
}

static void test_equal(void)
{
	struct schedule a = parse("every 1h", NULL), b = a;

	/* Fields the kind does not use do not count. */
	b.daily_minute = 77;
	b.cron_minute = 5;
	CHECK(schedule_equal(&a, &b));
	b.every_s = 7200;
	CHECK(!schedule_equal(&a, &b));
	a = parse("auto", NULL);
	b = parse("manual", NULL);
	CHECK(!schedule_equal(&a, &b));
	a = parse("cron 0 0 * * 1", NULL);
	b = parse("cron 0 0 1-31 * 1", NULL);
	CHECK(!schedule_equal(&a, &b)); /* the star changes the day rule */
	b.window_start = 5;
	a = parse("auto", NULL);
	b = parse("auto", NULL);
	b.window_start = 5; /* no window: its fields do not count */
	CHECK(schedule_equal(&a, &b));
}

int main(void)
{
	test_parse_format();
	test_parse_fields();
	test_parse_bad();
	test_duration();
	test_window_parse();
	test_format_errors();
	test_next_simple();
	test_time_range();
	test_far_future();
	test_cron_or_rule();
	test_cron_never();
	test_dst_berlin();
	test_dst_new_york();
	test_model();
	test_windows();
	test_windows_dst();
	test_window_model();
	test_catch_up();
	test_young();
	test_equal();
	return 0;
}
