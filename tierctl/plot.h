/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plot: pictures drawn by gnuplot from a script tierctl writes (stats, advise). */
#ifndef TIERCTL_PLOT_H
#define TIERCTL_PLOT_H

#include <stdio.h>

enum { PLOT_PNG, PLOT_SVG };

/* PLOT_SVG or PLOT_PNG by the name's ending (.svg, .png, any case), else -EINVAL. */
int plot_format(const char *file);
/* The gnuplot line that sets the terminal for format, the output left to stdout. */
const char *plot_terminal(int format);

/* Writes the gnuplot program to f: 0, -EINVAL (a reply not as the protocol says) or -EIO. */
typedef int plot_script_fn(FILE *f, void *ctx);

/*
 * Run gnuplot on the program script writes, its output going to file, which
 * is removed again on any failure. Returns 0 or an exit status after saying why.
 */
int plot_draw(const char *file, plot_script_fn *script, void *ctx);

#endif
