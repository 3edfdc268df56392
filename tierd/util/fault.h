/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fault: test-only crash points, so tests can stop tierd at a step of a protocol. */
#ifndef TIERD_FAULT_H
#define TIERD_FAULT_H

/*
 * If the environment variable TIERD_FAULT names this step, die at once by
 * SIGKILL, as a crash or kill -9 would: nothing after it runs, not even exit
 * handlers. docs/testing.md lists the steps.
 */
void fault_point(const char *step);

#endif
