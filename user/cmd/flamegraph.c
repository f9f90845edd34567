// SPDX-License-Identifier: GPL-2.0
/* `jitrace flamegraph`: options, then the flame graph (SVG) or folded stacks of one log. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "views/flamegraph.h"
#include "base/outfile.h"
#include "base/util.h"

static const char usage[] =
"Usage: jitrace flamegraph [OPTIONS] FILE|DIR...\n"
"       jitrace flamegraph --diff [OPTIONS] BASE NEW\n"
"\n"
"Draw a jitrace log's sampled stacks as a flame graph: one self-contained SVG (open it\n"
"in a browser: click a frame to zoom, Search or Ctrl-F to highlight frames matching a\n"
"regular expression, hover for counts). JIT frames are green, native frames warm,\n"
"kernel frames blue. A system-wide log, or one with several processes, gets a root per\n"
"process, \"comm (pid)\". With --folded, write folded stacks instead, one line per stack\n"
"(\"root;caller;leaf count\"), for flamegraph.pl, inferno or speedscope.\n"
"\n"
"With --off-cpu, draw where threads waited instead of where they ran: the stacks they\n"
"left the CPU with (a log recorded with 'jitrace record --off-cpu'), each as wide as\n"
"the time it was off the CPU. Folded counts are microseconds, tooltips milliseconds;\n"
"waits shorter than the recording's --off-cpu-min have no stack and are drawn as one\n"
"\"[short waits]\" frame under their process, so that the whole time is there. The\n"
"--from/--to filters keep a wait by when its thread ran again.\n"
"\n"
"With --diff, the flame graph of the log NEW with each frame coloured by how its share\n"
"of the samples moved from the same stack's in the log BASE, each log's samples counted\n"
"against its own total: red grew, blue shrank, the deeper the more, grey stayed. Its\n"
"tooltip gives both counts and the change in points. Stacks only BASE has are not drawn\n"
"(swap the two to see them grow). Processes are merged by command name, as pids differ\n"
"between recordings; the filters apply to both logs.\n"
"\n"
"  -o, --output FILE  where to write (default: jitrace.svg for SVG, like perf's and\n"
"                     async-profiler's files; stdout for --folded; '-' is stdout)\n"
"  -f, --force        replace FILE if it exists (a regular file only)\n"
"  -d, --diff         compare two logs, BASE then NEW (SVG only)\n"
"      --folded       folded stacks instead of SVG\n"
"      --off-cpu      off-CPU time (us) instead of CPU samples; with --diff, both\n"
"                     logs' off-CPU time\n"
"      --annotate     folded: suffix JIT frames _[j] and kernel frames _[k]\n"
"                     (flamegraph.pl --color=java)\n"
"  -t, --title TEXT   the SVG's title\n"
"  -w, --width PX     the SVG's width (default 1200)\n"
"  -p, --pid PID[,PID...]  only these processes\n"
"      --comm NAME    only processes whose command name (comm) is NAME\n"
"      --from SECS    only samples SECS or more after the recording began\n"
"      --to SECS      only samples before SECS after the recording began\n"
"      --last SECS    only the last SECS seconds of the recording (a directory of\n"
"                     record --rotate's segments, or several logs, read as one)\n"
"      --salvage      read past blocks and records that break the log (said on stderr)\n"
"  -h, --help         this help\n"
"\n"
"Examples:\n"
"  jitrace flamegraph jitrace.jtl                 # writes jitrace.svg\n"
"  jitrace flamegraph -p 4242 -o app.svg app.jtl\n"
"  jitrace flamegraph --folded app.jtl > app.folded   # speedscope app.folded\n"
"  jitrace flamegraph --diff before.jtl after.jtl -o diff.svg   # red: hotter after\n"
"  jitrace flamegraph --off-cpu app.jtl -o wait.svg   # where threads wait\n"
"  jitrace flamegraph --off-cpu --folded app.jtl > wait.folded   # counts in us\n"
"  jitrace flamegraph --off-cpu --diff before.jtl after.jtl -o wait-diff.svg\n"
"  (speedscope: npm install -g speedscope; flamegraph.pl is in no Debian package:\n"
"  jitrace's own SVG, the first example, needs nothing)\n";

int jt_cmd_flamegraph(int argc, char **argv)
{
	enum { OPT_FOLDED = 256, OPT_ANNOTATE, OPT_OFFCPU };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "diff", no_argument, NULL, 'd' },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "off-cpu", no_argument, NULL, OPT_OFFCPU },
		{ "title", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		JT_FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct jt_flame_opts o = { 0 };
	const char *output = NULL;
	bool force = false, diff = false;
	struct jt_outfile *of = NULL;
	unsigned long v;
	FILE *out = stdout;
	char *end;
	int c, err, ret;

	jt_filter__init(&o.filter);
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:fdt:w:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'd':
			diff = true;
			break;
		case OPT_FOLDED:
			o.folded = true;
			break;
		case OPT_ANNOTATE:
			o.annotate = true;
			break;
		case OPT_OFFCPU:
			o.off_cpu = true;
			break;
		case 't':
			o.title = optarg;
			break;
		case 'w':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 200 || v > 100000) {
				jt_err("--width: '%s' is not a width from 200 to 100000 pixels",
				       optarg);
				return 2;
			}
			o.width = v;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:	/* a filter's option (0), a bad value (<0) or none (1) */
			err = jt_filter__option(&o.filter, c, optarg);
			if (err > 0)
				fputs("Try 'jitrace flamegraph --help'.\n", stderr);
			if (err)
				return 2;
			break;
		}
	}
	if (diff ? optind != argc - 2 : optind >= argc) {	/* FILE..., or BASE NEW */
		if (diff && optind == argc - 1)
			jt_err("--diff compares two logs: give BASE and NEW");
		fputs(usage, stderr);
		return 2;
	}
	if (o.annotate && !o.folded) {
		jt_err("--annotate is for --folded output");
		return 2;
	}
	if (diff && o.folded) {
		jt_err("--diff draws an SVG: it has no --folded form");
		return 2;
	}
	if (jt_filter__check(&o.filter))
		return 2;
	if (diff)
		o.base = argv[optind++];
	o.path = argv[optind];
	o.filter.more = argv + optind + 1;	/* read with it as one recording */
	o.filter.nr_more = argc - optind - 1;
	if (!output && !o.folded)
		output = "jitrace.svg";
	/* refused now if it exists, before the log is read; in place only once whole */
	if (output && strcmp(output, "-")) {
		out = jt_outfile__fopen(output, force, &of);
		if (!out)
			return 1;
	}
	ret = jt_flamegraph(out, &o);
	if (of && jt_outfile__finish(of, !ret))
		ret = 1;
	else if (of && !ret)
		fprintf(stderr, "jitrace: wrote %s\n", output);
	return ret;
}
