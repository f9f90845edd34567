// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: the log as text, one record a line. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "dump.h"

static const char usage[] =
"Usage: jitrace dump FILE\n"
"\n"
"Print every record of a jitrace log, one a line: TIME TYPE key=value ...\n"
"TIME is in nanoseconds since the recording began. See README.md, \"dump format\".\n"
"\n"
"Examples:\n"
"  jitrace dump jitrace.jtl | grep ' sample '\n"
"  jitrace dump app.jtl | awk '$2 == \"method\"'\n";

int jt_cmd_dump(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 2) {
		fputs(usage, stderr);
		return 2;
	}
	return jt_dump(stdout, argv[1]) ? 1 : 0;
}
