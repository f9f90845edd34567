// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder on the toy JIT: segments that are each a complete log, a directory
 * kept within --max-age, SIGUSR2, report reading a directory with --last, and pushes to a
 * local stand-in for Pyroscope and Parca (tests/push/receiver.py) that goes away and comes
 * back. Needs root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"

#define PYTHON "/usr/bin/python3"
#define RECEIVER "tests/push/receiver.py"
#define GO "/usr/bin/go"
#define MAX_SEGS 64
#define TOKEN "tok-3f9a81c2e55d"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The whole of a small file, NUL-terminated, into buf. */
static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The closed segments (*.jtl) of dir, full paths, oldest first; also counts any .part. */
static int list_segments(const char *dir, char **paths, int *parts)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	if (parts)
		*parts = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (parts && len > 5 && !strcmp(de->d_name + len - 5, ".part"))
			(*parts)++;
		if (len < 5 || strcmp(de->d_name + len - 4, ".jtl"))
			continue;
		assert_true(n < MAX_SEGS);
		assert_true(asprintf(&paths[n++], "%s/%s", dir, de->d_name) > 0);
	}
	closedir(d);
	qsort(paths, n, sizeof(*paths), cmp_str);
	return n;
}

static void free_paths(char **paths, int n)
{
	while (n--)
		free(paths[n]);
}

/* Leaf samples of pid in hot_a and hot_b, at or after ts. */
static void count_split(const struct it_log *log, uint32_t pid, uint64_t after, uint64_t *a,
			uint64_t *b)
{
	*a = it_count_leaf(log, pid, after, "hot_a");
	*b = it_count_leaf(log, pid, after, "hot_b");
}

static uint64_t samples_of(const struct it_log *log, uint32_t pid, uint64_t after)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		n += s->h.type == JT_REC_SAMPLE && s->pid == pid && s->h.ts >= after;
	}
	return n;
}

/* The number after key in text (0 if key is not there). */
static unsigned long long number_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * 12 s system-wide, a segment every 2 s, none older than 6 s kept: each segment that is
 * left is a complete log on its own (the toy JIT's methods defined again in each), each
 * begins where the one before ends, and `report DIR --last 4` reads the last 4 s of them
 * as one recording: exactly the samples the segments hold then, split as scripted.
 */
static void test_segments_each_whole_directory_bounded(void **state)
{
	char *dir = it_path_dup("flight"), *err = it_path_dup("flight.err");
	char *out = it_path_dup("flight.out"), *rep = it_path_dup("flight.json");
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "999", "--rotate", "2", "--max-age", "6",
			"-d", "12", "-o", dir, NULL };
	char *toy[] = { IT_TOYJIT, "split", "--ms", "10500", NULL };
	char pid_arg[16], *report[] = { IT_JITRACE, "report", "--json", "-n", "0", "-p", pid_arg,
					"--last", "4", dir, NULL };
	uint64_t a, b, want = 0, end = 0, prev_end = 0, total_a = 0, total_b = 0;
	char *segs[MAX_SEGS], text[1 << 16];
	struct it_log logs[MAX_SEGS];
	struct it_toy t;
	pid_t rec_pid, toy_pid;
	int n, parts, i;

	(void)state;
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	toy_pid = it_spawn(toy, out, NULL);
	assert_int_equal(it_wait(rec_pid), 0);
	kill(toy_pid, SIGTERM);
	it_wait(toy_pid);
	it_toy_parse(out, &t);
	read_text(err, text, sizeof(text));
	fputs(text, stderr);

	n = list_segments(dir, segs, &parts);
	print_message("%d segments left, %d open\n", n, parts);
	assert_int_equal(parts, 0);
	assert_true(n >= 3 && n <= 4);
	assert_true(number_after(strstr(text, "MB) in ") ?: "", ", ") >= 1);	/* N deleted */
	for (i = 0; i < n; i++) {
		it_log_load(segs[i], &logs[i]);
		it_check_promises(&logs[i]);		/* each on its own */
		count_split(&logs[i], t.pid, 0, &a, &b);
		print_message("%s: %zu records, toy hot_a %llu hot_b %llu\n", segs[i], logs[i].n,
			      (unsigned long long)a, (unsigned long long)b);
		/* the toy ran through all of them: its methods named in each */
		assert_true(a > 0 && b > 0);
		total_a += a;
		total_b += b;
		/* continuous: a segment begins at the last record of the one before */
		if (i)
			assert_int_equal(logs[i].hdr.start_ns, prev_end);
		prev_end = logs[i].recs[logs[i].n - 1]->ts;
		assert_int_equal(logs[i].hdr.realtime_offset_ns, logs[0].hdr.realtime_offset_ns);
	}
	it_assert_share_near("hot_a of hot_a and hot_b, every segment", total_a,
			     total_a + total_b, 0.75, 0.02);

	/* report --last 4: from the last record of the recording back 4 s */
	end = prev_end;
	for (i = 0; i < n; i++)
		want += samples_of(&logs[i], t.pid, end - 4000000000ULL);
	snprintf(pid_arg, sizeof(pid_arg), "%d", t.pid);
	assert_int_equal(it_run(report, rep, NULL), 0);
	read_text(rep, text, sizeof(text));
	a = number_after(text, "{\"name\": \"hot_a\", \"kind\": \"jit\", \"self\": ");
	b = number_after(text, "{\"name\": \"hot_b\", \"kind\": \"jit\", \"self\": ");
	print_message("report --last 4: %llu samples (the segments hold %llu then), hot_a %llu, "
		      "hot_b %llu\n", number_after(text, "\"all\": {\"samples\": "),
		      (unsigned long long)want, (unsigned long long)a, (unsigned long long)b);
	assert_int_equal(number_after(text, "\"all\": {\"samples\": "), want);
	/* at most 4 s of one CPU at 999 Hz; fewer on a busy machine: the shares below say
	 * how many they need */
	assert_true(want >= IT_MIN_SAMPLES && want < 4 * 1000 + 100);
	it_assert_share_near("report --last 4: hot_a of hot_a and hot_b", a, a + b, 0.75, 0.02);
	for (i = 0; i < n; i++)
		it_log_free(&logs[i]);
	free_paths(segs, n);
	free(dir);
	free(err);
	free(out);
	free(rep);
}

/* SIGUSR2 closes the open segment within a second, and it reads complete. */
static void test_sigusr2_closes_the_segment_now(void **state)
{
	char *dir = it_path_dup("usr2"), *err = it_path_dup("usr2.err");
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "99", "--rotate", "600", "-o", dir,
			NULL };
	char *segs[MAX_SEGS];
	struct it_log log;
	uint64_t sent, waited;
	pid_t rec_pid;
	int n, i;

	(void)state;
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	usleep(1500000);
	n = list_segments(dir, segs, NULL);
	assert_int_equal(n, 0);
	sent = now_ns();
	kill(rec_pid, SIGUSR2);
	while ((n = list_segments(dir, segs, NULL)) == 0 && now_ns() - sent < 3000000000ULL)
		usleep(5000);
	waited = now_ns() - sent;
	print_message("segment closed %.3f s after SIGUSR2\n", waited / 1e9);
	assert_int_equal(n, 1);
	assert_true(waited < 1000000000ULL);
	it_log_load(segs[0], &log);
	it_check_promises(&log);		/* complete: an end record, every kind of loss */
	assert_true(log.n > 10);
	it_log_free(&log);
	free_paths(segs, n);
	kill(rec_pid, SIGINT);
	assert_int_equal(it_wait(rec_pid), 0);
	n = list_segments(dir, segs, NULL);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		it_log_load(segs[i], &log);
		it_check_promises(&log);
		it_log_free(&log);
	}
	free_paths(segs, n);
	free(dir);
	free(err);
}

/* ---- pushes ---- */

struct receiver {
	char *dir;
	pid_t pid;
	int port;
};

static bool have(const char *path)
{
	return !access(path, X_OK);
}

/* Start the receiver (on port, or any if 0) and wait until it listens. */
static void receiver_start(struct receiver *r, int port)
{
	char *port_file, port_arg[16], text[32];
	char *argv[] = { PYTHON, RECEIVER, r->dir, "--port", port_arg, NULL };

	assert_true(asprintf(&port_file, "%s/port", r->dir) > 0);
	unlink(port_file);
	snprintf(port_arg, sizeof(port_arg), "%d", port);
	r->pid = it_spawn(argv, NULL, NULL);
	assert_true(it_wait_for_text(port_file, "\n", 10000));
	read_text(port_file, text, sizeof(text));
	r->port = atoi(text);
	assert_true(r->port > 0);
	free(port_file);
}

static void receiver_stop(struct receiver *r)
{
	kill(r->pid, SIGTERM);
	assert_int_equal(it_wait(r->pid), 0);
}

static void receiver_new(struct receiver *r, const char *name)
{
	r->dir = it_path_dup(name);
	assert_int_equal(mkdir(r->dir, 0700), 0);
	receiver_start(r, 0);
}

/* What the receiver got for one profile. */
struct got {
	char api[16], file[256], pid[16], comm[64], service[64], host[128], auth[128], org[64];
	char name[64];		/* Parca's __name__ */
	unsigned long long from;
};

static void field(const char *line, const char *key, char *out, size_t cap)
{
	char pat[32];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	out[0] = 0;
	if (!p)
		return;
	for (p += strlen(pat); *p && *p != ' ' && *p != '\n' && n + 1 < cap; p++) {
		if (*p == '%' && p[1] && p[2]) {	/* percent-encoded */
			char hex[3] = { p[1], p[2], 0 };

			out[n++] = (char)strtol(hex, NULL, 16);
			p += 2;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = 0;
}

/* Every profile the receiver got; fails on a request it refused. */
static int received(const struct receiver *r, struct got *g, int max)
{
	char *path, line[4096], num[32];
	int n = 0;
	FILE *f;

	assert_true(asprintf(&path, "%s/received", r->dir) > 0);
	f = fopen(path, "r");
	free(path);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "profile ", 8))
			fail_msg("the receiver refused a request: %s", line);
		assert_true(n < max);
		field(line, "api", g[n].api, sizeof(g[n].api));
		field(line, "file", g[n].file, sizeof(g[n].file));
		field(line, "pid", g[n].pid, sizeof(g[n].pid));
		field(line, "comm", g[n].comm, sizeof(g[n].comm));
		field(line, "service", g[n].service, sizeof(g[n].service));
		field(line, "host", g[n].host, sizeof(g[n].host));
		field(line, "auth", g[n].auth, sizeof(g[n].auth));
		field(line, "org", g[n].org, sizeof(g[n].org));
		field(line, "__name__", g[n].name, sizeof(g[n].name));
		field(line, "from", num, sizeof(num));
		g[n].from = strtoull(num, NULL, 10);
		n++;
	}
	fclose(f);
	return n;
}

/* go tool pprof -raw decodes the payload and it names the toy's hot methods. */
static void assert_payload_names_hot_methods(const char *file, int pid)
{
	char *out = it_path_dup("pprof.raw"), text[1 << 16], want[32];
	char *argv[] = { GO, "tool", "pprof", "-raw", (char *)file, NULL };

	if (!have(GO)) {
		print_message("go not installed: %s not decoded (golang-go)\n", file);
		free(out);
		return;
	}
	assert_int_equal(it_run(argv, out, "/dev/null"), 0);
	read_text(out, text, sizeof(text));
	snprintf(want, sizeof(want), "pid:[%d]", pid);
	if (!strstr(text, "hot_a") || !strstr(text, "hot_b") || !strstr(text, want))
		fail_msg("%s: go tool pprof -raw shows no hot_a, hot_b or %s:\n%.2000s", file, want,
			 text);
	free(out);
}

/* A credentials file of mode 0600 (or mode). */
static char *write_auth(const char *name, const char *text, mode_t mode)
{
	char *path = it_path_dup(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

/* The segment whose wall-clock start (in whole seconds) is from, among logs. */
static unsigned long long start_s(const struct it_log *log)
{
	return (unsigned long long)((int64_t)log->hdr.start_ns + log->hdr.realtime_offset_ns) /
	       1000000000ULL;
}

/*
 * Pyroscope: each closed segment's toy profile arrives once, with its labels and the
 * credentials, while the receiver goes away for 5 s and comes back; the token is never on
 * the command line; failed tries are counted and said.
 */
static void test_push_pyroscope_exactly_once_across_an_outage(void **state)
{
	char *dir = it_path_dup("push"), *err = it_path_dup("push.err");
	char *out = it_path_dup("push.out"), url[64], *segs[MAX_SEGS], text[1 << 16];
	char *auth = write_auth("push.auth",
				"# test\nbearer_token = " TOKEN "\norg_id = tenant-7\n", 0600);
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "499", "--rotate", "2", "-d", "14",
			"-o", dir, "--push", url, "--service", "toysvc", "--push-auth", auth,
			NULL };
	char *toy[] = { IT_TOYJIT, "split", "--ms", "12000", NULL };
	static struct got g[4096];
	struct receiver r;
	struct it_toy t;
	pid_t rec_pid, toy_pid;
	int n, nr, i, k, with_toy = 0;
	char cmdline[4096], *path;
	ssize_t len;

	(void)state;
	if (!have(PYTHON))
		skip();
	receiver_new(&r, "pyroscope");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", r.port);
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	toy_pid = it_spawn(toy, out, NULL);
	/* the token is in no process's command line */
	assert_true(asprintf(&path, "/proc/%d/cmdline", rec_pid) > 0);
	k = open(path, O_RDONLY);
	free(path);
	assert_true(k >= 0);
	len = read(k, cmdline, sizeof(cmdline));
	close(k);
	assert_true(len > 0);
	assert_null(memmem(cmdline, len, TOKEN, strlen(TOKEN)));
	assert_non_null(memmem(cmdline, len, auth, strlen(auth)));

	usleep(3000000);
	receiver_stop(&r);
	print_message("receiver down\n");
	usleep(5000000);
	receiver_start(&r, r.port);
	print_message("receiver back on port %d\n", r.port);
	assert_int_equal(it_wait(rec_pid), 0);
	kill(toy_pid, SIGTERM);
	it_wait(toy_pid);
	receiver_stop(&r);
	it_toy_parse(out, &t);
	read_text(err, text, sizeof(text));
	fputs(text, stderr);
	assert_non_null(strstr(text, "push: "));	/* the outage was said */
	/* "N failed tries": the outage counted */
	assert_true(number_after(strstr(text, "profiles) to ") ?: "", "; ") > 0);
	assert_non_null(strstr(text, " 0 profiles refused, 0 segments deleted unpushed\n"));
	assert_null(strstr(text, "left in"));

	nr = received(&r, g, 4096);
	n = list_segments(dir, segs, NULL);
	assert_true(n >= 6);
	for (i = 0; i < n; i++) {
		struct it_log log;
		int times = 0, at = -1;
		char marker[512];

		it_log_load(segs[i], &log);
		snprintf(marker, sizeof(marker), "%s.pushed", segs[i]);
		read_text(marker, text, sizeof(text));
		assert_non_null(strstr(text, "done\n"));
		if (samples_of(&log, t.pid, 0)) {
			with_toy++;
			for (k = 0; k < nr; k++) {
				if (atoi(g[k].pid) != t.pid || g[k].from != start_s(&log))
					continue;
				times++;
				at = k;
			}
			print_message("%s: the toy's profile received %d time(s)\n", segs[i],
				      times);
			assert_int_equal(times, 1);
			assert_string_equal(g[at].api, "ingest");
			assert_string_equal(g[at].service, "toysvc");
			assert_string_equal(g[at].comm, "toyjit");
			assert_string_equal(g[at].auth, "Bearer " TOKEN);
			assert_string_equal(g[at].org, "tenant-7");
			assert_string_equal(g[at].host, log.hdr.hostname);
			assert_payload_names_hot_methods(g[at].file, t.pid);
		}
		it_log_free(&log);
	}
	/* and nothing else of the toy's: as many profiles as segments that had it */
	for (k = 0, i = 0; k < nr; k++)
		i += atoi(g[k].pid) == t.pid;
	assert_int_equal(i, with_toy);
	assert_true(with_toy >= 5);
	free_paths(segs, n);
	free(r.dir);
	free(auth);
	free(dir);
	free(err);
	free(out);
}

/* Parca's WriteRaw: the JSON body's labels, the comm as the service, a profile that decodes. */
static void test_push_parca_writeraw(void **state)
{
	char *dir = it_path_dup("parca"), *err = it_path_dup("parca.err");
	char *out = it_path_dup("parca.out"), url[64];
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "499", "--rotate", "2", "-d", "5",
			"-o", dir, "--push", url, "--push-format", "parca", NULL };
	char *toy[] = { IT_TOYJIT, "split", "--ms", "4000", NULL };
	static struct got g[4096];
	struct receiver r;
	struct it_toy t;
	pid_t rec_pid, toy_pid;
	int nr, k, toys = 0;

	(void)state;
	if (!have(PYTHON))
		skip();
	receiver_new(&r, "parca-rcv");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", r.port);
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	toy_pid = it_spawn(toy, out, NULL);
	assert_int_equal(it_wait(rec_pid), 0);
	kill(toy_pid, SIGTERM);
	it_wait(toy_pid);
	receiver_stop(&r);
	it_toy_parse(out, &t);
	nr = received(&r, g, 4096);
	for (k = 0; k < nr; k++) {
		assert_string_equal(g[k].api, "writeraw");
		assert_string_equal(g[k].name, "jitrace_cpu");
		assert_string_equal(g[k].service, g[k].comm);	/* by default */
		if (atoi(g[k].pid) != t.pid)
			continue;
		toys++;
		assert_string_equal(g[k].comm, "toyjit");
		assert_payload_names_hot_methods(g[k].file, t.pid);
	}
	print_message("%d profiles, %d of the toy\n", nr, toys);
	assert_true(toys >= 2);
	free(r.dir);
	free(dir);
	free(err);
	free(out);
}

/* A credentials file others may read is refused before anything is recorded. */
static void test_credentials_others_can_read_are_refused(void **state)
{
	char *dir = it_path_dup("refused"), *err = it_path_dup("refused.err"), text[4096];
	char *auth = write_auth("open.auth", "bearer_token = " TOKEN "\n", 0644);
	char *rec[] = { IT_JITRACE, "record", "-a", "--rotate", "2", "-d", "1", "-o", dir,
			"--push", "http://127.0.0.1:9/", "--push-auth", auth, NULL };
	struct stat st;

	(void)state;
	assert_int_equal(it_run(rec, NULL, err), 2);
	read_text(err, text, sizeof(text));
	fputs(text, stderr);
	assert_non_null(strstr(text, "refusing the credentials in "));
	assert_non_null(strstr(text, "mode 0644"));
	assert_null(strstr(text, TOKEN));
	assert_null(strstr(text, "jitrace: recording"));
	assert_int_not_equal(stat(dir, &st), 0);	/* nothing made */
	free(auth);
	free(dir);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credentials_others_can_read_are_refused),
		cmocka_unit_test(test_sigusr2_closes_the_segment_now),
		cmocka_unit_test(test_segments_each_whole_directory_bounded),
		cmocka_unit_test(test_push_pyroscope_exactly_once_across_an_outage),
		cmocka_unit_test(test_push_parca_writeraw),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_flight: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
