// SPDX-License-Identifier: GPL-2.0
/* Loading and attaching jitrace's BPF programs: uprobes, samplers, tracepoints. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>

#include "session/bpfcaps.h"
#include "jitrace.skel.h"
#include "session/loader.h"
#include "base/util.h"

struct jt_bpf {
	struct jitrace_bpf *skel;
	struct bpf_link **links;
	int nr_links;
	int max_links;
	int nr_samplers;
	int ncpus;
	int nr_jvms;
};

/* The libjvm.so files probed, by inode: one file can have many paths (symlinked JDK dirs). */
#define MAX_JVMS 64
struct jvm_files {
	dev_t dev[MAX_JVMS];
	ino_t ino[MAX_JVMS];
	int n;
};

static int libbpf_print_all(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_print_none(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int keep_link(struct jt_bpf *b, struct bpf_link *link)
{
	if (b->nr_links == b->max_links) {
		int n = b->max_links ? 2 * b->max_links : 16;
		struct bpf_link **l = realloc(b->links, n * sizeof(*l));

		if (!l) {
			bpf_link__destroy(link);
			return -ENOMEM;
		}
		b->links = l;
		b->max_links = n;
	}
	b->links[b->nr_links++] = link;
	return 0;
}

/*
 * prog on func in the library at path, in every process that maps it, now or later (pid
 * -1): 0, -ENOENT when the library has no such function, or another -errno, not said.
 */
static int attach_func(struct jt_bpf *b, struct bpf_program *prog, const char *path,
		       const char *func)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, path, 0, &opts);

	return link ? keep_link(b, link) : -errno;
}

/*
 * func, then its twin for forked children, func_forked (agent/stubs.S), which agents from
 * before the twins lack (their forked children call func itself): 0 or attach_func's error
 * with the function it was about in *at.
 */
static int attach_pair(struct jt_bpf *b, struct bpf_program *prog, const char *path,
		       const char *func, char *at, size_t cap)
{
	int err;

	snprintf(at, cap, "%s", func);
	err = attach_func(b, prog, path, func);
	if (err)
		return err;
	snprintf(at, cap, "%s_forked", func);
	err = attach_func(b, prog, path, at);
	return err == -ENOENT ? 0 : err;
}

/* A uprobe on one of the agent's stubs; one not required turns off its capability alone. */
static int attach_stub(struct jt_bpf *b, struct bpf_program *prog, const char *path,
		       const char *func, bool required)
{
	char at[96];
	int err;

	if (!bpf_program__autoload(prog))
		return 0;	/* turned off at load, and said then */
	err = attach_pair(b, prog, path, func, at, sizeof(at));
	if (!err)
		return 0;
	if (!required) {
		jt_err("warning: %s off: attaching a uprobe to %s in %s: %s",
		       jt_bpfcaps__gives(bpf_program__name(prog)), at, path, strerror(-err));
		return 0;
	}
	jt_err("attaching a uprobe to %s in %s: %s", at, path, strerror(-err));
	return err;
}

/*
 * Enter or leave: the agent's stub jitrace_stub_method_WHAT, which its public function calls
 * while no collector drains its calls region (and always, with --calls-via uprobe); in an
 * agent from before the regions, the public function jitrace_method_WHAT is the stub.
 */
static int attach_calls(struct jt_bpf *b, struct bpf_program *prog,
			struct bpf_program *prog_id, const char *path, const char *what)
{
	char func[64], at[96];
	int err;

	if (!bpf_program__autoload(prog))
		return 0;
	snprintf(func, sizeof(func), "jitrace_stub_method_%s", what);
	err = attach_pair(b, prog, path, func, at, sizeof(at));
	if (err != -ENOENT) {	/* the twin's absence is no error: see attach_pair */
		if (err)
			jt_err("attaching a uprobe to %s in %s: %s", at, path, strerror(-err));
		return err;
	}
	/* its stub takes the id alone: prog would read a time from a register it never set */
	snprintf(func, sizeof(func), "jitrace_method_%s", what);
	return attach_stub(b, prog_id, path, func, true);
}

static int attach_usdt(struct jt_bpf *b, struct bpf_program *prog, const char *path,
		       const char *probe)
{
	struct bpf_link *link;

	/* pid -1: every process that maps this libjvm.so, now or later */
	link = bpf_program__attach_usdt(prog, -1, path, "hotspot", probe, NULL);
	if (!link) {
		int err = -errno;

		jt_err("warning: %s: attaching USDT hotspot:%s: %s; recording goes on without "
		       "this JVM's probes", path, probe, strerror(-err));
		return err;
	}
	return keep_link(b, link);
}

/* Probe one libjvm.so unless it is one already probed; a failure is reported, not fatal. */
static void attach_jvm(struct jt_bpf *b, struct jvm_files *seen, const char *path, bool calls)
{
	struct jitrace_bpf *s = b->skel;
	struct stat st;
	int i;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	for (i = 0; i < seen->n; i++)
		if (seen->dev[i] == st.st_dev && seen->ino[i] == st.st_ino)
			return;
	if (seen->n == MAX_JVMS)
		return;
	seen->dev[seen->n] = st.st_dev;
	seen->ino[seen->n++] = st.st_ino;
	if (attach_usdt(b, s->progs.jt_jvm_load, path, "compiled__method__load") ||
	    attach_usdt(b, s->progs.jt_jvm_unload, path, "compiled__method__unload"))
		return;
	if (calls && (attach_usdt(b, s->progs.jt_jvm_enter, path, "method__entry") ||
		      attach_usdt(b, s->progs.jt_jvm_return, path, "method__return")))
		return;
	b->nr_jvms++;
}

/* The libjvm.so paths in one /proc/PID/maps, through /proc/PID/root (containers). */
static void scan_maps(struct jt_bpf *b, struct jvm_files *seen, const char *pid, bool calls)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;		/* gone, or a kernel thread */
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *nl;
		size_t n;

		if (!file)
			continue;
		nl = strchr(file, '\n');
		if (nl)
			*nl = 0;
		n = strlen(file);
		if (n < 10 || strcmp(file + n - 10, "/libjvm.so"))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/root%s", pid, file);
		attach_jvm(b, seen, path, calls);
	}
	fclose(f);
}

/* HotSpot's USDT probes in the installed JDKs and in every libjvm.so mapped right now. */
static void attach_jvms(struct jt_bpf *b, bool calls)
{
	struct jvm_files seen = { 0 };
	struct dirent *d;
	glob_t g;
	size_t i;
	DIR *dir;

	if (!glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g)) {
		for (i = 0; i < g.gl_pathc; i++)
			attach_jvm(b, &seen, g.gl_pathv[i], calls);
		globfree(&g);
	}
	dir = opendir("/proc");
	if (!dir) {
		jt_err("warning: reading /proc: %s; only installed JDKs are probed",
		       strerror(errno));
		return;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			scan_maps(b, &seen, d->d_name, calls);
	closedir(dir);
}

static int attach_samplers(struct jt_bpf *b, unsigned int hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = hz,
	};
	int cpu, fd, err;

	for (cpu = 0; cpu < b->ncpus; cpu++) {
		struct bpf_link *link;

		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* offline CPU */
				continue;
			err = -errno;
			jt_err("perf_event_open(cpu-clock, %u Hz) on CPU %d: %s", hz, cpu,
			       strerror(-err));
			return err;
		}
		link = bpf_program__attach_perf_event(b->skel->progs.jt_sample, fd);
		if (!link) {
			err = -errno;
			jt_err("attaching the sampler on CPU %d: %s", cpu, strerror(-err));
			close(fd);
			return err;
		}
		/* the link owns fd from here on */
		err = keep_link(b, link);
		if (err)
			return err;
		b->nr_samplers++;
	}
	return 0;
}

/*
 * Attach prog where its section says. One that is not required and cannot attach turns off
 * its capability alone, said once with what the user loses and the kernel's reason; a
 * required one fails the recording.
 */
static int attach_prog(struct jt_bpf *b, struct bpf_program *prog, bool required)
{
	struct bpf_link *link;

	if (!bpf_program__autoload(prog))
		return 0;	/* turned off at load, and said then */
	link = bpf_program__attach(prog);
	if (!link) {
		int err = -errno;

		if (!required) {
			jt_err("warning: %s off: attaching %s: %s",
			       jt_bpfcaps__gives(bpf_program__name(prog)), bpf_program__name(prog),
			       strerror(-err));
			return 0;
		}
		jt_err("attaching %s (%s): %s", bpf_program__name(prog),
		       jt_bpfcaps__gives(bpf_program__name(prog)), strerror(-err));
		return err;
	}
	return keep_link(b, link);
}

static int attach_all(struct jt_bpf *b, const struct jt_bpf_opts *o)
{
	struct jitrace_bpf *s = b->skel;
	struct bpf_program *tps[] = { s->progs.jt_exec, s->progs.jt_exit, s->progs.jt_exit_task,
				      s->progs.jt_fork, s->progs.jt_maps };
	size_t i;
	int err;

	for (i = 0; i < JT_ARRAY_SIZE(tps); i++) {
		err = attach_prog(b, tps[i], false);
		if (err)
			return err;
	}
	if (o->agent_path) {
		err = attach_stub(b, s->progs.jt_code_load, o->agent_path,
				  "jitrace_stub_code_load", false);
		err = err ?: attach_stub(b, s->progs.jt_code_unload, o->agent_path,
					 "jitrace_stub_code_unload", false);
		err = err ?: attach_stub(b, s->progs.jt_code_inline, o->agent_path,
					 "jitrace_stub_code_inline", false);
		if (!err && o->calls) {
			err = attach_calls(b, s->progs.jt_enter, s->progs.jt_enter_id,
					   o->agent_path, "enter");
			err = err ?: attach_calls(b, s->progs.jt_leave, s->progs.jt_leave_id,
						  o->agent_path, "leave");
			err = err ?: attach_stub(b, s->progs.jt_calls_region, o->agent_path,
						 "jitrace_stub_calls_region", false);
		}
		if (err)
			return err;
	}
	if (o->usdt && bpf_program__autoload(s->progs.jt_jvm_load))
		attach_jvms(b, o->calls && bpf_program__autoload(s->progs.jt_jvm_enter));
	if (o->offcpu) {
		err = attach_prog(b, s->progs.jt_switch, true);
		err = err ?: attach_prog(b, s->progs.jt_sys_exit, false);
		if (err)
			return err;
	}
	return o->sample_hz ? attach_samplers(b, o->sample_hz) : 0;
}

/*
 * The tracepoint a tp_btf program hooks, if the kernel's BTF has it; and whether
 * sched_process_exit passes group_dead (6.16 on), which picks jt_exit or jt_exit_task.
 */
struct kernel_btf {
	struct btf *btf;	/* NULL: no BTF at all, every tp_btf program is off */
};

static bool tracepoint_args(const struct kernel_btf *k, const char *tp, int *nargs)
{
	char name[128];
	const struct btf_type *t;
	__s32 id;

	if (!k->btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(k->btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	t = btf__type_by_id(k->btf, id);			/* typedef -> pointer */
	t = t ? btf__type_by_id(k->btf, t->type) : NULL;	/* pointer -> func proto */
	t = t && btf_is_ptr(t) ? btf__type_by_id(k->btf, t->type) : NULL;
	*nargs = t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : 0;	/* less the ctx */
	return true;
}

/* Root, or CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN: the first question when bpf() says no. */
static bool privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
#define HAS_CAP(c) (d[(c) / 32].effective & (1U << ((c) % 32)))
	return HAS_CAP(21) || (HAS_CAP(39) && HAS_CAP(38));	/* SYS_ADMIN; BPF, PERFMON */
#undef HAS_CAP
}

#define MAX_PROGS 32
#define PROG_LOG (1 << 20)	/* a verifier's log to find why; pages touched only on failure */

/* Programs turned off before or during loading, and why. */
struct off_progs {
	char name[MAX_PROGS][64];
	int n;
};

static bool is_off(const struct off_progs *off, const char *name)
{
	int i;

	for (i = 0; i < off->n; i++)
		if (!strcmp(off->name[i], name))
			return true;
	return false;
}

static void turn_off(struct off_progs *off, const char *name, const char *why)
{
	if (off->n < MAX_PROGS && !is_off(off, name))
		snprintf(off->name[off->n++], sizeof(off->name[0]), "%s", name);
	jt_err("warning: %s off on this kernel: %s: %s", jt_bpfcaps__gives(name), name, why);
}

/*
 * One attempt: open the skeleton, set it up, load what is wanted and not off. On a
 * program the kernel refuses, *failed names it and *why says why (its log under -v).
 */
static int load_once(struct jt_bpf *b, const struct jt_bpf_opts *o, const struct kernel_btf *k,
		     const struct off_progs *off, char **logs, char *failed, char *why,
		     size_t why_size)
{
	struct bpf_program *prog;
	int err, i = 0, nargs;
	bool exit_group = tracepoint_args(k, "sched_process_exit", &nargs) && nargs >= 2;

	b->skel = jitrace_bpf__open();
	if (!b->skel) {
		err = -errno;
		jt_err("opening the BPF object: %s", strerror(-err));
		return err;
	}
	b->skel->rodata->filter_pids = o->filter_pids;
	b->skel->rodata->want_kstack = o->kstack;
	b->skel->rodata->want_mmaps = o->sample_hz > 0 || o->offcpu;
	b->skel->rodata->want_offcpu = o->offcpu;
	b->skel->rodata->ustack_bytes = o->ustack_bytes;
	if (o->offcpu_min_ns)
		b->skel->rodata->offcpu_min_ns = o->offcpu_min_ns;
	err = bpf_map__set_max_entries(b->skel->maps.jt_rb, o->ringbuf_bytes);
	if (err) {
		jt_err("ring buffer size %zu: %s", o->ringbuf_bytes, strerror(-err));
		return err;
	}
	bpf_object__for_each_program(prog, b->skel->obj) {
		const char *name = bpf_program__name(prog), *sec = bpf_program__section_name(prog);
		bool on = jt_bpfcaps__wanted(name, o, exit_group) && !is_off(off, name);

		/* a hook the kernel lacks is refused as a verifier would, before loading */
		if (on && !strncmp(sec, "tp_btf/", 7) && !tracepoint_args(k, sec + 7, &nargs)) {
			snprintf(failed, 64, "%s", name);
			snprintf(why, why_size, k->btf ? "the kernel has no %s tracepoint" :
				 "the kernel has no BTF (/sys/kernel/btf/vmlinux) for %s", sec + 7);
			return -ENOENT;
		}
		bpf_program__set_autoload(prog, on);
		if (on && i < MAX_PROGS) {
			logs[i][0] = 0;
			bpf_program__set_log_buf(prog, logs[i], PROG_LOG);
		}
		i++;
	}
	err = jitrace_bpf__load(b->skel);
	if (!err)
		return 0;
	i = 0;
	bpf_object__for_each_program(prog, b->skel->obj) {
		if (i < MAX_PROGS && bpf_program__autoload(prog) && logs[i][0]) {
			snprintf(failed, 64, "%s", bpf_program__name(prog));
			jt_bpfcaps__reason(logs[i], why, why_size);
			if (o->verbose)
				fprintf(stderr, "%s: the verifier's log:\n%s\n", failed, logs[i]);
			break;
		}
		i++;
	}
	return err;
}

struct jt_bpf *jt_bpf__open(const struct jt_bpf_opts *o)
{
	struct jt_bpf *b = calloc(1, sizeof(*b));
	struct kernel_btf k = { 0 };
	struct off_progs *off = calloc(1, sizeof(*off));
	char **logs = calloc(MAX_PROGS, sizeof(*logs));
	char failed[64], why[512];
	int err = -ENOMEM, i, tries;

	if (!b || !off || !logs)
		goto nomem;
	for (i = 0; i < MAX_PROGS; i++)
		if (!(logs[i] = calloc(1, PROG_LOG)))
			goto nomem;
	libbpf_set_print(o->verbose ? libbpf_print_all : libbpf_print_none);
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		jt_err("counting CPUs: %s", strerror(-b->ncpus));
		goto fail;
	}
	k.btf = btf__load_vmlinux_btf();	/* NULL: no BTF, every tp_btf program refused */
	/* each refused optional program is turned off and the rest loaded again */
	for (tries = 0; tries < MAX_PROGS; tries++) {
		failed[0] = 0;
		err = load_once(b, o, &k, off, logs, failed, why, sizeof(why));
		if (!err)
			break;
		jitrace_bpf__destroy(b->skel);
		b->skel = NULL;
		if (!failed[0] || jt_bpfcaps__required(failed, o) || is_off(off, failed))
			break;
		turn_off(off, failed, why);
	}
	if (err) {
		if (failed[0])
			jt_err("loading BPF program %s (%s): the kernel refused it: %s%s", failed,
			       jt_bpfcaps__gives(failed), why, o->verbose ? "" :
			       " (run with -v for the verifier's log)");
		else if ((err == -EPERM || err == -EACCES) && !privileged())
			jt_err("loading BPF programs: %s (jitrace needs root, or the capabilities "
			       "CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)", strerror(-err));
		else
			jt_err("loading BPF programs: %s (run with -v for libbpf's messages)",
			       strerror(-err));
		goto fail;
	}
	if (o->attach && attach_all(b, o))
		goto fail;
	goto out;
nomem:
	jt_err("out of memory");
fail:
	jt_bpf__close(b);
	b = NULL;
out:
	for (i = 0; logs && i < MAX_PROGS; i++)
		free(logs[i]);
	free(logs);
	free(off);
	btf__free(k.btf);
	return b;
}

void jt_bpf__close(struct jt_bpf *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < b->nr_links; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	jitrace_bpf__destroy(b->skel);
	free(b);
}

int jt_bpf__add_pid(struct jt_bpf *b, uint32_t pid)
{
	if (pid >= JT_PID_LIMIT) {
		jt_err("pid %u is above the kernel's limit of %u", pid, JT_PID_LIMIT);
		return -EINVAL;
	}
	/* .bss is mapped into our memory: setting the bit is enough */
	__atomic_fetch_or(&b->skel->bss->jt_pid_bits[pid / 64], 1ULL << (pid % 64),
			  __ATOMIC_RELAXED);
	return 0;
}

int jt_bpf__ringbuf_fd(const struct jt_bpf *b)
{
	return bpf_map__fd(b->skel->maps.jt_rb);
}

int jt_bpf__drops(const struct jt_bpf *b, uint64_t *out)
{
	uint64_t *vals = calloc(b->ncpus, sizeof(*vals));
	uint32_t key;
	int cpu, err = 0;

	if (!vals)
		return -ENOMEM;
	for (key = 0; key < JT_DROP_MAX; key++) {
		err = bpf_map__lookup_elem(b->skel->maps.jt_drops, &key, sizeof(key), vals,
					   b->ncpus * sizeof(*vals), 0);
		if (err) {
			jt_err("reading drop counters: %s", strerror(-err));
			break;
		}
		out[key] = 0;
		for (cpu = 0; cpu < b->ncpus; cpu++)
			out[key] += vals[cpu];
	}
	free(vals);
	return err;
}

int jt_bpf__storm(struct jt_bpf *b, uint32_t pid, uint64_t count, uint64_t *dropped)
{
	struct jt_storm_args args = { .count = count, .pid = pid };
	/* a syscall program's context is copied back into ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(b->skel->progs.jt_storm), &opts);

	if (err) {
		jt_err("running jt_storm: %s", strerror(errno));
		return -errno;
	}
	*dropped = args.dropped;
	return 0;
}

int jt_bpf__offcpu_flush(struct jt_bpf *b)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(b->skel->progs.jt_off_flush), &opts)) {
		jt_err("running jt_off_flush (the short waits' sums): %s", strerror(errno));
		return -errno;
	}
	return 0;
}

void jt_bpf__ucopy(struct jt_bpf *b, uint32_t tid, uint32_t bytes, bool fp_walk)
{
	/* one store the sampler reads whole; a thread sharing the slot copies the most again */
	__atomic_store_n(&b->skel->bss->jt_ucopy_slots[tid & (JT_UCOPY_SLOTS - 1)],
			 (uint64_t)tid << 32 | (fp_walk ? JT_UCOPY_FP_WALK : 0) |
				 (bytes & JT_UCOPY_BYTES), __ATOMIC_RELAXED);
}

int jt_bpf__nr_samplers(const struct jt_bpf *b)
{
	return b->nr_samplers;
}

int jt_bpf__nr_jvms(const struct jt_bpf *b)
{
	return b->nr_jvms;
}
