/* SPDX-License-Identifier: GPL-2.0-or-later */
/* runscmd: "tierctl runs", the history of a pool's tiering runs. */
#ifndef TIERCTL_RUNSCMD_H
#define TIERCTL_RUNSCMD_H

#include "cli.h"

cli_run_fn runscmd_run;

#define RUNSCMD_COMMAND                                                                      \
	{                                                                                    \
		.name = "runs",                                                              \
		.synopsis = "NAME [--limit N]",                                              \
		.summary = "list a pool's recent tiering runs",                              \
		.description =                                                               \
			"List pool NAME's tiering runs, newest first: what started each\n"    \
			"(TRIGGER: 'schedule', 'on-demand' for 'tierctl tier now', or 'auto'),\n" \
			"when it started in local time, how long it took or has taken so far,\n" \
			"the extents it promoted to the SSD and demoted to the HDD, the bytes\n" \
			"it copied, the pieces of extents it moved (runs that place pieces,\n" \
			"with tierd's piece-heat setting), the extents it failed to move,\n"  \
			"and how it ended:\n"                                                \
			"\n"                                                                 \
			"  running      still moving extents\n"                              \
			"  done         moved all it planned\n"                              \
			"  partial      some extents failed or found no room (see --json)\n" \
			"  failed       stopped by an error (see --json)\n"                  \
			"  cancelled    stopped when its schedule's window closed\n"         \
			"  interrupted  cut short when tierd stopped\n"                      \
			"  aborted      stopped by 'tierctl job abort'\n"                   \
			"\n"                                                                 \
			"--json adds the policy, the extents and pieces planned, the pieces\n" \
			"sent out and brought home, and tierd's message on how a run ended.\n", \
		.options = "      --limit N           show the N newest runs (default 20)\n",  \
		.examples = "  tierctl runs tank\n"                                           \
			    "  tierctl runs tank --limit 100 --json\n",                       \
		.run = runscmd_run,                                                          \
		.method = "runs.list",                                                       \
		.tables = true,                                                              \
	}

#endif
