// SPDX-License-Identifier: GPL-2.0
/*
 * Names, beside perf: on the same workloads, the share of samples whose every user frame is
 * named (and whose leaf is), under `jitrace record -F 999` and under `perf record -F 999 -g`.
 *
 * Workloads (each skipped, and said so, if its runtime is not installed):
 *   short-lived natives  sh -c 'for i in $(seq 20); do DIR/blip; done': tests/native/blip.c,
 *                        built here with frame pointers, spins 60 ms in blip_spin() and exits
 *   Node                 node --perf-basic-prof --logfile=/dev/null
 *                        tests/runtimes/node/hot.js 1500 (no isolate-*.log in the cwd)
 *   Java                 java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions
 *                        -XX:+DumpPerfMapAtExit -cp DIR Hot 2 (tests/runtimes/java/Hot.java)
 *   Java, agent          java -agentpath:libjitrace-jvmti.so -XX:+PreserveFramePointer
 *                        -cp DIR Hot 2
 *   Mono                 mono --jitmap DIR/Hot.exe split 1500 (tests/runtimes/mono/Hot.cs)
 * The command is the same under both tracers; only the tracer differs. Each round runs every
 * workload under jitrace and under perf, in an order rotated every round.
 *
 * Which samples: every sample of the workload's processes (those whose comm is blip, node,
 * java or mono: all their threads; not the sh loop, seq, nor the tracer). Which frames: the
 * user frames (jitrace records user stacks only, by default; perf's kernel frames, at kernel
 * addresses, are left out), less a zero return address (where a frame-pointer walk ends,
 * not a frame). A sample with no user frame left is not counted in the share (it is counted
 * apart). A jitrace frame is named when it is a JIT method, an ELF symbol, in one of the
 * kernel's special mappings ([vdso], [vsyscall], [uprobes], [uprobes-trampoline]); it is
 * unnamed when it is a bare address, an address in anonymous executable memory that nothing
 * named (which jitrace shows by the runtime's name, "[java jit]", "[node jit]": JIT code with
 * no name, as perf's "[unknown]" in a perf map's range), or a file and an offset with no
 * symbol; a [truncated] mark (a stack cut where it broke) is not a frame.
 * A perf frame (`perf script -F comm,pid,ip,sym,dso`) is unnamed when its symbol is
 * [unknown] and it is not in one of those special mappings (perf shows anonymous code that
 * nothing named as [unknown], its dso the perf map or [unknown]). perf names JIT code from
 * /tmp/perf-PID.map when `perf script` runs, so the map is read before it is removed;
 * jitrace reads the maps while it records.
 * Usage: bench_names [JITRACE [JVMTI_AGENT]] (default build/jitrace and the agent beside
 * it), from the source tree's top; run.sh passes build/jitrace build/libjitrace-jvmti.so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "log/source.h"
#include "base/util.h"

#ifndef ROUNDS
#define ROUNDS 5
#endif
#define HZ "999"
#define PERF "perf"
#define JAVA_HOME "/usr/lib/jvm/java-17-openjdk-amd64"
#define BLIP_SRC "tests/native/blip.c"	/* the one the names tests run */
#define HOT_JS "tests/runtimes/node/hot.js"
#define HOT_JAVA "tests/runtimes/java/Hot.java"
#define HOT_CS "tests/runtimes/mono/Hot.cs"
#define KERNEL_START 0xffff800000000000ULL
#define MAX_PIDS 256
#define MAX_WHERE 64

enum tracer { T_JITRACE, T_PERF, NTRACERS };

static const char *const tracer_name[NTRACERS] = { "jitrace", "perf" };

enum { W_BLIP, W_NODE, W_JAVA, W_JAVA_AGENT, W_MONO, NWORK };

struct workload {
	const char *name;
	const char *comm;		/* the processes whose samples count */
	char *argv[16];
	const char *skipped;		/* why it is not measured, or NULL */
};

/* Where unnamed frames lie, counted by a short description. */
struct where {
	char what[64];
	uint64_t n;
};

/*
 * One recording's counts: samples of the workload with a user frame, those with every user
 * frame named, those with the leaf (the first user frame) named; those with no user frame.
 */
struct count {
	uint64_t samples, named, leaf, no_user;
	uint64_t astray;	/* stacks whose walk went astray: jitrace cut them, perf did not */
	uint64_t named_cut;	/* every frame named up to where the walk went astray */
};

/* What one sample counts for. */
struct sample_count {
	unsigned int user;	/* user frames (0: not in the share) */
	bool named, leaf, astray, named_cut;
	char first[64];		/* where its first unnamed frame lies */
};

struct pidcount {
	uint32_t pid;
	bool workload;			/* one of the workload's processes, by its comm */
	struct count c;
};

/* An unnamed sample: where its first unnamed frame lies. */
struct unnamed {
	uint32_t pid;
	char what[64];
};

/* One recording's processes, and its unnamed samples until the workload's pids are known. */
struct pids {
	struct pidcount v[MAX_PIDS];
	int n;
	struct unnamed *u;
	size_t nu, cap;
};

struct result {
	bool ok;
	double share;			/* % of counted samples with every user frame named */
	double leaf;			/* % of counted samples with the leaf named */
	double named_cut;		/* % named up to where the walk went astray */
	double astray;			/* % whose walk went astray */
	struct count c;
};

static char dir[64];
static char jitrace[4096], agent[4096];
static struct workload work[NWORK];
static struct where where[NWORK][NTRACERS][MAX_WHERE];
static char run_out[128], run_err[128], log_path[128], data_path[128];

static void where_add(struct where *w, const char *what)
{
	int i;

	for (i = 0; i < MAX_WHERE && w[i].what[0]; i++)
		if (!strcmp(w[i].what, what))
			break;
	if (i == MAX_WHERE)
		i = MAX_WHERE - 1;	/* the last slot takes whatever does not fit */
	if (!w[i].what[0])
		snprintf(w[i].what, sizeof(w[i].what), "%s", i == MAX_WHERE - 1 ? "other" : what);
	w[i].n++;
}

static struct pidcount *pid_get(struct pids *p, uint32_t pid)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].pid == pid)
			return &p->v[i];
	if (p->n == MAX_PIDS)
		return NULL;
	p->v[p->n] = (struct pidcount){ .pid = pid };
	return &p->v[p->n++];
}

/*
 * A sample: whether it had a user frame, whether every one was named, the first one; where
 * the first unnamed frame lies.
 */
static void pid_count(struct pids *p, uint32_t pid, const struct sample_count *sc)
{
	struct pidcount *pc = pid_get(p, pid);

	if (!pc)
		return;
	if (!sc->user) {
		pc->c.no_user++;
		return;
	}
	pc->c.samples++;
	pc->c.named += sc->named;
	pc->c.leaf += sc->leaf;
	pc->c.astray += sc->astray;
	pc->c.named_cut += sc->named_cut;
	if (sc->named)
		return;
	if (p->nu == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct unnamed *u = realloc(p->u, cap * sizeof(*u));

		if (!u)
			return;	/* only the list of where is short */
		p->u = u;
		p->cap = cap;
	}
	p->u[p->nu].pid = pid;
	snprintf(p->u[p->nu].what, sizeof(p->u[p->nu].what), "%s", sc->first);
	p->nu++;
}

/* Remove the perf maps of the processes a recording saw, once they are gone. */
static void remove_maps(const struct pids *p)
{
	char map[64];
	int i;

	for (i = 0; i < p->n; i++) {
		if (!kill((pid_t)p->v[i].pid, 0) || errno != ESRCH)
			continue;
		snprintf(map, sizeof(map), "/tmp/perf-%u.map", p->v[i].pid);
		unlink(map);
	}
}

/* Run argv with stdout and stderr into files (NULL: /dev/null); its exit status, or -1. */
static int run(char *const argv[], const char *out, const char *err)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "bench_names: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (!freopen(out ? out : "/dev/null", "w", stdout) ||
		    !freopen(err ? err : "/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "bench_names: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void copy_to_stderr(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

static bool have(const char *cmd)
{
	char sh[256];

	snprintf(sh, sizeof(sh), "command -v %s >/dev/null 2>&1", cmd);
	return !system(sh);
}

/* ---- jitrace's log ---- */

static bool special_mapping(const char *name, size_t len)
{
	static const char *const special[] = { "[vdso]", "[vsyscall]", "[uprobes]",
					       "[uprobes-trampoline]" };
	size_t i;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (len == strlen(special[i]) && !memcmp(name, special[i], len))
			return true;
	return false;
}

/*
 * Whether a jitrace frame is named; *skip says it is not a user frame (kernel, the zero
 * that ends a walk, or the mark of a cut), *what where an unnamed one lies.
 */
static bool jt_frame_named(const struct jt_logsrc *s, const struct jt_frame *f, bool *skip,
			   char *what, size_t cap)
{
	char buf[JT_LOGSRC_NAME_CAP];
	enum jt_lv_kind kind;
	const char *name = jt_lv__frame(s->lv, f, buf, sizeof(buf), &kind), *file;
	size_t len = 0;

	/* a [truncated] mark stands for frames of a stack cut where it broke: not a frame of
	 * the program */
	*skip = kind == JT_LV_KERNEL ||
		(JT_FRAME_KIND(f->ref) == JT_FRAME_USER && f->off == 0) ||
		JT_FRAME_KIND(f->ref) == JT_FRAME_TRUNCATED;
	switch (kind) {
	case JT_LV_JIT:
		if (JT_FRAME_KIND(f->ref) != JT_FRAME_USER)
			return true;	/* a method */
		snprintf(what, cap, "%.40s, no name", name);	/* "[java jit]" */
		return false;
	case JT_LV_KERNEL:
		return true;
	case JT_LV_NATIVE:
		if (JT_FRAME_KIND(f->ref) != JT_FRAME_MODULE)
			return true;	/* an ELF symbol */
		file = jt_lv__frame_file(s->lv, f, &len);
		if (file && special_mapping(file, len))
			return true;
		snprintf(what, cap, "%.*s, no symbol", (int)(len < 40 ? len : 40),
			 file ? file : "?");
		return false;
	default:
		if (JT_FRAME_KIND(f->ref) == JT_FRAME_USER)
			snprintf(what, cap, "bare address");
		else
			snprintf(what, cap, "%.40s", name);
		return false;
	}
}

static int read_log(int w, struct pids *p)
{
	struct jt_logsrc s;
	const struct jt_rec_hdr *rec;
	const struct jt_lv_proc *proc;
	int i, err;

	if (jt_logsrc__open(&s, log_path, NULL))
		return -1;
	while ((rec = jt_logsrc__next(&s, NULL))) {
		const struct jt_rec_sample *smp = (const void *)rec;
		struct sample_count sc = { .named = true };
		char what[64] = "";
		unsigned int k;
		bool skip;

		if (rec->type != JT_REC_SAMPLE)
			continue;
		for (k = 0; k < smp->nr_frames; k++) {
			bool ok = jt_frame_named(&s, &smp->frames[k], &skip, what, sizeof(what));

			sc.astray |= JT_FRAME_KIND(smp->frames[k].ref) == JT_FRAME_TRUNCATED;
			if (skip)
				continue;
			if (!sc.user++)
				sc.leaf = ok;
			if (!ok && sc.named)
				snprintf(sc.first, sizeof(sc.first), "%s", what);
			sc.named &= ok;
		}
		sc.named_cut = sc.named;	/* its stacks are cut where they went astray */
		pid_count(p, smp->pid, &sc);
	}
	err = jt_logsrc__finish(&s, "counted");
	for (i = 0; i < p->n; i++) {	/* the process's comm as the log last had it */
		proc = jt_lv__proc(s.lv, p->v[i].pid);
		p->v[i].workload = proc && !strcmp(proc->comm, work[w].comm);
	}
	jt_logsrc__close(&s);
	return err;
}

/* ---- perf script ---- */

/*
 * "ip sym (dso)": the ip, and whether the frame is named: its sym is not [unknown], or it
 * lies in one of the kernel's special mappings (as for jitrace); *what where an unnamed one
 * lies.
 */
static bool perf_frame(char *line, uint64_t *ip, char *what, size_t cap)
{
	char *p = line, *end, *dso, *slash;

	while (*p == ' ' || *p == '\t')
		p++;
	*ip = strtoull(p, &end, 16);
	p = end;
	while (*p == ' ')
		p++;
	if (strncmp(p, "[unknown]", 9) || (p[9] && p[9] != ' '))
		return true;
	dso = strrchr(p, '(');
	if (!dso) {
		snprintf(what, cap, "?");
		return false;
	}
	dso++;
	dso[strcspn(dso, ")")] = 0;
	if (special_mapping(dso, strlen(dso)))
		return true;
	if (!strcmp(dso, "[unknown]")) {
		snprintf(what, cap, "bare address");
		return false;
	}
	slash = strrchr(dso, '/');
	if (slash)
		dso = slash + 1;
	if (!strncmp(dso, "perf-", 5) && strstr(dso, ".map"))
		snprintf(what, cap, "in a perf map's range, no line");
	else
		snprintf(what, cap, "%.40s, no symbol", dso);
	return false;
}

struct perf_sample {
	bool open;
	uint32_t pid;
	struct sample_count sc;
	char comm[32];
};

static void perf_end(int w, struct pids *p, struct perf_sample *ps)
{
	struct pidcount *pc;

	if (!ps->open)
		return;
	pid_count(p, ps->pid, &ps->sc);
	pc = pid_get(p, ps->pid);
	if (pc && !strcmp(ps->comm, work[w].comm))
		pc->workload = true;
	ps->open = false;
}

/* A sample's first line: "comm pid" (a comm may hold spaces). */
static void perf_head(char *line, struct perf_sample *ps)
{
	char *end = line + strlen(line), *sp;

	while (end > line && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t'))
		*--end = 0;
	sp = strrchr(line, ' ');
	*ps = (struct perf_sample){ .open = true, .sc = { .named = true, .named_cut = true } };
	if (!sp)
		return;
	ps->pid = (uint32_t)strtoul(sp + 1, NULL, 10);
	while (sp > line && sp[-1] == ' ')
		sp--;
	snprintf(ps->comm, sizeof(ps->comm), "%.*s", (int)(sp - line), line);
}

static int read_perf(int w, struct pids *p)
{
	char *argv[] = { PERF, "script", "-i", data_path, "-F", "comm,pid,ip,sym,dso", NULL };
	struct perf_sample ps = { 0 };
	char *line = NULL, what[64];
	size_t cap = 0;
	int fd[2], status;
	uint64_t ip;
	pid_t pid;
	FILE *f;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fd[1], 1);
		dup2(null, 2);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (!f) {
		close(fd[0]);
		waitpid(pid, &status, 0);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '\n') {
			perf_end(w, p, &ps);
		} else if (line[0] != ' ' && line[0] != '\t') {
			perf_end(w, p, &ps);
			perf_head(line, &ps);
		} else if (ps.open) {
			bool named = perf_frame(line, &ip, what, sizeof(what));
			struct sample_count *sc = &ps.sc;

			if (!ip || ip >= KERNEL_START)
				continue;
			if (!sc->user++)
				sc->leaf = named;
			if (!named && sc->named)
				snprintf(sc->first, sizeof(sc->first), "%s", what);
			sc->named &= named;
			/* a caller in no mapping: where jitrace cuts the walk */
			if (sc->user > 1 && !named && !strcmp(what, "bare address"))
				sc->astray = true;
			if (!sc->astray)
				sc->named_cut &= named;
		}
	}
	perf_end(w, p, &ps);
	free(line);
	fclose(f);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

/* ---- one recording ---- */

static struct result measure(int w, enum tracer t)
{
	char *argv[32];
	struct result res = { 0 };
	struct pids *p = calloc(1, sizeof(*p));
	int a = 0, i, rc, err;
	size_t k;

	if (!p)
		return res;
	if (t == T_JITRACE) {
		argv[a++] = jitrace;
		argv[a++] = "record";
		argv[a++] = "-F";
		argv[a++] = HZ;
		argv[a++] = "-f";
		argv[a++] = "-o";
		argv[a++] = log_path;
	} else {
		argv[a++] = PERF;
		argv[a++] = "record";
		argv[a++] = "-q";
		argv[a++] = "-N";	/* no build-id cache in ~/.debug */
		argv[a++] = "-F";
		argv[a++] = HZ;
		argv[a++] = "-g";
		argv[a++] = "-o";
		argv[a++] = data_path;
	}
	argv[a++] = "--";
	for (i = 0; work[w].argv[i]; i++)
		argv[a++] = work[w].argv[i];
	argv[a] = NULL;
	rc = run(argv, run_out, run_err);
	err = t == T_JITRACE ? read_log(w, p) : read_perf(w, p);
	remove_maps(p);
	unlink(log_path);
	unlink(data_path);
	for (i = 0; i < p->n; i++) {
		if (!p->v[i].workload)
			continue;
		res.c.samples += p->v[i].c.samples;
		res.c.named += p->v[i].c.named;
		res.c.leaf += p->v[i].c.leaf;
		res.c.no_user += p->v[i].c.no_user;
		res.c.astray += p->v[i].c.astray;
		res.c.named_cut += p->v[i].c.named_cut;
	}
	for (k = 0; k < p->nu; k++) {
		struct pidcount *pc = pid_get(p, p->u[k].pid);

		if (pc && pc->workload)
			where_add(where[w][t], p->u[k].what);
	}
	free(p->u);
	free(p);
	if (rc || err || !res.c.samples) {
		fprintf(stderr, "bench_names: %s under %s: status %d, %s, %" PRIu64
			" samples of %s; its output:\n", work[w].name, tracer_name[t], rc,
			err ? "unreadable recording" : "recording read", res.c.samples,
			work[w].comm);
		copy_to_stderr(run_out);
		copy_to_stderr(run_err);
		return res;
	}
	res.ok = true;
	res.share = 100.0 * res.c.named / res.c.samples;
	res.leaf = 100.0 * res.c.leaf / res.c.samples;
	res.named_cut = 100.0 * res.c.named_cut / res.c.samples;
	res.astray = 100.0 * res.c.astray / res.c.samples;
	return res;
}

/* ---- setup ---- */

static void set_work(int w, const char *name, const char *comm, char *const *argv)
{
	int i;

	work[w].name = name;
	work[w].comm = comm;
	for (i = 0; i < 15 && argv[i]; i++)
		work[w].argv[i] = argv[i];
	work[w].argv[i] = NULL;
}

/* Each workload's command; what it needs built is built into dir, or it is skipped. */
static void setup_workloads(void)
{
	static char blip[128], loop[256], hot_js[4096], exe[128], agentpath[4200];
	char src[4096], outarg[160];
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char *cc_argv[] = { (char *)cc, "-O1", "-fno-omit-frame-pointer", "-o", blip, src, NULL };
	char *javac[] = { JAVA_HOME "/bin/javac", "-d", dir, src, NULL };
	char *mcs[] = { "mcs", outarg, src, NULL };
	char *sh[] = { "sh", "-c", loop, NULL };
	char *node[] = { "node", "--perf-basic-prof", "--logfile=/dev/null", hot_js, "1500",
			 NULL };
	char *java[] = { JAVA_HOME "/bin/java", "-XX:+PreserveFramePointer",
			 "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-cp", dir,
			 "Hot", "2", NULL };
	char *java_agent[] = { JAVA_HOME "/bin/java", agentpath, "-XX:+PreserveFramePointer",
			       "-cp", dir, "Hot", "2", NULL };
	char *mono[] = { "mono", "--jitmap", exe, "split", "1500", NULL };

	snprintf(blip, sizeof(blip), "%s/blip", dir);
	snprintf(loop, sizeof(loop), "for i in $(seq 20); do %s; done", blip);
	snprintf(agentpath, sizeof(agentpath), "-agentpath:%s", agent);
	snprintf(exe, sizeof(exe), "%s/Hot.exe", dir);
	snprintf(outarg, sizeof(outarg), "-out:%s", exe);
	set_work(W_BLIP, "short-lived natives", "blip", sh);
	set_work(W_NODE, "Node", "node", node);
	set_work(W_JAVA, "Java (HotSpot 17)", "java", java);
	set_work(W_JAVA_AGENT, "Java, jitrace's JVMTI agent", "java", java_agent);
	set_work(W_MONO, "Mono (--jitmap)", "mono", mono);

	if (!realpath(BLIP_SRC, src) || run(cc_argv, run_out, run_err)) {
		copy_to_stderr(run_err);
		work[W_BLIP].skipped = BLIP_SRC " could not be built";
	}
	if (!have("node"))
		work[W_NODE].skipped = "node is not installed";
	else if (!realpath(HOT_JS, hot_js))
		work[W_NODE].skipped = HOT_JS " is missing";
	if (access(JAVA_HOME "/bin/java", X_OK) || access(JAVA_HOME "/bin/javac", X_OK)) {
		work[W_JAVA].skipped = JAVA_HOME "/bin/java or javac is not installed";
	} else if (!realpath(HOT_JAVA, src) || run(javac, run_out, run_err)) {
		copy_to_stderr(run_err);
		work[W_JAVA].skipped = "javac of " HOT_JAVA " failed";
	}
	work[W_JAVA_AGENT].skipped = work[W_JAVA].skipped;
	if (!work[W_JAVA].skipped && !agent[0])
		work[W_JAVA_AGENT].skipped = "libjitrace-jvmti.so was not built (no JDK headers?)";
	if (!have("mono") || !have("mcs")) {
		work[W_MONO].skipped = "mono or mcs is not installed";
	} else if (!realpath(HOT_CS, src) || run(mcs, run_out, run_err)) {
		copy_to_stderr(run_out);
		work[W_MONO].skipped = "mcs of " HOT_CS " failed";
	}
}

static void cleanup(void)
{
	char path[160];
	static const char *const files[] = { "blip", "Hot.class", "Hot.exe", "out", "err",
					     "names.jtl", "perf.data", "perf.data.old" };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* ---- output ---- */

static int cmp_where(const void *a, const void *b)
{
	const struct where *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* The three places unnamed frames most often lie, as "what N%, ...". */
static void print_where(struct where *w)
{
	uint64_t total = 0;
	int i, n;

	for (n = 0; n < MAX_WHERE && w[n].what[0]; n++)
		total += w[n].n;
	if (!total) {
		printf("none");
		return;
	}
	qsort(w, n, sizeof(*w), cmp_where);
	for (i = 0; i < n && i < 3; i++) {
		double pct = 100.0 * w[i].n / total;

		printf("%s%s %s%.0f%%", i ? ", " : "", w[i].what, pct < 0.5 ? "<" : "",
		       pct < 0.5 ? 1.0 : pct);
	}
}

static void print_section(struct result res[NWORK][NTRACERS][ROUNDS], int rounds)
{
	double v[NTRACERS][ROUNDS], d[ROUNDS], ns[ROUNDS];
	char target[64], what[128], missed_line[NWORK][512] = { { 0 } };
	uint64_t none[NTRACERS];
	int w, t, r, missed = 0;

	printf("## Names: samples whose every frame is named, beside perf\n\n");
	printf("The share of a workload's samples whose every user frame is named, under "
	       "`jitrace record -F %s -o LOG -- CMD` (user stacks, as by default) and under "
	       "`perf record -F %s -g -o DATA -- CMD`, the same CMD under each, %d rounds, "
	       "the order of the tracers rotated every round; and the share whose leaf (the "
	       "first user frame: the hot method) is named. Workloads: short-lived natives, "
	       "`sh -c 'for i in $(seq 20); do ./blip; done'` (tests/native/blip.c, built "
	       "with frame pointers: 60 ms of CPU in `blip_spin()`, then exit); Node, "
	       "`node --perf-basic-prof --logfile=/dev/null tests/runtimes/node/hot.js 1500`; "
	       "Java, `java "
	       "-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit "
	       "-cp DIR Hot 2` (tests/runtimes/java/Hot.java: jitrace names compiled methods from "
	       "HotSpot's USDT probes and reads the map written at exit, perf reads that map); "
	       "Java with jitrace's agent, `java -agentpath:libjitrace-jvmti.so "
	       "-XX:+PreserveFramePointer -cp DIR Hot 2` (the agent writes the perf map as code "
	       "is made, which perf reads too); Mono, `mono --jitmap Hot.exe split 1500` "
	       "(tests/runtimes/mono/Hot.cs). Counted: every sample of the workload's processes "
	       "(comm blip, node, java or mono, all their threads; not sh, seq or the tracer), "
	       "user frames only, less a zero return address (where a frame-pointer walk ends); "
	       "a sample with no user frame is not in the share. A jitrace frame is named when "
	       "it is a JIT method, an ELF symbol, or in [vdso], [vsyscall], [uprobes] or "
	       "[uprobes-trampoline]; a bare address, an address in anonymous executable memory "
	       "that nothing named (`[java jit]`, JIT code with no name, as perf's `[unknown]` "
	       "in a perf map's range) and a file+offset with no symbol are not, "
	       "and a [truncated] mark is no frame: jitrace cuts a stack where its callers "
	       "repeat, or where a caller lies in memory that holds no code of the process (no "
	       "executable mapping, no JIT code: a frame-pointer walk gone astray through code "
	       "that keeps data in rbp; the leaf is never cut). perf keeps such a caller as an "
	       "`[unknown]` frame in `[unknown]`; the rows 'every frame named up to a caller in "
	       "no mapping' count perf's samples as if cut there, the same rule for both, and "
	       "the rows 'stacks cut' and 'a caller in no mapping' say how many samples it "
	       "concerns. "
	       "A perf frame (`perf script -F comm,pid,ip,sym,dso`, run "
	       "while the runtime's /tmp/perf-PID.map is still there) is named unless its "
	       "symbol is `[unknown]`, with the same exception for those special mappings. "
	       "Target: jitrace's median share never below perf's.\n\n",
	       HZ, HZ, rounds);
	bench_table_head();
	for (w = 0; w < NWORK; w++) {
		int n = 0;

		if (work[w].skipped)
			continue;
		for (r = 0; r < rounds; r++) {
			if (!res[w][T_JITRACE][r].ok || !res[w][T_PERF][r].ok)
				continue;
			for (t = 0; t < NTRACERS; t++)
				v[t][n] = res[w][t][r].share;
			d[n] = v[T_JITRACE][n] - v[T_PERF][n];
			n++;
		}
		if (!n) {
			snprintf(missed_line[w], sizeof(missed_line[w]),
				 "MISSED: names, %s: no round was recorded and read under both "
				 "tracers (bench_names said why on stderr); its figures are "
				 "absent.\n", work[w].name);
			continue;
		}
		bench_sort(v[T_PERF], n);
		bench_sort(v[T_JITRACE], n);
		snprintf(target, sizeof(target), ">= perf (%.1f%%)", v[T_PERF][n / 2]);
		snprintf(what, sizeof(what), "**%s: jitrace, every frame named**", work[w].name);
		missed = v[T_JITRACE][n / 2] < v[T_PERF][n / 2];
		if (missed)	/* printed after the table, which it would cut */
			snprintf(missed_line[w], sizeof(missed_line[w]),
				 "MISSED: names, %s: %.1f%% of jitrace's samples have every "
				 "frame named, %.1f%% of perf's (target: never below perf); the "
				 "gap of %.1f points is %s the rounds' spread (jitrace %.1f to "
				 "%.1f%%, perf %.1f to %.1f%% over %d rounds)\n", work[w].name,
				 v[T_JITRACE][n / 2], v[T_PERF][n / 2],
				 v[T_PERF][n / 2] - v[T_JITRACE][n / 2],
				 v[T_JITRACE][n - 1] >= v[T_PERF][0] ? "within" : "beyond",
				 v[T_JITRACE][0], v[T_JITRACE][n - 1], v[T_PERF][0],
				 v[T_PERF][n - 1], n);
		bench_row(what, target, "%.1f", "%", v[T_JITRACE], n, missed ? "MISSED" : "met");
		snprintf(what, sizeof(what), "%s: perf, every frame named", work[w].name);
		bench_row(what, "", "%.1f", "%", v[T_PERF], n, "");
		snprintf(what, sizeof(what), "%s: jitrace minus perf, same round (points)",
			 work[w].name);
		bench_row(what, "", "%+.1f", "", d, n, "");
		n = 0;
		for (r = 0; r < rounds; r++)
			if (res[w][T_JITRACE][r].ok && res[w][T_PERF][r].ok)
				ns[n++] = res[w][T_PERF][r].named_cut;
		snprintf(what, sizeof(what), "%s: perf, every frame named up to a caller in no "
			 "mapping (where jitrace cuts)", work[w].name);
		bench_row(what, "", "%.1f", "%", ns, n, "");
		for (t = 0; t < NTRACERS; t++) {
			int k = 0;

			for (r = 0; r < rounds; r++)
				if (res[w][T_JITRACE][r].ok && res[w][T_PERF][r].ok)
					ns[k++] = res[w][t][r].astray;
			snprintf(what, sizeof(what), "%s: %s, %s", work[w].name, tracer_name[t],
				 t == T_JITRACE ? "stacks cut where they broke" :
				 "stacks with a caller in no mapping");
			bench_row(what, "", "%.1f", "%", ns, k, "");
		}
		for (t = 0; t < NTRACERS; t++) {
			int k = 0;

			for (r = 0; r < rounds; r++)
				if (res[w][T_JITRACE][r].ok && res[w][T_PERF][r].ok)
					ns[k++] = res[w][t][r].leaf;
			snprintf(what, sizeof(what), "%s: %s, leaf frame named", work[w].name,
				 tracer_name[t]);
			bench_row(what, "", "%.1f", "%", ns, k, "");
		}
		for (t = 0; t < NTRACERS; t++) {
			int k = 0;

			for (r = 0; r < rounds; r++)
				if (res[w][T_JITRACE][r].ok && res[w][T_PERF][r].ok)
					ns[k++] = (double)res[w][t][r].c.samples;
			snprintf(what, sizeof(what), "%s: samples counted, %s", work[w].name,
				 tracer_name[t]);
			bench_row(what, "", "%.0f", "", ns, k, "");
		}
	}
	printf("\n");
	for (w = 0; w < NWORK; w++)
		printf("%s", missed_line[w]);
	printf("\nThe leaf rows say whether the hot code itself is named. Below the JIT frames, "
	       "a stack runs through the runtime's own code: Debian's /usr/bin/mono-sgen "
	       "exports only its mono_* API and no debug symbols for it are installed here, so "
	       "almost every Mono stack holds a frame that neither tracer can name.\n");
	printf("\nWhere the first unnamed frame of an unnamed sample lies, over every round:\n\n");
	for (w = 0; w < NWORK; w++) {
		if (work[w].skipped) {
			printf("- %s: not measured: %s.\n", work[w].name, work[w].skipped);
			continue;
		}
		for (t = 0; t < NTRACERS; t++)
			for (none[t] = 0, r = 0; r < rounds; r++)
				none[t] += res[w][t][r].c.no_user;
		printf("- %s: jitrace: ", work[w].name);
		print_where(where[w][T_JITRACE]);
		printf("; perf: ");
		print_where(where[w][T_PERF]);
		printf(". Samples with no user frame, not in the share (all rounds): jitrace %"
		       PRIu64 ", perf %" PRIu64 ".\n", none[T_JITRACE], none[T_PERF]);
	}
	printf("\n");
}

/* Workload w under each tracer, jitrace first in even rounds, perf first in odd ones. */
static void run_round(struct result res[NWORK][NTRACERS][ROUNDS], int r, int w)
{
	int i;

	for (i = 0; i < NTRACERS; i++) {
		enum tracer t = (enum tracer)((i + r) % NTRACERS);
		struct result *x = &res[w][t][r];

		*x = measure(w, t);
		if (x->ok)
			fprintf(stderr, "bench_names: round %d: %s under %s: %.1f%% of %" PRIu64
				" samples named\n", r + 1, work[w].name, tracer_name[t], x->share,
				x->c.samples);
	}
}

int main(int argc, char **argv)
{
	static struct result res[NWORK][NTRACERS][ROUNDS];
	uint64_t t0 = jt_now_ns();
	int r, w, measured = 0;

	if (argc > 3) {
		fprintf(stderr, "usage: bench_names [JITRACE [JVMTI_AGENT]]\n");
		return 2;
	}
	if (!realpath(argc > 1 ? argv[1] : "build/jitrace", jitrace)) {
		fprintf(stderr, "bench_names: %s: %s\n", argc > 1 ? argv[1] : "build/jitrace",
			strerror(errno));
		return 1;
	}
	if (argc > 2) {
		if (!realpath(argv[2], agent))
			agent[0] = 0;
	} else {	/* beside jitrace, as make builds it */
		char guess[4200];

		snprintf(guess, sizeof(guess), "%s", jitrace);
		snprintf(strrchr(guess, '/') + 1, sizeof(guess) - (strrchr(guess, '/') + 1 - guess),
			 "libjitrace-jvmti.so");
		if (!realpath(guess, agent))
			agent[0] = 0;
	}
	if (!have(PERF " --version")) {
		printf("## Names: samples whose every frame is named, beside perf\n\n"
		       "MISSED: names beside perf: `perf` is not installed (Debian: linux-perf), "
		       "so there is nothing to stand beside.\n\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "/tmp/jt_bench_names.XXXXXX");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_names: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(run_out, sizeof(run_out), "%s/out", dir);
	snprintf(run_err, sizeof(run_err), "%s/err", dir);
	snprintf(log_path, sizeof(log_path), "%s/names.jtl", dir);
	snprintf(data_path, sizeof(data_path), "%s/perf.data", dir);
	setup_workloads();
	for (r = 0; r < ROUNDS; r++)
		for (w = 0; w < NWORK; w++)
			if (!work[w].skipped)
				run_round(res, r, w);
	print_section(res, ROUNDS);
	for (w = 0; w < NWORK; w++)
		measured += !work[w].skipped;
	cleanup();
	fprintf(stderr, "bench_names: %.0f s\n", (jt_now_ns() - t0) / 1e9);
	return measured ? 0 : 1;
}
