/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bar.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "size.h"
#include "timefmt.h"

static const struct {
	const char *word, *text;
} waits[] = {
	{ "paused", "paused" },
	{ "rate", "rate limit" },
	{ "busy", "I/O awareness: the volume is busy" },
	{ "idle", "I/O awareness: waiting for an idle volume" },
};

const char *bar_waiting_text(const char *waiting)
{
	if (!waiting || !waiting[0])
		return NULL;
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (!strcmp(waiting, waits[i].word))
			return waits[i].text;
	return waiting;
}

/* Append to buf[*at..len), keeping it a string however little room is left. */
__attribute__((format(printf, 4, 5)))
static void bar_add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

const char *bar_format(const struct bar *b, bool terminal, char *buf, size_t len)
{
	char done[SIZE_FORMAT_MAX], total[SIZE_FORMAT_MAX], rate[SIZE_FORMAT_MAX];
	char eta[TIMEFMT_MAX];
	const char *wait = bar_waiting_text(b->waiting);
	size_t at = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (terminal) {
		/* By bytes when known: the batch in flight moves the bar between extents. */
		uint64_t d = b->total_bytes ? b->done_bytes : b->done;
		uint64_t t = b->total_bytes ? b->total_bytes : b->total;
		size_t filled = t ? (size_t)(BAR_WIDTH * (double)(d < t ? d : t) / (double)t) : 0;

		bar_add(buf, len, &at, "[");
		for (size_t i = 0; i < BAR_WIDTH; i++)
			bar_add(buf, len, &at, "%c", i < filled ? '#' : '.');
		bar_add(buf, len, &at, "]  ");
	}
	if (b->total_bytes)
		bar_add(buf, len, &at, "%s/%s  ", size_format(b->done_bytes, done, sizeof(done)),
			size_format(b->total_bytes, total, sizeof(total)));
	if (b->total)
		bar_add(buf, len, &at, "%" PRIu64 "/%" PRIu64 " %s", b->done, b->total,
			b->units ? b->units : "extents");
	else
		bar_add(buf, len, &at, "%" PRIu64 " %s", b->done, b->units ? b->units : "extents");
	if (b->rate)
		bar_add(buf, len, &at, "  %s/s", size_format(b->rate, rate, sizeof(rate)));
	if (b->eta >= 0 && (!b->total || b->done < b->total))
		bar_add(buf, len, &at, "  ETA %s", timefmt_duration((uint64_t)b->eta, eta, sizeof(eta)));
	bar_add(buf, len, &at, "  %s", b->what ? b->what : "working");
	if (wait)
		bar_add(buf, len, &at, " (waiting: %s)", wait);
	return buf;
}
