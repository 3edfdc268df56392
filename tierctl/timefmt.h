/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timefmt: the times and durations of tierd's replies and of tierctl's
 * options, as people read and type them.  Nothing here does I/O; local time
 * follows TZ.
 */
#ifndef TIERCTL_TIMEFMT_H
#define TIERCTL_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Enough for any result below, with slack. */
#define TIMEFMT_MAX 64

/*
 * A time as tierd sends it: "2026-11-29T23:05:00Z" (UTC; a fraction of a
 * second is accepted and dropped).  Returns 0 or -EINVAL; *out is written
 * only on success.
 */
int timefmt_parse_iso(const char *s, time_t *out);

/* "2026-11-30 00:05:00" in local time.  Returns buf. */
const char *timefmt_local(time_t t, char *buf, size_t len);

/*
 * A duration as typed, in the form tierd's schedules use: numbers with the
 * units d, h, m and s, larger units first, each at most once ("90s", "30m",
 * "1h30m", "7d"); "0" alone needs no unit.  Any other number needs one, so
 * that "30" does not mean seconds to one reader and minutes to another.
 * Returns 0, -EINVAL or -ERANGE; *seconds is written only on success.
 */
int timefmt_parse_duration(const char *s, uint64_t *seconds);

/*
 * The two largest units of a duration, the second left out when 0, in the
 * form timefmt_parse_duration() reads: "0s", "45s", "3m20s", "2h", "2h5m",
 * "1d3h", "12d".  Returns buf.
 */
const char *timefmt_duration(uint64_t seconds, char *buf, size_t len);

#endif
