/* SPDX-License-Identifier: GPL-2.0-or-later */
/* array: the element count of a fixed array, for both programs and the tests. */
#ifndef TIERD_ARRAY_H
#define TIERD_ARRAY_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
