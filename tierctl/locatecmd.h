/* SPDX-License-Identifier: GPL-2.0-or-later */
/* locatecmd: "tierctl locate", which tier holds each part of a file on a pool's volume. */
#ifndef TIERCTL_LOCATECMD_H
#define TIERCTL_LOCATECMD_H

#include "cli.h"

cli_run_fn locatecmd_run;

#define LOCATECMD_COMMAND                                                                    \
	{                                                                                    \
		.name = "locate",                                                            \
		.synopsis = "PATH",                                                          \
		.summary = "show which tier holds each part of a file",                      \
		.description =                                                               \
			"Show where the data of PATH lies: one row per piece of the file that\n" \
			"lies contiguously on one device, with its offset in the file, its\n" \
			"length, its offset on the volume, the tier and device that hold it and\n" \
			"the offset on that device; then the file's bytes per tier.  PATH must\n" \
			"be on a filesystem made directly on a pool's volume (/dev/mapper/NAME);\n" \
			"tierctl finds the pool, flushes the file's dirty data and asks the\n" \
			"filesystem where the data lies (FIEMAP), as 'tierctl pin --file' does.\n" \
			"Data without a place on the volume yet, or inside the filesystem's\n" \
			"metadata, is left out with a warning; holes hold nothing.  The answer\n" \
			"is a snapshot: a tiering run may move the extents right after.\n",   \
		.examples = "  tierctl locate /srv/db/index.db\n"                            \
			    "  tierctl locate /srv/db/index.db --json\n",                   \
		.run = locatecmd_run,                                                        \
		.method = "pool.locate",                                                     \
		.tables = true,                                                              \
	}

#endif
