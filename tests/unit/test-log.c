/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's log lines on stderr: plain, or for the journal's stream when
 * stderr is the one JOURNAL_STREAM names. Here no journald listens, so the
 * native protocol fails and the stream form is what comes out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "log.h"

/* What the log calls in fn wrote to stderr. */
static char *captured(void (*fn)(void))
{
	static char out[4096];
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	CHECK(f && saved >= 0);
	fflush(stderr);
	CHECK(dup2(fileno(f), STDERR_FILENO) == STDERR_FILENO);
	fn();
	fflush(stderr);
	CHECK(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static void lines(void)
{
	log_info("started");
	log_pool_warn("tank", "cannot read its pins: %s", "disk I/O error");
	log_run_info("tank", 12, "tiering run %d done", 12);
	log_about(LOG_INFO, "tank", "pool %s active", "tank");
	log_debug("not shown");
}

/* JOURNAL_STREAM naming stderr itself: set inside the capture, where stderr is the file. */
static void journal_lines(void)
{
	struct stat st;
	char v[64];

	CHECK(fstat(STDERR_FILENO, &st) == 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	lines();
}

int main(void)
{
	unsetenv("JOURNAL_STREAM");
	if (access("/run/systemd/journal/socket", F_OK) == 0) {
		printf("skip: a journald listens here; its lines would not come to stderr\n");
		return 77;
	}
	CHECK_STR(captured(lines), "tierd: info: started\n"
				   "tierd: warning: pool tank: cannot read its pins: disk I/O error\n"
				   "tierd: info: pool tank: tiering run 12 done\n"
				   "tierd: info: pool tank active\n");
	log_set_max_priority(LOG_DEBUG);
	CHECK(strstr(captured(lines), "tierd: debug: not shown\n"));
	log_set_max_priority(LOG_INFO);
	/* The variable alone is not the journal: stderr must be the stream it names. */
	setenv("JOURNAL_STREAM", "1:2", 1);
	CHECK_STR(captured(lines), "tierd: info: started\n"
				   "tierd: warning: pool tank: cannot read its pins: disk I/O error\n"
				   "tierd: info: pool tank: tiering run 12 done\n"
				   "tierd: info: pool tank active\n");
	/* The stream's own form: the journal takes the priority from "<N>". */
	CHECK_STR(captured(journal_lines), "<6>started\n"
					   "<4>pool tank: cannot read its pins: disk I/O error\n"
					   "<6>pool tank: tiering run 12 done\n"
					   "<6>pool tank active\n");
	return 0;
}
