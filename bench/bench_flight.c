// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder's cost per hour: `jitrace record -a -F 49 --rotate 10` on an idle host
 * and on a busy one (a CPU-bound toy JIT on every CPU), and busy with every segment pushed
 * to a local Pyroscope stand-in (tests/push/receiver.py). The recorder's CPU is read from
 * /proc/PID/stat once it runs and just before it stops (start-up, BPF's load, is not an
 * hourly cost); its disk is every byte of the segments it wrote. Rounds interleaved.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "base/util.h"

#define SECS 40			/* measured, of each recording */
#define SETTLE_S 3		/* after "recording", before the first reading */
#define ROUNDS 3
#define HZ "49"

struct cond {
	const char *name;
	int toys;		/* CPU-bound toy JITs, one a CPU */
	bool push;
	bool one_log;		/* `record -o FILE` as before, to compare */
};

static const struct cond conds[] = {
	{ "idle host, one log (no --rotate), to compare", 0, false, true },
	{ "idle host", 0, false, false },
	{ "busy host (a toy JIT on each CPU)", 2, false, false },
	{ "busy host, each segment pushed (Pyroscope, local)", 2, true, false },
};
#define NCONDS (int)(sizeof(conds) / sizeof(conds[0]))

static const char *jitrace = "build/jitrace", *toyjit = "build/toyjit";

static pid_t spawn(char **argv, const char *out, const char *err)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("bench_flight: fork");
		exit(1);
	}
	if (!pid) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Wait until the file at path has text in it; false after timeout_s. */
static bool wait_for(const char *path, const char *text, int timeout_s)
{
	int i;

	for (i = 0; i < timeout_s * 50; i++) {
		if (bench_file_has(path, text))
			return true;
		usleep(20000);
	}
	return false;
}

/* CPU seconds the process has used, all its threads. */
static double cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Bytes of the files in dir whose names end in suffix, and how many. */
static double bytes_of(const char *dir, const char *suffix, int *nr)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[4096];
	double total = 0;

	*nr = 0;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= strlen(suffix) || strcmp(de->d_name + len - strlen(suffix), suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!stat(path, &st)) {
			total += st.st_size;
			(*nr)++;
		}
	}
	if (d)
		closedir(d);
	return total;
}

static int lines_of(const char *path)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

struct result {
	double cpu_pct;		/* of one CPU, while recording */
	double mb_hour;		/* disk written an hour */
	double profiles_hour;	/* pushed */
	double push_mb_hour;	/* their bytes (gzipped pprof) */
	int segments;
};

static int run(const struct cond *c, struct result *res)
{
	char dir[] = "/tmp/jt_bench_flight.XXXXXX", segs[80], err[64], rcv[64], port[64];
	char url[64], ms[16], secs[16], received[80], cmd[128];
	char *rec[] = { (char *)jitrace, "record", "-a", "-F", HZ, "--rotate", "10", "-d", secs,
			"-o", segs, "--push", url, NULL };
	char *toy[] = { (char *)toyjit, "split", "--ms", ms, NULL };
	char *recv[] = { "/usr/bin/python3", "tests/push/receiver.py", rcv, NULL };
	pid_t rec_pid, toys[8], recv_pid = 0;
	double c0, c1;
	uint64_t t0, t1;
	int i, status;
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("bench_flight: mkdtemp");
		return -1;
	}
	snprintf(segs, sizeof(segs), "%s/segs", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	snprintf(rcv, sizeof(rcv), "%s/rcv", dir);
	snprintf(port, sizeof(port), "%s/rcv/port", dir);
	snprintf(received, sizeof(received), "%s/rcv/received", dir);
	snprintf(secs, sizeof(secs), "%d", SECS + SETTLE_S + 1);
	snprintf(ms, sizeof(ms), "%d", (SECS + SETTLE_S + 10) * 1000);
	if (c->push) {
		mkdir(rcv, 0700);
		recv_pid = spawn(recv, NULL, NULL);
		if (!wait_for(port, "\n", 10)) {
			fprintf(stderr, "bench_flight: the receiver did not start\n");
			return -1;
		}
		f = fopen(port, "r");
		if (!f || fscanf(f, "%d", &i) != 1)
			return -1;
		fclose(f);
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", i);
	} else {
		rec[11] = NULL;
	}
	if (c->one_log) {	/* -o DIR/segs/one.jtl, no --rotate */
		mkdir(segs, 0700);
		snprintf(segs + strlen(segs), sizeof(segs) - strlen(segs), "/one.jtl");
		memmove(rec + 5, rec + 7, 7 * sizeof(*rec));
	}
	for (i = 0; i < c->toys; i++)
		toys[i] = spawn(toy, NULL, NULL);
	rec_pid = spawn(rec, NULL, err);
	if (!wait_for(err, "jitrace: recording", 30)) {
		fprintf(stderr, "bench_flight: the recorder did not start (see %s)\n", err);
		return -1;
	}
	sleep(SETTLE_S);
	c0 = cpu_of(rec_pid);
	t0 = jt_now_ns();
	sleep(SECS - 1);
	c1 = cpu_of(rec_pid);
	t1 = jt_now_ns();
	if (waitpid(rec_pid, &status, 0) != rec_pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || c0 < 0 || c1 < 0) {
		fprintf(stderr, "bench_flight: the recorder failed (see %s)\n", err);
		return -1;
	}
	for (i = 0; i < c->toys; i++) {
		kill(toys[i], SIGKILL);
		waitpid(toys[i], NULL, 0);
	}
	if (recv_pid) {
		kill(recv_pid, SIGTERM);
		waitpid(recv_pid, NULL, 0);
	}
	res->cpu_pct = (c1 - c0) / ((t1 - t0) / 1e9) * 100;
	/* the whole recording is on disk: its length, not the measured span */
	if (c->one_log)
		*strrchr(segs, '/') = '\0';
	res->mb_hour = bytes_of(segs, ".jtl", &res->segments) / 1e6 * 3600 / (SECS + SETTLE_S + 1);
	res->profiles_hour = c->push ? lines_of(received) * 3600.0 / (SECS + SETTLE_S + 1) : 0;
	res->push_mb_hour = c->push ? bytes_of(rcv, ".pb.gz", &i) / 1e6 * 3600 /
				      (SECS + SETTLE_S + 1) : 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "bench_flight: %s left behind\n", dir);
	return 0;
}

int main(int argc, char **argv)
{
	double cpu[NCONDS][ROUNDS], disk[NCONDS][ROUNDS], prof[NCONDS][ROUNDS];
	double sent[NCONDS][ROUNDS];
	struct result res;
	int c, r;

	if (argc > 1)
		jitrace = argv[1];
	if (argc > 2)
		toyjit = argv[2];
	signal(SIGPIPE, SIG_IGN);
	for (r = 0; r < ROUNDS; r++) {
		fprintf(stderr, "bench_flight: round %d of %d\n", r + 1, ROUNDS);
		for (c = 0; c < NCONDS; c++) {
			if (conds[c].push && access("/usr/bin/python3", X_OK)) {
				cpu[c][r] = disk[c][r] = prof[c][r] = sent[c][r] = 0;
				continue;
			}
			if (run(&conds[c], &res))
				return 1;
			cpu[c][r] = res.cpu_pct;
			disk[c][r] = res.mb_hour;
			prof[c][r] = res.profiles_hour;
			sent[c][r] = res.push_mb_hour;
		}
	}
	printf("## Flight recorder: CPU and disk an hour\n\n");
	printf("`jitrace record -a -F %s --rotate 10 -d %d -o DIR` (the system-wide flight "
	       "recorder the systemd unit runs, at its rate), on the host as it is (idle: "
	       "this shared VM's own background; also without --rotate, into one log), busy "
	       "(`toyjit split` on each of the %ld CPUs), and busy with `--push` to "
	       "tests/push/receiver.py on localhost. The recorder's CPU (all its threads, "
	       "/proc/PID/stat) over %d s once it runs, as a share of one CPU; the disk is "
	       "every segment's bytes over the recording's length, an hour of it; %d rounds, "
	       "interleaved. Not in the figure: the kernel's sample interrupts and BPF program "
	       "in the sampled tasks (\"Sampling overhead\" above: about 20 us a sample here, "
	       "so 49 Hz costs about 0.1%% of each CPU).\n\n",
	       HZ, SECS + SETTLE_S + 1, sysconf(_SC_NPROCESSORS_ONLN), SECS - 1, ROUNDS);
	bench_table_head();
	for (c = 0; c < NCONDS; c++) {
		char what[160];

		snprintf(what, sizeof(what), "recorder CPU, %s", conds[c].name);
		bench_row(what, "", "%.2f", "% of a CPU", cpu[c], ROUNDS, "");
		snprintf(what, sizeof(what), "disk written an hour, %s", conds[c].name);
		bench_row(what, "", "%.1f", " MB", disk[c], ROUNDS, "");
		if (conds[c].push) {
			snprintf(what, sizeof(what), "profiles pushed an hour, %s", conds[c].name);
			bench_row(what, "", "%.0f", "", prof[c], ROUNDS, "");
			snprintf(what, sizeof(what), "pushed an hour (gzipped pprof), %s",
				 conds[c].name);
			bench_row(what, "", "%.1f", " MB", sent[c], ROUNDS, "");
		}
	}
	return 0;
}
