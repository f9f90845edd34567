// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record` naming JIT code from perf's jitdump files alone (jit-PID.dump, found by
 * the executable mapping of it that announces it): the toy JIT telling of its code only in a
 * jitdump (no agent, no perf map), its CPU split and code re-written at one address; its
 * debug info as source lines in the report and in pprof (`go tool pprof -lines`); Node's
 * --perf-prof; and a process writing a perf map and a jitdump for the same code, each method
 * defined once. Needs root; the Node test needs /usr/bin/node, the pprof check go (Debian's
 * golang-go).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"
#include "rt.h"

#define NODE "/usr/bin/node"
#define HOT_JS "tests/runtimes/node/hot_jitdump.js"
#define TOY_CODE_MAX 16

/* A function of the toy JIT, where and when it was live (from its output). */
struct toy_code {
	char name[64];
	uint64_t start, size;
	uint64_t from, to;	/* CLOCK_MONOTONIC; [0, UINT64_MAX) unless re-written over */
};

struct toy_run {
	struct it_toy t;	/* pid, switch times */
	struct toy_code code[TOY_CODE_MAX];
	int ncode;
	char dump_path[PATH_MAX];	/* "jitdump path=" */
	bool perfmap;			/* "perfmap path=": the toy wrote a map itself */
};

/* What the log says the toy's samples were doing, against where its code really was. */
struct toy_stats {
	uint64_t samples;	/* of the toy's pid */
	uint64_t in_code;	/* leaf in a toy function live then (the switch itself left out) */
	uint64_t right;		/* ... named by that function */
	uint64_t wrong;		/* ... named by another method */
	uint64_t unnamed;	/* ... named by nothing */
	uint64_t in_switch;	/* leaf at re-written code during the switch: neither was live */
	uint64_t foreign;	/* a frame naming another process's method */
	uint64_t leaf[TOY_CODE_MAX];	/* leaf samples named by each function */
};

/* The toy's lines: "method NAME id=ID start=0xS size=0xZ", "jitdump path=P", and
 * it_toy_parse's. Code written where earlier code was is live from the switch's end, the
 * earlier code until the switch's beginning. */
static void toy_run_parse(const char *path, struct toy_run *r)
{
	FILE *f = fopen(path, "r");
	char line[PATH_MAX + 64], name[64];
	unsigned long long start, size;
	int i, k;

	memset(r, 0, sizeof(*r));
	it_toy_parse(path, &r->t);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "method %63s id=%*u start=0x%llx size=0x%llx", name, &start,
			   &size) == 3) {
			struct toy_code *c = &r->code[r->ncode];

			assert_true(r->ncode < TOY_CODE_MAX);
			snprintf(c->name, sizeof(c->name), "%s", name);
			c->start = start;
			c->size = size;
			c->from = 0;
			c->to = UINT64_MAX;
			r->ncode++;
		} else if (!strncmp(line, "jitdump path=", 13)) {
			line[strcspn(line, "\n")] = 0;
			assert_true(strlen(line + 13) < sizeof(r->dump_path));
			memcpy(r->dump_path, line + 13, strlen(line + 13) + 1);
		} else if (!strncmp(line, "perfmap path=", 13)) {
			r->perfmap = true;
		}
	}
	fclose(f);
	assert_true(r->t.done);
	for (k = 0; k < r->ncode; k++)
		for (i = 0; i < k; i++)
			if (r->code[i].start < r->code[k].start + r->code[k].size &&
			    r->code[k].start < r->code[i].start + r->code[i].size) {
				assert_true(r->t.switch_begin && r->t.switch_end);
				r->code[i].to = r->t.switch_begin;
				r->code[k].from = r->t.switch_end;
			}
}

static int toy_code_index(const struct toy_run *r, const char *name)
{
	int k;

	for (k = 0; k < r->ncode; k++)
		if (!strcmp(r->code[k].name, name))
			return k;
	fail_msg("the toy JIT made no %s", name);
	return -1;
}

/* The sample's first user frame: its address, and the method naming it (or NULL). */
static bool leaf_user(const struct it_log *log, const struct jt_rec_sample *s, uint64_t *addr,
		      const struct jt_rec_method **m)
{
	unsigned int k;

	*m = NULL;
	for (k = 0; k < s->nr_frames; k++) {
		uint64_t ref = s->frames[k].ref;

		if (it_frame_is_kernel(log, &s->frames[k]))
			continue;
		if (JT_FRAME_KIND(ref) == JT_FRAME_METHOD) {
			*m = it_method(log, JT_FRAME_ID(ref));
			assert_non_null(*m);
			*addr = (*m)->start + s->frames[k].off;
			return true;
		}
		*addr = s->frames[k].off;
		return JT_FRAME_KIND(ref) == JT_FRAME_USER;	/* modules and symbols: not JIT */
	}
	return false;
}

static void toy_count(const struct it_log *log, const struct toy_run *r, struct toy_stats *st)
{
	uint32_t pid = (uint32_t)r->t.pid;
	size_t i;
	unsigned int k;
	int c;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;
		uint64_t addr;
		bool at_code = false;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		st->samples++;
		for (k = 0; k < s->nr_frames; k++) {
			m = JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_METHOD ?
				    it_method(log, JT_FRAME_ID(s->frames[k].ref)) : NULL;
			st->foreign += m && m->pid != pid;
		}
		m = it_leaf_method(log, s);
		for (c = 0; m && c < r->ncode; c++)
			st->leaf[c] += it_name_is(m, r->code[c].name);
		if (!leaf_user(log, s, &addr, &m))
			continue;
		for (c = 0; c < r->ncode; c++) {
			const struct toy_code *tc = &r->code[c];

			if (addr < tc->start || addr >= tc->start + tc->size)
				continue;
			at_code = true;
			if (s->h.ts >= tc->from && s->h.ts < tc->to)
				break;
		}
		if (c == r->ncode) {
			st->in_switch += at_code;
			continue;
		}
		st->in_code++;
		if (!m)
			st->unnamed++;
		else if (it_name_is(m, r->code[c].name) && m->pid == pid)
			st->right++;
		else
			st->wrong++;
	}
	print_message("pid %d: %llu samples, %llu in its JIT code: %llu named right, %llu wrong, "
		      "%llu unnamed; %llu at re-written code during the switch; %llu foreign "
		      "frames\n", r->t.pid, (unsigned long long)st->samples,
		      (unsigned long long)st->in_code, (unsigned long long)st->right,
		      (unsigned long long)st->wrong, (unsigned long long)st->unnamed,
		      (unsigned long long)st->in_switch, (unsigned long long)st->foreign);
}

/* Methods of pid called name, and whether each came from src. */
static int count_defined(const struct it_log *log, uint32_t pid, const char *name, int src,
			 int *from_src)
{
	int n = 0;
	size_t i;

	*from_src = 0;
	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (m && m->pid == pid && it_name_is(m, name)) {
			n++;
			*from_src += m->src == src;
		}
	}
	return n;
}

/* Every method of pid came from the jitdump. */
static void assert_all_from_jitdump(const struct it_log *log, uint32_t pid)
{
	size_t i, n = 0;

	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (!m || m->pid != pid)
			continue;
		n++;
		if (m->src != JT_SRC_JITDUMP)
			fail_msg("pid %u: method %.*s came from %u, not the jitdump", pid,
				 (int)m->name_len, m->name, m->src);
	}
	print_message("pid %u: %zu methods, all from the jitdump\n", pid, n);
	assert_true(n > 0);
}

/* A perf map of pid in /tmp: false for a runtime that must have written none. */
static bool has_perf_map(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return !access(path, F_OK);
}

static void remove_perf_map(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
}

/* A fresh scratch subdirectory for a runtime's files. */
static char *make_subdir(const char *tag)
{
	char name[64], *dir;

	snprintf(name, sizeof(name), "%s.d", tag);
	dir = it_path_dup(name);
	if (mkdir(dir, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
	return dir;
}

/* Remove dir and the files in it (a jitdump, whatever else a runtime left). */
static void remove_subdir(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_true(asprintf(&p, "%s/%s", dir, de->d_name) > 0);
		if (unlink(p))
			print_message("unlink %s: %s\n", p, strerror(errno));
		free(p);
	}
	if (d)
		closedir(d);
	if (rmdir(dir))
		print_message("rmdir %s: %s\n", dir, strerror(errno));
	free(dir);
}

/* Record `toyjit SCENARIO --ms MS --jitdump-dir DIR [--perf-map]` at 999 Hz. */
static void record_toy(const char *tag, const char *scenario, const char *ms, bool perf_map,
		       struct it_log *log, struct toy_run *r)
{
	char name[64], *dir = make_subdir(tag), *log_path, *out;
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", NULL, "--", IT_TOYJIT,
			 (char *)scenario, "--ms", (char *)ms, "--jitdump-dir", dir,
			 perf_map ? "--perf-map" : NULL, NULL };
	bool perf_map_seen;
	int status;

	snprintf(name, sizeof(name), "%s.jtl", tag);
	log_path = it_path_dup(name);
	snprintf(name, sizeof(name), "%s.out", tag);
	out = it_path_dup(name);
	argv[5] = log_path;
	status = it_run(argv, out, NULL);
	remove_subdir(dir);	/* the jitdump, whatever happened */
	assert_int_equal(status, 0);
	toy_run_parse(out, r);
	assert_true(r->dump_path[0]);
	assert_int_equal(r->perfmap, perf_map);
	perf_map_seen = has_perf_map(r->t.pid);
	remove_perf_map(r->t.pid);
	assert_int_equal(perf_map_seen, perf_map);	/* without it, the jitdump only */
	it_log_load(log_path, log);
	it_check_promises(log);
	free(log_path);
	free(out);
}

/*
 * The toy JIT with no agent and no perf map: every method of it is from the jitdump, hot_a
 * and hot_b split 3:1 as it did the work, and every sample in its code is named by the
 * function that was there.
 */
static void test_toy_jitdump_only_split(void **state)
{
	struct toy_stats st;
	struct toy_run r;
	struct it_log log;
	int a, b;

	(void)state;
	record_toy("split", "split", "3000", false, &log, &r);
	toy_count(&log, &r, &st);
	assert_all_from_jitdump(&log, (uint32_t)r.t.pid);
	a = toy_code_index(&r, "hot_a");
	b = toy_code_index(&r, "hot_b");
	/* the toy's own loop around the calls: 1-2 points seen */
	it_assert_share_near("leaf samples in hot_a of hot_a and hot_b", st.leaf[a],
			     st.leaf[a] + st.leaf[b], 0.75, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	it_assert_share_at_least("samples in the toy's code named right", st.right, st.in_code,
				 0.95, "the file is found within the reorder window: all but 0-5 of "
				 "3000 seen");
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
}

/*
 * new_fn written over old_fn at the same address mid-run, told by a second code load in the
 * jitdump (the format has no unload): old_fn and new_fn each ran for the same CPU time, and
 * no sample on either side of the switch is named by the function that was not there then.
 */
static void test_toy_jitdump_reused_address(void **state)
{
	struct toy_stats st;
	struct toy_run r;
	struct it_log log;
	int o, n;

	(void)state;
	record_toy("recompile", "recompile", "1500", false, &log, &r);
	o = toy_code_index(&r, "old_fn");
	n = toy_code_index(&r, "new_fn");
	assert_int_equal(r.code[o].start, r.code[n].start);	/* the test did reuse it */
	print_message("switch %llu ns long\n",
		      (unsigned long long)(r.t.switch_end - r.t.switch_begin));
	toy_count(&log, &r, &st);
	assert_all_from_jitdump(&log, (uint32_t)r.t.pid);
	/* the same caller around each: under a point seen */
	it_assert_share_near("leaf samples in old_fn of old_fn and new_fn", st.leaf[o],
			     st.leaf[o] + st.leaf[n], 0.5, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	it_assert_share_at_least("samples in the toy's code named right", st.right, st.in_code,
				 0.95, "the new load is read within the reorder window: all but 0-3 "
				 "of 3000 seen");
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
}

/*
 * A perf map and a jitdump for the same code, as Node writes with --perf-basic-prof and
 * --perf-prof both: no function is defined twice, whichever file was read first (a method is
 * defined when a record first names it, so one never sampled is not defined at all).
 */
static void test_toy_perf_map_and_jitdump(void **state)
{
	static const char *const names[] = { "toy_calibrate", "hot_a", "hot_b", "toy_dispatch" };
	struct toy_stats st;
	struct toy_run r;
	struct it_log log;
	char name[64];
	size_t k, i, mine = 0;
	int a, b, jd, n;

	(void)state;
	record_toy("both", "split", "2000", true, &log, &r);
	toy_count(&log, &r, &st);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		n = count_defined(&log, (uint32_t)r.t.pid, names[k], JT_SRC_JITDUMP, &jd);
		print_message("%s: defined %d times, %d from the jitdump\n", names[k], n, jd);
	}
	/* every method of the toy, whatever its name, is defined once */
	for (i = 1; i < log.nr_methods; i++) {
		const struct jt_rec_method *m = log.methods[i];

		if (!m || m->pid != (uint32_t)r.t.pid)
			continue;
		mine++;
		snprintf(name, sizeof(name), "%.*s", (int)m->name_len, m->name);
		n = count_defined(&log, m->pid, name, JT_SRC_JITDUMP, &jd);
		if (n != 1)
			fail_msg("pid %u: %s defined %d times", m->pid, name, n);
	}
	print_message("pid %d: %zu methods, each defined once\n", r.t.pid, mine);
	/* hot_a and hot_b are sampled, so defined */
	assert_int_equal(count_defined(&log, (uint32_t)r.t.pid, "hot_a", JT_SRC_JITDUMP, &jd), 1);
	assert_int_equal(count_defined(&log, (uint32_t)r.t.pid, "hot_b", JT_SRC_JITDUMP, &jd), 1);
	a = toy_code_index(&r, "hot_a");
	b = toy_code_index(&r, "hot_b");
	it_assert_share_near("leaf samples in hot_a of hot_a and hot_b", st.leaf[a],
			     st.leaf[a] + st.leaf[b], 0.75, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
}

/* The toy's "debug NAME file=F lines=L@0xA,L+1@0xB,L+2@0xC" line for name. */
struct toy_debug {
	char file[64];
	unsigned int line[3];
	unsigned long long addr[3];
};

static void toy_debug_parse(const char *path, const char *name, struct toy_debug *d)
{
	FILE *f = fopen(path, "r");
	char line[512], pat[128];
	bool found = false;

	assert_non_null(f);
	snprintf(pat, sizeof(pat), "debug %s file=%%63s lines=%%u@0x%%llx,%%u@0x%%llx,%%u@0x%%llx",
		 name);
	while (!found && fgets(line, sizeof(line), f))	/* the file's name has no space */
		found = sscanf(line, pat, d->file, &d->line[0], &d->addr[0], &d->line[1],
			       &d->addr[1], &d->line[2], &d->addr[2]) == 7;
	fclose(f);
	if (!found)
		fail_msg("the toy printed no debug info for %s", name);
}

/* The line the toy's debug info gives addr: the last entry at or below it. */
static unsigned int toy_line_at(const struct toy_debug *d, unsigned long long addr)
{
	int k;

	for (k = 2; k >= 0; k--)
		if (addr >= d->addr[k])
			return d->line[k];
	fail_msg("0x%llx is before the debug info's first entry 0x%llx", addr, d->addr[0]);
	return 0;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	assert_non_null(buf);
	buf[len] = '\0';
	return buf;
}

/* The first of these that is there: the go command, from Debian's golang-go or upstream. */
static const char *find_go(void)
{
	static const char *const where[] = { "/usr/bin/go", "/usr/lib/go/bin/go",
					     "/usr/local/go/bin/go" };
	size_t k;

	for (k = 0; k < sizeof(where) / sizeof(where[0]); k++)
		if (!access(where[k], X_OK))
			return where[k];
	return NULL;
}

/*
 * The toy JIT's jitdump with debug info (SCENARIO.toy, per function its entry, body and
 * return lines): `jitrace report` gives each of hot_a's hot offsets the line the toy's own
 * debug info puts there, the top one in its body (where split spins); the pprof export read
 * by `go tool pprof -lines -top` names hot_a at that line, and toy_dispatch at its body's,
 * where it calls hot_a (a caller's line is its call's).
 */
static void test_toy_jitdump_source_lines(void **state)
{
	char *log_path = it_path_dup("lines.jtl"), *toy_out = it_path_dup("lines.out");
	char *rep_out = it_path_dup("lines.report"), *pb = it_path_dup("lines.pb.gz");
	char *top_out = it_path_dup("lines.top"), *top_err = it_path_dup("lines.top.err");
	char *report_argv[] = { IT_JITRACE, "report", log_path, NULL };
	char *export_argv[] = { IT_JITRACE, "export", "--format", "pprof", "-o", pb, "-f",
				log_path, NULL };
	char want[160], *text, *row, *p, *nl;
	struct toy_debug hot, dispatch;
	const char *go = find_go();
	unsigned long long off;
	struct toy_run r;
	struct it_log log;
	int checked = 0, a;

	(void)state;
	record_toy("lines", "split", "2000", false, &log, &r);
	toy_debug_parse(toy_out, "hot_a", &hot);
	toy_debug_parse(toy_out, "toy_dispatch", &dispatch);
	a = toy_code_index(&r, "hot_a");
	assert_int_equal(hot.addr[0], r.code[a].start);
	print_message("hot_a: %s lines %u@0x%llx, %u@0x%llx, %u@0x%llx\n", hot.file,
		      hot.line[0], hot.addr[0], hot.line[1], hot.addr[1], hot.line[2],
		      hot.addr[2]);

	assert_int_equal(it_run(report_argv, rep_out, NULL), 0);
	text = read_text(rep_out);
	row = strstr(text, "  jit     hot_a\n");	/* the first: the all-processes table */
	assert_non_null(row);
	p = strchr(row, '\n') + 1;
	nl = strchr(p, '\n');
	assert_non_null(nl);
	*nl = '\0';
	print_message("report: hot_a%s\n", p + strspn(p, " ") - 1);
	p = strstr(p, "hot offsets:");
	assert_non_null(p);
	for (p += strlen("hot offsets:"); p && sscanf(p, " +0x%llx", &off) == 1; checked++) {
		unsigned int line = toy_line_at(&hot, hot.addr[0] + off);
		char *end = strchr(p, ',');

		if (end)
			*end = '\0';
		snprintf(want, sizeof(want), "%% %s:%u", hot.file, line);
		if (!strstr(p, want))
			fail_msg("hot_a +0x%llx: the report says \"%s\", the toy's debug info %s:%u",
				 off, p, hot.file, line);
		if (!checked)	/* the hottest: in the body, where split spins */
			assert_int_equal(line, hot.line[1]);
		p = end ? end + 1 : NULL;
	}
	assert_true(checked > 0);
	free(text);

	assert_int_equal(it_run(export_argv, NULL, NULL), 0);
	if (go) {
		char *top_argv[] = { (char *)go, "tool", "pprof", "-lines", "-top", pb, NULL };

		assert_int_equal(it_run(top_argv, top_out, top_err), 0);
		text = read_text(top_out);
		print_message("%s tool pprof -lines -top:\n%s", go, text);
		snprintf(want, sizeof(want), " hot_a %s:%u\n", hot.file, hot.line[1]);
		assert_non_null(strstr(text, want));
		snprintf(want, sizeof(want), " toy_dispatch %s:%u\n", dispatch.file,
			 dispatch.line[1]);
		assert_non_null(strstr(text, want));
		free(text);
	}
	it_log_free(&log);
	free(log_path);
	free(toy_out);
	free(rep_out);
	free(pb);
	free(top_out);
	free(top_err);
	if (!go) {
		print_message("go is missing (Debian's golang-go, not installable here): "
			      "`go tool pprof -lines` on the export not checked\n");
		skip();
	}
}

/* Run argv in dir, stdout to out. Returns the exit status. */
static int run_in(const char *dir, char *const argv[], const char *out)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || chdir(dir))
			_exit(126);
		close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	return it_wait(pid);
}

/* Methods named in samples of pid: all from the jitdump. */
static void assert_samples_named_by_jitdump(const struct it_log *log, uint32_t pid)
{
	uint64_t frames = 0;
	size_t i;
	unsigned int k;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		for (k = 0; k < s->nr_frames; k++) {
			const struct jt_rec_method *m;

			if (JT_FRAME_KIND(s->frames[k].ref) != JT_FRAME_METHOD)
				continue;
			m = it_method(log, JT_FRAME_ID(s->frames[k].ref));
			assert_non_null(m);
			if (m->src != JT_SRC_JITDUMP)
				fail_msg("a sample of pid %u names %.*s from source %u", pid,
					 (int)m->name_len, m->name, m->src);
			frames++;
		}
	}
	print_message("pid %u: %llu method frames in samples, all from the jitdump\n", pid,
		      (unsigned long long)frames);
	assert_true(frames > 0);
}

/* A TurboFan method of fn from the jitdump, named as V8 names it:
 * "JS:*hotA /.../hot_jitdump.js:L:C". */
static bool has_v8_jitdump_method(const struct it_log *log, uint32_t pid, const char *fn)
{
	char prefix[64];
	size_t i;

	snprintf(prefix, sizeof(prefix), "JS:*%s /", fn);
	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (m && m->pid == pid && m->src == JT_SRC_JITDUMP && rt_name_has_prefix(m, prefix) &&
		    memmem(m->name, m->name_len, "/tests/runtimes/node/hot_jitdump.js:", 36))
			return true;
	}
	return false;
}

/* Leaf samples of the program's main thread inside its calls, by the function they name. */
static void count_leaf_in_spans(const struct it_log *log, struct rt_truth *t, uint64_t *leaf)
{
	char fn[64];
	size_t i;
	int f;

	memset(leaf, 0, RT_FNS * sizeof(*leaf));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)t->pid || s->tid != s->pid ||
		    !rt_span_at(t, s->h.ts))
			continue;
		m = it_leaf_method(log, s);
		if (m && rt_node_fn(m, fn, sizeof(fn)) && (f = rt_fn_index(t, fn, false)) >= 0)
			leaf[f]++;
	}
}

/*
 * `node --perf-prof` (a jitdump, no perf map) run in a scratch directory, where V8 writes
 * jit-PID.dump: hotA and hotB named from the jitdump alone, split 3:1 as the program did the
 * work, and no sample inside a call of one named by the other. V8 writes the file through a
 * 4 KiB stdio buffer, so the program warms up, then has V8 push its hot code's records out
 * (hot_jitdump.js), and the calls it reports come after that.
 */
static void test_node_perf_prof(void **state)
{
	char jitrace[PATH_MAX], script[PATH_MAX], *dir, *log_path, *out;
	char *argv[] = { jitrace, "record", "-F", "999", "-o", NULL, "--", NODE, "--perf-prof",
			 "--logfile=/dev/null", "--interpreted-frames-native-stack", script,
			 "3500", NULL };
	uint64_t leaf[RT_FNS];
	int status;
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;

	(void)state;
	if (access(NODE, X_OK)) {
		print_message("%s is missing: the Node jitdump test skipped\n", NODE);
		skip();
	}
	assert_non_null(realpath(IT_JITRACE, jitrace));
	assert_non_null(realpath(HOT_JS, script));
	dir = make_subdir("node");
	log_path = it_path_dup("node.jtl");
	out = it_path_dup("node.out");
	argv[5] = log_path;
	status = run_in(dir, argv, out);
	remove_subdir(dir);	/* jit-PID.dump, whatever happened */
	assert_int_equal(status, 0);
	rt_truth_parse(out, &t);
	assert_false(has_perf_map(t.pid));	/* --perf-prof writes no map */
	it_log_load(log_path, &log);
	it_check_promises(&log);
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	assert_samples_named_by_jitdump(&log, (uint32_t)t.pid);
	assert_true(has_v8_jitdump_method(&log, (uint32_t)t.pid, "hotA"));
	assert_true(has_v8_jitdump_method(&log, (uint32_t)t.pid, "hotB"));
	count_leaf_in_spans(&log, &t, leaf);
	/* the loop around the calls and V8's own code: 0.3-1.1 points seen */
	rt_assert_share("leaf samples inside calls", &t, leaf, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.9,
			"V8's GC and frameless builtins: 0.1-0.2% elsewhere seen");
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	rt_truth_free(&t);
	free(log_path);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toy_jitdump_only_split),
		cmocka_unit_test(test_toy_jitdump_reused_address),
		cmocka_unit_test(test_toy_perf_map_and_jitdump),
		cmocka_unit_test(test_toy_jitdump_source_lines),
		cmocka_unit_test(test_node_perf_prof),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_jitdump: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
