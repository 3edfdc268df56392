/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log: the daemon's messages. To stderr; under systemd, when stderr is the
 * journal's stream, straight to the journal instead, with structured fields
 * (docs/operations.md): TIERD_POOL= on messages about a pool, TIERD_RUN= on
 * those about a tiering run, and the source location as journald expects.
 */
#ifndef TIERD_LOG_H
#define TIERD_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

/* Messages below this priority (LOG_DEBUG > LOG_INFO > ...) are dropped. */
void log_set_max_priority(int priority);
/* Whether a message of this priority would be written: lets a caller skip formatting it. */
bool log_enabled(int priority);

/*
 * Where a message comes from and what it concerns: pool (NULL: none) and run
 * (0: none) become the journal's TIERD_POOL= and TIERD_RUN=; with name_pool
 * the text starts with "pool NAME: ", the one way a message names its pool.
 */
struct log_origin {
	const char *file, *func;
	int line;
	const char *pool;
	int64_t run;
	bool name_pool;
};

void log_write(int priority, const struct log_origin *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_origin_(pool_, run_, name_pool_) \
	(&(const struct log_origin){ __FILE__, __func__, __LINE__, (pool_), (run_), (name_pool_) })

#define log_msg(priority, ...) log_write(priority, log_origin_(NULL, 0, false), __VA_ARGS__)
#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* About the pool named pool: "pool NAME: " and the message. */
#define log_pool_msg(priority, pool, ...) \
	log_write(priority, log_origin_(pool, 0, true), __VA_ARGS__)
#define log_pool_err(pool, ...) log_pool_msg(LOG_ERR, pool, __VA_ARGS__)
#define log_pool_warn(pool, ...) log_pool_msg(LOG_WARNING, pool, __VA_ARGS__)
#define log_pool_info(pool, ...) log_pool_msg(LOG_INFO, pool, __VA_ARGS__)
#define log_pool_debug(pool, ...) log_pool_msg(LOG_DEBUG, pool, __VA_ARGS__)

/* The same about tiering run run (its id in the state) of that pool. */
#define log_run_msg(priority, pool, run, ...) \
	log_write(priority, log_origin_(pool, run, true), __VA_ARGS__)
#define log_run_warn(pool, run, ...) log_run_msg(LOG_WARNING, pool, run, __VA_ARGS__)
#define log_run_info(pool, run, ...) log_run_msg(LOG_INFO, pool, run, __VA_ARGS__)

/* About the pool named pool, in a sentence that names it its own way. */
#define log_about(priority, pool, ...) \
	log_write(priority, log_origin_(pool, 0, false), __VA_ARGS__)

#endif
