/* SPDX-License-Identifier: GPL-2.0-or-later */
/* statscmd: "tierctl stats", a pool's tiers, I/O, migrations and schedule at a glance. */
#ifndef TIERCTL_STATSCMD_H
#define TIERCTL_STATSCMD_H

#include "cli.h"

cli_run_fn statscmd_run;

#define STATSCMD_COMMAND                                                                     \
	{                                                                                    \
		.name = "stats",                                                             \
		.synopsis = "NAME [OPTION]...",                                              \
		.summary = "show how a pool's tiers are used and how tiering goes",         \
		.description =                                                               \
			"Show pool NAME's extent size and state (idle, migrating or paused);\n" \
			"each tier's devices, size and extents in use and free; the volume's\n" \
			"reads and writes over the last --window and the share of them that the\n" \
			"SSD tier served; the extents tiering has promoted and demoted in total;\n" \
			"the last tiering run; and the schedule with the next run, in local\n" \
			"time.  --json prints tierd's reply as it is: sizes in bytes, times in\n" \
			"UTC.\n"                                                             \
			"\n"                                                                 \
			"With --history, add a line per --step interval of the last --history:\n" \
			"its start, reads, writes, SSD share of I/O and the bytes promoted and\n" \
			"demoted.  With --plot, draw the same as a picture: the SSD share of I/O\n" \
			"over time and the bytes moved per interval, as SVG or PNG by FILE's\n" \
			"extension.  Drawing needs gnuplot (Debian: gnuplot-nox).\n"         \
			"\n"                                                                 \
			"DURATION is numbers with units d, h, m and s, larger first: 30m, 6h,\n" \
			"1d, 7d, 1h30m.\n",                                                 \
		.options =                                                                   \
			"      --window DURATION   count I/O over the last DURATION (default 1h)\n" \
			"      --history DURATION  show each interval of the last DURATION\n"  \
			"      --step DURATION     the length of an interval (tierd picks one\n" \
			"                          by default)\n"                            \
			"      --plot FILE         draw the history (of the last 24h unless\n" \
			"                          --history says otherwise) into FILE.svg or\n" \
			"                          FILE.png\n",                              \
		.examples = "  tierctl stats tank\n"                                          \
			    "  tierctl stats tank --window 24h --history 6h --step 30m\n"     \
			    "  tierctl stats tank --history 7d --step 6h --plot tank-week.svg\n" \
			    "  tierctl stats tank --json | jq .stats.io.ssd_io_share\n",      \
		.run = statscmd_run,                                                         \
		.method = "pool.stats",                                                      \
		.tables = true,                                                              \
	}

#endif
