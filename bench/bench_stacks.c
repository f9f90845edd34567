// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks without frame pointers (issue 27): how many samples are whole, what it costs the
 * workload and what a sample takes on disk, for jitrace by frame pointers, jitrace
 * --unwind cfi, perf -g and perf --call-graph dwarf, side by side, at 999 Hz, on a C program
 * built -O2 -fomit-frame-pointer, Debian's python3 in a pure-Python loop and HotSpot without
 * -XX:+PreserveFramePointer; then the recorder's memory at -a with the unwind tables it
 * loads, beside what every mapped file's tables would take.
 * Usage: bench_stacks JITRACE NOFP [c|python|java|memory ...]   (the parts to run; all)
 */
#include <dirent.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "host/cfi.h"

#define HZ "999"
#define SECS 4		/* a workload's run */
#define ROUNDS 3	/* interleaved: each condition once a round */
#define MEM_SECS "8"	/* -a's recording, for its memory */
#define MAX_FRAMES 256
#define PYTHON "/usr/bin/python3.11"
#define PY_LOOP "tests/runtimes/python/loop.py"
#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define DEEP "bench/workloads/Deep.java"

/* A workload, and what makes one of its samples whole. */
struct workload {
	const char *name;
	const char *leaf;		/* the samples counted: this leaf */
	const char *chain[5];		/* frames above it, in order (NULL-ended) */
	bool adjacent;			/* each directly above the last */
	bool suffix;			/* a frame matches by its name's end (perf writes a Java
					 * method's return type before it) */
	char *argv[12];
};

enum cond { UNTRACED, JT_FP, JT_CFI, PERF_FP, PERF_DWARF, NR_CONDS };

static const char *const cond_name[NR_CONDS] = {
	"untraced", "jitrace (frame pointers)", "jitrace --unwind cfi", "perf -g",
	"perf --call-graph dwarf",
};

/* One run's figures. */
struct run {
	double rate;		/* workload rounds a second of its CPU time */
	double whole;		/* share of leaf samples that are whole */
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

/* Run argv, stdout into out; its status, and its and its children's CPU and peak RSS. */
static int run_timed(char *const argv[], const char *out, double *cpu, long *maxrss_kb)
{
	struct rusage ru = { 0 };
	int err = bench_run_ru(argv, out, "/dev/null", &ru);

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

	if (!w->suffix)
		return !strcmp(frame, name);
	return f >= n && !strcmp(frame + f - n, name) && (f == n || frame[f - n - 1] == ' ');
}

/* Whether stack (leaf first, n names) is one of w's leaf samples, and whole. */
static void judge(const struct workload *w, char **stack, int n, struct run *r)
{
	int at = 0, k;

	if (!n || !named(w, stack[0], w->leaf))
		return;
	r->leaf_samples++;
	for (k = 0; w->chain[k]; k++) {
		int next = at + 1;

		if (!w->adjacent)
			while (next < n && !named(w, stack[next], w->chain[k]))
				next++;
		if (next >= n || !named(w, stack[next], w->chain[k]))
			return;
		at = next;
	}
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
	char out[128], data[128], text[128];
	char *argv[32];
	double cpu, work_cpu, samples = 0, script_cpu = 0;
	int n = 0, i, err;

	snprintf(out, sizeof(out), "%s/out", tmp);
	snprintf(data, sizeof(data), "%s/data", tmp);
	snprintf(text, sizeof(text), "%s/text", tmp);
	unlink(data);
	memset(r, 0, sizeof(*r));
	if (c == JT_FP || c == JT_CFI) {
		char *pre[] = { (char *)jitrace, "record", "-F", HZ, "-f", "-o", data };

		for (i = 0; i < 7; i++)
			argv[n++] = pre[i];
		if (c == JT_CFI) {
			argv[n++] = "--unwind";
			argv[n++] = "cfi";
		}
		argv[n++] = "--";
	} else if (c == PERF_FP || c == PERF_DWARF) {
		char *pre[] = { "perf", "record", "-q", "-F", HZ, "-o", data };

		for (i = 0; i < 7; i++)
			argv[n++] = pre[i];
		argv[n++] = c == PERF_FP ? "-g" : "--call-graph=dwarf";
		argv[n++] = "--";
	}
	for (i = 0; w->argv[i]; i++)
		argv[n++] = w->argv[i];
	argv[n] = NULL;
	err = run_timed(argv, out, &cpu, NULL);
	/* by the workload's own CPU time: the machine is shared, its wall time is not its own */
	work_cpu = bench_find_number(out, "cpu_s ");
	r->rate = work_cpu > 0 ? bench_find_number(out, "rounds ") / work_cpu : -1;
	if (err || r->rate <= 0) {
		fprintf(stderr, "bench_stacks: %s under %s failed (status %d)\n", w->name,
			cond_name[c], err);
		return -1;
	}
	if (c == UNTRACED)
		return 0;
	if (c == JT_FP || c == JT_CFI) {
		char *fold[] = { (char *)jitrace, "flamegraph", "--folded", data, NULL };

		if (run_timed(fold, text, &script_cpu, NULL))
			return -1;
		samples = judge_folded(w, text, r);
		script_cpu = 0;	/* jitrace named the frames as it recorded */
	} else {
		char *script[] = { "perf", "script", "-i", data, "-F", "comm,pid,ip,sym", NULL };

		if (run_timed(script, text, &script_cpu, NULL))
			return -1;
		samples = judge_perf_script(w, text, r);
	}
	r->bytes = samples ? size_of(data) / samples : 0;
	r->whole = r->leaf_samples ? r->whole / r->leaf_samples : 0;
	r->tool_cpu = cpu - work_cpu + script_cpu;
	unlink(data);
	return 0;
}

static void stacks_table(struct workload *w, const char *jitrace)
{
	static struct run runs[NR_CONDS][ROUNDS];
	double v[ROUNDS], base, lost_med[NR_CONDS] = { 0 };
	int round, c, i;

	for (round = 0; round < ROUNDS; round++)
		for (c = 0; c < NR_CONDS; c++) {
			fprintf(stderr, "bench_stacks: %s, %s, round %d\n", w->name, cond_name[c],
				round + 1);
			if (run_one(w, c, jitrace, &runs[c][round])) {
				printf("MISSED: %s under %s did not run; its figures are absent.\n",
				       w->name, cond_name[c]);
				return;
			}
		}
	for (i = 0; i < ROUNDS; i++)
		v[i] = runs[UNTRACED][i].rate;
	bench_sort(v, ROUNDS);
	base = v[ROUNDS / 2];
	printf("\n%s, %d s a run, %d rounds (median, min to max). Untraced: %.1f rounds a CPU second.\n\n",
	       w->name, SECS, ROUNDS, base);
	printf("| tool | whole stacks | `%s` samples | throughput lost | tool CPU (s) | "
	       "bytes a sample on disk |\n", w->leaf);
	printf("| --- | --- | --- | --- | --- | --- |\n");
	for (c = JT_FP; c < NR_CONDS; c++) {
		double whole[ROUNDS], n[ROUNDS], lost[ROUNDS], cpu[ROUNDS], bytes[ROUNDS];

		for (i = 0; i < ROUNDS; i++) {
			whole[i] = 100 * runs[c][i].whole;
			n[i] = runs[c][i].leaf_samples;
			lost[i] = 100 * (1 - runs[c][i].rate / base);
			cpu[i] = runs[c][i].tool_cpu;
			bytes[i] = runs[c][i].bytes;
		}
		bench_sort(whole, ROUNDS);
		bench_sort(n, ROUNDS);
		bench_sort(lost, ROUNDS);
		lost_med[c] = lost[ROUNDS / 2];
		bench_sort(cpu, ROUNDS);
		bench_sort(bytes, ROUNDS);
		printf("| %s | **%.1f%%** (%.1f to %.1f) | %.0f | **%.1f%%** (%.1f to %.1f) | "
		       "%.2f (%.2f to %.2f) | **%.0f** (%.0f to %.0f) |\n", cond_name[c],
		       whole[1], whole[0], whole[2], n[1], lost[1], lost[0], lost[2], cpu[1],
		       cpu[0], cpu[2], bytes[1], bytes[0], bytes[2]);
	}
	/* the targets: within a point of the frame-pointer walk, no worse than perf -g */
	if (lost_med[JT_CFI] > lost_med[JT_FP] + 1 || lost_med[JT_CFI] > lost_med[PERF_FP])
		printf("MISSED: stacks, %s: --unwind cfi loses %.1f%% of throughput (target: within "
		       "1 point of frame pointers' %.1f%% and <= perf -g's %.1f%%).\n", w->name,
		       lost_med[JT_CFI], lost_med[JT_FP], lost_med[PERF_FP]);
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
	bench_sort(rss[0], ROUNDS);
	bench_sort(rss[1], ROUNDS);
	printf("\nRecorder memory at `-a -F %s` for %s s on this machine (%u processes; peak RSS, "
	       "median of %d, min to max); the ring buffer (64 MiB) is mapped in both:\n\n", HZ,
	       MEM_SECS, procs, ROUNDS);
	printf("| recorder | peak RSS (MiB) |\n| --- | --- |\n");
	printf("| `--unwind fp` | **%.1f** (%.1f to %.1f) |\n", rss[0][1], rss[0][0], rss[0][2]);
	printf("| `--unwind cfi` | **%.1f** (%.1f to %.1f) |\n", rss[1][1], rss[1][0], rss[1][2]);
	printf("\nEvery file mapped executable by any process here: %u files, whose `.eh_frame` "
	       "and `.eh_frame_hdr` hold %.1f MiB (what a copy of them took) and whose compact "
	       "tables hold %.1f MiB: what the recorder keeps if stacks pass through all of them "
	       "(a table is built at the first stack through the file, once per device and "
	       "inode).\n", files, bytes / 1048576.0, table / 1048576.0);
}

/* Whether part (c, python, java, memory) is to run: named in argv[3..], or none named. */
static bool wanted(int argc, char **argv, const char *part)
{
	int i;

	for (i = 3; i < argc; i++)
		if (!strcmp(argv[i], part))
			return true;
	return argc <= 3;
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
		.adjacent = true, .suffix = true,
		/* the perf map at exit, for perf script to name the frames: nothing while it runs */
		.argv = { JDK "/bin/java", "-XX:CompileCommand=quiet",
			  "-XX:CompileCommand=dontinline,Deep::*", "-XX:+UnlockDiagnosticVMOptions",
			  "-XX:+DumpPerfMapAtExit", "-cp", tmp, "Deep" },
	};

	if (argc < 3) {
		fprintf(stderr, "usage: bench_stacks JITRACE NOFP [c|python|java|memory ...]\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/jt_bench_stacks.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	snprintf(secs, sizeof(secs), "%d", SECS);
	c_prog.argv[0] = argv[2];
	c_prog.argv[1] = secs;
	python.argv[0] = PYTHON;
	python.argv[1] = PY_LOOP;
	python.argv[2] = secs;
	java.argv[8] = secs;
	printf("## Stacks without frame pointers\n\n");
	printf("Samples at %s Hz of a program built without frame pointers, each tool in turn "
	       "(bench/bench_stacks.c). A stack is whole when the leaf's callers are all there: "
	       "the C program's main > level1 > level2 > level3; python's Py_BytesMain (its "
	       "main is a jump to it); Java's main > level1 > level2 > level3 above burnA. Throughput (rounds a second of the workload's own CPU "
	       "time, which a sample's interrupt is charged to: the machine is shared) lost is "
	       "against the untraced runs; tool CPU is the recorder's (and, for perf, perf script's, which names perf's frames "
	       "after the fact), bytes a sample are the log's or perf.data's.\n", HZ);
	if (wanted(argc, argv, "c"))
		stacks_table(&c_prog, argv[1]);
	if (wanted(argc, argv, "python") && !access(PYTHON, X_OK))
		stacks_table(&python, argv[1]);
	if (wanted(argc, argv, "java") && !java_build()) {
		char cls[96];

		stacks_table(&java, argv[1]);
		snprintf(cls, sizeof(cls), "%s/Deep.class", tmp);
		unlink(cls);
	}
	if (wanted(argc, argv, "memory"))
		memory_table(argv[1]);
	rmdir(tmp);
	return 0;
}
