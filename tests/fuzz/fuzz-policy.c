/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-policy: arbitrary bytes as a policy file, through the parser tierd
 * runs on every file of its policy directories. What parses must be a valid
 * policy; what does not must say why in a sentence. A crash, a leak or a
 * broken invariant is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy pol;
	char err[256];

	err[0] = '\0';
	if (policy_parse("fuzz", (const char *)data, size, &pol, err, sizeof(err)) == 0)
		FUZZ_ASSERT(policy_valid(&pol) == 0);
	else
		FUZZ_ASSERT(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
	return 0;
}
