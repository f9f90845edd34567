// SPDX-License-Identifier: GPL-2.0
/* `jitrace report`: options, then the report of one log. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "views/report.h"
#include "base/util.h"

static const char usage[] =
"Usage: jitrace report [OPTIONS] FILE|DIR...\n"
"       jitrace report --diff [OPTIONS] BASE NEW\n"
"\n"
"The hottest methods of a jitrace log: samples whose leaf is the method (self) and\n"
"samples with the method anywhere on the stack (total), over the whole log and per\n"
"process, each with the offsets into it where its self samples fall. A log recorded\n"
"with --calls adds call counts and inclusive and exclusive times from enter/leave.\n"
"A directory (record --rotate's segments) or several logs are read as one recording.\n"
"\n"
"A log recorded with --off-cpu adds where threads waited: the time off the CPU by\n"
"state (sleep, blocked, preempted, other, short: the waits under --off-cpu-min, summed\n"
"without stacks) and on it (samples / Hz) in the header and each section's head; an\n"
"off-CPU table per section: for each frame, WAIT_MS the time of the waits whose stack\n"
"held it (once a wait, however deep the recursion), WAIT% of the section's waiting,\n"
"INNER_MS the time it was the innermost user frame (where the thread blocked), WAITS,\n"
"and CPU_MS its time on the CPU (samples whose stack held it / Hz); and a table per\n"
"process of each thread's time on and off the CPU, by state, the longest first. The\n"
"filters keep a wait by its process and by when its thread ran again.\n"
"\n"
"With --diff, what changed from the log BASE to the log NEW: the methods whose share\n"
"of samples moved most, each log's samples counted against its own total (so logs of\n"
"different lengths or rates compare), the change in points (NEW% less BASE%).\n"
"Methods are matched by name over every process; the filters apply to both logs.\n"
"\n"
"  -n, --top N        rows per table, threads per time table (default 20; 0: all)\n"
"  -P, --procs N      process sections (default 10; 0: all)\n"
"  -s, --sort KEY     order rows by 'self' (default) or 'total' samples (--diff: by\n"
"                     how far that share moved)\n"
"      --threads      after each process, a table per thread (its name and tid),\n"
"                     the busiest first\n"
"  -d, --diff         compare two logs, BASE then NEW\n"
"  -p, --pid PID[,PID...]  only these processes\n"
"      --comm NAME    only processes whose command name (comm) is NAME\n"
"      --from SECS    only what happened SECS or more after the recording began\n"
"      --to SECS      only what happened before SECS after the recording began\n"
"      --last SECS    only the last SECS seconds of the recording\n"
"      --salvage      read past blocks and records that break the log (said on stderr)\n"
"  -j, --json         JSON for scripts, instead of text\n"
"  -h, --help         this help\n"
"\n"
"Examples:\n"
"  jitrace report jitrace.jtl\n"
"  jitrace report --pid 4242 --from 10 --to 20 app.jtl\n"
"  jitrace report --threads --pid 4242 -n 5 app.jtl   # which thread runs what\n"
"  jitrace report wait.jtl      # from record --off-cpu: where threads wait, and burn\n"
"  jitrace report --json wait.jtl | jq '.processes[].thread_times'   # on vs off CPU\n"
"  jitrace report --json --top 0 app.jtl | jq '.all.methods[0]'\n"
"  jitrace report --last 300 /var/lib/jitrace     # a flight recorder's last 5 minutes\n"
"  jitrace report --diff before.jtl after.jtl     # what got hotter, what cooler\n"
"  jitrace report --diff --comm java -n 10 before.jtl after.jtl\n";

enum { OPT_THREADS = 0x300 };	/* long only: -t means other things in other commands */

int jt_cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "procs", required_argument, NULL, 'P' },
		{ "sort", required_argument, NULL, 's' },
		{ "diff", no_argument, NULL, 'd' },
		{ "threads", no_argument, NULL, OPT_THREADS },
		JT_FILTER_LONGOPTS,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct jt_report_opts o = { .top = 20, .procs = 10 };
	bool diff = false;
	unsigned long v;
	char *end;
	int c, err;

	jt_filter__init(&o.filter);
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:P:s:dp:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
		case 'P':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v > 1000000) {
				jt_err("%s: '%s' is not a whole number from 0 to 1000000",
				       c == 'n' ? "--top" : "--procs", optarg);
				return 2;
			}
			*(c == 'n' ? &o.top : &o.procs) = v;
			break;
		case 's':
			if (!strcmp(optarg, "self")) {
				o.sort = JT_REPORT_BY_SELF;
			} else if (!strcmp(optarg, "total")) {
				o.sort = JT_REPORT_BY_TOTAL;
			} else {
				jt_err("--sort: '%s': give self or total", optarg);
				return 2;
			}
			break;
		case 'd':
			diff = true;
			break;
		case OPT_THREADS:
			o.threads = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:	/* a filter's option (0), a bad value (<0) or none (1) */
			err = jt_filter__option(&o.filter, c, optarg);
			if (err > 0)
				fputs("Try 'jitrace report --help'.\n", stderr);
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
	if (jt_filter__check(&o.filter))
		return 2;
	if (diff)
		o.base = argv[optind++];
	o.path = argv[optind];
	o.filter.more = argv + optind + 1;	/* read with it as one recording */
	o.filter.nr_more = argc - optind - 1;
	return jt_report(stdout, &o);
}
