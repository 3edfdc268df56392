/* SPDX-License-Identifier: GPL-2.0-or-later */
/* poolcmd: the "tierctl pool" commands. */
#ifndef TIERCTL_POOLCMD_H
#define TIERCTL_POOLCMD_H

#include "cli.h"

extern const struct cli_group poolcmd_group;

#endif
