/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobview: a pool's running job as the protocol's job object, the one shape
 * of job.show, job.wait and every progress line (docs/protocol.md).
 */
#ifndef TIERD_JOBVIEW_H
#define TIERD_JOBVIEW_H

#include <json-c/json.h>

#include "job.h"
#include "pool.h"

/* The job object of p's job j; with end, how it ended (else its result is "running"). */
json_object *jobview_json(const struct pool *p, const struct job_report *j,
			  const struct job_end *end);

#endif
