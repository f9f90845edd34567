// SPDX-License-Identifier: GPL-2.0
/*
 * Following a growing jitdump: what `jitrace record -p PID` costs while it follows a
 * jit-PID.dump that a process appends to at 10 MiB/s until it holds 100 MiB, and how soon
 * after a record's append the collector has it and names samples with it.
 *
 * The writer is a child of this program: it creates jit-PID.dump in a temporary directory,
 * maps its first page PROT_READ|PROT_EXEC (how perf and jitrace find it), and, once the
 * recorder runs, appends code-load records (names of 30 to 80 bytes, 256 to 4096 bytes of
 * code each, each record stamped with CLOCK_MONOTONIC just before its one write()) at
 * 10 MiB/s, spinning in between in a small loop copied into an anonymous executable page.
 * Every second or so (from 0.5 s on) it copies that loop into a new page, announces the
 * copy by a code-load record and runs only the new copy from then on: a *probe*, code that
 * is sampled from the moment its record is appended.
 *
 * Three conditions, interleaved over the rounds, with the same writer:
 *   follow   `jitrace record -p PID -F 99`: the jitdump is followed (the default);
 *   control  the same with --no-jitdump: what the recorder costs without it;
 *   latency  `-F 999`, the recorder's pread64() calls traced (a tracefs instance, clock
 *            mono): each record's read time is the last pread at its offset (one read
 *            takes its header, fields and name), and each probe's first named sample is
 *            found in the log.
 * The recorder's CPU (utime + stime from wait4, start to exit) and peak RSS (ru_maxrss)
 * come from the kernel; CPU is given as % of one CPU over the writer's wall time.
 * Usage: bench_jitdump [JITRACE] (default build/jitrace).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "jt_events.h"
#include "log/log.h"
#include "base/util.h"

#define DUMP_BYTES (100ULL << 20)	/* the writer stops at this size */
#define RATE ((10ULL << 20) * 1.0)	/* bytes a second */
#define ROUNDS 5
#define NPROBES 10
#define PROBE_FIRST_NS 500000000ULL
#define PROBE_EVERY_NS 1000000000ULL
#define PROBE_JITTER_NS 10000000ULL	/* added to each gap: see the writer */
#define PROBE_SIZE 64			/* bytes of code a probe announces */
#define CODE_MIN 256			/* bytes of code of the other records */
#define CODE_MAX 4096
#define NAME_MIN 30
#define NAME_MAX_LEN 80
#define SPIN_ITERS 20000		/* one call of the spin loop: some 10 to 20 us */
#define SETTLE_MS 500			/* after the last append: everything read */
#define FAKE_CODE_BASE 0x100000000000ULL	/* where the other records' code "is" */
#define TARGET_CPU 5.0			/* % of one CPU for following, at 10 MiB/s */
#define TARGET_LAT_MS 50.0
#define TRACE_DIR "/sys/kernel/tracing/instances/jt_bench_jitdump"
#define LOG_PATH "/tmp/jitrace-bench-jitdump.jtl"
#define ERR_PATH "/tmp/jitrace-bench-jitdump.err"

/* perf's jitdump format (tools/perf/Documentation/jitdump-specification.txt) */
struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jd_rec_hdr {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct jd_load {
	struct jd_rec_hdr h;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	/* then the name with its NUL, then code_size bytes of code */
};

_Static_assert(sizeof(struct jd_header) == 40, "jitdump header");
_Static_assert(sizeof(struct jd_load) == 56, "jitdump code load");

/* uint64_t spin(uint64_t n): mov %rdi,%rax; 1: dec %rax; jnz 1b; ret (position-free) */
static const unsigned char spin_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb,
					   0xc3 };
typedef uint64_t (*spin_fn)(uint64_t n);

struct probe {
	uint64_t ts;		/* its record's timestamp: just before the write() */
	uint64_t addr, size;
};

/* What the writer tells when it is done (one write to a pipe, under PIPE_BUF). */
struct wreport {
	uint64_t t0, t_end;	/* first append, last append */
	uint64_t bytes, records;
	uint32_t nprobes;
	struct probe probes[NPROBES];
};

enum { C_FOLLOW, C_CONTROL, C_LATENCY, NCONDS };

struct cond {
	const char *name;
	const char *hz;
	bool no_jitdump;
	bool trace;
};

static const struct cond conds[NCONDS] = {
	[C_FOLLOW] = { "record -p PID -F 99", "99", false, false },
	[C_CONTROL] = { "record -p PID -F 99 --no-jitdump", "99", true, false },
	[C_LATENCY] = { "record -p PID -F 999", "999", false, true },
};

struct result {
	double cpu_s, wall_s, cpu_pct, rss_mb, mib_s;
	uint64_t records;
	bool traced;		/* read times were measured */
	uint64_t read_seen;	/* records whose read was found in the trace */
	double read_med_ms, read_p99_ms, read_max_ms;
	int probes, probes_named;
	double probe_med_ms, probe_max_ms;
	uint64_t probe_samples, probe_named, probe_unnamed_after;
};

static const char *jitrace = "build/jitrace";

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint64_t rnd(void)
{
	return xorshift(&rnd_state);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_jitdump: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- the writer (a child process) ---- */

/* One code-load record in one write(); *ts gets its timestamp. */
static void append_load(int fd, char *buf, uint64_t addr, uint64_t code_size, const char *name,
			size_t name_len, const void *code, uint64_t index, uint64_t *ts)
{
	struct jd_load *r = (struct jd_load *)buf;
	size_t total = sizeof(*r) + name_len + 1 + code_size;

	*r = (struct jd_load){
		.h = { .id = 0, .total_size = (uint32_t)total },
		.pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(), .vma = addr,
		.code_addr = addr, .code_size = code_size, .code_index = index,
	};
	memcpy(buf + sizeof(*r), name, name_len);
	buf[sizeof(*r) + name_len] = 0;
	memcpy(buf + sizeof(*r) + name_len + 1, code, code_size);
	r->h.timestamp = *ts = jt_now_ns();
	if (write_all(fd, buf, total)) {
		perror("bench_jitdump: writer: write");
		_exit(1);
	}
}

/* A copy of the spin loop in a page of its own, executable and no longer writable. */
static void *spin_copy(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("bench_jitdump: writer: mmap");
		_exit(1);
	}
	memset(p, 0xcc, 4096);
	memcpy(p, spin_code, sizeof(spin_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		perror("bench_jitdump: writer: mprotect");
		_exit(1);
	}
	return p;
}

static void __attribute__((noreturn)) writer(const char *dir, int ready_fd, int go_fd,
					    int report_fd)
{
	static char buf[sizeof(struct jd_load) + NAME_MAX_LEN + 1 + CODE_MAX];
	static unsigned char code[CODE_MAX];
	struct jd_header h = {
		.magic = 0x4A695444, .version = 1, .total_size = sizeof(h), .elf_mach = 62,
		.pid = (uint32_t)getpid(), .timestamp = jt_now_ns(),
	};
	struct wreport rep = { 0 };
	uint64_t addr = FAKE_CODE_BASE, index = 1, next_probe, now, ts, jitter = 12345;
	char path[256], name[NAME_MAX_LEN + 1];
	spin_fn spin;
	void *marker;
	size_t i;
	int fd;
	char c = 'r';

	for (i = 0; i < sizeof(code); i++)
		code[i] = (unsigned char)(0x40 + i % 64);	/* not all zeros, as code is not */
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, &h, sizeof(h))) {
		perror("bench_jitdump: writer: creating the jitdump");
		_exit(1);
	}
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		perror("bench_jitdump: writer: mmap of the jitdump");
		_exit(1);
	}
	spin = (spin_fn)spin_copy();	/* not announced: samples here stay unnamed */
	if (write_all(ready_fd, &c, 1) || read_all(go_fd, &c, 1))
		_exit(1);
	rep.t0 = now = jt_now_ns();
	next_probe = rep.t0 + PROBE_FIRST_NS;
	for (;;) {
		uint64_t due = (uint64_t)((now - rep.t0) / 1e9 * RATE);

		while (rep.bytes < due && rep.bytes < DUMP_BYTES) {
			uint64_t size = CODE_MIN + rnd() % (CODE_MAX - CODE_MIN + 1);
			size_t len = NAME_MIN + rnd() % (NAME_MAX_LEN - NAME_MIN + 1);
			int n = snprintf(name, sizeof(name), "LazyCompile:*m%03u.js:fn_%06" PRIu64 "_",
					 (unsigned int)(index % 97), index);

			for (i = (size_t)n; i < len; i++)
				name[i] = (char)('a' + (index * 7 + i) % 26);
			append_load(fd, buf, addr, size, name, len, code, index++, &ts);
			addr += (size + 15) & ~15ULL;
			rep.bytes += sizeof(struct jd_load) + len + 1 + size;
			rep.records++;
		}
		if (rep.bytes >= DUMP_BYTES)
			break;
		if (rep.nprobes < NPROBES && now >= next_probe) {
			struct probe *p = &rep.probes[rep.nprobes];
			void *page = spin_copy();
			int len = snprintf(name, sizeof(name), "jt_bench_probe_%u", rep.nprobes);

			p->addr = (uint64_t)(uintptr_t)page;
			p->size = PROBE_SIZE;
			append_load(fd, buf, p->addr, PROBE_SIZE, name, (size_t)len, page, index++,
				    &p->ts);
			rep.bytes += sizeof(struct jd_load) + (size_t)len + 1 + PROBE_SIZE;
			rep.records++;
			rep.nprobes++;
			/*
			 * 1 s is a whole number of sampling periods at 99 and 999 Hz: without the
			 * jitter every probe would fall at the same point between two samples
			 */
			next_probe += PROBE_EVERY_NS + xorshift(&jitter) % PROBE_JITTER_NS;
			spin = (spin_fn)page;	/* from now on only the new copy runs */
		}
		spin(SPIN_ITERS);
		now = jt_now_ns();
	}
	rep.t_end = jt_now_ns();
	if (write_all(report_fd, &rep, sizeof(rep)))
		_exit(1);
	for (;;)
		pause();	/* killed by the parent once the recorder has stopped */
}

/* ---- tracing the recorder's reads ---- */

static int put_file(const char *name, const char *text)
{
	char path[256];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", TRACE_DIR, name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	err = write_all(fd, text, strlen(text));
	close(fd);
	return err;
}

static void trace_off(void)
{
	put_file("events/syscalls/sys_enter_pread64/enable", "0");
	put_file("events/syscalls/sys_enter_pread64/filter", "0");
	rmdir(TRACE_DIR);
}

/* The fd under which rec has path open; -1 if none. */
static int find_fd(pid_t rec, const char *path)
{
	char dir[64], link[400], target[4096];
	struct dirent *de;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)rec);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d)) && fd < 0) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, path))
			fd = atoi(de->d_name);
	}
	closedir(d);
	return fd;
}

/* Trace rec's pread64()s from fd (each at a record's offset), timed by CLOCK_MONOTONIC. */
static int trace_on(pid_t rec, int fd)
{
	char filter[128];

	trace_off();	/* what an earlier run left, if it was killed */
	if (mkdir(TRACE_DIR, 0700) && errno != EEXIST)
		return -1;
	snprintf(filter, sizeof(filter), "common_pid == %d && fd == %d", (int)rec,
		 fd);
	if (put_file("trace_clock", "mono") || put_file("buffer_size_kb", "16384") ||
	    put_file("events/syscalls/sys_enter_pread64/filter", filter) ||
	    put_file("events/syscalls/sys_enter_pread64/enable", "1"))
		return -1;
	return 0;
}

struct dump_index {
	uint64_t *off, *ts, *read;	/* per record, in file order */
	size_t n;
};

static size_t find_off(const struct dump_index *di, uint64_t off)
{
	size_t lo = 0, hi = di->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (di->off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < di->n && di->off[lo] == off ? lo : di->n;
}

/* Every traced read: the record at its offset was read (again) then; the last one counts. */
static void trace_collect(struct dump_index *di)
{
	char path[256], line[512];
	FILE *f;

	put_file("events/syscalls/sys_enter_pread64/enable", "0");
	snprintf(path, sizeof(path), "%s/trace", TRACE_DIR);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, ": sys_pread64("), *p, *pos;
		unsigned long long s, us, off;
		size_t i;

		if (line[0] == '#' || !at)
			continue;
		for (p = at; p > line && p[-1] != ' '; p--)
			;
		pos = strstr(at, "pos: ");
		if (sscanf(p, "%llu.%llu", &s, &us) != 2 || !pos ||
		    sscanf(pos + 5, "%llx", &off) != 1)
			continue;
		i = find_off(di, off);
		if (i < di->n)
			di->read[i] = s * 1000000000ULL + us * 1000ULL;
	}
	fclose(f);
}

/* The records of the file the writer wrote: offset and timestamp of each. */
static int index_dump(const char *path, struct dump_index *di)
{
	FILE *f = fopen(path, "r");
	struct jd_rec_hdr h;
	uint64_t off = sizeof(struct jd_header);
	size_t cap = 0;

	memset(di, 0, sizeof(*di));
	if (!f)
		return -1;
	while (fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(&h, sizeof(h), 1, f) == 1 &&
	       h.total_size >= sizeof(h)) {
		if (di->n == cap) {
			cap = cap ? 2 * cap : 65536;
			di->off = realloc(di->off, cap * sizeof(*di->off));
			di->ts = realloc(di->ts, cap * sizeof(*di->ts));
			di->read = realloc(di->read, cap * sizeof(*di->read));
			if (!di->off || !di->ts || !di->read)
				die("realloc");
		}
		di->off[di->n] = off;
		di->ts[di->n] = h.timestamp;
		di->read[di->n] = 0;
		di->n++;
		off += h.total_size;
	}
	fclose(f);
	return 0;
}

static void read_latency(struct dump_index *di, struct result *res)
{
	double *v = malloc((di->n ? di->n : 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v)
		die("malloc");
	for (i = 0; i < di->n; i++)
		if (di->read[i])
			v[n++] = ((double)di->read[i] - (double)di->ts[i]) / 1e6;
	res->read_seen = n;
	if (n) {
		bench_sort(v, (int)n);
		res->read_med_ms = v[n / 2];
		res->read_p99_ms = v[n * 99 / 100];
		res->read_max_ms = v[n - 1];
	}
	free(v);
}

/* ---- the log: each probe's samples ---- */

#define MAX_IDS 4096

struct idtab {
	uint64_t id[MAX_IDS], start[MAX_IDS], pgoff[MAX_IDS];
	int n;
};

static int idtab_find(const struct idtab *t, uint64_t id)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->id[i] == id)
			return i;
	return -1;
}

static void probes_from_log(const struct wreport *rep, pid_t pid, struct result *res)
{
	static struct idtab meth, mods;
	struct jt_log_reader *r = jt_logr__open(LOG_PATH);
	uint64_t first_named[NPROBES] = { 0 };
	int probe_meth[NPROBES];
	const struct jt_rec_hdr *h;
	double lat[NPROBES];
	uint32_t k;
	int i, n = 0;

	if (!r) {
		fprintf(stderr, "bench_jitdump: cannot read %s\n", LOG_PATH);
		exit(1);
	}
	meth.n = mods.n = 0;
	for (k = 0; k < NPROBES; k++)
		probe_meth[k] = -1;
	while ((h = jt_logr__next(r))) {
		if (h->type == JT_REC_METHOD) {
			const struct jt_rec_method *m = (const void *)h;

			if (m->pid != (uint32_t)pid || meth.n == MAX_IDS)
				continue;
			meth.id[meth.n] = m->id;
			meth.start[meth.n] = m->start;
			for (k = 0; k < rep->nprobes; k++)
				if (m->start == rep->probes[k].addr)
					probe_meth[k] = meth.n;
			meth.n++;
		} else if (h->type == JT_REC_MODULE) {
			const struct jt_rec_module *m = (const void *)h;

			if (m->pid != (uint32_t)pid || mods.n == MAX_IDS)
				continue;
			mods.id[mods.n] = m->id;
			mods.start[mods.n] = m->start;
			mods.pgoff[mods.n] = m->pgoff;
			mods.n++;
		} else if (h->type == JT_REC_SAMPLE) {
			const struct jt_rec_sample *s = (const void *)h;
			uint16_t f;

			if (s->pid != (uint32_t)pid)
				continue;
			for (f = 0; f < s->nr_frames; f++) {
				uint64_t ref = s->frames[f].ref, addr;
				unsigned int kind = JT_FRAME_KIND(ref);
				int at = -1;

				if (kind == JT_FRAME_METHOD) {
					at = idtab_find(&meth, JT_FRAME_ID(ref));
					if (at < 0)
						continue;
					addr = meth.start[at] + s->frames[f].off;
				} else if (kind == JT_FRAME_USER) {
					addr = s->frames[f].off;
				} else if (kind == JT_FRAME_MODULE) {
					int m = idtab_find(&mods, JT_FRAME_ID(ref));

					if (m < 0)
						continue;
					addr = mods.start[m] + s->frames[f].off - mods.pgoff[m];
				} else {
					continue;
				}
				for (k = 0; k < rep->nprobes; k++) {
					const struct probe *p = &rep->probes[k];
					bool named;

					if (addr < p->addr || addr >= p->addr + p->size)
						continue;
					named = kind == JT_FRAME_METHOD && at == probe_meth[k];
					res->probe_samples++;
					if (named) {
						res->probe_named++;
						if (!first_named[k])
							first_named[k] = h->ts;
					} else if (h->ts >= p->ts) {
						res->probe_unnamed_after++;
					}
				}
				break;	/* the leaf user frame only */
			}
		}
	}
	if (jt_logr__state(r) != JT_LOGR_END)
		fprintf(stderr, "bench_jitdump: %s: %s\n", LOG_PATH, jt_logr__why(r));
	jt_logr__close(r);
	res->probes = (int)rep->nprobes;
	for (k = 0; k < rep->nprobes; k++)
		if (first_named[k])
			lat[n++] = ((double)first_named[k] - (double)rep->probes[k].ts) / 1e6;
	res->probes_named = n;
	if (n) {
		bench_sort(lat, n);
		res->probe_med_ms = lat[n / 2];
		res->probe_max_ms = lat[n - 1];
	}
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%.1f", i ? " " : "bench_jitdump:     probe latencies (ms): ", lat[i]);
	if (n)
		fprintf(stderr, "\n");
}

/* ---- one run ---- */

static pid_t spawn_recorder(char **argv)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		int null = open("/dev/null", O_RDWR);
		int err = open(ERR_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int run(const struct cond *c, struct result *res)
{
	char dir[] = "/tmp/jt_bench_jitdump.XXXXXX", pidstr[16], path[256];
	int ready[2], go[2], report[2], status, t, err = 0, fd = -1;
	struct dump_index di = { 0 };
	struct wreport rep;
	struct rusage ru;
	pid_t w, rec;
	char ch = 'g';
	char *argv[16] = { (char *)jitrace, "record", "-f", "-p", pidstr, "-F", (char *)c->hz,
			   "-o", LOG_PATH, NULL };

	memset(res, 0, sizeof(*res));
	if (!mkdtemp(dir))
		die("mkdtemp");
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC))
		die("pipe");
	fflush(NULL);
	w = fork();
	if (w < 0)
		die("fork");
	if (!w)
		writer(dir, ready[1], go[0], report[1]);
	close(ready[1]);
	close(go[0]);
	close(report[1]);
	if (read_all(ready[0], &ch, 1)) {
		fprintf(stderr, "bench_jitdump: the writer failed\n");
		exit(1);
	}
	snprintf(pidstr, sizeof(pidstr), "%d", (int)w);
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)w);
	if (c->no_jitdump)
		argv[9] = "--no-jitdump";
	unlink(ERR_PATH);	/* the last run's "recording" line is not this one's */
	rec = spawn_recorder(argv);
	for (t = 0; !bench_file_has(ERR_PATH, "jitrace: recording") && t < 300; t++)
		usleep(100000);
	if (t == 300) {
		fprintf(stderr, "bench_jitdump: jitrace did not start (see %s)\n", ERR_PATH);
		exit(1);
	}
	if (c->trace) {
		/* it opens the file at its first look, before it says it records */
		for (t = 0; (fd = find_fd(rec, path)) < 0 && t < 100; t++)
			usleep(10000);
		if (fd < 0 || trace_on(rec, fd)) {
			fprintf(stderr, "bench_jitdump: cannot trace the recorder's reads (%s): "
				"read times not measured\n", fd < 0 ? "the jitdump is not open" :
				"tracefs");
			trace_off();
			fd = -1;
		}
	}
	ch = 'g';
	if (write_all(go[1], &ch, 1) || read_all(report[0], &rep, sizeof(rep))) {
		fprintf(stderr, "bench_jitdump: the writer failed\n");
		exit(1);
	}
	usleep(SETTLE_MS * 1000);
	kill(rec, SIGINT);
	if (wait4(rec, &status, 0, &ru) != rec || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench_jitdump: jitrace failed (see %s)\n", ERR_PATH);
		err = -1;
	}
	if (c->trace && fd >= 0 && !index_dump(path, &di)) {
		trace_collect(&di);
		read_latency(&di, res);
		res->traced = true;
	}
	if (c->trace)
		trace_off();
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	close(ready[0]);
	close(go[1]);
	close(report[0]);
	res->wall_s = (rep.t_end - rep.t0) / 1e9;
	res->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec / 1e6;
	res->cpu_pct = 100.0 * res->cpu_s / res->wall_s;
	res->rss_mb = ru.ru_maxrss / 1024.0;
	res->records = rep.records;
	res->mib_s = rep.bytes / 1048576.0 / res->wall_s;
	if (!err)
		probes_from_log(&rep, w, res);
	fprintf(stderr, "bench_jitdump:   %s: %" PRIu64 " records, %.1f MiB in %.2f s (%.2f "
		"MiB/s); recorder CPU %.3f s = %.2f%%, peak RSS %.1f MB; probes named %d of %d "
		"(median %.1f ms, max %.1f ms), probe samples %" PRIu64 ", named %" PRIu64
		", unnamed after the append %" PRIu64, c->name, rep.records, rep.bytes / 1048576.0,
		res->wall_s, res->mib_s, res->cpu_s, res->cpu_pct, res->rss_mb, res->probes_named,
		res->probes, res->probe_med_ms, res->probe_max_ms, res->probe_samples,
		res->probe_named, res->probe_unnamed_after);
	if (res->traced)
		fprintf(stderr, "; reads seen %" PRIu64 " of %zu, append to read median %.2f ms, "
			"p99 %.2f ms, max %.2f ms", res->read_seen, di.n, res->read_med_ms,
			res->read_p99_ms, res->read_max_ms);
	fprintf(stderr, "\n");
	free(di.off);
	free(di.ts);
	free(di.read);
	unlink(path);
	rmdir(dir);
	unlink(LOG_PATH);
	return err;
}

static void row(const char *what, const char *target, const char *fmt, const char *unit,
		const double *v, int n, const char *verdict)
{
	double copy[ROUNDS];

	memcpy(copy, v, n * sizeof(*v));
	bench_row(what, target, fmt, unit, copy, n, verdict);
}

static double median(const double *v, int n)
{
	double copy[ROUNDS];

	memcpy(copy, v, n * sizeof(*v));
	bench_sort(copy, n);
	return copy[n / 2];
}

int main(int argc, char **argv)
{
	static struct result res[NCONDS][ROUNDS];
	double v[NCONDS][ROUNDS], diff[ROUNDS], rss_diff[ROUNDS];
	double rmed[ROUNDS], rp99[ROUNDS], rmax[ROUNDS], pmed[ROUNDS], pmax[ROUNDS];
	uint64_t unnamed = 0, named_ctl = 0, samples = 0, seen = 0, records = 0;
	int probes = 0, probes_named = 0, r, i, nr = 0, np = 0;
	double cpu_follow, lat_read = -1, lat_probe = -1;
	uint64_t t0 = jt_now_ns();
	bool traced = true;

	if (argc > 1)
		jitrace = argv[1];
	signal(SIGPIPE, SIG_IGN);
	for (r = 0; r < ROUNDS; r++) {
		fprintf(stderr, "bench_jitdump: round %d of %d\n", r + 1, ROUNDS);
		for (i = 0; i < NCONDS; i++) {
			int c = (i + r) % NCONDS;	/* rotated every round */

			if (run(&conds[c], &res[c][r]))
				return 1;
		}
	}
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NCONDS; i++)
			v[i][r] = res[i][r].cpu_pct;
		diff[r] = res[C_FOLLOW][r].cpu_pct - res[C_CONTROL][r].cpu_pct;
		rss_diff[r] = res[C_FOLLOW][r].rss_mb - res[C_CONTROL][r].rss_mb;
		traced &= res[C_LATENCY][r].traced;
		if (res[C_LATENCY][r].traced) {
			rmed[nr] = res[C_LATENCY][r].read_med_ms;
			rp99[nr] = res[C_LATENCY][r].read_p99_ms;
			rmax[nr++] = res[C_LATENCY][r].read_max_ms;
			seen += res[C_LATENCY][r].read_seen;
			records += res[C_LATENCY][r].records;
		}
		if (res[C_LATENCY][r].probes_named) {
			pmed[np] = res[C_LATENCY][r].probe_med_ms;
			pmax[np++] = res[C_LATENCY][r].probe_max_ms;
		}
		probes += res[C_LATENCY][r].probes;
		probes_named += res[C_LATENCY][r].probes_named;
		unnamed += res[C_LATENCY][r].probe_unnamed_after +
			   res[C_FOLLOW][r].probe_unnamed_after;
		samples += res[C_LATENCY][r].probe_samples + res[C_FOLLOW][r].probe_samples;
		named_ctl += res[C_CONTROL][r].probe_named;
	}
	cpu_follow = median(diff, ROUNDS);
	if (nr)
		lat_read = median(rmed, nr);
	if (np)
		lat_probe = median(pmed, np);

	printf("## Following a growing jitdump\n\n");
	printf("A writer process (a child of bench_jitdump) creates jit-PID.dump in a temporary "
	       "directory, maps its first page PROT_READ|PROT_EXEC as perf's agents do, and "
	       "appends code-load records at 10 MiB/s until the file holds 100 MiB (about "
	       "10 s): names of 30 to 80 bytes, 256 to 4096 bytes of code each (about "
	       "45,600 records; 95%% of the file is code bytes), every record stamped with "
	       "CLOCK_MONOTONIC just before its one write(). In between it spins in a small "
	       "loop in an anonymous executable page, so that it is sampled. From 0.5 s on, "
	       "every 1 s plus 0 to 10 ms (1 s is a whole number of sampling periods: without "
	       "the jitter every probe would fall at the same point between two samples), it "
	       "copies that loop into a new page, announces the copy with a code-load record "
	       "(a *probe*) and from then on runs only the new copy. `jitrace "
	       "record -p WRITER -F 99 -o LOG` records it, against a control run of the same "
	       "writer recorded with `--no-jitdump`, and a third run at `-F 999` measures "
	       "latency; %d rounds, the three conditions interleaved (order rotated each "
	       "round). CPU is the recorder's utime + stime from wait4 (start to exit, "
	       "BPF loading included: the control cancels it) over the writer's wall time "
	       "from first to last append, as %% of one CPU; what following costs is the "
	       "follow run minus the control run of the same round. Peak RSS is ru_maxrss.\n\n",
	       ROUNDS);
	printf("Latency is measured two ways in the `-F 999` runs. *Append to read*: the "
	       "recorder's pread64() calls are traced (a tracefs instance of its own, "
	       "`syscalls:sys_enter_pread64` filtered to the recorder's pid and the jitdump's "
	       "fd, clock `mono`, so CLOCK_MONOTONIC); a record's read time is the last read "
	       "at its offset (one read takes its header, fields and name; a record not all "
	       "written yet is read again at the next tick), and its "
	       "latency that minus its own timestamp, for every record. *Append to first "
	       "named sample*: for each probe, the timestamp of the first sample in the log "
	       "whose leaf frame is the probe's method, minus the probe record's timestamp. "
	       "The writer runs the new copy only after its record is written, so every "
	       "sample of it comes after the append: one left unnamed (a user address) is "
	       "one the collector did not have the record for in time. What the second figure "
	       "can show: samples are joined to code by time in the reorder buffer, and a "
	       "record read less than the window (100 ms) after its timestamp is put in "
	       "order at that timestamp, so it names every sample from its append on however "
	       "late in the window it was read; the figure is then the wait for the probe's "
	       "next sample (under 1 ms at 999 Hz), and it would grow only by what a read is "
	       "later than the window. The first figure is the collector's own delay. Neither "
	       "is bounded by the window; what is, for every event whatever its source, is "
	       "the writing of the log (an event leaves the reorder buffer about 100 ms after "
	       "its timestamp, at the next 10 ms tick).\n\n");
	bench_table_head();
	row("recorder CPU, `record -p PID -F 99` (jitdump followed)", "", "%.2f", "%",
	    v[C_FOLLOW], ROUNDS, "");
	row("recorder CPU, `record -p PID -F 99 --no-jitdump` (control)", "", "%.2f", "%",
	    v[C_CONTROL], ROUNDS, "");
	row("**following the jitdump, 10 MiB/s (follow - control, per round)**",
	    "<= 5% of one CPU", "%.2f", "%", diff, ROUNDS,
	    cpu_follow <= TARGET_CPU ? "met" : "MISSED");
	row("recorder CPU, `record -p PID -F 999`, reads traced", "", "%.2f", "%", v[C_LATENCY],
	    ROUNDS, "");
	for (r = 0; r < ROUNDS; r++) {
		v[C_FOLLOW][r] = res[C_FOLLOW][r].rss_mb;
		v[C_CONTROL][r] = res[C_CONTROL][r].rss_mb;
		v[C_LATENCY][r] = res[C_FOLLOW][r].mib_s;
	}
	row("peak RSS, jitdump followed", "", "%.1f", " MB", v[C_FOLLOW], ROUNDS, "");
	row("peak RSS, `--no-jitdump` (control)", "", "%.1f", " MB", v[C_CONTROL], ROUNDS, "");
	row("peak RSS, follow - control (per round)", "", "%.1f", " MB", rss_diff, ROUNDS, "");
	row("writer's rate, follow runs", "10 MiB/s", "%.2f", " MiB/s", v[C_LATENCY], ROUNDS, "");
	if (nr) {
		row("**append to read, median of a run's records**", "<= 50 ms", "%.2f", " ms",
		    rmed, nr, lat_read <= TARGET_LAT_MS ? "met" : "MISSED");
		row("append to read, 99th percentile of a run's records", "", "%.2f", " ms", rp99,
		    nr, "");
		row("append to read, maximum of a run's records", "", "%.2f", " ms", rmax, nr, "");
	}
	if (np) {
		row("**append to first named sample, median of a run's 10 probes**", "<= 50 ms",
		    "%.2f", " ms", pmed, np, lat_probe <= TARGET_LAT_MS ? "met" : "MISSED");
		row("append to first named sample, maximum of a run's probes", "", "%.2f", " ms",
		    pmax, np, "");
	}
	printf("\nReads found in the trace: %" PRIu64 " of %" PRIu64 " records%s. Probes named: "
	       "%d of %d at 999 Hz. Samples of probe code after its append left unnamed, follow "
	       "and latency runs: %" PRIu64 " of %" PRIu64 ". Probe samples named in the control "
	       "runs (no jitdump, no other source of names): %" PRIu64 ". Took %.0f s.\n",
	       seen, records, traced ? "" : " (tracefs was not usable in some runs)",
	       probes_named, probes, unnamed, samples, named_ctl, (jt_now_ns() - t0) / 1e9);
	printf("\nWhere it goes: each 10 ms tick the recorder reads what the file gained, one "
	       "pread() a record of at most 4 KiB (its header, fields and name; the code bytes "
	       "after them are not read), and hands each load on through the reorder buffer "
	       "into the process's code map (45,600 live methods at the end: the RSS it adds). "
	       "When it read each record's header and then the whole record (code bytes "
	       "included, two reads a record), following cost 2.32%% [2.10, 3.24] of one CPU in "
	       "the same bench; a perf profile of that recorder (`perf record -g -F 4999 -p`) "
	       "put 47%% of its CPU in pread() (system calls are dear in this VM), 12%% in "
	       "joining the loads into the code map and 14%% in the poll loop every run has.\n");
	if (cpu_follow > TARGET_CPU)
		printf("MISSED: following a jitdump growing at 10 MiB/s costs the recorder %.2f%% "
		       "of one CPU (target <= 5%%)\n", cpu_follow);
	if (nr && lat_read > TARGET_LAT_MS)
		printf("MISSED: a jitdump record is read %.1f ms after its append, median (target "
		       "<= 50 ms)\n", lat_read);
	if (np && lat_probe > TARGET_LAT_MS)
		printf("MISSED: new jitdump code is first sampled with its name %.1f ms after its "
		       "record's append, median (target <= 50 ms)\n", lat_probe);
	if (!np)
		printf("MISSED: no probe code was sampled with its name: the latency to use is "
		       "not measured\n");
	fprintf(stderr, "bench_jitdump: %.0f s\n", (jt_now_ns() - t0) / 1e9);
	return 0;
}
