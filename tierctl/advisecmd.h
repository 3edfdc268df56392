/* SPDX-License-Identifier: GPL-2.0-or-later */
/* advisecmd: "tierctl advise", the share of I/O an SSD tier of each size would serve. */
#ifndef TIERCTL_ADVISECMD_H
#define TIERCTL_ADVISECMD_H

#include "cli.h"

cli_run_fn advisecmd_run;

#define ADVISECMD_COMMAND                                                                    \
	{                                                                                    \
		.name = "advise",                                                            \
		.synopsis = "NAME [--window DURATION] [--ssd-size SIZE[,SIZE]...] [--plot FILE]", \
		.summary = "predict the share of I/O an SSD tier of each size would serve",  \
		.description =                                                               \
			"Answer \"how big should the SSD be?\" for pool NAME: for each SSD size,\n" \
			"the share of the pool's I/O the SSD tier would serve once a tiering run\n" \
			"has placed the extents for that size.  The prediction ranks extents by\n" \
			"heat as the pool's policy does: pins to the SSD first, then the hottest\n" \
			"extents the policy would promote, up to the size less the swap reserve\n" \
			"and the policy's headroom; the share is their share of the heat, a\n" \
			"decayed count of small random I/Os (see docs/heat.md, \"How big an SSD\").\n" \
			"\n"                                                                 \
			"Without --ssd-size, the curve runs from 0 past the larger of the SSD now\n" \
			"and the smallest SSD that holds everything the policy would promote.\n" \
			"The row of the SSD now is marked.  Below the curve: that smallest size,\n" \
			"the bytes a run would move now to reach the share of the SSD now, and\n" \
			"the share the SSD really served over the last --window, to compare.\n" \
			"With tierd's piece-heat setting, WITH PIECES is the share if that room\n" \
			"went to the hottest pieces of the extents instead of whole ones.\n" \
			"\n"                                                                 \
			"--json prints tierd's reply: sizes in bytes, shares as fractions.  With\n" \
			"--plot, draw the curve as SVG or PNG by FILE's extension, with gnuplot\n" \
			"(Debian: gnuplot-nox).  DURATION is as for 'tierctl stats'; SIZE is\n" \
			"bytes with an optional K, M, G or T suffix (1024-based).\n",        \
		.options =                                                                   \
			"      --window DURATION   the measured share over the last DURATION\n" \
			"                          (default 1h)\n"                           \
			"      --ssd-size SIZES    predict the SSD sizes of a comma-separated\n" \
			"                          list (at most 64) instead of the curve\n" \
			"      --plot FILE         draw the curve into FILE.svg or FILE.png\n", \
		.examples = "  tierctl advise tank\n"                                        \
			    "  tierctl advise tank --ssd-size 100G,200G,400G\n"             \
			    "  tierctl advise tank --plot ssd-size.svg\n",                  \
		.run = advisecmd_run,                                                        \
		.method = "pool.advise",                                                     \
		.tables = true,                                                              \
	}

#endif
