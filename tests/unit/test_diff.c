// SPDX-License-Identifier: GPL-2.0
/* Two logs compared: `jitrace report --diff` (text and JSON) and `jitrace flamegraph --diff`
 * (colours and tooltips), shares normalised by each log's samples; the commands' arguments. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmd/cmds.h"
#include "views/flamegraph.h"
#include "views/report.h"
#include "viewlog.h"

/*
 * One process running main -> dispatch -> hot_a / hot_b, and main -> gone (base) or
 * main -> fresh (new). Base, pid 100 "toy", 50 samples: hot_a 30 (60%), hot_b 10 (20%),
 * gone 10 (20%). New, pid 200 "toy2", 100 samples: hot_a 20 (20%), hot_b 60 (60%), fresh
 * 20 (20%). The methods' ids and addresses differ between the logs; only names carry over.
 * dispatch has 40 samples in one and 80 in the other: the same 80%, no change.
 */
static void write_pair(const char *base, const char *nw)
{
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 1000, .hostname = "h" };
	const struct jt_frame a[] = { M(3, 0), M(2, 0), M(1, 0) };
	const struct jt_frame b[] = { M(4, 0), M(2, 0), M(1, 0) };
	const struct jt_frame g[] = { M(5, 0), M(1, 0) };
	const struct jt_frame na[] = { M(14, 0), M(12, 0), M(11, 0) };
	const struct jt_frame nb[] = { M(13, 0), M(12, 0), M(11, 0) };
	const struct jt_frame nf[] = { M(15, 0), M(11, 0) };
	struct jt_log_writer *w = jt_logw__create(base, &h, true);
	uint64_t ts = VL_MS;

	assert_non_null(w);
	vl_proc(w, 0, 100, "toy", "toy split 3:1");
	vl_method(w, 0, 1, 100, "main");
	vl_method(w, 0, 2, 100, "dispatch");
	vl_method(w, 0, 3, 100, "hot_a");
	vl_method(w, 0, 4, 100, "hot_b");
	vl_method(w, 0, 5, 100, "gone");
	vl_samples(w, &ts, 100, 30, a, 3);
	vl_samples(w, &ts, 100, 10, b, 3);
	vl_samples(w, &ts, 100, 10, g, 2);
	assert_int_equal(jt_logw__close(w), 0);

	w = jt_logw__create(nw, &h, true);
	ts = VL_MS;
	assert_non_null(w);
	vl_proc(w, 0, 200, "toy2", "toy split 1:3");
	vl_method(w, 0, 11, 200, "main");
	vl_method(w, 0, 12, 200, "dispatch");
	vl_method(w, 0, 13, 200, "hot_b");
	vl_method(w, 0, 14, 200, "hot_a");
	vl_method(w, 0, 15, 200, "fresh");
	vl_samples(w, &ts, 200, 60, nb, 3);
	vl_samples(w, &ts, 200, 20, na, 3);
	vl_samples(w, &ts, 200, 20, nf, 2);
	assert_int_equal(jt_logw__close(w), 0);
}

struct pair {
	struct vl_tmp *t;
	char base[320], nw[320];
};

static struct pair *pair_of(void **state)
{
	static struct pair p;

	p.t = *state;
	snprintf(p.base, sizeof(p.base), "%s/base.jtl", p.t->dir);
	snprintf(p.nw, sizeof(p.nw), "%s/new.jtl", p.t->dir);
	return &p;
}

static char *diff_report(const struct pair *p, bool json, enum jt_report_sort sort)
{
	struct jt_report_opts o = { .path = p->nw, .base = p->base, .json = json, .sort = sort,
				    .top = 20 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The row of the table that ends with " name". */
static const char *row_of(const char *text, const char *name)
{
	static char line[512];
	const char *p;
	size_t k = strlen(name), n;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		n = strcspn(p, "\n");
		if (n > k && p[n - k - 1] == ' ' && !memcmp(p + n - k, name, k) &&
		    n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
	}
	fail_msg("no row for %s in:\n%s", name, text);
	return NULL;
}

/*
 * Shares of each log's own samples: hot_a 60% -> 20% is -40 points though its samples
 * fell only from 30 to 20, and dispatch (40 -> 80 samples, 80% of each) did not move.
 * Rows by how far the self share moved, then the total share, then name; a method in one
 * log only is there, at 0 in the other. Methods match by name whatever their ids.
 */
static void test_report_diff_text(void **state)
{
	struct pair *p = pair_of(state);
	char *got, *a, *b, *f;

	write_pair(p->base, p->nw);
	got = diff_report(p, false, JT_REPORT_BY_SELF);
	assert_non_null(strstr(got, "base: "));
	assert_non_null(strstr(got, "   50 samples, 0 calls; lost 0\n"));
	assert_non_null(strstr(got, "   100 samples, 0 calls; lost 0\n"));
	assert_string_equal(row_of(got, "hot_a"), "     30  60.0%      20  20.0%   -40.0       30  "
						  "60.0%      20  20.0%   -40.0  jit     hot_a");
	assert_string_equal(row_of(got, "hot_b"), "     10  20.0%      60  60.0%   +40.0       10  "
						  "20.0%      60  60.0%   +40.0  jit     hot_b");
	assert_string_equal(row_of(got, "gone"), "     10  20.0%       0   0.0%   -20.0       10  "
						 "20.0%       0   0.0%   -20.0  jit     gone");
	assert_string_equal(row_of(got, "dispatch"), "      0   0.0%       0   0.0%    +0.0       "
						     "40  80.0%      80  80.0%    +0.0  jit     "
						     "dispatch");
	a = strstr(got, " hot_a\n");
	b = strstr(got, " hot_b\n");
	f = strstr(got, " fresh\n");
	assert_true(a < b && b < f && f < strstr(got, " gone\n"));
	assert_true(strstr(got, " gone\n") < strstr(got, " dispatch\n"));
	assert_true(strstr(got, " dispatch\n") < strstr(got, " main\n"));
	free(got);
}

static void test_report_diff_json_and_sort_by_total(void **state)
{
	struct pair *p = pair_of(state);
	char *got;

	write_pair(p->base, p->nw);
	got = diff_report(p, true, JT_REPORT_BY_TOTAL);
	assert_non_null(strstr(got, "{\"base\": {\"log\": \""));
	assert_non_null(strstr(got, "\"samples\": 50},\n \"new\": {\"log\": \""));
	assert_non_null(strstr(got, "\"samples\": 100},\n \"sort\": \"total\", \"methods\": [\n"
				    "  {\"name\": \"hot_a\", \"kind\": \"jit\", \"base_self\": 30, "
				    "\"base_self_pct\": 60.00, \"new_self\": 20, "
				    "\"new_self_pct\": 20.00, \"self_change\": -40.00, "
				    "\"base_total\": 30, \"base_total_pct\": 60.00, "
				    "\"new_total\": 20, \"new_total_pct\": 20.00, "
				    "\"total_change\": -40.00},\n"));
	assert_non_null(strstr(got, "{\"name\": \"fresh\", \"kind\": \"jit\", \"base_self\": 0, "
				    "\"base_self_pct\": 0.00, \"new_self\": 20, "));
	assert_non_null(strstr(got, "{\"name\": \"dispatch\", \"kind\": \"jit\", \"base_self\": 0, "
				    "\"base_self_pct\": 0.00, \"new_self\": 0, "
				    "\"new_self_pct\": 0.00, \"self_change\": 0.00, "
				    "\"base_total\": 40, \"base_total_pct\": 80.00, "
				    "\"new_total\": 80, \"new_total_pct\": 80.00, "
				    "\"total_change\": 0.00}"));
	assert_true(strstr(got, "]}\n") && !strstr(got, "]}\n")[3]);
	free(got);
}

static char *diff_flame(const char *base, const char *nw)
{
	struct jt_flame_opts o = { .path = nw, .base = base };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The tooltip (title) and fill of the k-th frame drawn named name, as "TITLE|FILL". */
static const char *frame_of(const char *svg, const char *name, int k)
{
	static char out[512];
	char want[128];
	const char *p = svg, *end, *fill;

	snprintf(want, sizeof(want), "<title>%s\n", name);
	while ((p = strstr(p, want)) && k--)
		p++;
	if (!p)
		return NULL;
	p += 7;
	end = strstr(p, "</title>");
	fill = strstr(end, "fill=\"");
	assert_non_null(end);
	assert_non_null(fill);
	fill += 6;
	snprintf(out, sizeof(out), "%.*s|%.*s", (int)(end - p), p, (int)strcspn(fill, "\""),
		 fill);
	return out;
}

/*
 * The new log's flame graph; each frame red where its share grew, blue where it shrank
 * (the largest change, 40 points, the deepest), grey where it stayed; its tooltip with
 * both counts and the change. The one process of each log matches though their command
 * names differ; what only the base has (gone) is not drawn.
 */
static void test_flamegraph_diff_colours_and_tooltips(void **state)
{
	struct pair *p = pair_of(state);
	char *got;

	write_pair(p->base, p->nw);
	got = diff_flame(p->base, p->nw);
	assert_string_equal(frame_of(got, "hot_a", 0),
			    "hot_a\n20 samples, 20.00%, jit; base: 30 samples, 60.00%; change: "
			    "-40.00 points|rgb(20,20,255)");
	assert_string_equal(frame_of(got, "hot_b", 0),
			    "hot_b\n60 samples, 60.00%, jit; base: 10 samples, 20.00%; change: "
			    "+40.00 points|rgb(255,20,20)");
	assert_string_equal(frame_of(got, "fresh", 0),
			    "fresh\n20 samples, 20.00%, jit; base: 0 samples, 0.00%; change: "
			    "+20.00 points|rgb(255,120,120)");
	assert_string_equal(frame_of(got, "dispatch", 0),
			    "dispatch\n80 samples, 80.00%, jit; base: 40 samples, 80.00%; change: "
			    "+0.00 points|rgb(225,225,225)");
	assert_null(frame_of(got, "gone", 0));
	assert_null(frame_of(got, "toy2", 0));	/* one process: no root for it */
	assert_non_null(strstr(got, ">Flame graph: "));
	assert_non_null(strstr(got, "100 samples at 1000 Hz, 0 lost; base 50 samples; shares of "
				    "each log's samples: red grew, blue shrank"));
	assert_non_null(strstr(got, "function init() {"));	/* the viewer */
	free(got);
}

/*
 * System-wide logs: a root per command name, not per pid (pids differ between
 * recordings): toy's stacks meet though its pid changed; a new program's are all growth.
 */
static void test_flamegraph_diff_matches_processes_by_comm(void **state)
{
	struct pair *p = pair_of(state);
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 1000,
				   .flags = JT_LOG_F_SYSTEM_WIDE };
	const struct jt_frame a[] = { M(1, 0) }, b[] = { M(2, 0) };
	struct jt_log_writer *w = jt_logw__create(p->base, &h, true);
	uint64_t ts = VL_MS;
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 100, "toy", "toy");
	vl_method(w, 0, 1, 100, "hot_a");
	vl_samples(w, &ts, 100, 10, a, 1);
	assert_int_equal(jt_logw__close(w), 0);
	w = jt_logw__create(p->nw, &h, true);
	assert_non_null(w);
	vl_proc(w, 0, 300, "toy", "toy");
	vl_proc(w, 0, 400, "other", "other");
	vl_method(w, 0, 1, 300, "hot_a");
	vl_method(w, 0, 2, 400, "hot_a");
	vl_samples(w, &ts, 300, 5, a, 1);
	vl_samples(w, &ts, 400, 5, b, 1);
	assert_int_equal(jt_logw__close(w), 0);

	got = diff_flame(p->base, p->nw);
	assert_string_equal(frame_of(got, "toy", 0),
			    "toy\n5 samples, 50.00%, process; base: 10 samples, 100.00%; change: "
			    "-50.00 points|rgb(20,20,255)");
	assert_string_equal(frame_of(got, "other", 0),
			    "other\n5 samples, 50.00%, process; base: 0 samples, 0.00%; change: "
			    "+50.00 points|rgb(255,20,20)");
	/* under each, toy's first (the order command names were met in) */
	assert_non_null(strstr(frame_of(got, "hot_a", 0), "; base: 10 samples, 100.00%; "));
	assert_non_null(strstr(frame_of(got, "hot_a", 1), "; base: 0 samples, 0.00%; "));
	assert_true(strstr(got, "<title>toy\n") < strstr(got, "<title>other\n"));
	free(got);
}

/* jt_cmd_NAME(args...) with stderr captured into *err. */
static int run_cmd(int (*cmd)(int, char **), struct vl_tmp *t, char **err, ...)
{
	char *argv[16], path[320];
	int argc = 0, ret, saved, fd;
	va_list ap;
	FILE *f;
	long n;

	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	snprintf(path, sizeof(path), "%s/stderr.txt", t->dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	ret = cmd(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*err = calloc(1, n + 1);
	assert_non_null(*err);
	assert_int_equal(fread(*err, 1, n, f), n);
	fclose(f);
	return ret;
}

/* --diff takes two logs; the flame graph's has no folded form. */
static void test_diff_arguments(void **state)
{
	struct pair *p = pair_of(state);
	char out[340], *err;

	write_pair(p->base, p->nw);
	snprintf(out, sizeof(out), "%s/d.svg", p->t->dir);
	assert_int_equal(run_cmd(jt_cmd_report, p->t, &err, "report", "--diff", p->nw, NULL), 2);
	assert_non_null(strstr(err, "--diff compares two logs: give BASE and NEW"));
	free(err);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, p->t, &err, "flamegraph", "--diff", p->nw,
				 NULL), 2);
	assert_non_null(strstr(err, "--diff compares two logs: give BASE and NEW"));
	free(err);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, p->t, &err, "flamegraph", "--diff",
				 "--folded", p->base, p->nw, NULL), 2);
	assert_non_null(strstr(err, "--diff draws an SVG"));
	free(err);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, p->t, &err, "flamegraph", "--diff", "-o", out,
				 p->base, p->nw, NULL), 0);
	free(err);
	assert_int_equal(access(out, F_OK), 0);
	/* a log that is missing is named */
	assert_int_equal(run_cmd(jt_cmd_report, p->t, &err, "report", "--diff",
				 "/nonexistent/b.jtl", p->nw, NULL), 1);
	assert_non_null(strstr(err, "/nonexistent/b.jtl"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_diff_text, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_diff_json_and_sort_by_total, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flamegraph_diff_colours_and_tooltips, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flamegraph_diff_matches_processes_by_comm,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_diff_arguments, vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
