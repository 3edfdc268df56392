/* SPDX-License-Identifier: GPL-2.0-or-later */
/* extentcmd: the "tierctl extent" commands, which place extents by hand. */
#ifndef TIERCTL_EXTENTCMD_H
#define TIERCTL_EXTENTCMD_H

#include "cli.h"

extern const struct cli_group extentcmd_group;

#endif
