// SPDX-License-Identifier: GPL-2.0
/* `jitrace report`: the entry, which builds the model of a log (report_model.c) and hands
 * it to the text or JSON renderer, or both logs to --diff's (report_diff.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "views/report.h"
#include "views/report_model.h"

int jt_report(FILE *out, const struct jt_report_opts *o)
{
	struct jt_report_model r = { .o = o };
	int ret = 1;

	if (o->base)
		return report__diff(out, o);
	if (report__load(&r))
		goto out;
	if (o->json ? report__json(out, &r) : report__text(out, &r))
		goto out;
	if (fflush(out) || ferror(out)) {
		jt_err("writing the report: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	report__free(&r);
	return ret;
}
