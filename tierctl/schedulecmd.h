/* SPDX-License-Identifier: GPL-2.0-or-later */
/* schedulecmd: "tierctl schedule", when and how fast a pool's tiering runs go. */
#ifndef TIERCTL_SCHEDULECMD_H
#define TIERCTL_SCHEDULECMD_H

#include "cli.h"

extern const struct cli_group schedulecmd_group;

#endif
