/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tiercmd: the "tierctl tier" commands, which add and remove a pool's SSD tier. */
#ifndef TIERCTL_TIERCMD_H
#define TIERCTL_TIERCMD_H

#include "cli.h"

extern const struct cli_group tiercmd_group;

#endif
