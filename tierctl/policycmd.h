/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policycmd: "tierctl policy", the tiering policies tierd offers and a pool's choice of one. */
#ifndef TIERCTL_POLICYCMD_H
#define TIERCTL_POLICYCMD_H

#include "cli.h"

extern const struct cli_group policycmd_group;

#endif
