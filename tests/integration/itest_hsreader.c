// SPDX-License-Identifier: GPL-2.0
/*
 * The HotSpot reader (user/host/hotspot.h) on a real JVM started with no flags (openjdk-17,
 * then Temurin 25 where installed; tests/runtimes/java/Asleep.java): it finds the
 * vmStructs; every compiled method that `jcmd Compiler.codelist` lists is found at its
 * addresses with its name and a plausible frame size; and two sleeping threads' stacks,
 * copied from /proc/PID/mem at the sp their syscall file shows (as a sample's copy is
 * taken, without ptrace), are walked: native frames by CFI (host/unwind.c), then HotSpot's
 * frames by the reader alone, interpreted ones named by their Method and compiled ones
 * stepped by their frame sizes, then past the call stub by rbp into libjvm.so. Needs root.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "host/cfi.h"
#include "host/hotspot.h"
#include "host/procfs.h"
#include "host/unwind.h"
#include "jt_javaname.h"
#include "lib.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64"	/* JDK 23 changed CodeBlob's layout */
#define COPY_MAX (256u << 10)	/* the most of a stack copied, a page at a time */
#define MAX_FRAMES 64
#define TICK "Asleep.tick(int, long)"

static const char *jdk;		/* the group's */
static char java[128], jcmd[128];
static pid_t jvm;		/* Asleep, running for the whole group */
static char *burn_flag;		/* while it exists, Asleep's burner works */

/* Asleep under the group's JDK (compiled by JDK 17's javac: class files both run). */
static int group_setup(void **state)
{
	char *javac[] = { JDK17 "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Asleep.java", NULL };
	char *argv[] = { java, "-cp", (char *)it_dir(), "Asleep", "120", NULL, NULL };
	char *out = it_path_dup("asleep.out");

	(void)state;
	jvm = 0;
	free(burn_flag);
	burn_flag = it_path_dup("burn");
	argv[5] = burn_flag;
	snprintf(java, sizeof(java), "%s/bin/java", jdk);
	snprintf(jcmd, sizeof(jcmd), "%s/bin/jcmd", jdk);
	if (access(java, X_OK) || access(JDK17 "/bin/javac", X_OK)) {
		free(out);
		return 0;	/* each test skips, saying why */
	}
	if (it_run(javac, NULL, NULL)) {
		fprintf(stderr, "itest_hsreader: javac failed\n");
		free(out);
		return -1;
	}
	jvm = it_spawn(argv, out, NULL);
	/* ready: warmed up, tick compiled, both threads on their way to sleep */
	if (!it_wait_for_text(out, "asleep ready", 60000)) {
		fprintf(stderr, "itest_hsreader: Asleep never got ready\n");
		free(out);
		return -1;
	}
	free(out);
	sleep(1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (jvm > 0) {
		kill(jvm, SIGKILL);
		it_wait(jvm);
		jvm = 0;
	}
	if (burn_flag)
		unlink(burn_flag);
	free(burn_flag);
	burn_flag = NULL;
	return 0;
}

static struct jt_hotspot *open_jvm(void)
{
	struct jt_hotspot *hs;
	char why[256];
	int err;

	if (!jvm) {
		print_message("skipped: %s is not installed\n", java);
		skip();
	}
	hs = jt_hotspot__open_pid("/proc", jvm, why, sizeof(why), &err);
	if (!hs)
		fail_msg("pid %d: %s (%d)", jvm, why, err);
	return hs;
}

static void reader_finds_the_vmstructs_of_a_jvm_started_without_flags(void **state)
{
	struct jt_hotspot *hs = open_jvm();

	(void)state;
	/* x86-64's layout, derived from the constants the JVM exports next to it */
	assert_int_equal(jt_hotspot__interp_method_slot(hs), -3);
	jt_hotspot__free(hs);
}

/*
 * Each line of `jcmd PID Compiler.codelist`: "ID LEVEL STATE Class.name(SIG) [0xBLOB,
 * 0xBEGIN - 0xEND]", found by the reader at BEGIN as that blob, those bounds and that name.
 */
static void compiled_methods_match_what_the_jvm_lists(void **state)
{
	struct jt_hotspot *hs = open_jvm();
	char *argv[] = { jcmd, NULL, "Compiler.codelist", NULL };
	char pid[16], *out = it_path_dup("codelist.out"), *text, *line, *save;
	unsigned int lines = 0, matched = 0, ticks = 0, max_frame = 0, frameless = 0;
	unsigned int with_epilogues = 0;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", jvm);
	argv[1] = pid;
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long blob, begin, end;
		char full[256], sig[256], name[512], got[512], *dot;
		struct jt_hs_code c;
		int id, level, st;

		if (sscanf(line, "%d %d %d %255[^(]%255s [0x%llx, 0x%llx - 0x%llx]", &id, &level,
			   &st, full, sig, &blob, &begin, &end) != 8)
			continue;
		/* "pkg.Class.method" "(IJ)V" named as the agent and USDT records name it */
		dot = strrchr(full, '.');
		assert_non_null(dot);
		jt_java_name(name, sizeof(name), full, dot - full, dot + 1, strlen(dot + 1), sig,
			     strlen(sig));
		lines++;
		if (jt_hotspot__code(hs, begin, &c)) {
			print_message("not found: %s\n", line);
			continue;
		}
		got[0] = 0;
		if (c.method && jt_hotspot__method_name(hs, c.method, got, sizeof(got)) < 0)
			got[0] = 0;
		if (c.blob != blob || c.begin != begin || c.end != end || strcmp(got, name) ||
		    (c.kind != JT_HS_NMETHOD && c.kind != JT_HS_NATIVE)) {
			print_message("differs: %s: blob 0x%" PRIx64 " 0x%" PRIx64 "-0x%" PRIx64
				      " %s kind %d\n", line, c.blob, c.begin, c.end, got, c.kind);
			continue;
		}
		/*
		 * a frame holds its return address and saved rbp; none of these is large. A
		 * method handle intrinsic (a native one: linkToStatic...) only jumps on: none.
		 */
		if (c.kind == JT_HS_NATIVE && !c.frame_size &&
		    !strncmp(name, "java.lang.invoke.MethodHandle.", 30))
			frameless++;
		else
			assert_in_range(c.frame_size, 2, 256);
		if (c.frame_size > max_frame)
			max_frame = c.frame_size;
		if (!strcmp(name, TICK)) {
			ticks++;
			print_message("Asleep.tick level %d: frame %u words, built at +%d\n", level,
				      c.frame_size, c.frame_complete);
		}
		/* the epilogues of the workload's own code, as the compilers made them */
		if (!strncmp(name, "Asleep.", 7) && c.kind == JT_HS_NMETHOD) {
			unsigned int epilogues = 0;
			struct jt_cfi_rule rule;
			uint64_t ip;

			for (ip = c.begin; ip < c.end; ip++)
				if (!jt_hotspot__cfi_rule(hs, &c, ip, true, &rule) &&
				    rule.cfa_off < (int32_t)c.frame_size * 8)
					epilogues++;
			print_message("%s level %d: %u epilogue places\n", name, level, epilogues);
			/* every compiled method returns, in places 2 (ret) to 4 bytes long */
			assert_true(epilogues >= 2);
			with_epilogues++;
		}
		matched++;
	}
	print_message("%u of %u listed nmethods found as listed (%u method handle intrinsics "
		      "without a frame); largest frame %u words\n", matched, lines, frameless,
		      max_frame);
	assert_true(lines >= 5);
	/* code freed between jcmd's listing and the read may differ: hardly any */
	assert_true(matched * 10 >= lines * 9);
	assert_true(ticks >= 1);
	/* every compiled method of the workload listed, tick's at least (how many more
	 * the compilers made by now is the machine's speed, not the reader's) */
	assert_true(with_epilogues >= ticks);
	free(text);
	free(out);
	jt_hotspot__free(hs);
}

/* A sample's view of one thread: its stack copied from sp, its files' CFI. */
struct sample {
	uint32_t pid;
	uint64_t sp, pc, base;
	uint8_t *stack;
	size_t len;
	struct jt_vmas vm;
	struct jt_cfi *cfi[256];	/* by the index of the mapping in vm */
	struct jt_hotspot *hs;
	bool jit_ok;			/* find admits code cache addresses */
	uint64_t jit_ip;		/* the first seen */
	char after[256];		/* the file the walk returns to after Java frames */
	bool quiet;			/* print no frames */
};

static int stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct sample *s = ctx;

	if (addr < s->base || addr - s->base > s->len || len > s->len - (addr - s->base))
		return -EFAULT;
	memcpy(buf, s->stack + (addr - s->base), len);
	return 0;
}

static bool find(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	struct sample *s = ctx;
	struct jt_vma *v = jt_vmas__find(&s->vm, ip);
	size_t i;

	(void)leaf;
	if (jt_hotspot__in_code_cache(s->hs, ip)) {
		if (!s->jit_ip)
			s->jit_ip = ip;
		return s->jit_ok;
	}
	if (!v || v->path[0] != '/')
		return false;
	i = v - s->vm.v;
	if (i < 256 && !s->cfi[i]) {
		char path[4200];
		int fd, err;

		snprintf(path, sizeof(path), "/proc/%u/root%s", s->pid, v->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			s->cfi[i] = jt_cfi__load(fd, &err);
			close(fd);
		}
	}
	code->cfi = i < 256 ? s->cfi[i] : NULL;
	code->off = ip - v->start + v->pgoff;
	return true;
}

/* The thread of pid whose comm is comm (not pid itself), or 0. */
static uint32_t thread_named_now(uint32_t pid, const char *comm)
{
	char path[64], buf[32];
	struct dirent *d;
	uint32_t tid = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	assert_non_null(dir);
	while (!tid && (d = readdir(dir))) {
		uint32_t t = strtoul(d->d_name, NULL, 10);
		FILE *f;

		if (!t || t == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, t);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			if (!strcmp(buf, comm))
				tid = t;
		}
		if (f)
			fclose(f);
	}
	closedir(dir);
	return tid;
}

/* The same, waiting up to 20 s for a loaded machine to start it and name it. */
static uint32_t thread_named(uint32_t pid, const char *comm)
{
	uint32_t tid = 0;
	int i;

	for (i = 0; i < 200 && !(tid = thread_named_now(pid, comm)); i++)
		usleep(100000);
	if (!tid)
		print_message("no thread %s in %u\n", comm, pid);
	return tid;
}

/* Copy tid's stack as a sample would, while it sleeps in a syscall. */
static void sample_take(struct sample *s, uint32_t pid, uint32_t tid)
{
	char path[64], line[512];
	unsigned long long a[9];
	long nr;
	FILE *f;
	int fd;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	/* "NR ARGS... SP PC" in a syscall; "-1 SP PC" stopped outside one (a signal stop) */
	if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
		   &a[3], &a[4], &a[5], &a[6], &a[7]) == 9) {
		s->sp = a[6];
		s->pc = a[7];
	} else if (sscanf(line, "%ld %llx %llx", &nr, &a[0], &a[1]) == 3 && nr == -1) {
		s->sp = a[0];
		s->pc = a[1];
	} else {
		fail_msg("%s: not stopped: %s", path, line);
	}
	s->base = s->sp;
	s->stack = malloc(COPY_MAX);
	assert_non_null(s->stack);
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	while (s->len < COPY_MAX) {	/* to the stack's end, or COPY_MAX */
		size_t n = 4096 - ((s->base + s->len) & 4095);

		if (n > COPY_MAX - s->len)
			n = COPY_MAX - s->len;

		if (pread(fd, s->stack + s->len, n, s->base + s->len) != (ssize_t)n)
			break;
		s->len += n;
	}
	close(fd);
	assert_true(s->len > 0);
	assert_int_equal(jt_procfs__read_maps("/proc", pid, &s->vm), 0);
}

static void sample_free(struct sample *s)
{
	size_t i;

	for (i = 0; i < 256; i++)
		jt_cfi__free(s->cfi[i]);
	jt_vmas__free(&s->vm);
	free(s->stack);
}

struct jframe {
	enum jt_hs_kind kind;
	uint32_t frame_size;
	char name[160];
};

/*
 * Walk the copy: native frames by CFI to the first code cache address, then HotSpot's
 * frames by the reader. Returns the HotSpot frames; *end is how the walk ended.
 */
static int walk(struct sample *s, struct jframe *fr, int max, int *end)
{
	struct jt_unwind_regs u = { .ip = s->pc, .sp = s->sp };
	bool leaf = jt_hotspot__in_code_cache(s->hs, s->pc);
	uint64_t ips[128];
	enum jt_unwind_end e;
	unsigned int n = 0;
	int nr = 0;

	/* first to see how many native frames precede Java code, then to stop at it */
	if (!leaf) {
		n = jt_unwind(&u, s->stack, s->base, s->len, find, s, ips, NULL, 128, &e);
		if (e != JT_UNWIND_LOST || !s->jit_ip)
			fail_msg("native frames (%u) did not reach the code cache (end %d)", n,
				 e);
		u = (struct jt_unwind_regs){ .ip = s->pc, .sp = s->sp };
		s->jit_ok = true;
		jt_unwind(&u, s->stack, s->base, s->len, find, s, ips, NULL, n + 1, &e);
		assert_int_equal(u.ip - 1, s->jit_ip);	/* find is asked for the call */
	}
	if (!s->quiet)
		print_message("%u native frames, then:\n", n);

	/* stopped in Java code, bp is unknown: the compiled frames' saved rbp gives it */
	struct jt_hs_regs r = { u.ip, u.sp, u.bp };

	*end = 0;
	while (nr < max) {
		struct jt_hs_code c;
		struct jframe *f = &fr[nr];
		uint64_t method;
		int err;

		err = jt_hotspot__code(s->hs, r.ip, &c);
		if (err) {
			*end = err;
			break;
		}
		f->kind = c.kind;
		f->frame_size = c.frame_size;
		snprintf(f->name, sizeof(f->name), "%s", c.name);
		if (c.kind == JT_HS_INTERPRETER) {
			err = jt_hotspot__interp_method(s->hs, r.bp, stack_read, s, &method);
			if (!err)
				err = jt_hotspot__method_name(s->hs, method, f->name,
							      sizeof(f->name));
		} else if (c.method) {
			err = jt_hotspot__method_name(s->hs, c.method, f->name, sizeof(f->name));
		}
		nr++;
		if (!s->quiet)
			print_message("  %-12s %3u words  %s%s\n",
				      c.kind == JT_HS_INTERPRETER ? "interpreted" :
				      c.kind == JT_HS_NMETHOD ? "compiled" :
				      c.kind == JT_HS_NATIVE ? "native wrap" : "stub",
				      c.frame_size, f->name, err < 0 ? " (unnamed)" : "");
		if (err < 0) {
			*end = err;
			break;
		}
		err = jt_hotspot__step(s->hs, &c, &r, leaf, stack_read, s);
		leaf = false;
		if (err) {
			*end = err;
			break;
		}
	}
	if (!s->quiet)
		print_message("  end: %s\n", jt_hotspot__strerror(*end));
	/* a stub without a frame size keeps rbp frames: the call stub returns into libjvm.so */
	if (*end == -EOPNOTSUPP) {
		uint64_t ra = 0;
		struct jt_vma *v;

		if (!stack_read(s, r.bp + 8, &ra, 8) && (v = jt_vmas__find(&s->vm, ra)))
			snprintf(s->after, sizeof(s->after), "%s", v->path);
		if (!s->quiet)
			print_message("  then by rbp: 0x%" PRIx64 " in %s\n", ra, s->after);
	}
	return nr;
}

/* The walk of the thread named comm, as a sample of it would be: its frames, nr, end. */
static int walk_thread(struct jt_hotspot *hs, const char *comm, struct jframe *fr, int *end,
		       char *after, size_t len)
{
	uint32_t tid = thread_named(jvm, comm);
	struct sample s;
	int nr;

	assert_true(tid > 0);
	sample_take(&s, jvm, tid);
	s.hs = hs;
	nr = walk(&s, fr, MAX_FRAMES, end);
	snprintf(after, len, "%s", s.after);
	sample_free(&s);
	return nr;
}

/* The index of the first frame named name at or after from, or -1. */
static int frame_at(const struct jframe *fr, int nr, int from, const char *name)
{
	for (; from < nr; from++)
		if (!strcmp(fr[from].name, name))
			return from;
	return -1;
}

/* napper sleeps in deep(3): four interpreted deep frames under Thread.sleep, then napper. */
static void interpreted_frames_named_from_a_stack_copy(void **state)
{
	struct jt_hotspot *hs = open_jvm();
	struct jframe fr[MAX_FRAMES];
	char after[256];
	int end, i, k, nr = walk_thread(hs, "napper", fr, &end, after, sizeof(after));

	(void)state;
	i = frame_at(fr, nr, 0, "Asleep.deep(int, long)");
	assert_true(i >= 0);
	assert_true(frame_at(fr, i, 0, "java.lang.Thread.sleep(long)") >= 0);
	for (k = i; k < i + 4; k++) {
		assert_true(k < nr);
		assert_string_equal(fr[k].name, "Asleep.deep(int, long)");
		assert_int_equal(fr[k].kind, JT_HS_INTERPRETER);
	}
	assert_true(k < nr);
	assert_string_equal(fr[k].name, "Asleep.napper(long)");
	assert_int_equal(fr[k].kind, JT_HS_INTERPRETER);
	/* the walk ends at the call stub, which keeps no frame size: bp is followed from here */
	assert_int_equal(fr[nr - 1].kind, JT_HS_STUB);
	assert_int_equal(end, -EOPNOTSUPP);
	assert_non_null(strstr(after, "/libjvm.so"));
	jt_hotspot__free(hs);
}

/*
 * main sleeps in tick(3), compiled (into main itself where the compiler inlined it): each
 * compiled frame stepped by its size must land on its caller, and the walk reach main and
 * the call stub: a wrong size lands on no code at all.
 */
static void compiled_frames_stepped_by_their_sizes(void **state)
{
	struct jt_hotspot *hs = open_jvm();
	struct jframe fr[MAX_FRAMES];
	char after[256];
	int end, i, k, compiled = 0;
	int nr = walk_thread(hs, "java", fr, &end, after, sizeof(after));

	(void)state;
	i = frame_at(fr, nr, 0, "Asleep.main(java.lang.String[])");
	assert_true(i > 0);
	for (k = 0; k <= i; k++)
		compiled += fr[k].kind == JT_HS_NMETHOD;
	/* stepped by size from the native wrapper, through each compiled frame, to main */
	assert_true(compiled >= 1);
	for (k = 0; k < i; k++)
		assert_true(fr[k].kind == JT_HS_NMETHOD || fr[k].kind == JT_HS_NATIVE);
	assert_int_equal(fr[nr - 1].kind, JT_HS_STUB);
	assert_int_equal(end, -EOPNOTSUPP);
	assert_non_null(strstr(after, "/libjvm.so"));
	jt_hotspot__free(hs);
}

/* Whether every thread of pid is stopped (state T in its stat), after SIGSTOP. */
static bool all_stopped(uint32_t pid)
{
	char path[320], buf[512], *state;
	struct dirent *d;
	bool all = true;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	assert_non_null(dir);
	while (all && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%s/stat", pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (state = strrchr(buf, ')')))
			all = state[2] == 'T' || state[2] == 't';
		fclose(f);
	}
	closedir(dir);
	return all;
}

/*
 * burner, stopped where it runs (SIGSTOP: as a sample interrupts it), its leaf in compiled
 * code: stepped by the sizes of its frames from the leaf (no bp known) to burn() and the
 * call stub. A leaf in a prologue or an epilogue is where a size cannot be used: counted.
 */
static void stopped_in_compiled_code_the_walk_reaches_its_callers(void **state)
{
	struct jt_hotspot *hs = open_jvm();
	uint32_t tid = thread_named(jvm, "burner");
	unsigned int tries, in_jit = 0, whole = 0, prologue = 0;
	struct jframe fr[MAX_FRAMES];

	(void)state;
	assert_true(tid > 0);
	FILE *flag = fopen(burn_flag, "w");

	assert_non_null(flag);
	fclose(flag);
	usleep(500000);	/* for mix() to be compiled, if it was not yet */
	for (tries = 0; tries < 400 && in_jit < 40; tries++) {
		struct sample s;
		int i, nr, end;

		assert_int_equal(kill(jvm, SIGSTOP), 0);
		for (i = 0; i < 200 && !all_stopped(jvm); i++)
			usleep(1000);
		sample_take(&s, jvm, tid);
		assert_int_equal(kill(jvm, SIGCONT), 0);
		s.hs = hs;
		s.quiet = in_jit > 0 && !getenv("HSREADER_VERBOSE");
		if (!jt_hotspot__in_code_cache(hs, s.pc)) {	/* asleep, or in the VM */
			sample_free(&s);
			usleep(3000);
			continue;
		}
		in_jit++;
		nr = walk(&s, fr, MAX_FRAMES, &end);
		if (nr > 1 && frame_at(fr, nr, 0, "Asleep.burn(java.io.File)") >= 0 &&
		    fr[nr - 1].kind == JT_HS_STUB && end == -EOPNOTSUPP)
			whole++;
		else if (end == -EAGAIN)
			prologue++;
		else
			for (i = 0; i < nr; i++)
				print_message("  cut walk %u: %s (end: %s)\n", in_jit, fr[i].name,
					      jt_hotspot__strerror(end));
		sample_free(&s);
		usleep(3000);
	}
	unlink(burn_flag);
	print_message("%u stops, %u in compiled code: %u walks reach burn() and the call stub, "
		      "%u end in a prologue\n", tries, in_jit, whole, prologue);
	assert_true(in_jit >= 10);
	/* a walk is whole or ends in a prologue, said; never cut elsewhere (a wrong frame) */
	assert_int_equal(in_jit - whole - prologue, 0);
	it_assert_share_at_least("walks from compiled code reaching burn() and the call stub",
				 whole, in_jit, 0.9, "a leaf in a prologue ends the walk, said");
	jt_hotspot__free(hs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_finds_the_vmstructs_of_a_jvm_started_without_flags),
		cmocka_unit_test(compiled_methods_match_what_the_jvm_lists),
		cmocka_unit_test(interpreted_frames_named_from_a_stack_copy),
		cmocka_unit_test(compiled_frames_stepped_by_their_sizes),
		cmocka_unit_test(stopped_in_compiled_code_the_walk_reaches_its_callers),
	};

	int failed;

	jdk = JDK17;
	print_message("%s\n", jdk);
	failed = cmocka_run_group_tests_name("openjdk-17", tests, group_setup, group_teardown);
	jdk = JDK25;
	print_message("%s\n", jdk);
	failed += cmocka_run_group_tests_name("temurin-25", tests, group_setup, group_teardown);
	return failed;
}
