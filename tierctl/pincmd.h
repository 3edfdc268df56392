/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pincmd: "tierctl pin" and "tierctl unpin", ranges of a volume kept on one tier. */
#ifndef TIERCTL_PINCMD_H
#define TIERCTL_PINCMD_H

#include "cli.h"

cli_run_fn pincmd_run;

#define PINCMD_PIN_COMMAND                                                                   \
	{                                                                                    \
		.name = "pin",                                                               \
		.synopsis = "NAME {OFFSET LENGTH | --file PATH} --tier ssd|hdd",             \
		.summary = "keep a range of a volume, or a file's data, on one tier",        \
		.description =                                                               \
			"Pin LENGTH bytes of pool NAME's volume, from byte OFFSET, to the SSD\n" \
			"or the HDD tier: tiering runs move the range's extents to that tier\n" \
			"and leave them there, however hot or cold they get.  tierd pins whole\n" \
			"extents, so the range is rounded out to extent boundaries.  OFFSET and\n" \
			"LENGTH are bytes, with an optional K, M, G or T suffix (1024-based),\n" \
			"decimals allowed (1.5G).\n"                                          \
			"\n"                                                                 \
			"With --file, pin the blocks that hold a file's data instead.  The file\n" \
			"must be on a filesystem made directly on the volume (/dev/mapper/NAME),\n" \
			"such as ext4 or XFS.  tierctl flushes the file's dirty data, asks the\n" \
			"filesystem where the data lies (FIEMAP), and pins those places, merged\n" \
			"into as few whole-extent ranges as cover them, all or none of them.\n" \
			"Data without a place on the volume yet, and data stored inside the\n" \
			"filesystem's own metadata (inline or tail-packed), is left out with a\n" \
			"warning.  A compressed or otherwise encoded extent is refused: its place\n" \
			"on the volume is not the byte range FIEMAP reports.  The pins follow the\n" \
			"blocks, not the file: after the file is rewritten elsewhere on the\n" \
			"volume, pin it again.\n"                                              \
			"\n"                                                                 \
			"Prints the pool's pins afterwards.\n",                              \
		.options = "      --tier ssd|hdd      the tier to keep the range on (required)\n" \
			   "      --file PATH         pin where PATH's data lies\n",          \
		.examples = "  tierctl pin tank 0 1G --tier ssd\n"                            \
			    "  tierctl pin tank --file /srv/db/index.db --tier ssd\n"          \
			    "  tierctl pin tank 2T 500G --tier hdd\n",                        \
		.run = pincmd_run,                                                           \
		.method = "pin.add",                                                         \
	}

#define PINCMD_UNPIN_COMMAND                                                                 \
	{                                                                                    \
		.name = "unpin",                                                             \
		.synopsis = "NAME {OFFSET LENGTH | --file PATH}",                            \
		.summary = "let tiering runs move a pinned range again",                     \
		.description =                                                               \
			"Remove the pins of pool NAME's volume between byte OFFSET and\n"    \
			"OFFSET + LENGTH, rounded out to extent boundaries as 'tierctl pin'\n" \
			"does, or where PATH's data lies with --file.  The extents stay where\n" \
			"they are until a tiering run finds a reason to move them.  Parts of\n" \
			"the range that were not pinned are left as they are.\n"            \
			"\n"                                                                 \
			"Prints the pool's pins afterwards.\n",                              \
		.options = "      --file PATH         unpin where PATH's data lies\n",        \
		.examples = "  tierctl unpin tank 0 1G\n"                                     \
			    "  tierctl unpin tank --file /srv/db/index.db\n",                  \
		.run = pincmd_run,                                                           \
		.method = "pin.remove",                                                      \
	}

#endif
