// SPDX-License-Identifier: GPL-2.0
/*
 * Offline views against perf. One workload (two toy JIT processes, split scenario) is
 * recorded twice to about a million samples: by `jitrace record -g -F HZ` and by
 * `perf record -g -F HZ`. Then `jitrace report` and `jitrace flamegraph --folded` over the
 * one are timed against `perf script` over the other, interleaved. A generated log of a
 * million deep samples (20 to 40 frames) is timed as well, for stacks as deep as a JVM's.
 * Usage: bench_offline [TOYJIT] (default build/toyjit; jitrace is beside it); without perf
 * on the PATH only jitrace's figures are printed. JT_BENCH_LOG=PATH keeps the generated log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "views/flamegraph.h"
#include "jt_events.h"
#include "log/log.h"
#include "views/report.h"
#include "base/util.h"

#define SAMPLES 1000000
#define PIDS 8
#define METHODS_PER_PID 40	/* 320 JIT methods */
#define SYMS_PER_PID 24
#define STACKS 4000		/* distinct stacks the samples are drawn from */
#define ROUNDS 5
#define REC_HZ "20000"		/* per CPU: two CPUs give about 40,000 samples/s */
#define REC_MS "27000"		/* CPU ms of each of the two processes: about 1.08M samples */

union buf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[4096];
};

static void *mk(union buf *rb, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	memset(rb->b, 0, jt_round8(fixed + var));
	rb->h.type = type;
	rb->h.size = jt_round8(fixed + var);
	rb->h.ts = ts;
	return rb;
}

static int put(struct jt_log_writer *w, union buf *rb)
{
	return jt_logw__append(w, &rb->h);
}

/* A million samples: per pid, libc and the runtime's native frames at the bottom, 15 to
 * 35 JIT frames above them, a kernel tail on one in eight; drawn from STACKS templates with
 * a skew (a few stacks are hot), leaf offsets varying. */
static int write_log(const char *path)
{
	struct jt_log_header h = { .start_ns = 1000000000ULL, .ncpus = 2, .sample_hz = 4999,
				   .flags = JT_LOG_F_SYSTEM_WIDE | JT_LOG_F_KSTACK };
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	static struct jt_frame stacks[STACKS][48];
	static unsigned depth[STACKS], owner[STACKS];
	unsigned seed = 42, i, k, p;
	uint64_t ts = h.start_ns, id = 1;
	union buf rb;
	char name[128];
	int err = 0;

	if (!w)
		return -1;
	for (p = 0; p < PIDS && !err; p++) {
		struct jt_rec_proc *pr = mk(&rb, JT_REC_PROC, sizeof(*pr), 20, ts);
		struct jt_rec_module *m;
		struct jt_rec_symbol *s;
		struct jt_rec_method *me;

		pr->pid = 1000 + p;
		snprintf(pr->comm, sizeof(pr->comm), "java%u", p);
		pr->cmdline_len = 20;
		memcpy(pr->cmdline, "java -jar service.jar", 20);
		err = put(w, &rb);
		m = mk(&rb, JT_REC_MODULE, sizeof(*m), 33, ts);
		m->id = p + 1;
		m->pid = 1000 + p;
		m->path_len = 33;
		memcpy(m->path, "/usr/lib/jvm/lib/server/libjvm.so", 33);
		err = err ?: put(w, &rb);
		for (k = 0; k < SYMS_PER_PID && !err; k++) {
			int n = snprintf(name, sizeof(name), "JVM_native_helper_%u::call", k);

			s = mk(&rb, JT_REC_SYMBOL, sizeof(*s), n, ts);
			s->id = p * SYMS_PER_PID + k + 1;
			s->module = p + 1;
			s->pid = 1000 + p;
			s->name_len = n;
			memcpy(s->name, name, n);
			err = put(w, &rb);
		}
		for (k = 0; k < METHODS_PER_PID && !err; k++) {
			int n = snprintf(name, sizeof(name),
					 "Lcom/example/service/Handler%u;::process%u(Ljava/lang/String;)V",
					 k % 7, k);

			me = mk(&rb, JT_REC_METHOD, sizeof(*me), n, ts);
			me->id = id++;
			me->pid = 1000 + p;
			me->start = 0x7f0000000000ULL + me->id * 0x1000;
			me->size = 0x400;
			me->name_len = n;
			memcpy(me->name, name, n);
			err = put(w, &rb);
		}
	}
	for (i = 0; i < STACKS; i++) {
		unsigned jit = 15 + rand_r(&seed) % 21, n = 0, kern = rand_r(&seed) % 8 == 0;

		p = rand_r(&seed) % PIDS;
		owner[i] = 1000 + p;
		if (kern) {
			stacks[i][n++] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0),
							    0xffffffff81000000ULL + rand_r(&seed) % 64 * 0x40 };
			stacks[i][n++] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0),
							    0xffffffff81a00000ULL };
		}
		for (k = 0; k < jit; k++)	/* leaf first; callers from a small hot set */
			stacks[i][n++] = (struct jt_frame){
				JT_FRAME_REF(JT_FRAME_METHOD, p * METHODS_PER_PID + 1 +
					     (k < 3 ? (unsigned)rand_r(&seed) % METHODS_PER_PID :
						      (k * 7 + i % 3) % METHODS_PER_PID)),
				0x40 + rand_r(&seed) % 8 * 4 };
		for (k = 0; k < 4; k++)
			stacks[i][n++] = (struct jt_frame){
				JT_FRAME_REF(JT_FRAME_SYMBOL, p * SYMS_PER_PID + 1 + k), 0x10 };
		stacks[i][n++] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, p + 1), 0x2724a };
		depth[i] = n;
	}
	for (i = 0; i < SAMPLES && !err; i++) {
		/* skewed: the square of a uniform number favours low stack numbers */
		double u = (double)rand_r(&seed) / RAND_MAX;
		unsigned st = (unsigned)(u * u * (STACKS - 1));
		struct jt_rec_sample *s = mk(&rb, JT_REC_SAMPLE, sizeof(*s),
					     depth[st] * sizeof(struct jt_frame), ts);

		s->pid = s->tid = owner[st];
		s->cpu = i & 1;
		s->nr_frames = depth[st];
		memcpy(s->frames, stacks[st], depth[st] * sizeof(struct jt_frame));
		s->frames[0].off += rand_r(&seed) % 4;
		err = put(w, &rb);
		ts += 100000;	/* 100 s in all */
	}
	if (err) {
		jt_logw__abort(w);
		return -1;
	}
	return jt_logw__close(w);
}

static double secs_now(void)
{
	return jt_now_ns() / 1e9;
}

static double time_report(const char *log, FILE *null)
{
	struct jt_report_opts o = { .path = log, .top = 20, .procs = 10 };
	double t = secs_now();

	jt_filter__init(&o.filter);
	if (jt_report(null, &o))
		exit(1);
	return secs_now() - t;
}

static double time_folded(const char *log, FILE *null)
{
	struct jt_flame_opts o = { .path = log, .folded = true };
	double t = secs_now();

	jt_filter__init(&o.filter);
	if (jt_flamegraph(null, &o))
		exit(1);
	return secs_now() - t;
}

static int run(char *const argv[], const char *out)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Samples perf script prints (lines that start a sample: not indented, not blank). */
static long perf_samples(const char *data)
{
	char cmd[512], line[4096];
	long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "perf script -i %s 2>/dev/null", data);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\t' && line[0] != ' ' && line[0] != '\n')
			n++;
	pclose(f);
	return n;
}

static double time_perf(const char *data)
{
	char *argv[] = { "perf", "script", "-i", (char *)data, NULL };
	double t = secs_now();

	if (run(argv, "/dev/null"))
		return -1;
	return secs_now() - t;
}

/* Samples in a jitrace log. */
static long log_samples(const char *path)
{
	struct jt_log_reader *r = jt_logr__open(path);
	const struct jt_rec_hdr *h;
	long n = 0;

	if (!r)
		return -1;
	while ((h = jt_logr__next(r)))
		n += h->type == JT_REC_SAMPLE;
	jt_logr__close(r);
	return n;
}

/* Record the workload with jitrace (into log) and, if it can, perf (into data). */
static int record_workload(const char *toyjit, const char *log, const char *data,
			   bool *have_perf)
{
	char jitrace[512], work[1024];
	const char *slash = strrchr(toyjit, '/');
	char *jrec[] = { jitrace, "record", "-f", "-g", "-F", REC_HZ, "-o", (char *)log, "--",
			 "sh", "-c", work, NULL };
	char *prec[] = { "perf", "record", "-q", "-g", "-F", REC_HZ, "-o", (char *)data, "--",
			 "sh", "-c", work, NULL };

	snprintf(jitrace, sizeof(jitrace), "%.*sjitrace", slash ? (int)(slash - toyjit + 1) : 0,
		 toyjit);
	snprintf(work, sizeof(work), "%s split --ms %s & %s split --ms %s; wait", toyjit, REC_MS,
		 toyjit, REC_MS);
	if (run(jrec, "/dev/null")) {
		fprintf(stderr, "bench_offline: %s record failed\n", jitrace);
		return -1;
	}
	if (*have_perf && run(prec, "/dev/null")) {
		fprintf(stderr, "bench_offline: perf record failed; jitrace only\n");
		*have_perf = false;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *toyjit = argc > 1 ? argv[1] : "build/toyjit";
	char dir[] = "/tmp/jt_bench_offline.XXXXXX", deep[256], log[256], data[256];
	double rep[ROUNDS], fold[ROUNDS], perf[ROUNDS], drep[ROUNDS], dfold[ROUNDS];
	bool have_perf = !system("perf --version >/dev/null 2>&1");
	long nperf = 0, njit;
	FILE *null;
	int r;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(deep, sizeof(deep), "%s/deep.jtl", dir);
	snprintf(log, sizeof(log), "%s/toyjit.jtl", dir);
	snprintf(data, sizeof(data), "%s/perf.data", dir);
	if (getenv("JT_BENCH_LOG"))	/* keep the log there, to profile a view by hand */
		snprintf(deep, sizeof(deep), "%s", getenv("JT_BENCH_LOG"));
	fprintf(stderr, "bench_offline: recording the workload with jitrace and with perf\n");
	if (write_log(deep) || record_workload(toyjit, log, data, &have_perf))
		return 1;
	njit = log_samples(log);
	if (have_perf && (nperf = perf_samples(data)) <= 0)
		have_perf = false;
	if (njit <= 0)
		return 1;
	null = fopen("/dev/null", "w");
	if (!null)
		return 1;
	for (r = 0; r < ROUNDS; r++) {
		rep[r] = time_report(log, null);
		fold[r] = time_folded(log, null);
		perf[r] = have_perf ? time_perf(data) : 0;
		drep[r] = time_report(deep, null);
		dfold[r] = time_folded(deep, null);
	}
	printf("## Offline: samples into a report and folded stacks, against perf script\n\n");
	printf("One workload, two toy-JIT processes (`toyjit split --ms %s`, twice, at once), "
	       "is recorded twice: by `jitrace record -g -F %s` and by `perf record -g -F %s`. "
	       "jitrace's log holds %ld samples, perf.data %ld. Then, %d interleaved rounds: "
	       "`jitrace report`, `jitrace flamegraph --folded` and `perf script`, each to "
	       "/dev/null, wall-clock seconds. A second figure times the same two views on a "
	       "generated log of %d samples with 20 to 40 frames each, %d processes and %d JIT "
	       "methods.\n\n", REC_MS, REC_HZ, REC_HZ, njit, nperf, ROUNDS, SAMPLES, PIDS,
	       PIDS * METHODS_PER_PID);
	bench_table_head();
	{
		char what[96];
		double ra[ROUNDS], rb[ROUNDS];

		/* per-round ratios, per sample, so the spread of the ratio is real */
		for (r = 0; r < ROUNDS && have_perf; r++) {
			ra[r] = (perf[r] / nperf) / (rep[r] / njit);
			rb[r] = (perf[r] / nperf) / (fold[r] / njit);
		}
		snprintf(what, sizeof(what), "`jitrace report`, %ld samples", njit);
		bench_row(what, "", "%.3f", " s", rep, ROUNDS, "");
		snprintf(what, sizeof(what), "`jitrace flamegraph --folded`, %ld samples", njit);
		bench_row(what, "", "%.3f", " s", fold, ROUNDS, "");
		if (have_perf) {
			snprintf(what, sizeof(what), "`perf script`, %ld samples", nperf);
			bench_row(what, "", "%.3f", " s", perf, ROUNDS, "");
			bench_row("perf script / report, per sample", "> 1x", "%.1f", "x", ra, ROUNDS,
				  ra[ROUNDS / 2] > 1 ? "met" : "MISSED");
			bench_row("perf script / folded, per sample", "> 1x", "%.1f", "x", rb, ROUNDS,
				  rb[ROUNDS / 2] > 1 ? "met" : "MISSED");
		}
		snprintf(what, sizeof(what), "`jitrace report`, generated, %d samples", SAMPLES);
		bench_row(what, "", "%.2f", " s", drep, ROUNDS, "");
		snprintf(what, sizeof(what), "`--folded`, generated, %d samples", SAMPLES);
		bench_row(what, "", "%.2f", " s", dfold, ROUNDS, "");
		printf("\n");
		if (!have_perf)
			printf("MISSED: perf was not found or its recording failed, so the offline "
			       "views have no perf script figure to stand beside.\n");
		else if (ra[ROUNDS / 2] <= 1 || rb[ROUNDS / 2] <= 1)
			printf("MISSED: perf script is faster per sample than jitrace's views "
			       "(%.1fx report, %.1fx folded).\n", ra[ROUNDS / 2], rb[ROUNDS / 2]);
	}
	fclose(null);
	if (!getenv("JT_BENCH_LOG"))
		unlink(deep);
	unlink(log);
	unlink(data);
	rmdir(dir);
	return 0;
}
