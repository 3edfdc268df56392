/* SPDX-License-Identifier: GPL-2.0-or-later */
/* schedule: when a tiering run may start, in local wall-clock time. docs/schedule.md. */
#ifndef TIERD_SCHEDULE_H
#define TIERD_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum schedule_kind {
	SCHEDULE_MANUAL,
	SCHEDULE_AUTO,
	SCHEDULE_EVERY,
	SCHEDULE_DAILY,
	SCHEDULE_CRON,
};

/*
 * auto: the daemon plans a small run every 30 seconds (in the window). A
 * plan with nothing to move costs a few milliseconds and leaves no record,
 * so the interval is what data that turns hot waits before it moves.
 */
#define SCHEDULE_AUTO_INTERVAL 30
/*
 * auto on young heat (a pool's heat since it was first sampled, younger
 * than the interval): each plan has the next come when the heat is this
 * many times as old, so that each early run sees a few times the I/O the
 * one before it did, and none is planned on the little the one before saw
 * (runs back to back on the first seconds moved what that little showed,
 * then moved much of it home again).
 */
#define SCHEDULE_YOUNG_FACTOR 3
/* every DURATION: 1m to 31d. */
#define SCHEDULE_EVERY_MIN 60
#define SCHEDULE_EVERY_MAX (31 * 86400)
/* Latest time schedule_next() accepts: 9999-12-31 23:59:59 UTC. */
#define SCHEDULE_TIME_MAX INT64_C(253402300799)
/* Room for any schedule_format() result and its NUL: the longest is a cron of 245 characters. */
#define SCHEDULE_FORMAT_MAX 256
/* Room for schedule_format_window() ("22:00-06:00") and schedule_format_duration(). */
#define SCHEDULE_WINDOW_FORMAT_MAX 16
#define SCHEDULE_DURATION_FORMAT_MAX 24

struct schedule {
	enum schedule_kind kind;
	uint32_t every_s;
	uint16_t daily_minute;     /* minutes after local midnight */
	uint64_t cron_minute;      /* bit m: minute m matches */
	uint32_t cron_hour;        /* bits 0..23 */
	uint32_t cron_dom;         /* bits 1..31 */
	uint16_t cron_month;       /* bits 1..12 */
	uint8_t cron_dow;          /* bits 0..6, Sunday 0 */
	/*
	 * The day field was "*", or "*" with a step: with both false, a day
	 * matching either field matches (the classic cron rule), otherwise
	 * both must.
	 */
	bool cron_dom_star, cron_dow_star;
	bool has_window;
	/* Minutes after local midnight, [start, end); end < start crosses midnight. */
	uint16_t window_start, window_end;
};

/*
 * "manual", "auto", "every DURATION", "daily HH:MM" or "cron MIN HOUR DOM
 * MON DOW" (the five fields may be in one pair of quotes).  Fills all of
 * *out, without a window (schedule_parse_window() after this one adds it);
 * *out is untouched on error.  0 or -EINVAL with a message in err (if err
 * and err_len), e.g. "cron: minute 61 is out of range 0-59".  A cron
 * expression that can never match ("0 0 30 2 *") is rejected too.
 */
int schedule_parse(const char *spec, struct schedule *out, char *err, size_t err_len);

/* "HH:MM-HH:MM" ("22:00-06:00" crosses midnight); sets the window of *s. 0 or -EINVAL. */
int schedule_parse_window(const char *text, struct schedule *s, char *err, size_t err_len);

/*
 * "30m", "6h", "1d", "1h30m", "90s": numbers with units d, h, m, s, larger
 * units first, each at most once; "0" alone needs no unit.  No range check
 * beyond 32 bits.  0, -EINVAL (malformed) or -ERANGE (over 2^32 - 1 s).
 */
int schedule_parse_duration(const char *text, uint32_t *seconds, char *err, size_t err_len);

/*
 * Canonical text that schedule_parse() reads back to an equal schedule
 * ("every 1h30m", "daily 01:00", "cron 0 1 * * 1-5"): the window is
 * not part of it.  0, -EINVAL (s is not a valid schedule) or -ENOSPC (buf
 * too small: truncated, still terminated).  SCHEDULE_FORMAT_MAX suffices.
 */
int schedule_format(const struct schedule *s, char *buf, size_t len);
/* "22:00-06:00", or "" without a window.  0, -EINVAL or -ENOSPC as above. */
int schedule_format_window(const struct schedule *s, char *buf, size_t len);
/* "1d6h", "1h30m", "0s".  0 or -ENOSPC. */
int schedule_format_duration(uint32_t seconds, char *buf, size_t len);

/* "manual", "auto", "every", "daily", "cron"; NULL for anything else. */
const char *schedule_kind_name(enum schedule_kind kind);

/* Same schedule and window: the fields that the kind does not use are ignored. */
bool schedule_equal(const struct schedule *a, const struct schedule *b);

/*
 * When the next run starts: the first time at or after `after` (unix
 * seconds), in local wall-clock time (TZ, as localtime_r sees it).
 * last_start is the start of the previous run, 0 if none.
 *
 * manual: -ENOENT.
 * auto, every: `after`, or last_start + the interval if that is later; but
 *   never more than one interval after `after` (the clock went back).
 * daily, cron: the first matching wall-clock minute at or after `after`, and
 *   after last_start (the same minute never runs twice), unless last_start is
 *   more than a day after `after` (a clock that was wrong).  A minute that a
 *   DST change skips runs at the end of the gap; one it repeats runs at its
 *   first occurrence.
 * Then, with a window, a time outside it moves to the window's next opening.
 *
 * 0, -ENOENT (manual, or nothing ever matches), -EINVAL (invalid schedule,
 * NULL next, a time before 1970) or -ERANGE (a time after SCHEDULE_TIME_MAX).
 */
int schedule_next(const struct schedule *s, int64_t after, int64_t last_start, int64_t *next);

/*
 * How late a daily or cron run may start when the system clock was stepped
 * forward over its time: like cron, a step of up to three hours (a late NTP
 * correction, a clock set by hand) starts the run it skipped; a longer one
 * does not.
 */
#define SCHEDULE_CATCH_UP_MAX (3 * 3600)

/*
 * Whether a run due at `due` that the clock stepped over must start at `now`:
 * due <= now, now inside the window, and for daily and cron at most
 * SCHEDULE_CATCH_UP_MAX late (an overdue every or auto run starts however late).
 */
bool schedule_catch_up(const struct schedule *s, int64_t due, int64_t now);

/*
 * The next auto plan after one at planned_at (run or found nothing) on
 * heat that began at heat_since: when the heat is SCHEDULE_YOUNG_FACTOR
 * times as old (its age counted as at least 1 s), and no sooner than
 * now + 1 (a run longer than that plans again at once). 0 with *next set,
 * or -ERANGE when the heat is too old for that: the interval's plans take
 * over. -EINVAL for times before the heat or negative ones.
 */
int schedule_young_next(int64_t heat_since, int64_t planned_at, int64_t now, int64_t *next);

/* Whether t is inside the window; true without one. */
bool schedule_in_window(const struct schedule *s, int64_t t);
/* When the window open at t closes; t if it is closed at t; INT64_MAX without a window. */
int64_t schedule_window_end(const struct schedule *s, int64_t t);
/* The first time >= t that is in the window: t without a window or inside it. */
int64_t schedule_window_next_open(const struct schedule *s, int64_t t);

#endif
