// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks without frame pointers (issue 27): how many samples are whole, what it costs the
 * workload and what a sample takes on disk, for jitrace by frame pointers, jitrace
 * --unwind cfi, perf -g and perf --call-graph dwarf, side by side, at 999 Hz, on a C program
 * built -O2 -fomit-frame-pointer, Debian's python3 in a pure-Python loop, HotSpot without
 * -XX:+PreserveFramePointer, Mono and Node (bench_sampling's work.js); then the recorder's
 * memory at -a with the unwind tables it loads, beside what every mapped file's tables
 * would take.
 * As in bench_sampling, the workload runs pinned to one CPU at nice -20 in its own
 * autogroup and the tools' user space on the other, so that what is measured is what a
 * sample costs the sampled CPU, not a share of it taken by the recorder or other work.
 * Usage: bench_stacks JITRACE NOFP [c|python|java|mono|node|copy|memory ...]   (the parts;
 * all but copy); BENCH_STACKS_ROUNDS=N in the environment: N rounds of the stacks tables
 * (at most MAX_ROUNDS) instead of ROUNDS; BENCH_STACKS_HZ=F: sample the stacks tables at F Hz
 * instead of 999 (a higher rate makes a sample's cost stand out of the workload's noise).
 */
#include <dirent.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "host/cfi.h"

#define HZ "999"	/* the rate; BENCH_STACKS_HZ for another */
#define SECS 4		/* a workload's run */
#define ROUNDS 5	/* interleaved, in an order rotated every round */
#define MAX_ROUNDS 31	/* BENCH_STACKS_ROUNDS: more rounds of the stacks tables */
#define WORK_CPU "1"	/* the workload's CPU */
#define TOOL_CPU 0	/* the tools' user space (and what else runs there) */
#define MEM_SECS "8"	/* -a's recording, for its memory */
#define MAX_FRAMES 256

static const char *hz = HZ;	/* the sampling rate of the stacks tables */
#define PYTHON "/usr/bin/python3.11"
#define PY_LOOP "tests/runtimes/python/loop.py"
#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define DEEP "bench/workloads/Deep.java"
#define MONO "/usr/bin/mono"
#define MCS "/usr/bin/mcs"
#define DEEP_CS "bench/workloads/Deep.cs"
#define NODE_JS "bench/workloads/work.js"

/* How a frame's name is matched against a workload's. */
enum match {
	EXACT,
	SUFFIX,		/* by the name's end (perf writes a Java method's return type first) */
	JS,		/* V8's perf map: "JS:" and a tier mark (*^~+) before the name, a space
			 * and the script's place after it; a native frame by its name up to its
			 * parameters (jitrace gives them, perf may not) */
};

/* A workload, and what makes one of its samples whole. */
struct workload {
	const char *name;
	const char *leaf;		/* the samples counted: this leaf */
	const char *leaf_in;		/* or: the samples with a frame whose name holds this,
					 * the chain sought from the innermost of those on */
	const char *chain[5];		/* frames above it, in order (NULL-ended) */
	int part;			/* >0: also the share reaching chain[part - 1] */
	bool adjacent;			/* each directly above the last */
	enum match match;
	char *argv[16];
};

/* The conditions; the COPY_* ones (--unwind cfi with a smaller copy) only in part copy. */
enum cond { UNTRACED, JT_FP, JT_CFI, PERF_FP, PERF_DWARF, NR_MAIN, COPY_512 = NR_MAIN,
	    COPY_1K, COPY_2K, COPY_4K, NR_CONDS };

static const char *const cond_name[NR_CONDS] = {
	"untraced", "jitrace (frame pointers)", "jitrace --unwind cfi", "perf -g",
	"perf --call-graph dwarf", "jitrace --stack-copy 512", "jitrace --stack-copy 1024",
	"jitrace --stack-copy 2048", "jitrace --stack-copy 4096",
};

static const char *const copy_bytes[NR_CONDS] = {
	[COPY_512] = "512", [COPY_1K] = "1024", [COPY_2K] = "2048", [COPY_4K] = "4096",
};

/* One run's figures. */
struct run {
	double rate;		/* workload rounds a second of its CPU time */
	double whole;		/* share of leaf samples that are whole */
	double part;		/* share of leaf samples reaching the chain's part */
	double leaf_samples;
	double bytes;		/* the tool's output, bytes a sample */
	double tool_cpu;	/* the tool's CPU (recording and, for perf, perf script), s */
};

static char tmp[64];

static double cpu_of(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 + ru->ru_stime.tv_sec +
	       ru->ru_stime.tv_usec / 1e6;
}

/*
 * Run argv on the tools' CPU, boosted, stdout into out; its status, and its and its
 * children's CPU and peak RSS.
 */
static int run_timed(char *const argv[], const char *out, double *cpu, long *maxrss_kb)
{
	struct rusage ru = { 0 };
	int err = bench_run_on(argv, out, "/dev/null", &ru, TOOL_CPU);

	*cpu = cpu_of(&ru);
	if (maxrss_kb)
		*maxrss_kb = ru.ru_maxrss;
	return err;
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

/* Whether frame is called name, as w matches names. */
static bool named(const struct workload *w, const char *frame, const char *name)
{
	size_t f = strlen(frame), n = strlen(name);

	switch (w->match) {
	case SUFFIX:
		return f >= n && !strcmp(frame + f - n, name) &&
		       (f == n || frame[f - n - 1] == ' ');
	case JS:
		if (strncmp(frame, "JS:", 3))
			return !strncmp(frame, name, n) && (!frame[n] || frame[n] == '(');
		frame += 3;
		frame += strchr("*^~+", *frame) && *frame;
		return !strncmp(frame, name, n) && frame[n] == ' ';
	default:
		return !strcmp(frame, name);
	}
}

/* Whether stack (leaf first, n names) is one of w's leaf samples, and whole. */
static void judge(const struct workload *w, char **stack, int n, struct run *r)
{
	int at = 0, k;

	if (w->leaf_in)
		while (at < n && !strstr(stack[at], w->leaf_in))
			at++;
	else if (n && !named(w, stack[0], w->leaf))
		return;
	if (at >= n)
		return;
	r->leaf_samples++;
	if (w->leaf_in)
		at--;	/* that frame may be the chain's first (run, reading the clock) */
	for (k = 0; w->chain[k]; k++) {
		int next = at + 1;

		if (k == w->part && k)
			r->part++;
		if (!w->adjacent)
			while (next < n && !named(w, stack[next], w->chain[k]))
				next++;
		if (next >= n || !named(w, stack[next], w->chain[k]))
			return;
		at = next;
	}
	if (k == w->part)
		r->part++;
	r->whole++;
}

/* jitrace's folded stacks (root first, ';' between, a count last) into r; the samples. */
static double judge_folded(const struct workload *w, const char *path, struct run *r)
{
	static char line[1 << 16];
	char *frames[MAX_FRAMES], *stack[MAX_FRAMES], *sp, *save;
	double samples = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *count = strrchr(line, ' ');
		long c;
		int n = 0, i;

		if (!count)
			continue;
		*count++ = 0;
		c = strtol(count, NULL, 10);
		samples += c;
		for (sp = strtok_r(line, ";", &save); sp && n < MAX_FRAMES;
		     sp = strtok_r(NULL, ";", &save))
			frames[n++] = sp;
		for (i = 0; i < n; i++)
			stack[i] = frames[n - 1 - i];
		while (c-- > 0)
			judge(w, stack, n, r);
	}
	fclose(f);
	return samples;
}

/* perf script -F comm,pid,ip,sym: a header line, a frame a line (tab, ip, symbol), a blank. */
static double judge_perf_script(const struct workload *w, const char *path, struct run *r)
{
	static char line[4096];
	char *stack[MAX_FRAMES];
	double samples = 0;
	int n = 0, i;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || line[0] == '\n') {
			if (n) {
				samples++;
				judge(w, stack, n, r);
			}
			for (i = 0; i < n; i++)
				free(stack[i]);
			n = 0;
			if (eof)
				break;
			continue;
		}
		if (line[0] == '\t' && n < MAX_FRAMES) {
			char *p = line + strspn(line, "\t "), *sym;

			p += strcspn(p, " ");	/* the ip */
			sym = p + strspn(p, " ");
			sym[strcspn(sym, "\n")] = 0;
			stack[n++] = strdup(sym);
		}
	}
	fclose(f);
	return samples;
}

/* One run of w under condition c. Returns 0, or -1 if it failed (said why). */
static int run_one(const struct workload *w, enum cond c, const char *jitrace, struct run *r)
{
	char out[128], data[128], text[128], map[64];
	char *argv[40];
	double cpu, work_cpu, samples = 0, script_cpu = 0, pid;
	int n = 0, i, err = 0;

	snprintf(out, sizeof(out), "%s/out", tmp);
	snprintf(data, sizeof(data), "%s/data", tmp);
	snprintf(text, sizeof(text), "%s/text", tmp);
	unlink(data);
	memset(r, 0, sizeof(*r));
	if (c != UNTRACED && c != PERF_FP && c != PERF_DWARF) {
		char *pre[] = { (char *)jitrace, "record", "-F", (char *)hz, "-f", "-o", data };

		for (i = 0; i < 7; i++)
			argv[n++] = pre[i];
		if (c == JT_CFI) {
			argv[n++] = "--unwind";
			argv[n++] = "cfi";
		} else if (copy_bytes[c]) {
			argv[n++] = "--stack-copy";
			argv[n++] = (char *)copy_bytes[c];
		}
		argv[n++] = "--";
	} else if (c == PERF_FP || c == PERF_DWARF) {
		char *pre[] = { "perf", "record", "-q", "-F", (char *)hz, "-o", data };

		for (i = 0; i < 7; i++)
			argv[n++] = pre[i];
		argv[n++] = c == PERF_FP ? "-g" : "--call-graph=dwarf";
		argv[n++] = "--";
	}
	/* the tool runs on TOOL_CPU; the workload moves to its own CPU as it starts */
	argv[n++] = "taskset";
	argv[n++] = "-c";
	argv[n++] = WORK_CPU;
	for (i = 0; w->argv[i]; i++)
		argv[n++] = w->argv[i];
	argv[n] = NULL;
	err = run_timed(argv, out, &cpu, NULL);
	/* by the workload's own CPU time: the machine is shared, its wall time is not its own */
	work_cpu = bench_find_number(out, "cpu_s ");
	r->rate = work_cpu > 0 ? bench_find_number(out, "rounds ") / work_cpu : -1;
	/* a JIT's perf map stays after its process: removed once perf script has read it */
	pid = bench_find_number(out, "pid ");
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	if (err || r->rate <= 0) {
		fprintf(stderr, "bench_stacks: %s under %s failed (status %d)\n", w->name,
			cond_name[c], err);
		err = -1;
		goto out;
	}
	if (c == UNTRACED)
		goto out;
	if (c == PERF_FP || c == PERF_DWARF) {
		char *script[] = { "perf", "script", "-i", data, "-F", "comm,pid,ip,sym", NULL };

		err = run_timed(script, text, &script_cpu, NULL);
		if (!err)
			samples = judge_perf_script(w, text, r);
	} else {
		char *fold[] = { (char *)jitrace, "flamegraph", "--folded", data, NULL };

		err = run_timed(fold, text, &script_cpu, NULL);
		if (!err)
			samples = judge_folded(w, text, r);
		script_cpu = 0;	/* jitrace named the frames as it recorded */
	}
	if (err) {
		fprintf(stderr, "bench_stacks: reading %s's data of %s failed\n", cond_name[c],
			w->name);
		err = -1;
		goto out;
	}
	r->bytes = samples ? size_of(data) / samples : 0;
	r->whole = r->leaf_samples ? r->whole / r->leaf_samples : 0;
	r->part = r->leaf_samples ? r->part / r->leaf_samples : 0;
	r->tool_cpu = cpu - work_cpu + script_cpu;
out:
	if (pid > 0)
		unlink(map);
	unlink(data);
	return err;
}

/* The 1-minute load average: the other work on this shared machine. */
static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fscanf(f, "%lf", &l) != 1)
		l = -1;
	if (f)
		fclose(f);
	return l;
}

/* Median, min and max of v (n values, sorted here) as "**M** (L to H)" with fmt. */
static const char *mmm(char *buf, size_t size, const char *fmt, double *v, int n)
{
	char f[64];

	bench_sort(v, n);
	snprintf(f, sizeof(f), "**%s** (%s to %s)", fmt, fmt, fmt);
	snprintf(buf, size, f, v[n / 2], v[0], v[n - 1]);
	return buf;
}

/*
 * w under conds (UNTRACED first), `rounds` rounds, each condition once a round in an order
 * rotated every round; a table of the traced conditions against the untraced runs.
 */
static int rounds = ROUNDS;

static void stacks_table(struct workload *w, const char *jitrace, const enum cond *conds,
			 int nconds)
{
	static struct run runs[NR_CONDS][MAX_ROUNDS];
	double v[MAX_ROUNDS], base, lost_med[NR_CONDS] = { 0 }, load0 = load1();
	double over[NR_CONDS][MAX_ROUNDS], d_perf[MAX_ROUNDS];
	char a[64], b[64], l[64], o[64], d[64], e[64];
	int round, k, i;

	for (round = 0; round < rounds; round++)
		for (k = 0; k < nconds; k++) {
			enum cond c = conds[(k + round) % nconds];

			fprintf(stderr, "bench_stacks: %s, %s, round %d\n", w->name, cond_name[c],
				round + 1);
			if (run_one(w, c, jitrace, &runs[c][round])) {
				printf("MISSED: %s under %s did not run; its figures are absent.\n",
				       w->name, cond_name[c]);
				return;
			}
		}
	for (i = 0; i < rounds; i++)
		v[i] = runs[UNTRACED][i].rate;
	bench_sort(v, rounds);
	base = v[rounds / 2];
	printf("\n%s, %d s a run, %d rounds (median, min to max; load average %.1f at the start, "
	       "%.1f at the end). Untraced: %.1f rounds a CPU second (%.1f to %.1f).\n\n",
	       w->name, SECS, rounds, load0, load1(), base, v[0], v[rounds - 1]);
	printf("| tool | whole stacks |%s%s%s `%s` samples | throughput lost | over frame "
	       "pointers, per round (points) | tool CPU (s) | bytes a sample on disk |\n",
	       w->part ? " reaching `" : "", w->part ? w->chain[w->part - 1] : "",
	       w->part ? "` |" : "", w->leaf_in ? w->leaf_in : w->leaf);
	printf("| --- | --- |%s --- | --- | --- | --- | --- |\n", w->part ? " --- |" : "");
	for (k = 1; k < nconds; k++) {
		double whole[MAX_ROUNDS], part[MAX_ROUNDS], n[MAX_ROUNDS], lost[MAX_ROUNDS], cpu[MAX_ROUNDS],
			bytes[MAX_ROUNDS];
		enum cond c = conds[k];

		for (i = 0; i < rounds; i++) {
			whole[i] = 100 * runs[c][i].whole;
			part[i] = 100 * runs[c][i].part;
			n[i] = runs[c][i].leaf_samples;
			lost[i] = 100 * (1 - runs[c][i].rate / base);
			/* a round's two runs follow each other: the load's drift mostly cancels */
			over[c][i] = 100 * (runs[JT_FP][i].rate - runs[c][i].rate) / base;
			cpu[i] = runs[c][i].tool_cpu;
			bytes[i] = runs[c][i].bytes;
		}
		bench_sort(n, rounds);
		mmm(l, sizeof(l), "%.1f%%", lost, rounds);
		lost_med[c] = lost[rounds / 2];
		memcpy(v, over[c], sizeof(v));
		printf("| %s | %s |%s%s%s %.0f | %s | %s | %s | %s |\n", cond_name[c],
		       mmm(a, sizeof(a), "%.1f%%", whole, rounds), w->part ? " " : "",
		       w->part ? mmm(b, sizeof(b), "%.1f%%", part, rounds) : "",
		       w->part ? " |" : "", n[rounds / 2], l,
		       c == JT_FP ? "" : mmm(o, sizeof(o), "%+.1f", v, rounds),
		       mmm(d, sizeof(d), "%.2f", cpu, rounds),
		       mmm(e, sizeof(e), "%.0f", bytes, rounds));
	}
	if (nconds != NR_MAIN)
		return;
	/* the targets: within a point of the frame-pointer walk, no worse than perf -g */
	for (i = 0; i < rounds; i++)
		d_perf[i] = over[JT_CFI][i] - over[PERF_FP][i];
	bench_sort(over[JT_CFI], rounds);
	printf("\nPer round, --unwind cfi's loss over perf -g's: %s points (each:",
	       mmm(o, sizeof(o), "%+.1f", d_perf, rounds));
	for (i = 0; i < rounds; i++)
		printf(" %+.2f", d_perf[i]);
	printf(").\n");
	if (lost_med[JT_CFI] > lost_med[JT_FP] + 1 || lost_med[JT_CFI] > lost_med[PERF_FP])
		printf("MISSED: stacks, %s: --unwind cfi loses %.1f%% of throughput (target: within "
		       "1 point of frame pointers' %.1f%% and <= perf -g's %.1f%%); per round, "
		       "%+.1f points over frame pointers (%+.1f to %+.1f) and %+.1f over perf -g "
		       "(%+.1f to %+.1f): %s the rounds' spread.\n", w->name,
		       lost_med[JT_CFI], lost_med[JT_FP], lost_med[PERF_FP],
		       over[JT_CFI][rounds / 2], over[JT_CFI][0], over[JT_CFI][rounds - 1],
		       d_perf[rounds / 2], d_perf[0], d_perf[rounds - 1],
		       over[JT_CFI][0] <= 1 && d_perf[0] <= 0 ? "within" : "beyond");
}

/*
 * Bytes of .eh_frame and .eh_frame_hdr in the ELF file at path (0: none, not ELF), and those
 * its compact unwind table holds into *table.
 */
static uint64_t cfi_bytes(const char *path, uint64_t *table)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct jt_cfi_stats st;
	uint64_t total = 0;
	Elf_Scn *scn = NULL;
	struct jt_cfi *c;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return 0;
	c = jt_cfi__load(fd, &err);
	if (c) {
		jt_cfi__stats(c, &st);
		*table += st.bytes;
		jt_cfi__free(c);
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr")))
				total += sh.sh_size;
		}
	elf_end(elf);
	close(fd);
	return total;
}

/*
 * Every file mapped executable by any process, once (by device and inode): how many, their
 * CFI sections' bytes, and the bytes of the tables the recorder builds of them when a stack
 * passes through them.
 */
static void all_mapped_cfi(unsigned int *files, uint64_t *bytes, uint64_t *table)
{
	static uint64_t seen[8192][2];
	unsigned int nr = 0;
	struct dirent *d;
	DIR *proc = opendir("/proc");

	*files = 0;
	*bytes = 0;
	*table = 0;
	elf_version(EV_CURRENT);
	while (proc && (d = readdir(proc))) {
		char path[800], line[1024], file[512];
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", d->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long ino;
			unsigned int maj, min, i;
			char perms[8];

			if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %511s", perms, &maj, &min, &ino,
				   file) != 5 || perms[2] != 'x' || !ino || file[0] != '/')
				continue;
			for (i = 0; i < nr && !(seen[i][0] == ((uint64_t)maj << 20 | min) &&
						seen[i][1] == ino); i++)
				;
			if (i < nr || nr == 8192)
				continue;
			seen[nr][0] = (uint64_t)maj << 20 | min;
			seen[nr++][1] = ino;
			snprintf(path, sizeof(path), "/proc/%s/root%s", d->d_name, file);
			*bytes += cfi_bytes(path, table);
		}
		if (f)
			fclose(f);
	}
	if (proc)
		closedir(proc);
	*files = nr;
}

static void memory_table(const char *jitrace)
{
	double rss[2][ROUNDS];
	char line[64];
	unsigned int files, procs = 0;
	uint64_t bytes, table;
	struct dirent *d;
	DIR *proc;
	int round, c;

	for (round = 0; round < ROUNDS; round++)
		for (c = 0; c < 2; c++) {
			char *argv[] = { (char *)jitrace, "record", "-a", "-F", HZ, "-d", MEM_SECS,
					 "-f", "-o", NULL, "--unwind",
					 c ? "cfi" : "fp", NULL };
			char data[128], out[128];
			double cpu;
			long kb = 0;

			snprintf(data, sizeof(data), "%s/data", tmp);
			snprintf(out, sizeof(out), "%s/out", tmp);
			argv[9] = data;
			fprintf(stderr, "bench_stacks: -a memory, %s, round %d\n", argv[11],
				round + 1);
			if (run_timed(argv, out, &cpu, &kb)) {
				printf("MISSED: jitrace record -a did not run; no memory figures.\n");
				return;
			}
			rss[c][round] = kb / 1024.0;
			unlink(data);
		}
	all_mapped_cfi(&files, &bytes, &table);
	proc = opendir("/proc");
	while (proc && (d = readdir(proc)))
		procs += d->d_name[0] >= '1' && d->d_name[0] <= '9';
	if (proc)
		closedir(proc);
	printf("\nRecorder memory at `-a -F %s` for %s s on this machine (%u processes; peak RSS, "
	       "median of %d, min to max); the ring buffer (64 MiB) is mapped in both:\n\n", HZ,
	       MEM_SECS, procs, ROUNDS);
	printf("| recorder | peak RSS (MiB) |\n| --- | --- |\n");
	printf("| `--unwind fp` | %s |\n", mmm(line, sizeof(line), "%.1f", rss[0], ROUNDS));
	printf("| `--unwind cfi` | %s |\n", mmm(line, sizeof(line), "%.1f", rss[1], ROUNDS));
	printf("\nEvery file mapped executable by any process here: %u files, whose `.eh_frame` "
	       "and `.eh_frame_hdr` hold %.1f MiB (what a copy of them took) and whose compact "
	       "tables hold %.1f MiB: what the recorder keeps if stacks pass through all of them "
	       "(a table is built at the first stack through the file, once per device and "
	       "inode).\n", files, bytes / 1048576.0, table / 1048576.0);
}

/*
 * Whether part (c, python, java, mono, node, copy, memory) is to run: named in argv[3..], or none
 * named and it is not copy (a diagnosis, 35 runs: only when asked for).
 */
static bool wanted(int argc, char **argv, const char *part)
{
	int i;

	for (i = 3; i < argc; i++)
		if (!strcmp(argv[i], part))
			return true;
	return argc <= 3 && strcmp(part, "copy");
}

/* Deep.java compiled into tmp: 0, or -1 (said why). */
static int java_build(void)
{
	char *javac[] = { JDK "/bin/javac", "-d", tmp, DEEP, NULL };
	double cpu;

	if (access(JDK "/bin/java", X_OK) || run_timed(javac, "/dev/null", &cpu, NULL)) {
		printf("MISSED: no %s or its javac of %s failed; no Java figures.\n", JDK, DEEP);
		return -1;
	}
	return 0;
}

/* Deep.cs compiled into exe: 0, or -1 (said why). */
static int mono_build(const char *exe)
{
	char out[128], *mcs[] = { MCS, "-optimize+", out, DEEP_CS, NULL };
	double cpu;

	snprintf(out, sizeof(out), "-out:%s", exe);
	if (access(MONO, X_OK) || access(MCS, X_OK) || run_timed(mcs, "/dev/null", &cpu, NULL)) {
		printf("MISSED: no %s or its %s of %s failed; no Mono figures.\n", MONO, MCS,
		       DEEP_CS);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char secs[16];
	struct workload c_prog = {
		.name = "C program, -O2 -fomit-frame-pointer (tests/native/nofp.c)",
		.leaf = "leaf_work", .chain = { "level3", "level2", "level1", "main" },
		.adjacent = true,
	}, python = {
		.name = "Debian's python3.11, a pure-Python loop",
		.leaf = "_PyEval_EvalFrameDefault", .chain = { "Py_BytesMain" },
	}, java = {
		.name = "HotSpot 17 without -XX:+PreserveFramePointer, USDT names "
			"(bench/workloads/Deep.java)",
		.leaf = "Deep.burnA(long)",
		.chain = { "Deep.level3(long)", "Deep.level2(long)", "Deep.level1(long)",
			   "Deep.main(java.lang.String[])" },
		.adjacent = true, .match = SUFFIX,
		/* the perf map at exit, for perf script to name the frames: nothing while it runs */
		.argv = { JDK "/bin/java", "-XX:CompileCommand=quiet",
			  "-XX:CompileCommand=dontinline,Deep::*", "-XX:+UnlockDiagnosticVMOptions",
			  "-XX:+DumpPerfMapAtExit", "-cp", tmp, "Deep" },
	}, mono = {
		.name = "Mono 6.8 --jitmap, no MONO_DEBUG (bench/workloads/Deep.cs)",
		.leaf = "Deep:BurnA (long)",
		.chain = { "Deep:Level3 (long)", "Deep:Level2 (long)", "Deep:Level1 (long)",
			   "Deep:Main (string[])" },
		.adjacent = true,
		/* the perf map names the frames for jitrace and, after the run, perf script */
		.argv = { MONO, "--jitmap", NULL, NULL },
	}, node = {
		.name = "Node, `node --perf-basic-prof` (bench/workloads/work.js, bench_sampling's "
			"workload: 24 nested calls above the work)",
		/* node's main jumps to node::Start: the outermost native frame of its own */
		.leaf_in = "/work.js:", .chain = { "run", "node::Start" }, .part = 1,
		.match = JS,
		.argv = { "node", "--perf-basic-prof", "--logfile=/dev/null", NODE_JS, "--for" },
	};
	static const enum cond main_conds[] = { UNTRACED, JT_FP, JT_CFI, PERF_FP, PERF_DWARF };
	static const enum cond copy_conds[] = { UNTRACED, JT_FP,   COPY_512, COPY_1K,
						COPY_2K,  COPY_4K, JT_CFI };
	char deep_exe[96], path[128];

	if (argc < 3) {
		fprintf(stderr, "usage: bench_stacks JITRACE NOFP "
				"[c|python|java|mono|node|copy|memory ...]\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/jt_bench_stacks.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	if (getenv("BENCH_STACKS_HZ"))
		hz = getenv("BENCH_STACKS_HZ");
	if (getenv("BENCH_STACKS_ROUNDS")) {
		rounds = atoi(getenv("BENCH_STACKS_ROUNDS"));
		rounds = rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
	}
	snprintf(secs, sizeof(secs), "%d", SECS);
	c_prog.argv[0] = argv[2];
	c_prog.argv[1] = secs;
	python.argv[0] = PYTHON;
	python.argv[1] = PY_LOOP;
	python.argv[2] = secs;
	java.argv[8] = secs;
	node.argv[5] = secs;
	snprintf(deep_exe, sizeof(deep_exe), "%s/Deep.exe", tmp);
	mono.argv[2] = deep_exe;
	mono.argv[3] = secs;
	printf("## Stacks without frame pointers\n\n");
	printf("Samples at %s Hz of a program built without frame pointers, each tool in turn "
	       "(bench/bench_stacks.c). A stack is whole when the leaf's callers are all there: "
	       "the C program's main > level1 > level2 > level3; python's Py_BytesMain (its "
	       "main is a jump to it); Java's main > level1 > level2 > level3 above burnA; "
	       "Mono's Main > Level1 > Level2 > Level3 above BurnA; "
	       "Node's samples in the script (a frame of work.js) whole when they reach its "
	       "outermost named JS frame (run) and node::Start (node's main is a jump to it). "
	       "Throughput (rounds a second of the workload's main thread's CPU "
	       "time, which a sample's interrupt is charged to: the machine is shared) lost is "
	       "against the untraced runs; tool CPU is the recorder's (and, for perf, perf "
	       "script's, which names perf's frames after the fact), bytes a sample are the "
	       "log's or perf.data's. Each round runs every condition once, in an order rotated "
	       "every round; the workload runs pinned to CPU %s (`taskset -c %s`) at nice -20 in "
	       "its own autogroup, the tools' user space on CPU %d, as in \"Sampling "
	       "overhead\".\n", hz, WORK_CPU, WORK_CPU, TOOL_CPU);
	if (wanted(argc, argv, "c"))
		stacks_table(&c_prog, argv[1], main_conds, NR_MAIN);
	if (wanted(argc, argv, "python") && !access(PYTHON, X_OK))
		stacks_table(&python, argv[1], main_conds, NR_MAIN);
	if (wanted(argc, argv, "java") && !java_build()) {
		char cls[96];

		stacks_table(&java, argv[1], main_conds, NR_MAIN);
		snprintf(cls, sizeof(cls), "%s/Deep.class", tmp);
		unlink(cls);
	}
	if (wanted(argc, argv, "mono") && !mono_build(deep_exe)) {
		stacks_table(&mono, argv[1], main_conds, NR_MAIN);
		unlink(deep_exe);
	}
	if (wanted(argc, argv, "node"))
		stacks_table(&node, argv[1], main_conds, NR_MAIN);
	if (wanted(argc, argv, "copy")) {
		printf("\nThe copy's size (`--stack-copy BYTES`, --unwind cfi; 8192 is the "
		       "default) on Node:\n");
		stacks_table(&node, argv[1], copy_conds,
			     (int)(sizeof(copy_conds) / sizeof(*copy_conds)));
	}
	if (wanted(argc, argv, "memory"))
		memory_table(argv[1]);
	/* the last run's output and text stay in tmp: the directory goes only once they do */
	snprintf(path, sizeof(path), "%s/out", tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/text", tmp);
	unlink(path);
	if (rmdir(tmp))
		fprintf(stderr, "bench_stacks: %s left behind: %s\n", tmp, strerror(errno));
	return 0;
}
