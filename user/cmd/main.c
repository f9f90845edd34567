// SPDX-License-Identifier: GPL-2.0
/* jitrace: the program's entry point, which hands over to one command. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"

#define JT_VERSION "0.1.0"

static const char usage[] =
"Usage: jitrace COMMAND [ARGS...]\n"
"\n"
"A system-wide tracer for JIT-compiled code: sampled stacks with real method names\n"
"and, where asked, every method entry and exit, for JVM, Mono, Node, BEAM and any JIT\n"
"that uses libjitrace-agent.\n"
"\n"
"Commands:\n"
"  record   record JIT code, samples and calls into a log (root)\n"
"  dump     print a log, one record a line\n"
"  report   the hottest methods of a log, per process, with calls if recorded\n"
"  flamegraph  a log's stacks as an interactive SVG flame graph, or folded stacks\n"
"  top      a live view of the hottest JIT methods on the host (root)\n"
"  export   write a log as pprof, speedscope or Chrome trace JSON\n"
"\n"
"Run 'jitrace COMMAND --help' for a command's options.\n"
"\n"
"Examples:\n"
"  sudo jitrace record -d 10 -o host.jtl\n"
"  sudo jitrace record --calls -- ./myjit\n"
"  jitrace dump host.jtl | head\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} cmds[] = {
		{ "record", jt_cmd_record },
		{ "dump", jt_cmd_dump },
		{ "report", jt_cmd_report },
		{ "flamegraph", jt_cmd_flamegraph },
		{ "top", jt_cmd_top },
		{ "export", jt_cmd_export },
	};
	static char name[32];
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("jitrace " JT_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* getopt names argv[0] in its messages: "jitrace report: unrecognized option" */
		snprintf(name, sizeof(name), "jitrace %s", cmds[i].name);
		argv[1] = name;
		return cmds[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "jitrace: no command '%s'\n%s", argv[1], usage);
	return 2;
}
