/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Closed segments pushed to a fleet backend (Grafana Pyroscope, Parca) as pprof profiles, one
 * per process with samples in the segment, by a thread of its own (at a lower priority) so
 * that a slow or absent backend never holds the recording up. What was delivered is noted
 * beside each segment (NAME.pushed: a line per profile, "done" at the end), so a profile
 * is sent again only if its answer was lost; segments not yet pushed stay in the directory
 * and are pushed by the next recorder, unless the directory's bounds delete them first.
 * A failed try is tried again after a backoff of 1 s doubling to 30 s.
 */
#ifndef JT_PUSH_H
#define JT_PUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "export/push_fmt.h"

struct jt_push_opts {
	const char *url;		/* the backend's base URL */
	enum jt_push_format format;
	const char *service;		/* NULL: each process's comm */
	const char *dir;		/* the segments' directory */
	const struct jt_push_auth *auth;	/* copied */
};

struct jt_push_stats {
	uint64_t segments;		/* pushed whole */
	uint64_t profiles;		/* delivered */
	uint64_t failures;		/* tries that failed (each retried) */
	uint64_t rejected;		/* profiles the backend refused (4xx): not tried again */
	uint64_t expired;		/* segments deleted before they were pushed */
	uint64_t queued;		/* segments waiting, the one being pushed included */
	bool failing;			/* the latest try failed */
};

struct jt_push;

/*
 * Start pushing: the segments of dir that are not pushed yet (an earlier recorder's), then
 * each one jt_push__segment names. Blocks no signal itself: call it with the signals the
 * recorder reads blocked. NULL on error (reported).
 */
struct jt_push *jt_push__start(const struct jt_push_opts *o);
/* A segment was closed (its name in dir): queue it. */
void jt_push__segment(struct jt_push *p, const char *name);
void jt_push__stats(struct jt_push *p, struct jt_push_stats *st);
/* Keep trying what is queued for up to wait_s seconds, then stop (stats stay readable). */
void jt_push__stop(struct jt_push *p, double wait_s);
/* Stop at once if not stopped yet, and free. NULL is fine. */
void jt_push__free(struct jt_push *p);

#endif
