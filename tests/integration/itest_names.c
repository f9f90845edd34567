// SPDX-License-Identifier: GPL-2.0
/*
 * Every frame named (issue 12): processes too brief for /proc to outlive them, the uprobe
 * trampoline that --calls recordings sample, stacks whose frame pointers loop, and perf
 * maps written after the samples that needed them. Needs root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"

#define BLIP "build/tests/blip"
#define BLIP_RUNS "20"
#define SPLIT "build/tests/split"

/* Whether pid was described (a proc record) under comm. */
static bool proc_is(const struct it_log *log, uint32_t pid, const char *comm)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_proc *p = (const void *)log->recs[i];

		if (p->h.type == JT_REC_PROC && p->pid == pid && !strcmp(p->comm, comm))
			return true;
	}
	return false;
}

/* The name of a sample's user leaf, into buf. */
static void leaf_name(const struct it_log *log, const struct jt_rec_sample *s, char *buf,
		      size_t len)
{
	unsigned int i;

	for (i = 0; i < s->nr_frames && it_frame_is_kernel(log, &s->frames[i]); i++)
		;
	buf[0] = 0;
	if (i < s->nr_frames)
		it_frame_name(log, &s->frames[i], buf, len);
}

/*
 * Record cmd run BLIP_RUNS times in a row by sh into log_path; count the samples of the
 * processes described under comm, their processes, and the samples whose user leaf is fn.
 */
static void record_runs(const char *log_path, const char *cmd, const char *comm,
			const char *fn, uint64_t *samples, uint64_t *named, uint64_t *pids)
{
	char loop[256];
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", (char *)log_path, "--",
			 "sh", "-c", loop, NULL };
	uint32_t last_pid = 0;
	struct it_log log;
	char name[256];
	size_t i;

	snprintf(loop, sizeof(loop), "for i in $(seq " BLIP_RUNS "); do %s; done", cmd);
	assert_int_equal(it_run(argv, NULL, NULL), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	*samples = *named = *pids = 0;
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];

		if (s->h.type != JT_REC_SAMPLE || !proc_is(&log, s->pid, comm))
			continue;
		++*samples;
		*pids += s->pid != last_pid;
		last_pid = s->pid;
		leaf_name(&log, s, name, sizeof(name));
		*named += !strcmp(name, fn);
	}
	print_message("%llu samples in about %llu %s processes, %llu in %s\n",
		      (unsigned long long)*samples, (unsigned long long)*pids, comm,
		      (unsigned long long)*named, fn);
	it_log_free(&log);
}

/*
 * A native program that spins 60 ms (times it_scale()) and exits, run 20 times: each is gone
 * long before its samples are joined, yet its frames carry its symbols (its mappings were
 * recorded as they were made, its file read while it could be), and report shows its comm
 * and command line.
 */
static void test_short_lived_natives_are_named(void **state)
{
	char *log_path = it_path_dup("blip.jtl"), *rep = it_path_dup("blip.txt");
	char ms[16], cmd[64], shown[80];
	char *rargv[] = { IT_JITRACE, "report", log_path, NULL };
	uint64_t blip, named, pids;
	char *text;

	(void)state;
	snprintf(cmd, sizeof(cmd), BLIP " %s", it_scaled(ms, sizeof(ms), 60));
	snprintf(shown, sizeof(shown), "\n   %s\n", cmd);
	record_runs(log_path, cmd, "blip", "blip_spin", &blip, &named, &pids);
	/* perf names 91% of the same run; what is not blip_spin is the loader and exec */
	it_assert_share_at_least("blip samples named blip_spin", named, blip, 0.85,
				 "the issue's floor");
	assert_true(blip >= IT_MIN_SAMPLES);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	assert_non_null(strstr(text, "== blip ("));
	assert_non_null(strstr(text, shown));	/* its command line */
	free(text);
	free(rep);
	free(log_path);
}

/*
 * The same through a wrapper (env: a second exec of each pid), of blip built as split, its
 * code in its second executable segment, as node's is: the mappings taken at exec must hold
 * it, since each process is gone before /proc could be read.
 */
static void test_wrapped_natives_are_named_from_their_second_segment(void **state)
{
	char *log_path = it_path_dup("split.jtl");
	char ms[16], cmd[64];
	uint64_t split, named, pids;

	(void)state;
	snprintf(cmd, sizeof(cmd), "env " SPLIT " %s", it_scaled(ms, sizeof(ms), 60));
	record_runs(log_path, cmd, "split", "blip_spin", &split, &named, &pids);
	it_assert_share_at_least("split samples named blip_spin", named, split, 0.85,
				 "as blip's");
	assert_true(split >= IT_MIN_SAMPLES);
	free(log_path);
}

/*
 * A --calls recording through the uprobes (--calls-via uprobe: the buffers, the default, take
 * no uprobe a call) samples the uprobe trampoline its probes call (the kernel maps it
 * itself, not by mmap, and it goes with the process): those frames are the trampoline's,
 * never a bare address in its page.
 */
static void test_uprobe_trampoline_is_named(void **state)
{
	char *log_path = it_path_dup("tramp.jtl"), *out = it_path_dup("tramp.out");
	char *argv[] = { IT_JITRACE, "record", "--calls-via", "uprobe", "-F", "999", "-f", "-o",
			 log_path, "--", IT_TOYJIT, "calls", "toy_a=200000", "toy_b=50000", NULL };
	uint64_t in_tramp = 0, bare_in_page = 0, samples = 0;
	uint64_t pages[16];
	size_t i, npages = 0, k;
	struct it_log log;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_module *m = (const void *)log.recs[i];

		if (m->h.type == JT_REC_MODULE && npages < 16 &&
		    m->path_len == strlen("[uprobes-trampoline]") &&
		    !memcmp(m->path, "[uprobes-trampoline]", m->path_len))
			pages[npages++] = m->start;
	}
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		unsigned int f;

		if (s->h.type != JT_REC_SAMPLE)
			continue;
		samples++;
		for (f = 0; f < s->nr_frames; f++) {
			const struct jt_frame *fr = &s->frames[f];
			const struct jt_rec_module *m = NULL;

			if (JT_FRAME_KIND(fr->ref) == JT_FRAME_USER) {
				for (k = 0; k < npages; k++)
					bare_in_page += fr->off - pages[k] < 4096;
				continue;
			}
			if (JT_FRAME_KIND(fr->ref) != JT_FRAME_MODULE)
				continue;
			for (k = 0; k < log.n && !m; k++) {
				m = (const void *)log.recs[k];
				if (m->h.type != JT_REC_MODULE || m->id != JT_FRAME_ID(fr->ref))
					m = NULL;
			}
			in_tramp += m && m->path_len == strlen("[uprobes-trampoline]") &&
				    !memcmp(m->path, "[uprobes-trampoline]", m->path_len);
		}
	}
	print_message("%llu of %llu samples in [uprobes-trampoline] (%zu pages); %llu bare "
		      "addresses in its pages\n", (unsigned long long)in_tramp,
		      (unsigned long long)samples, npages, (unsigned long long)bare_in_page);
	/* every enter and leave goes through it: it cannot go unsampled */
	assert_true(npages > 0);
	assert_true(in_tramp > 0);
	assert_int_equal(bare_in_page, 0);
	it_log_free(&log);
	free(out);
	free(log_path);
}

/* The test directory's TAG.EXT. */
static char *tagged(const char *tag, const char *ext)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.%s", tag, ext);
	return it_path_dup(name);
}

/* Remove the perf map the toy JIT's output at out names (perfmap path=...). */
static void remove_map_of(const char *out)
{
	char *text = it_slurp(out), *at = strstr(text, "perfmap path="), path[128];

	if (at && sscanf(at + 13, "%127s", path) == 1)
		unlink(path);
	free(text);
}

/* Deepest stack, in frames, of the folded output at path. */
static unsigned int folded_depth(const char *path)
{
	char *text = it_slurp(path), *p;
	unsigned int depth = 1, max = 0;

	for (p = text; *p; p++) {
		if (*p == ';')
			depth++;
		if (*p == '\n') {
			if (depth > max)
				max = depth;
			depth = 1;
		}
	}
	free(text);
	return max;
}

#define SVG_ROW_PX 16	/* a flame graph's frame row */
/* frames a stack sampled by chance may add to a run's deepest; a frame-pointer loop, 120 */
#define LOOP_SLACK 16

static unsigned int svg_height(const char *path)
{
	char *text = it_slurp(path), *p = strstr(text, "<svg ");
	unsigned int h = 0;

	assert_non_null(p);
	p = strstr(p, " height=\"");
	assert_non_null(p);
	h = strtoul(p + 9, NULL, 10);
	free(text);
	return h;
}

/*
 * Record the split scenario, with its stack broken by option how ("--fp-loop",
 * "--fp-astray") or not (NULL); its folded depth and SVG height.
 */
static void record_split(const char *tag, char *how, struct it_log *log, unsigned int *depth,
			 unsigned int *height)
{
	char *log_path, *folded, *svg, *out;
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", NULL, "--", IT_TOYJIT,
			 "split", "--ms", "1000", how, NULL };
	char *fargv[] = { IT_JITRACE, "flamegraph", "--folded", NULL, NULL };
	char *sargv[] = { IT_JITRACE, "flamegraph", "-f", "-o", NULL, NULL, NULL };

	log_path = tagged(tag, "jtl");
	folded = tagged(tag, "folded");
	svg = tagged(tag, "svg");
	out = tagged(tag, "out");
	argv[6] = log_path;
	fargv[3] = log_path;
	sargv[4] = svg;
	sargv[5] = log_path;
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_int_equal(it_run(fargv, folded, NULL), 0);
	assert_int_equal(it_run(sargv, NULL, NULL), 0);
	it_log_load(log_path, log);
	it_check_promises(log);
	*depth = folded_depth(folded);
	*height = svg_height(svg);
	free(out);
	free(svg);
	free(folded);
	free(log_path);
}

/* What a split recording's broken stacks came to: hot_a's samples and how they end. */
struct cuts {
	uint64_t hot_a;		/* samples with hot_a as their leaf */
	uint64_t cut_hot_a;	/* of those, ending in [truncated] */
	uint64_t cut;		/* every sample ending in [truncated] */
	uint64_t bare;		/* bare addresses in hot_a's stacks */
	unsigned int most;	/* the most frames of a cut stack of hot_a's */
};

static void count_cuts(const struct it_log *log, struct cuts *c)
{
	char name[256];
	size_t i, k;

	*c = (struct cuts){ 0 };
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		bool ends_cut;

		if (s->h.type != JT_REC_SAMPLE || !s->nr_frames)
			continue;
		ends_cut = JT_FRAME_KIND(s->frames[s->nr_frames - 1].ref) == JT_FRAME_TRUNCATED;
		c->cut += ends_cut;
		leaf_name(log, s, name, sizeof(name));
		if (strcmp(name, "hot_a"))
			continue;
		c->hot_a++;
		for (k = 0; k < s->nr_frames; k++)
			c->bare += s->frames[k].ref == JT_FRAME_REF(JT_FRAME_USER, 0);
		if (ends_cut) {
			c->cut_hot_a++;
			if (s->nr_frames > c->most)
				c->most = s->nr_frames;
		}
	}
}

/*
 * hot_a's saved frame pointer points at its own frame while it spins: the kernel walks
 * that frame until its limit, 127 frames. Each such stack is cut after one turn, ends in
 * [truncated] and is counted; the flame graph is no taller than the same program's
 * without the loop.
 */
static void test_frame_pointer_loop_is_cut(void **state)
{
	unsigned int depth, height, depth0, height0;
	struct it_log log, log0;
	struct cuts c;

	(void)state;
	record_split("fploop", "--fp-loop", &log, &depth, &height);
	record_split("noloop", NULL, &log0, &depth0, &height0);
	count_cuts(&log, &c);
	print_message("hot_a %llu samples, %llu cut; %llu cut in all, %llu counted (%llu "
		      "without the loop); folded depth %u (%u), SVG height %u px (%u)\n",
		      (unsigned long long)c.hot_a, (unsigned long long)c.cut_hot_a,
		      (unsigned long long)c.cut,
		      (unsigned long long)it_drops_of(&log, JT_DROP_BROKEN_STACK),
		      (unsigned long long)it_drops_of(&log0, JT_DROP_BROKEN_STACK), depth, depth0,
		      height, height0);
	/* hot_a loops while it spins, all but its first few instructions */
	it_assert_share_at_least("hot_a samples cut", c.cut_hot_a, c.hot_a, 0.95,
				 "hot_a's frame loops for all of its spin");
	assert_true(c.most <= 4);	/* hot_a, toy_dispatch, [truncated] */
	assert_int_equal(it_drops_of(&log, JT_DROP_BROKEN_STACK), c.cut);
	/* without the loop only a chain broken by code without frame pointers (libc's) is cut */
	assert_true(it_drops_of(&log0, JT_DROP_BROKEN_STACK) * 50 <= c.hot_a);
	/*
	 * As deep as the same program's real stacks, give or take what a sample taken by chance
	 * elsewhere adds in either run (a code load's through the agent's stub and the uprobe
	 * trampoline, the loader's: 4 more frames in a CI run): an uncut loop adds over 100.
	 */
	assert_true(depth <= depth0 + LOOP_SLACK);
	assert_true(height <= height0 + LOOP_SLACK * SVG_ROW_PX);
	it_log_free(&log);
	it_log_free(&log0);
}

/*
 * hot_a's return address points into its stack while it spins, as a frame-pointer walk
 * through code that keeps data in rbp finds: its caller lies in memory that holds no code.
 * Each such stack is hot_a then [truncated], counted; no frame is a bare address.
 */
static void test_caller_in_no_code_is_cut(void **state)
{
	unsigned int depth, height;
	struct it_log log;
	struct cuts c;

	(void)state;
	record_split("astray", "--fp-astray", &log, &depth, &height);
	count_cuts(&log, &c);
	print_message("hot_a %llu samples, %llu cut after it; %llu cut in all, %llu counted; "
		      "bare addresses in hot_a's stacks %llu\n", (unsigned long long)c.hot_a,
		      (unsigned long long)c.cut_hot_a, (unsigned long long)c.cut,
		      (unsigned long long)it_drops_of(&log, JT_DROP_BROKEN_STACK),
		      (unsigned long long)c.bare);
	it_assert_share_at_least("hot_a samples cut", c.cut_hot_a, c.hot_a, 0.95,
				 "hot_a's return address is astray for all of its spin");
	assert_int_equal(c.most, 2);	/* hot_a, [truncated] */
	assert_int_equal(it_drops_of(&log, JT_DROP_BROKEN_STACK), c.cut);
	assert_int_equal(c.bare, 0);
	it_log_free(&log);
}

/* The first table's row that names fn: its self samples, *pct its self% (-1: no row). */
static unsigned long row_of(const char *report, const char *fn, double *pct)
{
	const char *p = strstr(report, "== all processes");
	char line[512], name[256];

	*pct = -1;
	if (!p)
		p = strstr(report, "\n== ");
	assert_non_null(p);
	p = strchr(p, '\n') + 1;	/* the column titles */
	for (p = strchr(p, '\n') + 1; *p && *p != '\n' && strncmp(p, "==", 2);
	     p = strchr(p, '\n') + 1) {
		unsigned long self;
		double share;
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (sscanf(line, "%lu %lf%% %*u %*f%% %*s %255[^\n]", &self, &share, name) == 3 &&
		    !strcmp(name, fn)) {
			*pct = share;
			return self;
		}
		if (!p[n])
			break;
	}
	return 0;
}

/* The samples of the first table's row that names fn (its self), 0 if it has none. */
static unsigned long self_count(const char *report, const char *fn)
{
	double pct;

	return row_of(report, fn, &pct);
}

/* The share of the first table's row that names fn (self%), or -1 if it has none. */
static double self_pct(const char *report, const char *fn)
{
	double pct;

	row_of(report, fn, &pct);
	return pct;
}

/* Record the toy JIT writing its perf map only as it ends; the report's text. */
static char *record_map_at_exit(const char *tag, const char *scenario)
{
	char *log_path, *out, *rep, *text;
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", NULL, "--", IT_TOYJIT,
			 (char *)scenario, "--ms", "1000", "--perf-map-at-exit", NULL };
	char *rargv[] = { IT_JITRACE, "report", NULL, NULL };

	log_path = tagged(tag, "jtl");
	out = tagged(tag, "out");
	rep = tagged(tag, "txt");
	argv[6] = log_path;
	rargv[2] = log_path;
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	print_message("%.*s\n", (int)(strstr(text, "\n\n") ? strstr(text, "\n\n") - text : 0),
		      text);
	remove_map_of(out);
	free(rep);
	free(out);
	free(log_path);
	return text;
}

/*
 * A JIT that writes its perf map only as it ends (as a runtime that buffers its map
 * does): every sample met its code before any line was read, and is named late, each by
 * the code that was there; the split is the program's, and report says how many.
 */
static void test_map_written_at_exit_names_late(void **state)
{
	char *text = record_map_at_exit("atexit", "split");
	unsigned long a = self_count(text, "hot_a"), b = self_count(text, "hot_b");

	(void)state;
	assert_non_null(strstr(text, " named late)"));
	/* 3:1 of the two, as the toy writes it (its dispatch loop: 2 points) */
	it_assert_share_near("hot_a of hot_a and hot_b, named late", a, a + b, 0.75, 0.02);
	free(text);
}

/*
 * The same JIT reusing an address (old_fn, then new_fn at the same place) before its lines
 * appear: which ran when cannot be told from them, so no sample there is named by either,
 * never by the wrong one; the code elsewhere is still named late.
 */
static void test_reused_address_is_never_named_late(void **state)
{
	char *text = record_map_at_exit("reuse", "recompile");

	(void)state;
	assert_true(self_pct(text, "old_fn") < 0);
	assert_true(self_pct(text, "new_fn") < 0);
	assert_non_null(strstr(text, " named late)"));	/* toy_caller's frames */
	free(text);
}

/*
 * Frames nothing names aggregate by module and offset across processes: five runs of a
 * stripped copy of the program make one row at its spin loop, not five.
 */
static void test_unnamed_frames_aggregate_across_processes(void **state)
{
	char *copy = it_path_dup("blip-stripped"), *log_path = it_path_dup("stripped.jtl");
	char *rep = it_path_dup("stripped.txt"), cmd[512], *text, *p;
	char *strip[] = { "/usr/bin/strip", "-s", "-o", copy, BLIP, NULL };
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", log_path, "--", "sh", "-c",
			 cmd, NULL };
	char *rargv[] = { IT_JITRACE, "report", "--comm", "blip-stripped", log_path, NULL };
	unsigned long self, total = 0, top = 0;
	double pct;
	char name[256];
	int rows = 0;

	(void)state;
	assert_int_equal(it_run(strip, NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd), "for i in 1 2 3 4 5; do %s; done", copy);
	assert_int_equal(it_run(argv, NULL, NULL), 0);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	p = strstr(text, "== all processes");
	assert_non_null(p);
	/* the rows of the first table: file+offset ones of the stripped program */
	for (p = strchr(strchr(p, '\n') + 1, '\n') + 1; *p && *p != '\n';
	     p = strchr(p, '\n') + 1) {
		if (sscanf(p, "%lu %lf%% %*u %*f%% %*s %255s", &self, &pct, name) == 3 &&
		    !strncmp(name, "blip-stripped+0x", 16)) {
			rows++;
			total += self;
			if (self > top)
				top = self;
		}
		if (!strchr(p, '\n'))
			break;
	}
	print_message("%d rows of blip-stripped+offset, %lu samples, the largest %lu\n", rows,
		      total, top);
	/* the spin loop is two or three instructions: a handful of rows for all five runs */
	assert_true(total >= IT_MIN_SAMPLES);
	assert_true(rows > 0 && rows <= 8);
	/* one run's row holds about a fifth; the loop's hottest instruction 70% seen */
	it_assert_share_at_least("the largest row, of all five runs", top, total, 0.35,
				 "the spin loop's hottest instruction: 70% seen");
	free(text);
	free(rep);
	free(log_path);
	free(copy);
}

/*
 * JIT code nothing names (the toy JIT recorded without its agent, perf map or jitdump) is
 * anonymous executable memory the toy made by mmap and mprotect: its frames are named as
 * such ("[anon exec]"), one row in report, never a bare address; Node's without
 * --perf-basic-prof are "[node jit]".
 */
static void test_anonymous_code_is_named_as_such(void **state)
{
	char *log_path = it_path_dup("anon.jtl"), *rep = it_path_dup("anon.txt");
	char *out = it_path_dup("anon.out");
	char *node_log = it_path_dup("anon-node.jtl"), *node_rep = it_path_dup("anon-node.txt");
	char *argv[] = { IT_JITRACE, "record", "--no-agent", "--no-perfmap", "--no-jitdump", "-F",
			 "999", "-f", "-o", log_path, "--", IT_TOYJIT, "split", "--ms", "600",
			 NULL };
	char *rargv[] = { IT_JITRACE, "report", log_path, NULL };
	char *nargv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", node_log, "--",
			  "/usr/bin/node", "tests/runtimes/node/hot.js", "600", NULL };
	char *nrargv[] = { IT_JITRACE, "report", node_log, NULL };
	uint64_t samples = 0, anon = 0, bare = 0, lo = UINT64_MAX, hi = 0;
	unsigned long long start, size;
	char name[256], *text, *at;
	struct it_log log;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	/* where the toy put its code: "method NAME id=ID start=0xS size=0xZ" */
	text = it_slurp(out);
	for (at = text; (at = strstr(at, "start=0x")); at++)
		if (sscanf(at, "start=0x%llx size=0x%llx", &start, &size) == 2) {
			lo = start < lo ? start : lo;
			hi = start + size > hi ? start + size : hi;
		}
	free(text);
	assert_true(lo < hi);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];

		if (s->h.type != JT_REC_SAMPLE || !proc_is(&log, s->pid, "toyjit"))
			continue;
		samples++;
		leaf_name(&log, s, name, sizeof(name));
		anon += !strcmp(name, "[anon exec]");
		/* a bare address in the JIT code: what must never be */
		bare += !strncmp(name, "0x", 2) && strtoull(name, NULL, 16) >= lo &&
			strtoull(name, NULL, 16) < hi;
	}
	print_message("%llu samples: %llu in [anon exec], %llu bare addresses in its code\n",
		      (unsigned long long)samples, (unsigned long long)anon,
		      (unsigned long long)bare);
	/* toy_dispatch, hot_a and hot_b take all but the start's and the end's CPU */
	it_assert_share_at_least("leaves in the toy's JIT code", anon, samples, 0.9,
				 "the split spins in JIT code after its calibration");
	assert_int_equal(bare, 0);
	it_log_free(&log);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	assert_non_null(strstr(text, "jit     [anon exec]\n"));
	free(text);
	if (!access("/usr/bin/node", X_OK)) {
		assert_int_equal(it_run(nargv, NULL, NULL), 0);
		assert_int_equal(it_run(nrargv, node_rep, NULL), 0);
		text = it_slurp(node_rep);
		assert_non_null(strstr(text, "jit     [node jit]\n"));
		free(text);
	} else {
		print_message("node is not installed: its part is not run\n");
	}
	free(node_rep);
	free(node_log);
	free(out);
	free(rep);
	free(log_path);
}

#define REWRITE_GRACE_NS 1100000000ULL	/* a map's name is looked up again every second */

/*
 * A perf map written anew mid-run (as `jcmd PID Compiler.perfmap` does), hot_a renamed and
 * its line first: in place (truncated, the same file, longer than before), by rename, or
 * unlinked and created again. Each is read again from its start: every sample of hot_a's
 * code more than a second after the rewrite carries the new name, none before it does.
 */
static void map_rewritten(const char *how)
{
	char *log_path = tagged(how, "jtl"), *out = tagged(how, "out"), *text, *at;
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", log_path, "--", IT_TOYJIT,
			 "split", "--ms", "3000", "--perf-map", "--rewrite-map", (char *)how, NULL };
	uint64_t rewrite = 0, old_after = 0, new_after = 0, new_before = 0;
	struct it_log log;
	size_t i;

	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	at = strstr(text, "rewrite ns=");
	assert_non_null(at);
	rewrite = strtoull(at + 11, NULL, 10);
	free(text);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE)
			continue;
		m = it_leaf_method(&log, s);
		if (s->h.ts < rewrite)
			new_before += it_name_is(m, "hot_a_rewritten");
		else if (s->h.ts > rewrite + REWRITE_GRACE_NS) {
			old_after += it_name_is(m, "hot_a");
			new_after += it_name_is(m, "hot_a_rewritten");
		}
	}
	print_message("%s: hot_a_rewritten before the rewrite %llu; more than %.1f s after it, "
		      "hot_a %llu, hot_a_rewritten %llu\n", how, (unsigned long long)new_before,
		      REWRITE_GRACE_NS / 1e9, (unsigned long long)old_after,
		      (unsigned long long)new_after);
	remove_map_of(out);
	assert_int_equal(new_before, 0);
	assert_int_equal(old_after, 0);
	assert_true(new_after >= IT_MIN_SAMPLES);
	it_log_free(&log);
	free(out);
	free(log_path);
}

static void test_map_rewritten_in_place_is_read_again(void **state)
{
	(void)state;
	map_rewritten("inplace");
}

static void test_map_replaced_by_rename_is_read_again(void **state)
{
	(void)state;
	map_rewritten("rename");
}

static void test_map_unlinked_and_created_again_is_read_again(void **state)
{
	(void)state;
	map_rewritten("unlink");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_lived_natives_are_named),
		cmocka_unit_test(test_wrapped_natives_are_named_from_their_second_segment),
		cmocka_unit_test(test_unnamed_frames_aggregate_across_processes),
		cmocka_unit_test(test_uprobe_trampoline_is_named),
		cmocka_unit_test(test_anonymous_code_is_named_as_such),
		cmocka_unit_test(test_frame_pointer_loop_is_cut),
		cmocka_unit_test(test_caller_in_no_code_is_cut),
		cmocka_unit_test(test_map_written_at_exit_names_late),
		cmocka_unit_test(test_reused_address_is_never_named_late),
		cmocka_unit_test(test_map_rewritten_in_place_is_read_again),
		cmocka_unit_test(test_map_replaced_by_rename_is_read_again),
		cmocka_unit_test(test_map_unlinked_and_created_again_is_read_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
