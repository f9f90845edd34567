// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's bounds under perf-map load: `jitrace record -a -F 99 -d 28` while 20 toy
 * JIT processes each write a 500,000-line perf map (`toyjit many --perf-map`, no agent) and
 * hold their code. The figures are the recorder's peak RSS (ru_maxrss from wait4, which the
 * kernel keeps exactly), when its recording ended by its own summary, when it exited, and
 * the perf-map lines it counted as not kept (memory_perfmap), median of the rounds.
 * Usage: bench_maps [JITRACE [TOYJIT]] (default build/jitrace, build/toyjit).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "base/util.h"

#define PROCS 20
#define LINES "500000"
#define SECS 28
#define ROUNDS 5
#define TARGET_MB 256.0		/* the README's DaemonSet limit (256Mi) */
#define LOG_PATH "/tmp/jitrace-bench-maps.jtl"
#define ERR_PATH "/tmp/jitrace-bench-maps.err"

struct result {
	double peak_mb, recorded_s, exit_s, dropped;
};

static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (!freopen(out, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* The number after key in the file at path, on a line that also holds also (-1: none). */
static double number_after(const char *path, const char *key, const char *also)
{
	char line[4096];
	double v = -1;
	FILE *f = fopen(path, "r");
	char *p;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, key)) && strstr(line, also))
			v = strtod(p + strlen(key), NULL);
	fclose(f);
	return v;
}

static int round_once(const char *jitrace, const char *toyjit, struct result *r)
{
	char secs[16], *rec[] = { (char *)jitrace, "record", "-a", "-F", "99", "-d", secs, "-f",
				  "-o", LOG_PATH, NULL };
	char *toy[] = { (char *)toyjit, "many", "--methods", LINES, "--perf-map", "--ms", "50",
			"--hold", "120000", NULL };
	pid_t rp, toys[PROCS];
	struct rusage ru;
	uint64_t t0;
	char path[64];
	int i, status;

	snprintf(secs, sizeof(secs), "%d", SECS);
	t0 = jt_now_ns();
	rp = spawn(rec, ERR_PATH);
	for (i = 0; i < 200 && !bench_file_has(ERR_PATH, "jitrace: recording"); i++)
		usleep(50000);
	for (i = 0; i < PROCS; i++)
		toys[i] = spawn(toy, "/dev/null");
	if (wait4(rp, &status, 0, &ru) != rp)
		return -1;
	r->exit_s = (jt_now_ns() - t0) / 1e9;
	for (i = 0; i < PROCS; i++) {
		kill(toys[i], SIGTERM);
		waitpid(toys[i], NULL, 0);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)toys[i]);
		unlink(path);
	}
	unlink(LOG_PATH);
	r->peak_mb = ru.ru_maxrss / 1024.0;
	r->recorded_s = number_after(ERR_PATH, "jitrace: ", " s: ");	/* the summary */
	r->dropped = number_after(ERR_PATH, "memory_perfmap ", "lost");
	if (r->dropped < 0)
		r->dropped = 0;
	fprintf(stderr, "bench_maps: peak %.0f MB, recorded %.1f s, exited at %.1f s, %.0f lines "
		"not kept\n", r->peak_mb, r->recorded_s, r->exit_s, r->dropped);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void row(const char *what, const char *target, double *v, const char *met)
{
	bench_sort(v, ROUNDS);
	printf("| %s | %s | **%.1f** | %.1f | %.1f | %s |\n", what, target, v[ROUNDS / 2], v[0],
	       v[ROUNDS - 1], met);
}

int main(int argc, char **argv)
{
	const char *jitrace = argc > 1 ? argv[1] : "build/jitrace";
	const char *toyjit = argc > 2 ? argv[2] : "build/toyjit";
	double peak[ROUNDS], rec[ROUNDS], ex[ROUNDS], drop[ROUNDS];
	struct result r;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		if (round_once(jitrace, toyjit, &r)) {
			fprintf(stderr, "bench_maps: the recorder failed; see %s\n", ERR_PATH);
			return 1;
		}
		peak[i] = r.peak_mb;
		rec[i] = r.recorded_s;
		ex[i] = r.exit_s;
		drop[i] = r.dropped;
	}
	printf("## Bounds under perf-map load\n\n");
	printf("`jitrace record -a -F 99 -d %d` (default `--max-memory`) while %d toy JIT "
	       "processes each write a %s-line perf map (`toyjit many --methods %s --perf-map`, about 14 MB "
	       "each) and hold their code; %d rounds. Peak RSS is ru_maxrss from wait4; the "
	       "recording's end is its own summary's; the exit is counted from starting jitrace "
	       "(BPF load, about 0.3 s, and detach, about a second, included).\n\n", SECS, PROCS,
	       LINES, LINES, ROUNDS);
	printf("| figure | target | median | min | max | |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
	bench_sort(peak, ROUNDS);
	row("peak RSS, MB", "< 256", peak, peak[ROUNDS / 2] < TARGET_MB ? "met" : "missed");
	row("recording ended, s", "28", rec, "");
	row("recorder exited, s", "", ex, "");
	row("perf-map lines not kept (memory_perfmap)", "", drop, "");
	if (peak[ROUNDS / 2] >= TARGET_MB)
		printf("\nMISSED: peak RSS %.0f MB under perf-map load, over %.0f MB\n",
		       peak[ROUNDS / 2], TARGET_MB);
	return 0;
}
