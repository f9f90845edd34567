// SPDX-License-Identifier: GPL-2.0
/*
 * jitrace and real containers (Debian's docker.io): jitrace in a container as a Kubernetes
 * DaemonSet runs it names the host's processes; a host jitrace names Node's and .NET's JIT
 * code inside containers, and a JVM's, attached through its namespaces. The test starts a dockerd of its own (private socket, data and
 * exec roots in the scratch directory; no iptables, no bridge) and stops it at the end; the
 * image is imported from a tarball of a bare root (tests/containers/mkimage.sh) with the
 * host's /usr bind-mounted read-only, as no registry is reachable. Needs root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"
#include "rt.h"

#define DOCKERD "/usr/sbin/dockerd"
/* docker.io's own client: /usr/local/bin may hold another, of another version */
#define DOCKER "/usr/bin/docker"
#define IMAGE "jitrace-itest:1"
#define MKIMAGE "tests/containers/mkimage.sh"
#define MANIFEST "dist/jitrace-daemonset.yaml"
#define AGENT "build/libjitrace-agent.so"
#define NODE "/usr/bin/node"
#define NODE_DIR "tests/runtimes/node"
#define DN_SRC "tests/runtimes/dotnet"
#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define READY_MS 30000		/* dockerd's start, under the load of other tests */

/* Every container a test names; each test's teardown removes them all. */
static const char *const names[] = { "jt-ds", "jt-ds-noptrace", "jt-node-a", "jt-node-p",
				     "jt-dotnet", "jt-jvm-p", "jt-jvm-a", NULL };

static struct {
	char why[512];		/* why every test skips; "" if dockerd runs */
	char *dir;		/* the daemon's: socket, data and exec roots, key, log */
	char *host;		/* unix://DIR/docker.sock */
	pid_t dockerd;
	pid_t workload;		/* a test's program on the host: ended by its teardown too */
	char *hot;		/* the .NET program's directory; NULL: see dn_why, or no build */
	char *dotnet_root;	/* where its runtime is, as the container sees it too */
	char dn_why[256];
} dk;

/* ---- argument lists ---- */

struct av {
	char *v[64];
	int n;
};

/* Append the strings given (NULL ends them). */
static void av_add(struct av *a, ...)
{
	va_list ap;
	char *s;

	va_start(ap, a);
	while ((s = va_arg(ap, char *))) {
		assert_true(a->n < (int)(sizeof(a->v) / sizeof(a->v[0])) - 1);
		a->v[a->n++] = s;
	}
	va_end(ap);
	a->v[a->n] = NULL;
}

static void av_docker(struct av *a)
{
	a->n = 0;
	av_add(a, DOCKER, "-H", dk.host, NULL);
}

/*
 * `docker run --rm --name NAME` with what every container here has: no network, and the
 * host's /usr (so its programs and libraries) and loader cache, read-only.
 */
static void av_run(struct av *a, const char *name)
{
	av_docker(a);
	av_add(a, "run", "--rm", "--name", name, "--network", "none", "-v", "/usr:/usr:ro", "-v",
	       "/etc/ld.so.cache:/etc/ld.so.cache:ro", NULL);
}

/* Run the docker client with args (NULL ends them); its stdout to out (NULL: /dev/null). */
static int dk_cmd(const char *out, ...)
{
	struct av a;
	va_list ap;
	char *s;

	av_docker(&a);
	va_start(ap, out);
	while ((s = va_arg(ap, char *)))
		av_add(&a, s, NULL);
	va_end(ap);
	return it_run(a.v, out ? out : "/dev/null", "/dev/null");
}

/* The host pid of container name's first process (it must be running). */
static pid_t dk_pid(const char *name)
{
	char *out = it_path_dup("inspect.out"), *text;
	long pid;

	assert_int_equal(dk_cmd(out, "inspect", "-f", "{{.State.Pid}}", name, NULL), 0);
	text = it_slurp(out);
	pid = strtol(text, NULL, 10);
	free(text);
	free(out);
	assert_true(pid > 0);
	return (pid_t)pid;
}

static void rm_containers(void)
{
	int i;

	for (i = 0; names[i]; i++)
		dk_cmd(NULL, "rm", "-f", names[i], NULL);
}

/* What a JIT process of the host leaves in /tmp when it ends: its perf map, and .NET's
 * diagnostics socket and debugger pipes. */
static void forget_host_pid(pid_t pid)
{
	char prefix[3][48], path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir("/tmp");
	int k;

	snprintf(prefix[0], sizeof(prefix[0]), "perf-%d.map", (int)pid);
	snprintf(prefix[1], sizeof(prefix[1]), "dotnet-diagnostic-%d-", (int)pid);
	snprintf(prefix[2], sizeof(prefix[2]), "clr-debug-pipe-%d-", (int)pid);
	while (d && (e = readdir(d)))
		for (k = 0; k < 3; k++)
			if (!strncmp(e->d_name, prefix[k], strlen(prefix[k]))) {
				snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
				unlink(path);
			}
	if (d)
		closedir(d);
}

/* End a test's host program, wherever the test stopped, and what it left in /tmp. */
static void end_workload(void)
{
	if (dk.workload <= 0)
		return;
	kill(dk.workload, SIGTERM);
	it_wait(dk.workload);
	forget_host_pid(dk.workload);
	dk.workload = 0;
}

static int test_teardown(void **state)
{
	(void)state;
	end_workload();
	if (!dk.why[0])
		rm_containers();
	return 0;
}

static void need_docker(void)
{
	if (dk.why[0]) {
		print_message("skipped: %s\n", dk.why);
		skip();
	}
}

/* The last field of NStgid in /proc/PID/status: its pid in its own namespace. */
static long ns_pid(pid_t pid)
{
	char path[64], line[256], *p, *end;
	long v, last = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NStgid:", 7))
			for (p = line + 7; (v = strtol(p, &end, 10)), end != p; p = end)
				last = v;
	fclose(f);
	return last;
}

/* The comm of pid's proc record, or NULL. */
static const char *proc_comm(const struct it_log *log, uint32_t pid)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_proc *p = (const void *)log->recs[i];

		if (p->h.type == JT_REC_PROC && p->pid == pid)
			return p->comm;
	}
	return NULL;
}

/* How many of pid's methods there are, and how many came from a source other than src. */
static void count_methods(const struct it_log *log, uint32_t pid, unsigned int src,
			  uint64_t *all, uint64_t *other)
{
	size_t i;

	*all = *other = 0;
	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (!m || m->pid != pid)
			continue;
		(*all)++;
		*other += m->src != src;
	}
}

/*
 * `jitrace report -p PID` of the log: the self share of the method whose name starts with
 * prefix (a part of it for .NET's names) is at least floor: the hot method does 3/4 of the
 * work; the rest of the process, its start and the runtime's own code, takes some samples.
 */
static void assert_report_share(const char *log_path, pid_t pid, const char *prefix,
				double floor)
{
	char *out = it_path_dup("report.out"), pid_s[16], *text, *line, *save;
	char *argv[] = { IT_JITRACE, "report", "-n", "10", "-p", pid_s, (char *)log_path, NULL };
	double pct = -1;

	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	/* rows "SELF SELF% TOTAL TOTAL% KIND METHOD": the first section is the process's */
	for (line = strtok_r(text, "\n", &save); line && pct < 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = strstr(line, prefix);	/* the first row: its hottest tier */
		unsigned long long self;
		double share;

		if (name && sscanf(line, " %llu %lf%%", &self, &share) == 2)
			pct = share;
	}
	print_message("report -p %d: %s... %.1f%% of its samples\n", (int)pid, prefix, pct);
	if (pct < 100 * floor)
		fail_msg("the report gives %s %.1f%%, under %.0f%%", prefix, pct, 100 * floor);
	free(text);
	free(out);
}

/* The leaf split of pid's samples between Hot's Big and Small (written 3:1), as named. */
static void assert_dotnet_split(const struct it_log *log, pid_t pid)
{
	/* the runtime's own naming: "int64 [Hot] JitraceTest.Hot::Big(int32)[...]" */
	uint64_t big = it_count_leaf_with(log, (uint32_t)pid, "JitraceTest.Hot::Big(");
	uint64_t small = it_count_leaf_with(log, (uint32_t)pid, "JitraceTest.Hot::Small(");

	print_message("pid %d: Big %llu, Small %llu\n", (int)pid, (unsigned long long)big,
		      (unsigned long long)small);
	/* the loop around the calls: 74-76% seen (itest_dotnet) */
	it_assert_share_near("leaf samples in Big of Big and Small (written 75%)", big,
			     big + small, 0.75, 0.02);
}

/* The .NET tests skip without the SDK; a program that did not build fails them. */
static void need_dotnet(void)
{
	if (dk.hot)
		return;
	if (!dk.dn_why[0])
		fail_msg("the .NET test program did not build (see the message above)");
	print_message("skipped: %s\n", dk.dn_why);
	skip();
}

/* CPU time pid has used (user and system), in clock ticks. */
static unsigned long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the comm may hold anything but the last ')' */
	for (i = 0; p && i < 12; i++)	/* utime is the 12th field after it */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &ut, &st) != 2)
		fail_msg("%s: no utime and stime", path);
	return ut + st;
}

/*
 * Wait until pid has run secs more seconds on a CPU (at most 60 s of wall time): the sample
 * counts at a DaemonSet's 49 Hz then do not depend on how busy the machine is.
 */
static void wait_cpu(pid_t pid, int secs)
{
	unsigned long long want = cpu_ticks(pid);
	int i;

	want += (unsigned long long)secs * (unsigned long long)sysconf(_SC_CLK_TCK);
	for (i = 0; i < 600 && cpu_ticks(pid) < want; i++)
		usleep(100000);
	if (cpu_ticks(pid) < want)
		fail_msg("pid %d did not get %d s of CPU in 60 s", (int)pid, secs);
}

/* ---- (a) jitrace in a container, as a DaemonSet runs it ---- */

/* The manifest's lines marked "(tested)": what the DaemonSet test runs, as docker options. */
struct manifest {
	char *text;		/* the file; the items below point into it */
	bool host_pid;
	char *command[4], *args[32], *drop[8], *add[8];
	int nr_command, nr_args, nr_drop, nr_add;
	const char *out;	/* the directory after -o */
};

/* The items of a YAML flow sequence, "[a, "b", c]", in line (cut in place). */
static int flow_items(char *line, char **items, int max)
{
	char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL, *tok, *save;
	int n = 0;

	if (!close)
		fail_msg("%s: no [...] in a line marked (tested): %s", MANIFEST, line);
	*close = 0;
	for (tok = strtok_r(open + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t len;

		tok += strspn(tok, " ");
		len = strcspn(tok, " ");
		tok[len] = 0;
		if (len >= 2 && tok[0] == '"' && tok[len - 1] == '"') {
			tok[len - 1] = 0;
			tok++;
		}
		assert_true(n < max);
		items[n++] = tok;
	}
	return n;
}

static void manifest_load(struct manifest *m)
{
	char *line, *save, *key;
	int i;

	memset(m, 0, sizeof(*m));
	m->text = it_slurp(MANIFEST);
	for (line = strtok_r(m->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		key = line + strspn(line, " -");
		if (*key == '#' || !strstr(line, "(tested)"))
			continue;
		if (!strncmp(key, "hostPID: true", 13))
			m->host_pid = true;
		else if (!strncmp(key, "command:", 8))
			m->nr_command = flow_items(key, m->command, 4);
		else if (!strncmp(key, "args:", 5))
			m->nr_args = flow_items(key, m->args, 32);
		else if (!strncmp(key, "drop:", 5))
			m->nr_drop = flow_items(key, m->drop, 8);
		else if (!strncmp(key, "add:", 4))
			m->nr_add = flow_items(key, m->add, 8);
		else
			fail_msg("%s: a line marked (tested) that the test does not run: %s",
				 MANIFEST, line);
	}
	for (i = 0; i + 1 < m->nr_args; i++)
		if (!strcmp(m->args[i], "-o"))
			m->out = m->args[i + 1];
	assert_true(m->host_pid && m->nr_command == 1 && m->out);
}

/*
 * The manifest's container as `docker run`: the host's pid namespace, the capabilities it
 * drops and adds (SYS_PTRACE left out unless ptrace; docker's default seccomp profile),
 * its command line with jitrace from the image, and the directory it writes to (the
 * manifest's hostPath) from segdir on the host; ended by `docker stop`.
 */
static pid_t start_daemonset(const struct manifest *m, const char *name, bool ptrace,
			     const char *segdir, const char *err)
{
	char vol[2 * PATH_MAX];
	struct av a;
	int i;

	assert_int_equal(mkdir(segdir, 0755), 0);
	snprintf(vol, sizeof(vol), "%s:%s", segdir, m->out);
	av_run(&a, name);
	av_add(&a, "--pid=host", "-v", vol, NULL);
	for (i = 0; i < m->nr_drop; i++)
		av_add(&a, "--cap-drop", m->drop[i], NULL);
	for (i = 0; i < m->nr_add; i++)
		if (ptrace || strcmp(m->add[i], "SYS_PTRACE"))
			av_add(&a, "--cap-add", m->add[i], NULL);
	av_add(&a, IMAGE, m->command[0], NULL);
	for (i = 0; i < m->nr_args; i++)
		av_add(&a, m->args[i], NULL);
	return it_spawn(a.v, NULL, err);
}

/* The one segment a recording shorter than its rotation left in dir, loaded. */
static void load_segment(const char *dir, struct it_log *log)
{
	char path[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len > 4 && !strcmp(e->d_name + len - 4, ".jtl")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(d);
	assert_int_equal(n, 1);
	it_log_load(path, log);
}

/*
 * The host's toy JIT, recorded by jitrace in a container run as dist/jitrace-daemonset.yaml
 * says (its lines marked "(tested)"): its methods are named (from its perf map,
 * /proc/PID/root/tmp/perf-PID.map seen from the container: the host's /tmp), its comm is in
 * the log and in the report of the segments, and the 3:1 split is there. The same container
 * without CAP_SYS_PTRACE samples the toy but names none of it: the host's processes hold
 * capabilities the container lacks, so their /proc/PID/root is closed to it.
 */
static void test_daemonset_names_host_processes(void **state)
{
	char *segs = it_path_dup("ds"), *segs2 = it_path_dup("ds-noptrace");
	char *err = it_path_dup("ds.err"), *err2 = it_path_dup("ds-noptrace.err");
	char *toy_out = it_path_dup("ds-toy.out"), *rep = it_path_dup("ds.report"), *text;
	char *toy[] = { IT_TOYJIT, "split", "--ms", "60000", NULL };
	char *report[] = { IT_JITRACE, "report", "-n", "5", "--comm", "toyjit", segs, NULL };
	uint64_t a, b, all, other, samples = 0;
	struct it_log log, log2;
	struct manifest m;
	struct it_toy t;
	pid_t ds, ds2, run;
	const char *comm;
	char want[64];
	size_t i;

	(void)state;
	need_docker();
	manifest_load(&m);
	ds = start_daemonset(&m, "jt-ds", true, segs, err);
	ds2 = start_daemonset(&m, "jt-ds-noptrace", false, segs2, err2);
	assert_true(it_wait_for_text(err, "recording all processes", 20000));
	assert_true(it_wait_for_text(err2, "recording all processes", 20000));
	run = dk.workload = it_spawn(toy, toy_out, NULL);
	assert_true(it_wait_for_text(toy_out, "split ratio", 10000));
	wait_cpu(run, 4);	/* about 200 samples at 49 Hz */
	assert_int_equal(dk_cmd(NULL, "stop", "-t", "20", "jt-ds", "jt-ds-noptrace", NULL), 0);
	end_workload();
	assert_int_equal(it_wait(ds), 0);
	assert_int_equal(it_wait(ds2), 0);
	it_toy_parse(toy_out, &t);
	assert_int_equal(t.pid, run);

	load_segment(segs, &log);
	it_check_promises(&log);
	comm = proc_comm(&log, (uint32_t)t.pid);
	assert_non_null(comm);
	assert_string_equal(comm, "toyjit");
	a = it_count_leaf(&log, (uint32_t)t.pid, 0, "hot_a");
	b = it_count_leaf(&log, (uint32_t)t.pid, 0, "hot_b");
	/* the toy's own loop around the calls: 1-2 points seen */
	it_assert_share_near("host toy's leaf samples in hot_a of hot_a and hot_b, recorded in "
			     "a container", a, a + b, 0.75, 0.02);
	/* the image's agent is another file than the one the toy loaded: its stubs are not
	 * probed, and every name is the perf map's */
	count_methods(&log, (uint32_t)t.pid, JT_SRC_PERFMAP, &all, &other);
	print_message("toy pid %d: %llu methods, %llu not from its perf map\n", t.pid,
		      (unsigned long long)all, (unsigned long long)other);
	assert_true(all >= 3);
	assert_int_equal(other, 0);
	assert_int_equal(it_run(report, rep, NULL), 0);
	text = it_slurp(rep);
	snprintf(want, sizeof(want), "toyjit (%d)", t.pid);
	if (!strstr(text, want) || !strstr(text, "jit     hot_a"))
		fail_msg("the report does not name the toy (%s) and hot_a:\n%s", want, text);
	free(text);
	it_log_free(&log);

	load_segment(segs2, &log2);
	for (i = 0; i < log2.n; i++) {
		const struct jt_rec_sample *s = (const void *)log2.recs[i];

		samples += s->h.type == JT_REC_SAMPLE && s->pid == (uint32_t)t.pid;
	}
	count_methods(&log2, (uint32_t)t.pid, JT_SRC_PERFMAP, &all, &other);
	print_message("without CAP_SYS_PTRACE: %llu samples of the toy, %llu methods\n",
		      (unsigned long long)samples, (unsigned long long)all);
	assert_true(samples >= IT_MIN_SAMPLES);
	assert_int_equal(all, 0);
	assert_true(it_wait_for_text(err2, "CAP_SYS_PTRACE", 0));
	it_log_free(&log2);
	free(m.text);
	free(segs);
	free(segs2);
	free(err);
	free(err2);
	free(toy_out);
	free(rep);
}

/*
 * A .NET process of the host, started with nothing set, named by the DaemonSet's jitrace:
 * at its start, -a finds the runtime's socket through /proc/PID/root (the pod's own /tmp is
 * another) and asks for its perf map, which names Big and Small. Its $TMPDIR, where the
 * runtime puts its socket (its perf map stays in /tmp), is a directory of the test's, read
 * from its environment: a jitrace of another test on this machine that looks in /tmp alone
 * cannot ask it first, after which ours would leave it alone (it writes its map already).
 */
static void test_daemonset_asks_host_dotnet(void **state)
{
	char *segs = it_path_dup("ds-dotnet"), *err = it_path_dup("ds-dotnet.err");
	char *out = it_path_dup("ds-dotnet.out"), *tmp = it_path_dup("ds-dotnet.tmp");
	char hot[PATH_MAX];
	char *prog[] = { hot, "split", "20000", NULL };
	struct manifest m;
	struct it_log log;
	struct it_toy t;
	pid_t ds, run;

	(void)state;
	need_docker();
	need_dotnet();
	snprintf(hot, sizeof(hot), "%s/Hot", dk.hot);
	assert_int_equal(mkdir(tmp, 0700), 0);
	setenv("TMPDIR", tmp, 1);
	run = dk.workload = it_spawn(prog, out, NULL);
	unsetenv("TMPDIR");
	assert_true(it_wait_for_text(out, "split ratio", 20000));
	it_toy_parse(out, &t);	/* Hot prints "pid N" first */
	assert_int_equal(t.pid, run);
	sleep(2);	/* Big and Small tier up in the first second */
	manifest_load(&m);
	ds = start_daemonset(&m, "jt-ds", true, segs, err);
	assert_true(it_wait_for_text(err, "recording all processes", 20000));
	wait_cpu(run, 5);	/* about 250 samples at 49 Hz */
	assert_int_equal(dk_cmd(NULL, "stop", "-t", "20", "jt-ds", NULL), 0);
	assert_int_equal(it_wait(ds), 0);
	end_workload();
	if (!it_wait_for_text(err, ".NET process", 0) ||
	    !it_wait_for_text(err, "asked to write its perf map", 0))
		fail_msg("the DaemonSet's jitrace asked no .NET process: see %s", err);
	load_segment(segs, &log);
	it_check_promises(&log);
	assert_dotnet_split(&log, run);
	it_log_free(&log);
	assert_report_share(segs, run, "JitraceTest.Hot::Big(", 0.5);
	free(m.text);
	free(segs);
	free(err);
	free(out);
	free(tmp);
}

/* ---- (b) Node in a container, named from the host ---- */

/* `node --perf-basic-prof hot.js MS` in container name (tests/runtimes/node at /js). */
static pid_t start_node(const char *name, const char *ms, const char *out)
{
	char vol[PATH_MAX + 64], cwd[PATH_MAX];
	struct av a;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(vol, sizeof(vol), "%s/%s:/js:ro", cwd, NODE_DIR);
	av_run(&a, name);
	/* --logfile: else V8 writes isolate-*-v8.log into its cwd */
	av_add(&a, "-v", vol, IMAGE, NODE, "--perf-basic-prof", "--logfile=/dev/null", "/js/hot.js",
	       (char *)ms, NULL);
	return it_spawn(a.v, out, NULL);
}

/*
 * The running Node's map is in its container's /tmp under its pid there (1), and nowhere
 * under the host's pid: what jitrace must find through /proc/PID/root and NStgid.
 */
static void assert_map_in_container_only(pid_t host_pid)
{
	char path[96];

	struct stat in, out;

	assert_int_equal(ns_pid(host_pid), 1);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-1.map", (int)host_pid);
	assert_int_equal(stat(path, &in), 0);
	/* the host's /tmp may hold a map an earlier process of that pid left: not this one */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)host_pid);
	if (!stat(path, &out) && out.st_dev == in.st_dev && out.st_ino == in.st_ino)
		fail_msg("%s is the container's map", path);
}

/* Node's program as it printed it, its pid made the host's; V8's names and the split. */
static void assert_node_named(const char *log_path, const char *out, pid_t host_pid)
{
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;
	char prefix[] = "JS:*hotA /js/hot.js:";
	uint64_t named = 0;
	size_t i;

	rt_truth_parse(out, &t);
	assert_int_equal(t.pid, 1);	/* its own pid namespace */
	t.pid = host_pid;
	assert_string_equal(t.fns[0], "hotA");
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 1; i < log.nr_methods; i++) {
		const struct jt_rec_method *m = log.methods[i];

		named += m && m->pid == (uint32_t)host_pid && m->src == JT_SRC_PERFMAP &&
			 rt_name_has_prefix(m, prefix);
	}
	assert_true(named >= 1);	/* TurboFan's hotA, by the path the container sees */
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	/* the loop around the calls and V8's own code: under 1 point seen (itest_node) */
	rt_assert_share("leaf samples", &t, st.leaf, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.9, "V8's GC and frameless builtins: 0.5% seen");
	it_log_free(&log);
	rt_truth_free(&t);
	assert_report_share(log_path, host_pid, prefix, 0.5);
}

/* `record -a` on the host, the container started while it records. */
static void test_node_in_container_named_by_record_all(void **state)
{
	char *log_path = it_path_dup("node-a.jtl"), *err = it_path_dup("node-a.err");
	char *out = it_path_dup("node-a.out");
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "999", "-d", "60", "-o", log_path, NULL };
	pid_t jt, node, host_pid;

	(void)state;
	need_docker();
	jt = dk.workload = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "recording all processes", 20000));
	node = start_node("jt-node-a", "3000", out);
	assert_true(it_wait_for_text(out, "pid ", 20000));
	host_pid = dk_pid("jt-node-a");
	usleep(500000);	/* its first functions are in its map */
	assert_map_in_container_only(host_pid);
	assert_int_equal(it_wait(node), 0);
	kill(jt, SIGINT);
	dk.workload = 0;
	assert_int_equal(it_wait(jt), 0);
	assert_node_named(log_path, out, host_pid);
	free(log_path);
	free(err);
	free(out);
}

/* `record -p HOSTPID` of a Node already running in its container. */
static void test_node_in_container_named_by_record_pid(void **state)
{
	char *log_path = it_path_dup("node-p.jtl"), *out = it_path_dup("node-p.out"), pid_s[16];
	char *err = it_path_dup("node-p.err");
	char *rec[] = { IT_JITRACE, "record", "-p", pid_s, "-F", "999", "-d", "3", "-o", log_path,
			NULL };
	pid_t node, host_pid;

	(void)state;
	need_docker();
	node = start_node("jt-node-p", "5000", out);
	assert_true(it_wait_for_text(out, "pid ", 20000));
	host_pid = dk_pid("jt-node-p");
	usleep(1000000);	/* past its first tiers */
	assert_map_in_container_only(host_pid);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)host_pid);
	assert_int_equal(it_run(rec, NULL, err), 0);
	assert_int_equal(it_wait(node), 0);
	assert_node_named(log_path, out, host_pid);
	free(log_path);
	free(out);
	free(err);
}

/* ---- (d) a JVM in a container, attached from the host ---- */

/*
 * `java Hot SECS` with no profiling flag in container name, as uid 1000 (HotSpot admits only
 * its own user, or root as its user namespace sees it), Hot compiled into a directory of its
 * own mounted at /j.
 */
static pid_t start_jvm(const char *name, const char *secs, const char *out)
{
	char *dir = it_path_dup("jclasses"), vol[PATH_MAX + 16];
	char *javac[] = { JDK "/bin/javac", "-d", dir, "tests/runtimes/java/Hot.java", NULL };
	struct av a;
	pid_t pid;

	mkdir(dir, 0755);
	chmod(dir, 0755);	/* whatever the umask: uid 1000 reads it */
	assert_int_equal(it_run(javac, NULL, NULL), 0);
	snprintf(vol, sizeof(vol), "%s:/j:ro", dir);
	av_run(&a, name);
	av_add(&a, "--user", "1000:1000", "-v", vol, IMAGE, JDK "/bin/java",
	       "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Hot::*", "-cp", "/j",
	       "Hot", (char *)secs, NULL);
	pid = it_spawn(a.v, out, NULL);
	free(dir);
	return pid;
}

/* Samples of pid, and those whose leaf user frame is named (a method or a symbol). */
static void count_named(const struct it_log *log, uint32_t pid, uint64_t *all, uint64_t *named)
{
	size_t i;
	unsigned int k;

	*all = *named = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		(*all)++;
		for (k = 0; k < s->nr_frames && it_frame_is_kernel(log, &s->frames[k]); k++)
			;
		*named += k < s->nr_frames && (JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_METHOD ||
					       JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_SYMBOL);
	}
}

/*
 * `record -p HOSTPID` (all: `record -a`) of a JVM running in its container (named name) with
 * nothing set: attached through its namespaces (its /tmp, its pid 1) and as its user; its
 * samples named, its split seen.
 */
static void jvm_in_container_attached(const char *name, bool all_procs)
{
	char pid_s[16], map[64], *log_path, *out, *err, *text;
	char *rec[] = { IT_JITRACE, "record", "-F", "999", "-d", "4", "-o", NULL, "-p", pid_s,
			NULL };
	uint64_t a, b, all, named;
	struct it_log log;
	struct stat st;
	pid_t jvm, host_pid;

	log_path = it_path_ext(name, "jtl");
	out = it_path_ext(name, "out");
	err = it_path_ext(name, "err");
	rec[7] = log_path;
	if (all_procs) {	/* -a: every process, this JVM among them */
		rec[8] = "-a";
		rec[9] = NULL;
	}
	need_docker();
	if (access(JDK "/bin/java", X_OK)) {
		print_message("skipped: %s is not installed\n", JDK);
		skip();
	}
	jvm = start_jvm(name, "12", out);
	assert_true(it_wait_for_text(out, "hot ready", 30000));
	host_pid = dk_pid(name);
	assert_int_equal(ns_pid(host_pid), 1);
	sleep(2);	/* its hot code compiled long before */
	snprintf(pid_s, sizeof(pid_s), "%d", (int)host_pid);
	assert_int_equal(it_run(rec, NULL, err), 0);
	text = it_slurp(err);
	print_message("%s", text);
	assert_non_null(strstr(text, all_procs ? " (Compiler.perfmap) in " :
				     "1 JVM wrote its perf map (Compiler.perfmap) in "));
	/*
	 * Written by the JVM in its own /tmp under its own pid (read above: the split named),
	 * and removed once the recording ended, through the container's root: jitrace's
	 * attach made it, and leaves the JVM as it found it.
	 */
	snprintf(map, sizeof(map), "/proc/%d/root/tmp/perf-1.map", (int)host_pid);
	assert_int_equal(stat(map, &st), -1);
	assert_int_equal(errno, ENOENT);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	count_named(&log, (uint32_t)host_pid, &all, &named);
	it_assert_share_at_least("samples of the JVM in a container named", named, all, 0.9,
				 "the acceptance's floor");
	a = it_count_leaf_with(&log, (uint32_t)host_pid, "Hot.a(long)");
	b = it_count_leaf_with(&log, (uint32_t)host_pid, "Hot.b(long)");
	/* the loop around the calls, inlined into its caller: 74-76% seen (itest_hotspot) */
	it_assert_share_near("leaf samples in Hot.a of Hot.a and Hot.b (work done 75%)", a, a + b,
			     0.75, 0.02);
	it_log_free(&log);
	assert_int_equal(it_wait(jvm), 0);
	free(text);
	free(log_path);
	free(out);
	free(err);
}

static void test_jvm_in_container_attached_by_record_pid(void **state)
{
	(void)state;
	jvm_in_container_attached("jt-jvm-p", false);
}

static void test_jvm_in_container_attached_by_record_all(void **state)
{
	(void)state;
	jvm_in_container_attached("jt-jvm-a", true);
}

/* ---- (c) .NET in a container, asked through its diagnostics socket ---- */

/* Whether pid's root holds its diagnostics socket under its namespaced pid 1. */
static bool has_socket_as_pid1(pid_t pid)
{
	char path[64];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		found |= !strncmp(e->d_name, "dotnet-diagnostic-1-", 20);
	closedir(d);
	return found;
}

/*
 * Hot runs in a container with nothing set; a host jitrace (`record -p HOSTPID`, or -a)
 * reaches its socket in the container's /tmp (named by its pid there, 1) and asks for its
 * perf map, which the runtime writes in that /tmp as perf-1.map; the split of Big and Small
 * (3:1) is named.
 */
static void record_dotnet_in_container(bool all)
{
	char *log_path = it_path_dup(all ? "dotnet-a.jtl" : "dotnet-p.jtl");
	char *out = it_path_dup(all ? "dotnet-a.out" : "dotnet-p.out");
	char *err = it_path_dup(all ? "dotnet-a.err" : "dotnet-p.err");
	char pid_s[16], app[PATH_MAX + 8], env[PATH_MAX + 16], rt[2 * PATH_MAX + 8];
	char *rec[] = { IT_JITRACE, "record", "-p", pid_s, "-F", "999", "-d", "3", "-o", log_path,
			NULL };
	struct it_log log;
	pid_t run, host_pid;
	struct av a;

	need_docker();
	need_dotnet();
	snprintf(app, sizeof(app), "%s:/app:ro", dk.hot);
	snprintf(env, sizeof(env), "DOTNET_ROOT=%s", dk.dotnet_root);
	av_run(&a, "jt-dotnet");
	av_add(&a, "-v", app, "-e", env, NULL);
	if (strncmp(dk.dotnet_root, "/usr/", 5)) {	/* a runtime outside /usr: mount it too */
		snprintf(rt, sizeof(rt), "%s:%s:ro", dk.dotnet_root, dk.dotnet_root);
		av_add(&a, "-v", rt, NULL);
	}
	av_add(&a, IMAGE, "/app/Hot", "split", "20000", NULL);
	run = it_spawn(a.v, out, NULL);
	assert_true(it_wait_for_text(out, "split ratio", 20000));
	host_pid = dk_pid("jt-dotnet");
	sleep(2);	/* Big and Small tier up in the first second */
	assert_int_equal(ns_pid(host_pid), 1);
	assert_true(has_socket_as_pid1(host_pid));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)host_pid);
	if (all) {
		rec[2] = "-a";
		memmove(&rec[3], &rec[4], sizeof(rec) - 4 * sizeof(rec[0]));
	}
	assert_int_equal(it_run(rec, NULL, err), 0);
	if (!all)
		assert_true(it_wait_for_text(err, "1 .NET process asked to write its perf map", 0));
	assert_int_equal(dk_cmd(NULL, "rm", "-f", "jt-dotnet", NULL), 0);
	it_wait(run);

	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_dotnet_split(&log, host_pid);
	it_log_free(&log);
	assert_report_share(log_path, host_pid, "JitraceTest.Hot::Big(", 0.5);
	free(log_path);
	free(out);
	free(err);
}

static void test_dotnet_in_container_named_by_record_pid(void **state)
{
	(void)state;
	record_dotnet_in_container(false);
}

static void test_dotnet_in_container_named_by_record_all(void **state)
{
	(void)state;
	record_dotnet_in_container(true);
}

/* ---- the daemon ---- */

/* The last line of file, for saying why dockerd did not start. */
static void last_line(const char *file, char *buf, size_t len)
{
	char *text = it_slurp(file), *end, *start;

	end = text + strlen(text);
	while (end > text && end[-1] == '\n')
		end--;
	*end = 0;
	start = strrchr(text, '\n');
	snprintf(buf, len, "%s", start ? start + 1 : text);
	free(text);
}

/* Start dockerd; it gets SIGTERM if this program dies first, so none outlives a crash. */
static pid_t spawn_dockerd(const char *conf, const char *log)
{
	char data[PATH_MAX], exec[PATH_MAX], pidf[PATH_MAX];
	char *argv[] = { DOCKERD, "--config-file", (char *)conf, "-H", dk.host, "--data-root",
			 data, "--exec-root", exec, "--pidfile", pidf, "--iptables=false",
			 "--ip6tables=false", "--bridge=none", "--storage-driver=overlay2", NULL };
	pid_t parent = getpid(), pid;
	int fd;

	snprintf(data, sizeof(data), "%s/data", dk.dir);
	snprintf(exec, sizeof(exec), "%s/exec", dk.dir);
	snprintf(pidf, sizeof(pidf), "%s/docker.pid", dk.dir);
	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	execv(argv[0], argv);
	_exit(127);
}

/* Wait for pid to end, up to ms; true if it did. */
static bool reaped(pid_t pid, int ms)
{
	int i, status;

	for (i = 0; i < ms / 50; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		usleep(50000);
	}
	return false;
}

/* Unmount whatever dockerd left mounted under its directory (it unmounts all on SIGTERM). */
static void unmount_leftovers(void)
{
	char line[4096], mnt[PATH_MAX], again = 1;
	size_t len = strlen(dk.dir);
	FILE *f;

	while (again) {
		again = 0;
		f = fopen("/proc/self/mountinfo", "r");
		if (!f)
			return;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
			    strncmp(mnt, dk.dir, len))
				continue;
			fprintf(stderr, "itest_containers: %s still mounted: unmounting\n", mnt);
			again = !umount2(mnt, MNT_DETACH);
			break;
		}
		fclose(f);
	}
}

/* Remove every container and the image, stop dockerd, and remove its directory. */
static void stop_dockerd(void)
{
	char *rm[] = { "/bin/rm", "-rf", dk.dir, NULL };

	if (dk.dockerd > 0) {
		rm_containers();
		dk_cmd(NULL, "rmi", "-f", IMAGE, NULL);
		kill(dk.dockerd, SIGTERM);
		if (!reaped(dk.dockerd, 30000)) {
			fprintf(stderr, "itest_containers: dockerd %d did not stop in 30 s: killed\n",
				(int)dk.dockerd);
			kill(dk.dockerd, SIGKILL);	/* its containerd dies with it */
			waitpid(dk.dockerd, NULL, 0);
		}
		dk.dockerd = 0;
	}
	unmount_leftovers();
	if (it_run(rm, NULL, NULL))
		fprintf(stderr, "itest_containers: cannot remove %s\n", dk.dir);
}

/*
 * Start dockerd and wait until it answers; on failure, dk.why says why (the tests skip).
 * Debian 12's dockerd (20.10) would write its key into /etc/docker: the configuration
 * file puts it here.
 */
static void start_dockerd(void)
{
	char *conf = it_path_dup("docker/daemon.json"), *log = it_path_dup("docker/dockerd.log");
	char *ver = it_path_dup("docker/version.out"), last[256];
	struct av a;
	FILE *f;
	int i;

	av_docker(&a);
	av_add(&a, "version", "-f", "{{.Server.Version}}", NULL);
	f = fopen(conf, "w");
	assert_non_null(f);
	fprintf(f, "{ \"deprecated-key-path\": \"%s/key.json\" }\n", dk.dir);
	fclose(f);
	dk.dockerd = spawn_dockerd(conf, log);
	assert_true(dk.dockerd > 0);
	for (i = 0; i < READY_MS / 200; i++) {
		if (waitpid(dk.dockerd, NULL, WNOHANG) == dk.dockerd) {
			dk.dockerd = 0;
			last_line(log, last, sizeof(last));
			snprintf(dk.why, sizeof(dk.why), "dockerd could not start here: %s", last);
			break;
		}
		if (!it_run(a.v, ver, "/dev/null"))
			break;
		usleep(200000);
	}
	if (!dk.why[0] && i == READY_MS / 200) {
		last_line(log, last, sizeof(last));
		snprintf(dk.why, sizeof(dk.why), "dockerd did not answer on %s in %d s: %s",
			 dk.host, READY_MS / 1000, last);
	}
	if (dk.why[0])
		stop_dockerd();
	free(conf);
	free(log);
	free(ver);
}

/* Build tests/runtimes/dotnet's Hot (no packages: no network) for the .NET container. */
static void build_dotnet(void)
{
	char *src = it_path_dup("dotnet"), *proj = it_path_dup("dotnet/Hot.csproj");
	char *outdir = it_path_dup("dotnet/out"), *log = it_path_dup("dotnet/build.log");
	char *dotnet = realpath("/usr/bin/dotnet", NULL), *cp[] = { "/bin/cp", "-r", DN_SRC, src,
								 NULL };
	char *build[] = { dotnet, "build", proj, "-c", "Release", "-o", outdir, "--nologo", "-v",
			  "q", "--disable-build-servers", NULL };

	if (!dotnet) {
		snprintf(dk.dn_why, sizeof(dk.dn_why), "no /usr/bin/dotnet (the .NET SDK)");
		goto out;
	}
	dk.dotnet_root = strdup(dotnet);
	assert_non_null(dk.dotnet_root);
	*strrchr(dk.dotnet_root, '/') = 0;
	setenv("DOTNET_ROOT", dk.dotnet_root, 1);	/* for the apphost run on the host */
	setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
	setenv("DOTNET_NOLOGO", "1", 1);
	setenv("MSBUILDDISABLENODEREUSE", "1", 1);
	setenv("UseSharedCompilation", "false", 1);
	if (it_run(cp, NULL, NULL) || it_run(build, log, log)) {
		fprintf(stderr, "itest_containers: building %s failed: see %s\n", proj, log);
		goto out;
	}
	dk.hot = outdir;
	outdir = NULL;
out:
	free(src);
	free(proj);
	free(outdir);
	free(log);
	free(dotnet);
}

static int setup(void **state)
{
	char *dir = it_path_dup("docker"), *tar = it_path_dup("docker/rootfs.tar");
	char *mk[] = { "/bin/sh", MKIMAGE, tar, IT_JITRACE, AGENT, NULL };
	int err = 0;

	(void)state;
	dk.dir = dir;
	if (asprintf(&dk.host, "unix://%s/docker.sock", dir) < 0)
		return -1;
	if (access(DOCKERD, X_OK) || access(DOCKER, X_OK)) {
		snprintf(dk.why, sizeof(dk.why), "docker.io is not installed (no %s or %s; "
			 "`scripts/deps.sh test` installs it)", DOCKERD, DOCKER);
		goto out;
	}
	if (mkdir(dir, 0700))
		return -1;
	setenv("DOCKER_CONFIG", dir, 1);	/* the client's state, not root's ~/.docker */
	start_dockerd();
	if (dk.why[0])
		goto out;
	if (it_run(mk, NULL, NULL) || dk_cmd(NULL, "import", tar, IMAGE, NULL)) {
		fprintf(stderr, "itest_containers: cannot make the image %s from %s\n", IMAGE, tar);
		stop_dockerd();
		err = -1;
		goto out;
	}
	build_dotnet();
out:
	free(tar);
	return err;
}

static int teardown(void **state)
{
	(void)state;
	if (!dk.why[0])
		stop_dockerd();
	free(dk.dir);
	free(dk.host);
	free(dk.hot);
	free(dk.dotnet_root);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_daemonset_names_host_processes, test_teardown),
		cmocka_unit_test_teardown(test_daemonset_asks_host_dotnet, test_teardown),
		cmocka_unit_test_teardown(test_node_in_container_named_by_record_all,
					  test_teardown),
		cmocka_unit_test_teardown(test_node_in_container_named_by_record_pid,
					  test_teardown),
		cmocka_unit_test_teardown(test_dotnet_in_container_named_by_record_pid,
					  test_teardown),
		cmocka_unit_test_teardown(test_dotnet_in_container_named_by_record_all,
					  test_teardown),
		cmocka_unit_test_teardown(test_jvm_in_container_attached_by_record_pid,
					  test_teardown),
		cmocka_unit_test_teardown(test_jvm_in_container_attached_by_record_all,
					  test_teardown),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_containers: needs root (BPF, dockerd)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
