// SPDX-License-Identifier: GPL-2.0
/* `jitrace export`: a log as pprof, speedscope or Chrome trace JSON for other tools. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "export/chrome.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "base/outfile.h"
#include "base/util.h"

static const char usage[] =
"Usage: jitrace export --format pprof|speedscope|chrome FILE|DIR... [-o OUT [-f]]\n"
"                      [-p PID[,PID]] [--comm NAME] [--from SECS] [--to SECS] [--last SECS]\n"
"\n"
"Write a jitrace log in a format other tools read:\n"
"  pprof       gzipped profile.proto of the samples, for Pyroscope, Parca, `go tool pprof`\n"
"              (sample types samples/count, the default, and cpu/nanoseconds, a stack's\n"
"              samples times 1e9/Hz; labels pid, tid, comm; a mapping per module with its\n"
"              file, and [jit], [kernel], [unknown]; each frame at the address it ran at)\n"
"  speedscope  JSON for speedscope.app: per thread a sampled profile and, if the log was\n"
"              recorded with --calls, an evented profile of every call\n"
"  chrome      Chrome Trace Event JSON of every call (B/E per thread), for Perfetto or\n"
"              chrome://tracing; needs a log recorded with --calls or --off-cpu\n"
"Calls are always written balanced: a leave whose enter came before recording is dropped\n"
"and a call still open at the end is closed at the last timestamp (counted on stderr).\n"
"\n"
"Off-CPU time (a log recorded with --off-cpu): each wait with the stack it left with\n"
"  pprof       sample type off_cpu/nanoseconds: each stack's time off the CPU (a wait\n"
"              is 0 in samples and cpu, a CPU sample 0 in off_cpu); label state: sleep,\n"
"              blocked, preempted, other, or short (waits under record's threshold,\n"
"              summed per thread with no stack: one location, [short waits])\n"
"  speedscope  in each thread's sampled profile, in time order with its CPU samples, a\n"
"              sample of the stack with \"[off-CPU: STATE]\" as its leaf, weighing its time\n"
"              (a CPU sample weighs 1/Hz); in the calls profile that frame, from when it\n"
"              left to when it ran again\n"
"  chrome      an X event per wait on its thread, \"off-CPU: STATE\", from when it left to\n"
"              when it ran again, args \"blocked in\" (its innermost user frame) and\n"
"              \"stack\"; short waits an instant event with their count and time\n"
"\n"
"  -t, --format FMT       pprof, speedscope or chrome (default: from OUT's name:\n"
"                         *.pb.gz or *.pprof, *.speedscope.json, *.trace.json)\n"
"  -o, --output OUT       the file to write (default: standard output, not a terminal\n"
"                         for pprof)\n"
"  -f, --force            replace OUT if it exists (a regular file only)\n"
"  -p, --pid PID[,PID]    only these processes\n"
"      --comm NAME        only processes whose command name is NAME\n"
"      --from SECS        only what happened SECS or more after the recording began\n"
"      --to SECS          only what happened before SECS after the recording began\n"
"      --last SECS        only the last SECS seconds of the recording (a directory of\n"
"                         record --rotate's segments, or several logs, read as one)\n"
"      --salvage          read past blocks and records that break the log (said on\n"
"                         stderr)\n"
"  -h, --help             this help\n"
"\n"
"Examples:\n"
"  jitrace export --format pprof app.jtl -o app.pb.gz && go tool pprof -top app.pb.gz\n"
"  go tool pprof -sample_index=cpu -top app.pb.gz       # CPU time instead of samples\n"
"  jitrace export app.jtl -o app.speedscope.json --comm java\n"
"  jitrace export --format chrome calls.jtl -p 4242 -o calls.trace.json\n"
"  sudo jitrace record --off-cpu -p 4242 -d 30 -o waits.jtl\n"
"  jitrace export waits.jtl -o waits.pb.gz\n"
"  go tool pprof -sample_index=off_cpu -top waits.pb.gz  # where threads waited, how long\n"
"  go tool pprof -sample_index=off_cpu -tagfocus=state=blocked -top waits.pb.gz\n"
"  jitrace export waits.jtl -o waits.speedscope.json     # waits on each thread's timeline\n"
"  jitrace export waits.jtl -o waits.trace.json          # each wait on its thread's track\n";

enum fmt { FMT_NONE, FMT_PPROF, FMT_SPEEDSCOPE, FMT_CHROME };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static enum fmt fmt_of_name(const char *out)
{
	if (!out)
		return FMT_NONE;
	if (ends_with(out, ".pb.gz") || ends_with(out, ".pprof"))
		return FMT_PPROF;
	if (ends_with(out, ".speedscope.json"))
		return FMT_SPEEDSCOPE;
	if (ends_with(out, ".trace.json"))
		return FMT_CHROME;
	return FMT_NONE;
}

int jt_cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		JT_FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct jt_filter filter;
	const char *out_path = NULL, *log;
	enum fmt fmt = FMT_NONE;
	struct jt_outfile *of = NULL;
	bool force = false;
	FILE *out;
	int c, err, ret;

	jt_filter__init(&filter);
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:fp:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!strcmp(optarg, "pprof")) {
				fmt = FMT_PPROF;
			} else if (!strcmp(optarg, "speedscope")) {
				fmt = FMT_SPEEDSCOPE;
			} else if (!strcmp(optarg, "chrome")) {
				fmt = FMT_CHROME;
			} else {
				jt_err("--format: '%s' is not pprof, speedscope or chrome", optarg);
				return 2;
			}
			break;
		case 'o':
			out_path = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:	/* a filter's option (0), a bad value (<0) or none (1) */
			err = jt_filter__option(&filter, c, optarg);
			if (err > 0)
				fputs(usage, stderr);
			if (err)
				return 2;
			break;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (jt_filter__check(&filter))
		return 2;
	log = argv[optind];
	filter.more = argv + optind + 1;	/* read with it as one recording */
	filter.nr_more = argc - optind - 1;
	if (fmt == FMT_NONE)
		fmt = fmt_of_name(out_path);
	if (fmt == FMT_NONE && out_path) {
		jt_err("export: cannot tell the format from %s's extension (.pb.gz, .pprof, "
		       ".speedscope.json, .trace.json): give --format pprof, speedscope or chrome",
		       out_path);
		return 2;
	}
	if (fmt == FMT_NONE) {
		jt_err("export: give --format pprof, speedscope or chrome");
		return 2;
	}
	if (!out_path && fmt == FMT_PPROF && isatty(STDOUT_FILENO)) {
		jt_err("export: a pprof profile is binary: give -o FILE or redirect the output");
		return 2;
	}
	/* refused now if it exists, before the log is read; in place only once whole */
	out = out_path ? jt_outfile__fopen(out_path, force, &of) : stdout;
	if (!out)
		return 1;
	if (fmt == FMT_PPROF)
		ret = jt_export_pprof(out, log, &filter);
	else if (fmt == FMT_SPEEDSCOPE)
		ret = jt_export_speedscope(out, log, &filter);
	else
		ret = jt_export_chrome(out, log, &filter);
	if (of && jt_outfile__finish(of, !ret))
		ret = 1;
	return ret;
}
