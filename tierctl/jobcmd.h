/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobcmd: the "tierctl job" commands: follow or stop a pool's running job from any terminal. */
#ifndef TIERCTL_JOBCMD_H
#define TIERCTL_JOBCMD_H

#include "cli.h"

extern const struct cli_group jobcmd_group;

#endif
