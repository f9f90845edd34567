// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching a running JVM (record -p on a JVM started with no profiling flag): how long from
 * jitrace's start until it records, and until the JVM's first sample named by the map it
 * asked for, and what the attach costs the JVM in safepoint pauses; beside --no-attach.
 *
 * Each round starts `java -Xlog:safepoint:file=LOG:timenanos -XX:CompileCommand=dontinline,
 * Hot::* -cp DIR Hot 7` (tests/runtimes/java/Hot.java; -Xlog only to see the safepoints,
 * timed by CLOCK_MONOTONIC as jitrace is), waits for "hot ready" and 1 s more, then runs
 * `jitrace record -p PID -F 999 -d 2` (attach) or the same with --no-attach, in an order
 * rotated every round. t0 is just before jitrace's exec; "recording" is when its stderr says
 * so (polled every ms): the attach is done and the maps are scanned by then. The first named
 * sample is the first of the JVM's samples (any thread) whose leaf is Hot.a or Hot.b: "as
 * written" by its frame in the log, "as shown" with late names (a map line read after
 * samples met its code names them) applied as report applies them. Safepoints: those the
 * JVM logged between t0 and "recording" (the attach), and between t0 and jitrace's exit,
 * their count and their summed Total (reaching the safepoint and the pause at it).
 * Usage: bench_attach [JITRACE] (default build/jitrace), from the source tree's top.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "log/source.h"
#include "base/util.h"

#ifndef ROUNDS
#define ROUNDS 5
#endif
#define JAVA_HOME "/usr/lib/jvm/java-17-openjdk-amd64"
#define MS 1e6

struct run {
	double ready_ms;	/* t0 to "recording" */
	double named_ms;	/* t0 to the first named sample, as written (-1: none) */
	double shown_ms;	/* the same with late names */
	double sp_count, sp_us;	/* safepoints in [t0, recording] */
	double sp_all_count, sp_all_us;	/* in [t0, jitrace's exit] */
	double sp_life_count;	/* in the JVM's whole run: that its log shows them */
	double attach_ms;	/* what jitrace says the attach took (-1: none) */
};

static char jitrace[PATH_MAX], dir[PATH_MAX];

/* Spawn argv with stdout and stderr into files; its pid, or -1. */
static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Poll path until it holds text, up to timeout_ms: the time it did, or 0. */
static uint64_t wait_text(const char *path, const char *text, int timeout_ms)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < timeout_ms; i++) {
		if (bench_file_has(path, text))
			return jt_now_ns();
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* The JVM's safepoints logged in [from, to]: how many, and their Total summed in us. */
static void safepoints(const char *path, uint64_t from, uint64_t to, double *count, double *us)
{
	char line[1024], *p;
	unsigned long long ts, total;
	FILE *f = fopen(path, "r");

	*count = *us = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "[%lluns]", &ts) != 1 || ts < from || ts > to ||
		    !(p = strstr(line, "Total: ")) || sscanf(p + 7, "%llu", &total) != 1)
			continue;
		(*count)++;
		*us += total / 1000.0;
	}
	if (f)
		fclose(f);
}

/* The first sample of pid whose leaf is Hot.a or Hot.b, as written and as shown. */
static void first_named(const char *log, uint32_t pid, uint64_t t0, struct run *r)
{
	const struct jt_rec_hdr *h;
	struct jt_logsrc s;
	char buf[JT_LOGSRC_NAME_CAP];
	enum jt_lv_kind kind;
	const char *file, *name;

	r->named_ms = r->shown_ms = -1;
	if (jt_logsrc__open(&s, log, NULL))
		return;
	while ((h = jt_logsrc__next(&s, NULL))) {
		const struct jt_rec_sample *smp = (const void *)h;

		if (h->type != JT_REC_SAMPLE || smp->pid != pid || !smp->nr_frames)
			continue;
		name = jt_logsrc__frame(&s, &smp->frames[0], buf, &file, &kind);
		if (strcmp(name, "Hot.a(long)") && strcmp(name, "Hot.b(long)"))
			continue;
		if (r->shown_ms < 0)
			r->shown_ms = (h->ts - t0) / MS;
		if (JT_FRAME_KIND(smp->frames[0].ref) == JT_FRAME_METHOD) {
			r->named_ms = (h->ts - t0) / MS;
			break;
		}
	}
	jt_logsrc__finish(&s, "read");
	jt_logsrc__close(&s);
}

static int one_run(bool attach, int round, struct run *r)
{
	char out[PATH_MAX + 32], err[PATH_MAX + 32], sp[PATH_MAX + 32], log[PATH_MAX + 32];
	char rerr[PATH_MAX + 32], xlog[PATH_MAX + 64], pid_arg[16], map[64];
	char *java[] = { JAVA_HOME "/bin/java", xlog, "-XX:CompileCommand=quiet",
			 "-XX:CompileCommand=dontinline,Hot::*", "-cp", dir, "Hot", "7", NULL };
	char *rec[] = { jitrace, "record", "-p", pid_arg, "-F", "999", "-d", "2", "-f", "-o", log,
			attach ? NULL : "--no-attach", NULL };
	struct timespec second = { 1, 0 };
	pid_t jpid, rpid;
	uint64_t t0, ready, end;
	double us;
	int status;

	snprintf(out, sizeof(out), "%s/java%d%d.out", dir, round, attach);
	snprintf(err, sizeof(err), "%s/java%d%d.err", dir, round, attach);
	snprintf(sp, sizeof(sp), "%s/sp%d%d.log", dir, round, attach);
	snprintf(log, sizeof(log), "%s/rec%d%d.jtl", dir, round, attach);
	snprintf(rerr, sizeof(rerr), "%s/rec%d%d.err", dir, round, attach);
	snprintf(xlog, sizeof(xlog), "-Xlog:safepoint:file=%s:timenanos", sp);
	jpid = spawn(java, out, err);
	if (jpid < 0 || !wait_text(out, "hot ready", 30000)) {
		fprintf(stderr, "bench_attach: java did not start (%s)\n", err);
		return -1;
	}
	nanosleep(&second, NULL);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)jpid);
	t0 = jt_now_ns();
	rpid = spawn(rec, "/dev/null", rerr);
	ready = wait_text(rerr, "jitrace: recording", 20000);
	waitpid(rpid, &status, 0);
	end = jt_now_ns();
	waitpid(jpid, NULL, 0);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)jpid);
	unlink(map);	/* a benchmark leaves no map behind */
	if (!ready || !WIFEXITED(status) || WEXITSTATUS(status)) {
		bench_cat_stderr(rerr);
		return -1;
	}
	r->ready_ms = (ready - t0) / MS;
	r->attach_ms = bench_find_number(rerr, "(Compiler.perfmap) in ");
	safepoints(sp, t0, ready, &r->sp_count, &r->sp_us);
	safepoints(sp, t0, end, &r->sp_all_count, &r->sp_all_us);
	safepoints(sp, 0, UINT64_MAX, &r->sp_life_count, &us);
	first_named(log, (uint32_t)jpid, t0, r);
	return 0;
}

/* A row of the figure at offset off of runs (n of them; values below 0 left out), or "none". */
static void row(const char *what, struct run *runs, int n, size_t off, const char *unit)
{
	double v[ROUNDS];
	int i, k = 0;

	for (i = 0; i < n; i++) {
		double x = *(double *)((char *)&runs[i] + off);

		if (x >= 0)
			v[k++] = x;
	}
	if (k)
		bench_row(what, "", "%.0f", unit, v, k, k < n ? "not in every round" : "");
	else
		printf("| %s | | none | | | |\n", what);
}

int main(int argc, char **argv)
{
	static struct run runs[2][ROUNDS];
	char cmd[2 * PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	int r, k, n[2] = { 0, 0 };

	if (!realpath(argc > 1 ? argv[1] : "build/jitrace", jitrace)) {
		fprintf(stderr, "bench_attach: %s: %s\n", argc > 1 ? argv[1] : "build/jitrace",
			strerror(errno));
		return 1;
	}
	printf("## Attaching a running JVM: time to names, and the safepoints it costs\n\n");
	if (access(JAVA_HOME "/bin/java", X_OK)) {
		printf("MISSED: attaching a running JVM: %s is not installed.\n\n", JAVA_HOME);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/bench_attach.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cmd, sizeof(cmd), JAVA_HOME "/bin/javac -d %s tests/runtimes/java/Hot.java", dir);
	if (system(cmd)) {
		fprintf(stderr, "bench_attach: javac failed\n");
		return 1;
	}
	for (r = 0; r < ROUNDS; r++)
		for (k = 0; k < 2; k++) {
			int attach = (k + r) % 2;	/* rotated: each first in every other round */

			n[attach] += !one_run(attach, r, &runs[attach][n[attach]]);
		}
	printf("`jitrace record -p PID -F 999 -d 2` on `java Hot` started with no profiling flag "
	       "(only -Xlog:safepoint, to see the pauses) and running for 2 s, against the same "
	       "with --no-attach; %d and %d rounds, interleaved. t0: jitrace's exec.\n\n", n[1],
	       n[0]);
	bench_table_head();
	for (k = 1; k >= 0; k--) {
		static const struct {
			const char *what, *unit;
			size_t off;
		} figs[] = {
			{ "t0 to \"recording\"", " ms", offsetof(struct run, ready_ms) },
			{ "the attach, as jitrace says (\"in N ms\")", " ms",
			  offsetof(struct run, attach_ms) },
			{ "t0 to the first named sample, as written", " ms",
			  offsetof(struct run, named_ms) },
			{ "t0 to the first named sample, as shown", " ms",
			  offsetof(struct run, shown_ms) },
			{ "safepoints from t0 to \"recording\"", "", offsetof(struct run, sp_count) },
			{ "their pauses summed", " us", offsetof(struct run, sp_us) },
			{ "safepoints from t0 to jitrace's exit", "",
			  offsetof(struct run, sp_all_count) },
			{ "their pauses summed", " us", offsetof(struct run, sp_all_us) },
			{ "safepoints in the JVM's whole run (8 s)", "",
			  offsetof(struct run, sp_life_count) },
		};
		char what[128];
		size_t f;

		for (f = 0; n[k] && f < JT_ARRAY_SIZE(figs); f++) {
			if (!k && figs[f].off == offsetof(struct run, attach_ms))
				continue;	/* nothing attached */
			snprintf(what, sizeof(what), "%s: %s", k ? "attach" : "--no-attach",
				 figs[f].what);
			row(what, runs[k], n[k], figs[f].off, figs[f].unit);
		}
	}
	printf("\n");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? 1 : 0;
}
