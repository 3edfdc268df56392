/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heatcmd: "tierctl heat", the extents a pool's I/O makes hottest. */
#ifndef TIERCTL_HEATCMD_H
#define TIERCTL_HEATCMD_H

#include "cli.h"

cli_run_fn heatcmd_run;

#define HEATCMD_COMMAND                                                                      \
	{                                                                                    \
		.name = "heat",                                                              \
		.synopsis = "NAME [--top N]",                                                \
		.summary = "list a pool's hottest extents",                                  \
		.description =                                                               \
			"List the extents of pool NAME by descending heat: a decayed count of\n" \
			"small random I/Os, which large and sequential I/O adds little to (see\n" \
			"docs/heat.md).  TIER is where the extent lies now; READS and WRITES\n"   \
			"count the I/Os since tierd started keeping its heat.  With tierd's\n"  \
			"piece-heat setting, 90% IN is how few of the extent's pieces (16 KiB\n" \
			"by default, tierd's piece-size) took 90% of its I/O (\"2 of 256\":\n" \
			"hot blocks in cold data); \"-\" where pieces are not watched.\n",      \
		.options = "      --top N             show the N hottest extents (default 20)\n", \
		.examples = "  tierctl heat tank\n"                                          \
			    "  tierctl heat tank --top 100 --json\n",                       \
		.run = heatcmd_run,                                                          \
		.method = "heat.top",                                                        \
		.tables = true,                                                              \
	}

#endif
