// SPDX-License-Identifier: GPL-2.0
/* The views of a real recording of the toy JIT: report, folded stacks, the SVG flame graph
 * in headless chromium, and `jitrace top` live in tmux. Needs root. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib.h"

#define CHROMIUM "/usr/bin/chromium"
#define TMUX "/usr/bin/tmux"
#define TOP_SESSION "jt_itest_top"

static char *log_path;		/* one recording for the offline views */

/* Record the split scenario (hot_a 3 units of work for each 1 of hot_b) at 999 Hz. */
static int record_split(void **state)
{
	char *out = it_path_dup("split.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", NULL, "--",
			 IT_TOYJIT, "split", "--ms", "2000", NULL };

	(void)state;
	log_path = it_path_dup("split.jtl");
	argv[6] = log_path;
	if (it_run(argv, out, NULL)) {
		fprintf(stderr, "itest_views: jitrace record failed\n");
		return -1;
	}
	free(out);
	return 0;
}

static int cleanup(void **state)
{
	(void)state;
	free(log_path);
	return 0;
}

/* The self% of the row of the first table that names fn, or -1. */
static double self_pct(const char *report, const char *fn, int *rank)
{
	const char *p = strstr(report, "== all processes");
	char line[512];
	int r = 0;

	assert_non_null(p);
	p = strchr(p, '\n') + 1;	/* the column titles */
	for (p = strchr(p, '\n') + 1; *p && *p != '\n'; p = strchr(p, '\n') + 1) {
		unsigned long self;
		double pct;
		char name[256];
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strstr(line, "hot offsets:"))
			continue;
		if (sscanf(line, "%lu %lf%% %*u %*f%% %*s %255[^\n]", &self, &pct, name) != 3)
			continue;
		r++;
		if (!strcmp(name, fn)) {
			*rank = r;
			return pct;
		}
	}
	return -1;
}

static void test_report_names_the_hottest_function_first(void **state)
{
	char *out = it_path_dup("report.txt"), *json = it_path_dup("report.json");
	char *argv[] = { IT_JITRACE, "report", log_path, NULL };
	char *jargv[] = { IT_JITRACE, "report", "--json", log_path, NULL };
	char *text, *js;
	double a, b;
	int ra = 0, rb = 0;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	a = self_pct(text, "hot_a", &ra);
	b = self_pct(text, "hot_b", &rb);
	print_message("hot_a %.1f%% (row %d), hot_b %.1f%% (row %d); scripted 75%% : 25%%\n",
		      a, ra, b, rb);
	assert_int_equal(ra, 1);
	assert_int_equal(rb, 2);
	/* the toy spends almost all its time in the two; the split is 3:1 */
	assert_true(a > 65 && a < 82);
	assert_true(b > 18 && b < 32);
	assert_non_null(strstr(text, "hot offsets: +0x"));
	assert_int_equal(it_run(jargv, json, NULL), 0);
	js = it_slurp(json);
	assert_non_null(strstr(js, "\"methods\": [\n    {\"name\": \"hot_a\", \"kind\": \"jit\""));
	free(js);
	free(text);
	free(json);
	free(out);
}

/* Folded stacks add up to the report's sample count, and hot_a's leaf lines to its self. */
static void test_folded_adds_up(void **state)
{
	char *out = it_path_dup("split.folded"), *rep = it_path_dup("report2.json");
	char *argv[] = { IT_JITRACE, "flamegraph", "--folded", log_path, NULL };
	char *jargv[] = { IT_JITRACE, "report", "--json", log_path, NULL };
	unsigned long total = 0, hot_a = 0, samples = 0;
	char *text, *js, *line, *save = NULL, *p;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_int_equal(it_run(jargv, rep, NULL), 0);
	text = it_slurp(out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long n = strtoul(strrchr(line, ' ') + 1, NULL, 10);
		size_t len = strrchr(line, ' ') - line;

		total += n;
		if (len >= 6 && !memcmp(line + len - 6, ";hot_a", 6))
			hot_a += n;
	}
	js = it_slurp(rep);
	p = strstr(js, "\"all\": {\"samples\": ");
	assert_non_null(p);
	samples = strtoul(p + strlen("\"all\": {\"samples\": "), NULL, 10);
	print_message("folded: %lu samples (report %lu), hot_a leaf %lu\n", total, samples, hot_a);
	assert_int_equal(total, samples);
	assert_true(hot_a > samples / 2);
	free(js);
	free(text);
	free(out);
	free(rep);
}

/* chromium's DOM after scripts ran, for url; its stderr goes to err. */
static char *chromium_dom(const char *url, const char *name)
{
	char *out = it_path_dup(name), *err, *dom;
	char *argv[] = { "/usr/bin/timeout", "90", CHROMIUM, "--headless", "--no-sandbox",
			 "--disable-gpu", "--virtual-time-budget=3000", "--dump-dom",
			 (char *)url, NULL };

	assert_true(asprintf(&err, "%s.err", out) > 0);
	assert_int_equal(it_run(argv, out, err), 0);
	dom = it_slurp(out);
	free(out);
	free(err);
	return dom;
}

static void test_svg_runs_in_chromium(void **state)
{
	char *svg = it_path_dup("flame.svg"), *png = it_path_dup("flame.png");
	char *argv[] = { IT_JITRACE, "flamegraph", "-f", "-o", svg, log_path, NULL };
	char *shot_arg, *url, *dom, *m;
	struct stat st;
	double matched;

	(void)state;
	if (access(CHROMIUM, X_OK))
		skip();	/* the only reason to skip: no browser */
	assert_int_equal(it_run(argv, NULL, NULL), 0);

	/* loaded, the script ran to its end without an error, the hot frame is drawn */
	assert_true(asprintf(&url, "file://%s#search=^hot_a$", svg) > 0);
	dom = chromium_dom(url, "dom_search.html");
	assert_null(strstr(dom, "data-jserror=\""));	/* the attribute, not the script */
	assert_non_null(strstr(dom, "data-ready=\""));
	assert_non_null(strstr(dom, "<title>hot_a\n"));
	assert_non_null(strstr(dom, "<title>hot_b\n"));
	/* search highlighted hot_a and says its share */
	m = strstr(dom, "id=\"matched\"");	/* the element, not the script's text */
	assert_non_null(m);
	m = strstr(m, ">Matched: ");
	assert_non_null(m);
	m++;
	matched = strtod(m + 9, NULL);
	print_message("search ^hot_a$: matched %.1f%%\n", matched);
	assert_true(matched > 65 && matched < 82);
	assert_non_null(strstr(dom, "class=\"f match\""));
	free(dom);
	free(url);

	/* zoomed on hot_b, it fills the width */
	assert_true(asprintf(&url, "file://%s#zoom=^hot_b$", svg) > 0);
	dom = chromium_dom(url, "dom_zoom.html");
	assert_null(strstr(dom, "data-jserror=\""));	/* the attribute, not the script */
	m = strstr(dom, "<title>hot_b\n");
	assert_non_null(m);
	assert_non_null(strstr(m, "width=\"1180.0\""));
	assert_true(strstr(m, "width=\"1180.0\"") < strstr(m, "</g>"));
	free(dom);
	free(url);

	/* a screenshot for people */
	assert_true(asprintf(&shot_arg, "--screenshot=%s", png) > 0);
	assert_true(asprintf(&url, "file://%s", svg) > 0);
	{
		char *shot[] = { "/usr/bin/timeout", "90", CHROMIUM, "--headless", "--no-sandbox",
				 "--disable-gpu", "--hide-scrollbars", "--window-size=1200,600",
				 "--virtual-time-budget=3000", shot_arg, url, NULL };

		assert_int_equal(it_run(shot, "/dev/null", "/dev/null"), 0);
	}
	assert_int_equal(stat(png, &st), 0);
	print_message("screenshot %s: %lld bytes\n", png, (long long)st.st_size);
	assert_true(st.st_size > 5000);
	free(shot_arg);
	free(url);
	free(svg);
	free(png);
}

/* The test above cannot pass over a script error: one planted in a copy is seen. */
static void test_svg_script_error_is_caught(void **state)
{
	char *svg = it_path_dup("flame.svg"), *bad = it_path_dup("broken.svg"), *url, *dom;
	char *text, *p;
	FILE *f;

	(void)state;
	if (access(CHROMIUM, X_OK))
		skip();
	text = it_slurp(svg);	/* written by the test above */
	p = strstr(text, "function init() {\n");
	assert_non_null(p);
	f = fopen(bad, "w");
	assert_non_null(f);
	fprintf(f, "%.*sfunction init() {\n  noSuchFunction();\n%s", (int)(p - text), text,
		p + strlen("function init() {\n"));
	fclose(f);
	assert_true(asprintf(&url, "file://%s", bad) > 0);
	dom = chromium_dom(url, "dom_broken.html");
	p = strstr(dom, "data-jserror=\"");
	assert_non_null(p);
	print_message("planted error seen: %.80s\n", p);
	assert_true(strstr(p, "noSuchFunction") && strstr(p, "noSuchFunction") < strchr(p + 14, '"'));
	assert_null(strstr(dom, "data-ready="));
	free(dom);
	free(url);
	free(text);
	free(svg);
	free(bad);
}

/* The CHANGE of the self share on the row of report --diff's table that names fn. */
static double diff_change(const char *report, const char *fn)
{
	char want[64], line[512];
	const char *p = report, *nl;
	double chg;

	snprintf(want, sizeof(want), "  jit     %s\n", fn);
	p = strstr(p, want);
	if (!p)
		fail_msg("report --diff has no row for %s:\n%s", fn, report);
	for (nl = p; nl > report && nl[-1] != '\n'; nl--)
		;
	snprintf(line, sizeof(line), "%.*s", (int)(p - nl), nl);
	assert_int_equal(sscanf(line, "%*u %*f%% %*u %*f%% %lf", &chg), 1);
	return chg;
}

/* The sample totals of the two logs report --diff compares, from its header. */
static void diff_totals(const char *report, double *base, double *nw)
{
	const char *p = strstr(report, "\nbase: "), *q = strstr(report, "\nnew: ");

	assert_non_null(p);
	assert_non_null(q);
	p = strstr(p, " samples, ");
	q = strstr(q, " samples, ");
	assert_non_null(p);
	assert_non_null(q);
	while (p[-1] >= '0' && p[-1] <= '9')
		p--;
	while (q[-1] >= '0' && q[-1] <= '9')
		q--;
	*base = strtod(p, NULL);
	*nw = strtod(q, NULL);
}

/*
 * A share expected to move from pb of n1 samples to pn of n2 moved by chg points: within 4.5
 * standard errors of the difference of the two shares, plus what the toy's own overhead
 * moves them (systematic points). Fails with the numbers.
 */
static void assert_change_near(const char *what, double chg, double pb, double pn, double n1,
			       double n2, double systematic)
{
	double want = 100 * (pn - pb), err;

	assert_true(n1 >= IT_MIN_SAMPLES && n2 >= IT_MIN_SAMPLES);
	err = 100 * 4.5 * sqrt(pb * (1 - pb) / n1 + pn * (1 - pn) / n2) + systematic;
	print_message("%s: %+.1f points, want %+.1f +- %.1f (%.1f systematic, %.0f and %.0f "
		      "samples)\n", what, chg, want, err, systematic, n1, n2);
	if (fabs(chg - want) > err)
		fail_msg("%s: %+.1f points is not %+.1f +- %.1f", what, chg, want, err);
}

/* Whether row k (from 0) of report --diff's table is fn's. */
static bool diff_row_is(const char *report, int k, const char *fn)
{
	const char *p = strstr(report, "KIND    METHOD\n"), *nl;
	size_t n = strlen(fn);

	assert_non_null(p);
	for (k++; k > 0; k--) {
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
	nl = strchr(p, '\n');
	assert_non_null(nl);
	return (size_t)(nl - p) > n && nl[-(long)n - 1] == ' ' && !memcmp(nl - n, fn, n);
}

/*
 * The tooltip of the widest frame named fn in chromium's DOM (a name may be on several
 * stacks), and its colour: "TITLE|FILL".
 */
static char *dom_frame(const char *dom, const char *fn)
{
	char want[64], *out;
	const char *p = NULL, *q, *end, *fill;
	unsigned long most = 0, n;

	snprintf(want, sizeof(want), "<title>%s\n", fn);
	for (q = strstr(dom, want); q; q = strstr(q + 1, want)) {
		n = strtoul(q + strlen(want), NULL, 10);
		if (!p || n > most) {
			p = q;
			most = n;
		}
	}
	assert_non_null(p);
	end = strstr(p, "</title>");
	assert_non_null(end);
	fill = strstr(end, "fill=\"");
	assert_non_null(fill);
	assert_true(fill < strstr(end, "</g>"));
	fill += 6;
	assert_true(asprintf(&out, "%.*s|%.*s", (int)(end - p - 7), p + 7,
			     (int)strcspn(fill, "\""), fill) > 0);
	return out;
}

/*
 * The toy's split recorded again the other way round, 1:3 instead of 3:1: `report --diff`
 * says hot_a lost and hot_b gained about 50 points of the samples (75% to 25%, within 4.5
 * standard errors of the two shares from the logs' own counts, and the toy's own overhead
 * of a point or two in each), and `flamegraph --diff`, opened in headless
 * chromium, colours hot_a blue and hot_b red with both counts and the change in their
 * tooltips (the report's, but for the odd sample on another stack), its script running
 * without an error.
 */
static void test_diff_of_two_splits(void **state)
{
	char *new_log = it_path_dup("split13.jtl"), *out = it_path_dup("split13.out");
	char *rep = it_path_dup("diff.txt"), *svg = it_path_dup("diff.svg"), *url, *dom, *text;
	char *rec[] = { IT_JITRACE, "record", "-F", "999", "-f", "-o", new_log, "--",
			IT_TOYJIT, "split", "--ms", "2000", "--ratio", "1:3", NULL };
	char *report[] = { IT_JITRACE, "report", "--diff", log_path, new_log, NULL };
	char *flame[] = { IT_JITRACE, "flamegraph", "--diff", "-f", "-o", svg, log_path, new_log,
			  NULL };
	char *a, *b, *m, map[64];
	double ca, cb, shown, n1, n2;
	struct it_toy toy;
	int r, g, bl;

	(void)state;
	assert_int_equal(it_run(rec, out, NULL), 0);
	it_toy_parse(out, &toy);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)toy.pid);
	unlink(map);	/* the agent's, left by the toy */
	assert_int_equal(it_run(report, rep, NULL), 0);
	text = it_slurp(rep);
	ca = diff_change(text, "hot_a");
	cb = diff_change(text, "hot_b");
	diff_totals(text, &n1, &n2);
	/* each share is of all the log's samples: 75% and 25% of the toy's, less its
	 * overhead (a point or two in each log: 4 points of systematic) */
	assert_change_near("report --diff: hot_a", ca, 0.75, 0.25, n1, n2, 4);
	assert_change_near("report --diff: hot_b", cb, 0.25, 0.75, n1, n2, 4);
	/* the two that moved most are the first two rows */
	assert_true((diff_row_is(text, 0, "hot_a") && diff_row_is(text, 1, "hot_b")) ||
		    (diff_row_is(text, 0, "hot_b") && diff_row_is(text, 1, "hot_a")));
	free(text);

	assert_int_equal(it_run(flame, NULL, NULL), 0);
	if (access(CHROMIUM, X_OK)) {
		print_message("no chromium: the SVG was not opened\n");
		goto out;
	}
	assert_true(asprintf(&url, "file://%s#search=^hot_b$", svg) > 0);
	dom = chromium_dom(url, "dom_diff.html");
	assert_null(strstr(dom, "data-jserror=\""));
	assert_non_null(strstr(dom, "data-ready=\""));
	m = strstr(dom, "id=\"matched\"");
	assert_non_null(m);
	assert_non_null(strstr(m, ">Matched: "));
	a = dom_frame(dom, "hot_a");
	b = dom_frame(dom, "hot_b");
	print_message("hot_a: %s\nhot_b: %s\n", a, b);
	/* hot_a shrank: blue; the tooltip's change agrees with the report's */
	m = strstr(a, "; change: ");
	assert_non_null(m);
	shown = strtod(m + 10, NULL);
	assert_true(shown > ca - 1 && shown < ca + 1);	/* hot_a's other stacks: a sample or two */
	assert_non_null(strstr(a, " samples, "));
	assert_non_null(strstr(a, "; base: "));
	assert_int_equal(sscanf(strrchr(a, '|') + 1, "rgb(%d,%d,%d)", &r, &g, &bl), 3);
	assert_true(bl == 255 && r < 100 && g < 100);
	/* hot_b grew: red */
	m = strstr(b, "; change: +");
	assert_non_null(m);
	shown = strtod(m + 10, NULL);
	assert_true(shown > cb - 1 && shown < cb + 1);
	assert_int_equal(sscanf(strrchr(b, '|') + 1, "rgb(%d,%d,%d)", &r, &g, &bl), 3);
	assert_true(r == 255 && g < 100 && bl < 100);
	free(a);
	free(b);
	free(dom);
	free(url);
out:
	free(new_log);
	free(out);
	free(rep);
	free(svg);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int ret;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	ret = system(cmd);
	free(cmd);
	return ret;
}

static void test_top_shows_the_hot_function_live(void **state)
{
	char *toy_out = it_path_dup("top_toy.out"), *pane = it_path_dup("top_pane.txt");
	char *stty = it_path_dup("top_stty.txt"), *done = it_path_dup("top_done.txt");
	char *toy[] = { IT_TOYJIT, "split", "--ms", "15000", NULL };
	char want[64], *text = NULL;
	pid_t pid;
	int i;

	(void)state;
	if (access(TMUX, X_OK))
		skip();
	sh(TMUX " kill-session -t " TOP_SESSION " 2>/dev/null");
	pid = it_spawn(toy, toy_out, NULL);
	assert_true(it_wait_for_text(toy_out, "split ratio", 10000));
	/* after top: the terminal's modes, then the shell's word that top is gone */
	assert_int_equal(sh(TMUX " new-session -d -s " TOP_SESSION " -x 120 -y 40 "
			    "'%s top; stty -a > %s; echo status=$? > %s; sleep 60'",
			    IT_JITRACE, stty, done), 0);
	snprintf(want, sizeof(want), "%d  toyjit", (int)pid);
	for (i = 0; i < 100; i++) {	/* up to 10 s */
		usleep(100000);
		assert_int_equal(sh(TMUX " capture-pane -p -t " TOP_SESSION " > %s", pane), 0);
		free(text);
		text = it_slurp(pane);
		if (strstr(text, want) && strstr(text, "hot_a"))
			break;
	}
	print_message("pane:\n%s\n", text);
	assert_non_null(strstr(text, "samples/s"));
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "hot_a"));
	assert_false(it_wait_for_text(done, "status", 0));	/* still running */

	assert_int_equal(sh(TMUX " send-keys -t " TOP_SESSION " q"), 0);
	assert_true(it_wait_for_text(done, "status=0", 10000));
	/* the terminal is back in its line mode, with echo */
	assert_true(it_wait_for_text(stty, " icanon", 1000));
	assert_false(it_wait_for_text(stty, "-icanon", 0));
	assert_false(it_wait_for_text(stty, "-echo ", 0));
	/* and the alternate screen is gone: the pane no longer shows top */
	assert_int_equal(sh(TMUX " capture-pane -p -t " TOP_SESSION " > %s", pane), 0);
	free(text);
	text = it_slurp(pane);
	assert_null(strstr(text, "samples/s"));

	sh(TMUX " kill-session -t " TOP_SESSION);
	kill(pid, SIGTERM);
	it_wait(pid);
	free(text);
	free(toy_out);
	free(pane);
	free(stty);
	free(done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_names_the_hottest_function_first),
		cmocka_unit_test(test_folded_adds_up),
		cmocka_unit_test(test_svg_runs_in_chromium),
		cmocka_unit_test(test_svg_script_error_is_caught),
		cmocka_unit_test(test_diff_of_two_splits),
		cmocka_unit_test(test_top_shows_the_hot_function_live),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_views: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, record_split, cleanup);
}
