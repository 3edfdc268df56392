/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fault: test-only crash and failure points, so tests can stop or fail tierd at a step. */
#ifndef TIERD_FAULT_H
#define TIERD_FAULT_H

/*
 * If the environment variable TIERD_FAULT names this step, die at once by
 * SIGKILL, as a crash or kill -9 would: nothing after it runs, not even exit
 * handlers. If it is "stop:" followed by this step, stop (SIGSTOP) until a
 * SIGCONT, once: the test changes the devices between two steps, and the
 * kernel fails what it really would. docs/testing.md lists the steps.
 */
void fault_point(const char *step);

/*
 * If TIERD_FAULT is "fail:" followed by this step, -EIO (every time: a
 * device that keeps failing); else 0. For failures the kernel's test
 * targets cannot make alone, such as a metadata write failing while the
 * flush before it succeeds.
 */
int fault_fail(const char *step);

#endif
