// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: the log as text, one record a line. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "views/dump.h"
#include "log/filter.h"
#include "log/log.h"

static const char usage[] =
"Usage: jitrace dump [--salvage] [--last SECS] FILE|DIR...\n"
"\n"
"Print every record of a jitrace log, one a line: TIME TYPE key=value ...\n"
"TIME is in nanoseconds since the recording began. See README.md, \"dump format\".\n"
"A log that breaks its promises (a block missing, repeated or out of order, a record\n"
"going back in time or naming an id nothing defined) is an error, with its offset.\n"
"A directory (record --rotate's segments) or several logs are read as one recording,\n"
"in time order, TIME from its start.\n"
"\n"
"      --salvage  print what is sound, skip the rest and say on stderr what was skipped\n"
"      --last SECS  only samples and calls of the recording's last SECS seconds\n"
"  -h, --help     this help\n"
"\n"
"Examples:\n"
"  jitrace dump jitrace.jtl | grep ' sample '\n"
"  jitrace dump app.jtl | awk '$2 == \"method\"'\n"
"  jitrace dump --salvage damaged.jtl > damaged.txt\n";

enum { OPT_SALVAGE = 256, OPT_LAST };

int jt_cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "salvage", no_argument, NULL, OPT_SALVAGE },
		{ "last", required_argument, NULL, OPT_LAST },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct jt_filter filter;
	int c;

	jt_filter__init(&filter);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SALVAGE:
			filter.salvage = true;
			break;
		case OPT_LAST:
			if (jt_filter__parse(&filter, "--last", optarg))
				return 2;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs("Try 'jitrace dump --help'.\n", stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	filter.more = argv + optind + 1;	/* read with the first as one recording */
	filter.nr_more = argc - optind - 1;
	return jt_dump_filtered(stdout, argv[optind], &filter) ? 1 : 0;
}
