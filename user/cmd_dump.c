// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: the log as text, one record a line. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "dump.h"
#include "log.h"

static const char usage[] =
"Usage: jitrace dump [--salvage] FILE\n"
"\n"
"Print every record of a jitrace log, one a line: TIME TYPE key=value ...\n"
"TIME is in nanoseconds since the recording began. See README.md, \"dump format\".\n"
"A log that breaks its promises (a block missing, repeated or out of order, a record\n"
"going back in time or naming an id nothing defined) is an error, with its offset.\n"
"\n"
"      --salvage  print what is sound, skip the rest and say on stderr what was skipped\n"
"  -h, --help     this help\n"
"\n"
"Examples:\n"
"  jitrace dump jitrace.jtl | grep ' sample '\n"
"  jitrace dump app.jtl | awk '$2 == \"method\"'\n"
"  jitrace dump --salvage damaged.jtl > damaged.txt\n";

enum { OPT_SALVAGE = 256 };

int jt_cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "salvage", no_argument, NULL, OPT_SALVAGE },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned int flags = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SALVAGE:
			flags |= JT_LOGR_SALVAGE;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs("Try 'jitrace dump --help'.\n", stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	return jt_dump(stdout, argv[optind], flags) ? 1 : 0;
}
