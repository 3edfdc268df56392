/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every libFuzzer target here shares. */
#ifndef TIERD_FUZZ_H
#define TIERD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Checks stay on in any build: a fuzzer without them only finds crashes. */
#define FUZZ_ASSERT(e)                                                              \
	do {                                                                        \
		if (!(e)) {                                                         \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #e);     \
			abort();                                                    \
		}                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
