// SPDX-License-Identifier: GPL-2.0
/* What a late perf-map line may name: bare frames and departed code, by page and time. */
#include "join/late.h"

#define PAGE 4096ULL
#define PAGES_MAX 64		/* pages of one method looked at; a larger one is not named late */

static uint64_t page_of(uint64_t addr)
{
	return addr / PAGE + 1;	/* never 0 */
}

static void mark(struct jt_hash *h, uint64_t page, uint64_t ts)
{
	uintptr_t old = (uintptr_t)jt_hash__get(h, page);

	if (old >= ts)
		return;
	/* a full table, or no memory, leaves the page as it was: the caller copes */
	if (old || h->count < JT_LATE_PAGES_MAX)
		jt_hash__put(h, page, (void *)(uintptr_t)ts);
}

void jt_late__unnamed(struct jt_late *l, uint64_t addr, uint64_t ts)
{
	mark(&l->unnamed, page_of(addr), ts);
}

void jt_late__gone(struct jt_late *l, uint64_t start, uint64_t size, uint64_t ts)
{
	uint64_t p, last = page_of(start + (size ? size - 1 : 0));

	for (p = page_of(start); p <= last; p++) {
		if (!jt_hash__get(&l->gone, p) && l->gone.count >= JT_LATE_PAGES_MAX) {
			l->all_gone_ts = ts;	/* forgetting would name too far back */
			continue;
		}
		mark(&l->gone, p, ts);
	}
}

bool jt_late__window(const struct jt_late *l, uint64_t start, uint64_t size, uint64_t life_ts,
		     uint64_t *from)
{
	uint64_t p, first = page_of(start), last = page_of(start + (size ? size - 1 : 0));
	uint64_t since = life_ts > l->all_gone_ts ? life_ts : l->all_gone_ts;

	if (!size || last - first >= PAGES_MAX)
		return false;
	for (p = first; p <= last; p++) {
		uintptr_t g = (uintptr_t)jt_hash__get(&l->gone, p);

		if (g > since)
			since = g;
	}
	*from = since;
	return jt_late__met(l, start, size, since);
}

bool jt_late__met(const struct jt_late *l, uint64_t start, uint64_t size, uint64_t since)
{
	uint64_t p, first = page_of(start), last = page_of(start + (size ? size - 1 : 0));

	if (!size || last - first >= PAGES_MAX)
		return false;
	for (p = first; p <= last; p++)
		if ((uintptr_t)jt_hash__get(&l->unnamed, p) > since)
			return true;
	return false;
}

void jt_late__fini(struct jt_late *l)
{
	jt_hash__fini(&l->unnamed);
	jt_hash__fini(&l->gone);
	l->all_gone_ts = 0;
}
