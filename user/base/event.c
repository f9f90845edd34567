// SPDX-License-Identifier: GPL-2.0
/* Building the collector's events (user/base/event.h). */
#include <string.h>

#include "base/event.h"

void jt_event__put_str(struct jt_event *ev, const char *s, size_t len)
{
	char *t = (char *)ev->tail;

	ev->str_len = len;
	ev->len = jt_event__size(len + 1);
	memmove(t, s, len);
	memset(t + len, 0, ev->len - JT_EVENT_FIXED - len);
}

void jt_event__code(struct jt_event *ev, uint64_t ts, uint32_t pid, const char *name,
		    size_t len)
{
	char *s = (char *)ev->tail;

	if (len > JT_NAME_MAX - 1)
		len = JT_NAME_MAX - 1;
	memset(ev, 0, JT_EVENT_FIXED);
	ev->ts = ts;
	ev->type = JT_EV_CODE_LOAD;
	ev->pid = pid;
	ev->tid = pid;
	jt_event__put_str(ev, name, len);
	/* a NUL would end the name where it is read: show it as '?' instead */
	for (char *nul = memchr(s, 0, len); nul; nul = memchr(nul, 0, s + len - nul))
		*nul = '?';
}
