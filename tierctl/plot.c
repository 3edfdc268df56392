/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plot: pictures drawn by gnuplot from a script tierctl writes (stats, advise). */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

int plot_format(const char *file)
{
	const char *dot = strrchr(file, '.');

	if (dot && !strcasecmp(dot, ".svg"))
		return PLOT_SVG;
	if (dot && !strcasecmp(dot, ".png"))
		return PLOT_PNG;
	return -EINVAL;
}

const char *plot_terminal(int format)
{
	return format == PLOT_SVG ?
		       "set terminal svg size 1000,700 dynamic font 'sans,10' background rgb 'white'\n" :
		       "set terminal pngcairo size 1000,700 font 'sans,10'\n";
}

int plot_draw(const char *file, plot_script_fn *script, void *ctx)
{
	posix_spawn_file_actions_t actions;
	char *argv[] = { (char *)"gnuplot", NULL };
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old;
	int pipefd[2] = { -1, -1 }, out = -1, status, r;
	FILE *f = NULL;
	pid_t pid;

	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
	if (out < 0)
		return cli_fail("%s: %s", file, strerror(errno));
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = cli_fail("%s", strerror(errno));
		goto out;
	}
	r = posix_spawn_file_actions_init(&actions);
	if (r) {
		r = cli_fail("%s", strerror(r));
		goto out;
	}
	/* dup2 clears close-on-exec on the copies, and only on them. */
	posix_spawn_file_actions_adddup2(&actions, pipefd[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
	r = posix_spawnp(&pid, "gnuplot", &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (r == ENOENT) {
		r = cli_fail("cannot draw %s: gnuplot is not installed (install gnuplot-nox)", file);
		goto out;
	}
	if (r) {
		r = cli_fail("cannot run gnuplot: %s", strerror(r));
		goto out;
	}
	close(pipefd[0]);
	pipefd[0] = -1;

	/* gnuplot quitting early must show as its exit status, not kill us by SIGPIPE. */
	sigaction(SIGPIPE, &ignore, &old);
	f = fdopen(pipefd[1], "w");
	if (f) {
		pipefd[1] = -1;
		r = script(f, ctx);
		if (fclose(f) && !r)
			r = -EIO;
	} else {
		r = -errno;
	}
	sigaction(SIGPIPE, &old, NULL);
	if (pipefd[1] >= 0) {
		close(pipefd[1]);
		pipefd[1] = -1;
	}

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	if (r == -EINVAL)
		r = cli_output_done(r);
	else if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		r = cli_fail("gnuplot failed to draw %s (its message is above)", file);
	else if (r < 0)
		r = cli_fail("cannot write to gnuplot: %s", strerror(-r));
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (close(out) < 0 && !r)
		r = cli_fail("%s: %s", file, strerror(errno));
	/* Half a picture is worse than none: it would pass for the whole. */
	if (r)
		unlink(file);
	return r;
}
