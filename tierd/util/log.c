/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
/* The location is the caller's, which log_write passes: not log.c's. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

/* Where journald takes messages of its native protocol. */
#define LOG_JOURNAL_SOCKET "/run/systemd/journal/socket"

static int max_priority = LOG_INFO;

void log_set_max_priority(int priority)
{
	max_priority = priority;
}

bool log_enabled(int priority)
{
	return priority <= max_priority;
}

/*
 * JOURNAL_STREAM names the stream systemd connected; stderr is that stream
 * only when device and inode match (systemd.exec(5)): a child whose stderr
 * was redirected inherits the variable but not the stream.
 */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* sd_journal_sendv() drops a message silently when journald has no socket. */
static bool journal_listens(void)
{
	return access(LOG_JOURNAL_SOCKET, W_OK) == 0;
}

/* One field per iovec, as sd_journal_sendv(3) takes them; 0 when it took them. */
static int journal_send(int priority, const struct log_origin *o, const char *text)
{
	char msg[2100], prio[16], file[300], line[32], func[200], pool[200], run[48];
	struct iovec iov[8];
	int n = 0;

#define FIELD(buf, ...)                                                          \
	do {                                                                     \
		snprintf(buf, sizeof(buf), __VA_ARGS__);                        \
		iov[n++] = (struct iovec){ .iov_base = buf, .iov_len = strlen(buf) }; \
	} while (0)
	FIELD(msg, "MESSAGE=%s", text);
	FIELD(prio, "PRIORITY=%d", priority);
	FIELD(file, "CODE_FILE=%s", o->file);
	FIELD(line, "CODE_LINE=%d", o->line);
	FIELD(func, "CODE_FUNC=%s", o->func);
	iov[n++] = (struct iovec){ .iov_base = "SYSLOG_IDENTIFIER=tierd",
				   .iov_len = sizeof("SYSLOG_IDENTIFIER=tierd") - 1 };
	if (o->pool)
		FIELD(pool, "TIERD_POOL=%s", o->pool);
	if (o->run > 0)
		FIELD(run, "TIERD_RUN=%" PRId64, o->run);
#undef FIELD
	return sd_journal_sendv(iov, n);
}

void log_write(int priority, const struct log_origin *o, const char *fmt, ...)
{
	static const char *const label[] = {
		[LOG_EMERG] = "emergency", [LOG_ALERT] = "alert", [LOG_CRIT] = "critical",
		[LOG_ERR] = "error",       [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info",       [LOG_DEBUG] = "debug",
	};
	char text[2048];
	size_t n = 0;
	va_list ap;

	if (!log_enabled(priority))
		return;
	if (o->name_pool && o->pool) {
		snprintf(text, sizeof(text), "pool %s: ", o->pool);
		n = strlen(text);
	}
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - n, fmt, ap);
	va_end(ap);
	/* Asked each time: an fstat is cheap next to a line of log, and stderr can change. */
	if (stderr_is_journal()) {
		if (journal_listens() && journal_send(priority & 7, o, text) == 0)
			return;
		/* A journal that takes no datagram (gone, full) still reads the stream. */
		fprintf(stderr, "<%d>%s\n", priority & 7, text);
		return;
	}
	fprintf(stderr, "tierd: %s: %s\n", label[priority & 7], text);
}
