/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A terminal redraws cheaply; a log gains nothing from more than a line a second. */
#define PROGRESS_TERMINAL_INTERVAL_MS 100
#define PROGRESS_PLAIN_INTERVAL_MS 1000

struct progress {
	FILE *out;
	bool terminal;
	/* An update arrived but is not on screen yet. */
	bool pending;
	/* The bar's line is open and needs a '\n' before anything else is printed. */
	bool drawn;
	bool any;
	uint64_t last_shown_ms;
	/* The last update, its strings our own copies. */
	struct bar bar;
	char *what, *waiting;
};

int progress_new(FILE *out, bool terminal, struct progress **progress)
{
	struct progress *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->out = out;
	p->terminal = terminal;
	*progress = p;
	return 0;
}

void progress_free(struct progress *p)
{
	if (!p)
		return;
	free(p->what);
	free(p->waiting);
	free(p);
}

static uint64_t progress_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void progress_show(struct progress *p)
{
	char line[BAR_TEXT_MAX];

	fputs(p->terminal ? "\r" : "", p->out);
	fputs(bar_format(&p->bar, p->terminal, line, sizeof(line)), p->out);
	/* \e[K clears what a longer previous line left behind. */
	fputs(p->terminal ? "\033[K" : "\n", p->out);
	fflush(p->out);
	p->drawn = p->terminal;
	p->pending = false;
	p->last_shown_ms = progress_now_ms();
}

static int progress_set(char **field, const char *value)
{
	char *copy;

	if (*field && !strcmp(*field, value))
		return 0;
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

int progress_update(struct progress *p, const struct bar *b)
{
	uint64_t interval = p->terminal ? PROGRESS_TERMINAL_INTERVAL_MS : PROGRESS_PLAIN_INTERVAL_MS;
	int r;

	r = progress_set(&p->what, b->what ? b->what : "working");
	if (r < 0)
		return r;
	r = progress_set(&p->waiting, b->waiting ? b->waiting : "");
	if (r < 0)
		return r;
	p->bar = *b;
	p->bar.what = p->what;
	p->bar.waiting = p->waiting;
	p->pending = true;
	/* The first and the final update always show; the rest only as often as the interval. */
	if (!p->any || (b->total && b->done >= b->total) ||
	    progress_now_ms() - p->last_shown_ms >= interval)
		progress_show(p);
	p->any = true;
	return 0;
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	if (p->pending)
		progress_show(p);
	if (p->drawn) {
		fputc('\n', p->out);
		fflush(p->out);
		p->drawn = false;
	}
}

bool progress_last(const struct progress *p, uint64_t *done, const char **unit)
{
	if (!p || !p->any)
		return false;
	*done = p->bar.done;
	*unit = "extents";
	return true;
}
