// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace export` read by real consumers: the toy JIT's split workload recorded with
 * --calls; the pprof decoded by protoc against profile.proto, the speedscope file checked
 * in headless chromium, the Chrome trace parsed by python3 and checked for nesting.
 * Needs root (it records).
 */
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

#define CHROMIUM "/usr/bin/chromium"
#define PROTOC "/usr/bin/protoc"
#define PYTHON3 "/usr/bin/python3"
#define MAX_NAMES 4096
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fixture {
	char *log_path;
	struct it_log log;
	struct it_toy toy;
	uint64_t samples;	/* the toy's sample records */
	uint64_t leaf_hot_a;	/* of which hot_a is the leaf */
	uint64_t enters;	/* the toy's enter records */
};

static int record(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char *out = it_path_dup("split.out");
	size_t i;

	if (!fx)
		return -1;
	fx->log_path = it_path_dup("split.jtl");
	{
		char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "999", "-o", fx->log_path,
				 "--", IT_TOYJIT, "split", "-i", "--ms", "1500", NULL };

		if (it_run(argv, out, NULL))
			return -1;
	}
	it_toy_parse(out, &fx->toy);
	it_log_load(fx->log_path, &fx->log);
	for (i = 0; i < fx->log.n; i++) {
		const struct jt_rec_hdr *r = fx->log.recs[i];

		if (r->type == JT_REC_SAMPLE &&
		    ((const struct jt_rec_sample *)r)->pid == (uint32_t)fx->toy.pid) {
			const struct jt_rec_method *m = it_leaf_method(&fx->log, (const void *)r);

			fx->samples++;
			fx->leaf_hot_a += it_name_is(m, "hot_a");
		}
		if (r->type == JT_REC_ENTER &&
		    ((const struct jt_rec_call *)r)->pid == (uint32_t)fx->toy.pid)
			fx->enters++;
	}
	free(out);
	*state = fx;
	return 0;
}

static int cleanup(void **state)
{
	struct fixture *fx = *state;

	it_log_free(&fx->log);
	free(fx->log_path);
	free(fx);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		fail_msg("cannot open %s", path);
	do {
		if (n + 65536 + 1 > cap) {
			cap = 2 * cap + 65536 + 1;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static uint64_t calls_of(const struct it_toy *t, const char *name)
{
	int i;

	for (i = 0; i < t->nr_calls; i++)
		if (!strcmp(t->names[i], name))
			return t->calls[i];
	fail_msg("the toy JIT printed no call count for %s", name);
	return 0;
}

/*
 * protoc's text of a Profile: sum the first value of every sample, and of those whose leaf
 * location's function is named leaf.
 */
static void pprof_counts(char *text, const char *leaf, uint64_t *total, uint64_t *leafs)
{
	static char *strings[MAX_NAMES * 4];
	static uint64_t loc_fn[MAX_NAMES], fn_name[MAX_NAMES];
	static uint64_t s_leaf[1 << 16], s_count[1 << 16];
	enum { NONE, SAMPLE, LOCATION, FUNCTION } in = NONE;
	size_t nstr = 0, nsamp = 0, i;
	uint64_t id = 0, v, first_loc = 0, first_val = 0;
	bool have_loc = false, have_val = false;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "sample {")) {
			in = SAMPLE;
			have_loc = have_val = false;
		} else if (!strcmp(line, "location {")) {
			in = LOCATION;
		} else if (!strcmp(line, "function {")) {
			in = FUNCTION;
		} else if (!strcmp(line, "}")) {
			if (in == SAMPLE) {
				assert_true(have_loc && have_val && nsamp < ARRAY_SIZE(s_leaf));
				s_leaf[nsamp] = first_loc;
				s_count[nsamp++] = first_val;
			}
			in = NONE;
		} else if (in == SAMPLE && sscanf(line, "  location_id: %lu", &v) == 1) {
			if (!have_loc)
				first_loc = v;
			have_loc = true;
		} else if (in == SAMPLE && sscanf(line, "  value: %lu", &v) == 1) {
			if (!have_val)
				first_val = v;
			have_val = true;
		} else if ((in == LOCATION || in == FUNCTION) &&
			   sscanf(line, "  id: %lu", &v) == 1) {
			assert_true(v < MAX_NAMES);
			id = v;
		} else if (in == LOCATION && sscanf(line, "    function_id: %lu", &v) == 1) {
			loc_fn[id] = v;
		} else if (in == FUNCTION && sscanf(line, "  name: %lu", &v) == 1) {
			fn_name[id] = v;
		} else if (!strncmp(line, "string_table: \"", 15)) {
			assert_true(nstr < ARRAY_SIZE(strings));
			strings[nstr] = line + 15;
			line[strlen(line) - 1] = '\0';	/* the closing quote */
			nstr++;
		}
	}
	assert_string_equal(strings[0], "");
	*total = *leafs = 0;
	for (i = 0; i < nsamp; i++) {
		uint64_t name = fn_name[loc_fn[s_leaf[i]]];

		assert_true(name < nstr);
		*total += s_count[i];
		if (!strcmp(strings[name], leaf))
			*leafs += s_count[i];
	}
}

static void test_pprof_decodes_with_protoc(void **state)
{
	struct fixture *fx = *state;
	char *pb = it_path_dup("split.pb.gz"), *txt = it_path_dup("split.pprof.txt");
	char *err = it_path_dup("pprof.err"), pid[16], *cmd, *text;
	uint64_t total, hot_a;

	if (access(PROTOC, X_OK))
		skip();
	snprintf(pid, sizeof(pid), "%d", fx->toy.pid);
	{
		char *argv[] = { IT_JITRACE, "export", "--format", "pprof", fx->log_path,
				 "-p", pid, "-o", pb, NULL };

		assert_int_equal(it_run(argv, NULL, err), 0);
	}
	assert_true(asprintf(&cmd, "gzip -dc %s | " PROTOC " --proto_path=tests/views "
			     "--decode=perftools.profiles.Profile tests/views/profile.proto > %s",
			     pb, txt) > 0);
	{
		char *argv[] = { "/bin/sh", "-c", cmd, NULL };

		assert_int_equal(it_run(argv, NULL, NULL), 0);
	}
	text = slurp(txt);
	assert_non_null(strstr(text, "string_table: \"hot_a\""));
	assert_non_null(strstr(text, "period: 1001001\n"));	/* 1e9 / 999 Hz */
	pprof_counts(text, "hot_a", &total, &hot_a);
	print_message("pprof: %lu samples (log: %lu), hot_a leaf %lu (log: %lu)\n", total,
		      fx->samples, hot_a, fx->leaf_hot_a);
	assert_true(fx->samples > 300);
	assert_int_equal(total, fx->samples);
	assert_int_equal(hot_a, fx->leaf_hot_a);
	assert_true(hot_a > fx->samples / 2);	/* hot_a gets 3/4 of the CPU */
	free(text);
	free(cmd);
	free(pb);
	free(txt);
	free(err);
}

static void test_speedscope_loads_in_chromium(void **state)
{
	struct fixture *fx = *state;
	char *json_path = it_path_dup("split.speedscope.json"), *js = it_path_dup("profile.js");
	char *html = it_path_dup("speedscope-check.html"), *dom = it_path_dup("speedscope.dom");
	char *png = it_path_dup("speedscope-check.png"), *url, *shot, *json, *page, *text;
	struct stat st;
	FILE *f;

	if (access(CHROMIUM, X_OK))
		skip();
	{
		char *argv[] = { IT_JITRACE, "export", fx->log_path, "-o", json_path, NULL };

		assert_int_equal(it_run(argv, NULL, NULL), 0);
	}
	json = slurp(json_path);
	f = fopen(js, "w");
	assert_non_null(f);
	fprintf(f, "window.PROFILE = %s;\n", json);
	assert_int_equal(fclose(f), 0);
	page = slurp("tests/views/speedscope-check.html");
	f = fopen(html, "w");
	assert_non_null(f);
	fputs(page, f);
	assert_int_equal(fclose(f), 0);

	assert_true(asprintf(&url, "file://%s", html) > 0);
	assert_true(asprintf(&shot, "--screenshot=%s", png) > 0);
	{
		char *argv[] = { CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
				 "--dump-dom", url, NULL };

		assert_int_equal(it_run(argv, dom, "/dev/null"), 0);
	}
	text = slurp(dom);
	if (!strstr(text, "<div id=\"result\">RESULT: OK")) {
		char *r = strstr(text, "<div id=\"result\">");

		fail_msg("speedscope check: %.200s", r ? r : "no result in the page");
	}
	/* the page's table of heaviest frames names the hot method, sampled and evented */
	assert_non_null(strstr(text, "<td>hot_a</td>"));
	assert_non_null(strstr(text, "evented: toyjit"));
	{
		char *argv[] = { CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
				 "--window-size=1000,900", shot, url, NULL };

		assert_int_equal(it_run(argv, "/dev/null", "/dev/null"), 0);
	}
	assert_int_equal(stat(png, &st), 0);
	assert_true(st.st_size > 1000);
	print_message("speedscope: checked in chromium; screenshot %s\n", png);
	free(text);
	free(page);
	free(json);
	free(url);
	free(shot);
	free(json_path);
	free(js);
	free(html);
	free(dom);
	free(png);
}

static const char *find_go(void)
{
	static const char *const where[] = { "/usr/bin/go", "/usr/lib/go/bin/go",
					     "/usr/local/go/bin/go" };
	size_t k;

	for (k = 0; k < ARRAY_SIZE(where); k++)
		if (!access(where[k], X_OK))
			return where[k];
	return NULL;
}

/* Run go tool pprof with args (NULL-terminated) on pb; stdout returned, stderr must be empty. */
static char *go_pprof(const char *go, const char *pb, const char *name, ...)
{
	char *out = it_path_dup(name), *err, *argv[16], *text, *errs;
	int argc = 0;
	va_list ap;

	assert_true(asprintf(&err, "%s.err", out) > 0);
	argv[argc++] = (char *)go;
	argv[argc++] = "tool";
	argv[argc++] = "pprof";
	va_start(ap, name);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc++] = (char *)pb;
	argv[argc] = NULL;
	assert_int_equal(it_run(argv, out, err), 0);
	text = slurp(out);
	errs = slurp(err);
	if (errs[0])
		fail_msg("go tool pprof %s said on stderr:\n%s", argv[3], errs);
	free(errs);
	free(err);
	free(out);
	return text;
}

struct gmap {
	unsigned id;
	unsigned long long start, limit;
	char file[256];
};

/*
 * `go tool pprof` (Debian's golang-go) opens the pprof of a native plus JIT recording
 * without a word on stderr ("Main binary filename not available" was one): its mappings
 * have file names, the program first (`-top` says "File: toyjit", the web UI's title);
 * every location lies inside its mapping at the address the frame had (native frames too,
 * not offsets inside symbols); `-top` counts samples as the log has them; the cpu
 * nanoseconds of each stack are its samples times 1e9 / 999 Hz, rounded.
 */
static void test_pprof_opens_in_go_tool_pprof(void **state)
{
	struct fixture *fx = *state;
	char *pb = it_path_dup("split.go.pb.gz"), pid[16], want[128], *raw, *top, *p, *nl;
	static struct gmap maps[64];
	unsigned nmaps = 0, nlocs = 0, native = 0, i;
	unsigned long long cpu_sum = 0, count_sum = 0, stacks = 0;
	const char *go = find_go();
	bool in_samples = false, in_locs = false;

	if (!go) {
		print_message("go is missing (Debian's golang-go): go tool pprof not run\n");
		skip();
	}
	snprintf(pid, sizeof(pid), "%d", fx->toy.pid);
	{
		char *argv[] = { IT_JITRACE, "export", "--format", "pprof", fx->log_path,
				 "-p", pid, "-o", pb, NULL };

		assert_int_equal(it_run(argv, NULL, NULL), 0);
	}
	raw = go_pprof(go, pb, "split.go.raw", "-raw", NULL);
	/* the mappings (last): "ID: START/LIMIT/OFFSET FILE [BUILDID] [FN]" */
	p = strstr(raw, "\nMappings\n");
	assert_non_null(p);
	for (p += 10; *p; p = nl + 1) {
		unsigned long long a, b, c;
		char file[256];
		unsigned id;
		int k;

		nl = strchr(p, '\n');
		assert_non_null(nl);
		k = sscanf(p, " %u: %llx/%llx/%llx %255s", &id, &a, &b, &c, file);
		if (k < 4)
			break;
		if (k == 4)
			fail_msg("a mapping without a file name: %.*s", (int)(nl - p), p);
		assert_true(nmaps < ARRAY_SIZE(maps));
		maps[nmaps++] = (struct gmap){ id, a, b, "" };
		snprintf(maps[nmaps - 1].file, sizeof(maps[0].file), "%s", file);
		print_message("mapping %.*s\n", (int)(nl - p), p);
	}
	/* then the samples and the locations */
	for (p = raw; p && *p; p = nl ? nl + 1 : NULL) {
		unsigned long long a, b;
		unsigned m;
		char file[256];

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(p, "Samples:", 8) || !strncmp(p, "Locations", 9) ||
		    !strncmp(p, "Mappings", 8)) {
			in_samples = p[0] == 'S';
			in_locs = p[0] == 'L';
		}
		if (in_samples && sscanf(p, " %llu %llu:", &a, &b) == 2) {
			count_sum += a;
			cpu_sum += b;
			stacks++;
			/* each stack's cpu time from its count, exactly (rounded to the ns) */
			assert_int_equal(b, (a * 1000000000ULL + 999 / 2) / 999);
		}
		if (in_locs && sscanf(p, " %*u: %llx M=%u %255s", &a, &m, file) == 3) {
			for (i = 0; i < nmaps && maps[i].id != m; i++)
				;
			if (i == nmaps)
				fail_msg("location in no mapping: %s", p);
			if (a < maps[i].start || a >= maps[i].limit)
				fail_msg("location outside its mapping %s: %s", maps[i].file, p);
			nlocs++;
			native += maps[i].file[0] == '/';
		}
		if (nl)
			*nl = '\n';
	}
	print_message("go tool pprof -raw: %u mappings, %u locations (%u native), %llu samples "
		      "in %llu stacks, %llu ns of cpu\n", nmaps, nlocs, native, count_sum, stacks,
		      cpu_sum);
	assert_true(nmaps >= 3 && nlocs > 0 && native > 0);
	assert_true(strstr(maps[0].file, "/toyjit") != NULL);	/* pprof's main binary */
	for (i = 0; i < nmaps && strcmp(maps[i].file, "[jit]"); i++)
		;
	assert_true(i < nmaps);
	for (i = 0; i < nmaps && !strstr(maps[i].file, "/libc.so.6"); i++)
		;
	assert_true(i < nmaps);
	assert_int_equal(count_sum, fx->samples);

	top = go_pprof(go, pb, "split.go.top", "-top", NULL);
	print_message("go tool pprof -top:\n%.600s\n", top);
	assert_true(!strncmp(top, "File: toyjit\n", 13));
	assert_non_null(strstr(top, "\nType: samples\n"));
	snprintf(want, sizeof(want), ", Total samples = %lu", fx->samples);
	p = strstr(top, want);
	assert_non_null(p);
	assert_true(p[strlen(want)] == ' ' || p[strlen(want)] == '\n');	/* a count, no unit */
	snprintf(want, sizeof(want), "\n%10lu ", fx->leaf_hot_a);
	p = strstr(top, want);
	assert_non_null(p);
	nl = strchr(p + 1, '\n');
	assert_non_null(nl);
	assert_true(nl - p > 6 && !strncmp(nl - 6, " hot_a", 6));
	free(top);
	free(raw);
	free(pb);
}

struct open_call {
	char name[64];
	unsigned tid;
};

static void test_chrome_trace_is_balanced(void **state)
{
	static const char flatten[] =
		"import json, sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"for e in d['traceEvents']:\n"
		"    if e['ph'] in ('B', 'E'):\n"
		"        print(e['ph'], e['pid'], e['tid'], repr(float(e['ts'])), e['name'])\n";
	struct fixture *fx = *state;
	char *trace = it_path_dup("split.trace.json"), *flat = it_path_dup("split.trace.txt");
	char *err = it_path_dup("chrome.err"), *text, *line, *save = NULL, *errs;
	static struct open_call stack[256];
	uint64_t bs = 0, es = 0, hot_a = 0;
	double last = 0;
	int depth = 0;

	{
		char *argv[] = { IT_JITRACE, "export", "--format", "chrome", fx->log_path,
				 "-o", trace, NULL };

		assert_int_equal(it_run(argv, NULL, err), 0);
	}
	errs = slurp(err);
	assert_string_equal(errs, "");	/* a clean recording needs no fix-ups */
	{
		char *argv[] = { PYTHON3, "-c", (char *)flatten, trace, NULL };

		assert_int_equal(it_run(argv, flat, NULL), 0);
	}
	text = slurp(flat);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char ph, name[64];
		unsigned pid, tid;
		double ts;

		assert_int_equal(sscanf(line, "%c %u %u %lf %63s", &ph, &pid, &tid, &ts, name), 5);
		assert_int_equal(pid, fx->toy.pid);
		assert_true(ts >= last);
		last = ts;
		if (ph == 'B') {
			assert_true(depth < (int)ARRAY_SIZE(stack));
			strcpy(stack[depth].name, name);
			stack[depth++].tid = tid;
			bs++;
			hot_a += !strcmp(name, "hot_a");
		} else {
			assert_int_equal(ph, 'E');
			assert_true(depth > 0);
			depth--;
			assert_string_equal(stack[depth].name, name);
			assert_int_equal(stack[depth].tid, tid);
			es++;
		}
	}
	print_message("chrome: %lu B, %lu E, hot_a %lu (toy: %lu), log enters %lu\n", bs, es,
		      hot_a, calls_of(&fx->toy, "hot_a"), fx->enters);
	assert_int_equal(depth, 0);
	assert_int_equal(bs, es);
	assert_int_equal(bs, fx->enters);
	assert_int_equal(hot_a, calls_of(&fx->toy, "hot_a"));
	free(errs);
	free(text);
	free(trace);
	free(flat);
	free(err);
}

static void test_export_needs_a_format(void **state)
{
	struct fixture *fx = *state;
	char *argv[] = { IT_JITRACE, "export", fx->log_path, "-o", "/dev/null", NULL };
	char *bad[] = { IT_JITRACE, "export", "--bogus", fx->log_path, NULL };
	char *err = it_path_dup("format.err"), *text;

	assert_int_equal(it_run(argv, "/dev/null", err), 2);
	text = slurp(err);
	assert_non_null(strstr(text, "cannot tell the format from /dev/null's extension"));
	assert_non_null(strstr(text, "give --format"));
	free(text);
	/* getopt's own messages name the command as jitrace's do */
	assert_int_equal(it_run(bad, "/dev/null", err), 2);
	text = slurp(err);
	assert_non_null(strstr(text, "jitrace export: unrecognized option '--bogus'"));
	free(text);
	free(err);
}

/* Run `jitrace ARGS...` (NULL-terminated) to success; its stdout returned. */
static char *jitrace_out(const char *name, ...)
{
	char *out = it_path_dup(name), *argv[16], *text;
	int argc = 0;
	va_list ap;

	argv[argc++] = IT_JITRACE;
	va_start(ap, name);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = slurp(out);
	free(out);
	return text;
}

/*
 * Thread names: the toy JIT's two threads, named worker-a and worker-b (pthread_setname_np),
 * run with -i (calls too, for chrome), are named in report --threads, in speedscope's
 * profile names, in pprof's "thread" label (as `go tool pprof -raw` shows it) and in
 * chrome's thread_name metadata.
 */
static void test_thread_names_in_every_view(void **state)
{
	char *log = it_path_dup("threads.jtl"), *out = it_path_dup("threads.out");
	char *pb = it_path_dup("threads.pb.gz"), *text, want[64];
	const char *go = find_go(), *names[] = { "worker-a", "worker-b" };
	size_t i;

	(void)state;
	{
		char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "999", "-o", log, "--",
				 IT_TOYJIT, "threads", "-i", "--ms", "1500", NULL };

		assert_int_equal(it_run(argv, out, NULL), 0);
	}
	text = slurp(out);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(want, sizeof(want), "thread %s tid=", names[i]);
		assert_non_null(strstr(text, want));
	}
	free(text);

	text = jitrace_out("threads.report", "report", "--threads", log, NULL);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(want, sizeof(want), "\n== thread %s (", names[i]);
		if (!strstr(text, want))
			fail_msg("report --threads has no \"%s\":\n%s", want + 1, text);
	}
	free(text);

	text = jitrace_out("threads.ss", "export", "--format", "speedscope", log, "-o", "-",
			   NULL);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(want, sizeof(want), " %s\",\"unit\"", names[i]);	/* a profile's name */
		assert_non_null(strstr(text, want));
	}
	free(text);

	text = jitrace_out("threads.chrome", "export", "--format", "chrome", log, "-o", "-",
			   NULL);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(want, sizeof(want), "\"args\":{\"name\":\"%s\"}", names[i]);
		assert_non_null(strstr(text, want));
	}
	assert_non_null(strstr(text, "\"name\":\"thread_name\""));
	free(text);

	text = jitrace_out("threads.pprof", "export", "--format", "pprof", log, "-o", pb, NULL);
	free(text);
	if (!go) {
		print_message("go is missing (Debian's golang-go): go tool pprof not run\n");
	} else {
		text = go_pprof(go, pb, "threads.go.raw", "-raw", NULL);
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (!strstr(text, names[i]))
				fail_msg("go tool pprof -raw shows no %s:\n%.4000s", names[i], text);
		assert_non_null(strstr(text, "thread:"));
		free(text);
	}
	free(pb);
	free(out);
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_decodes_with_protoc),
		cmocka_unit_test(test_pprof_opens_in_go_tool_pprof),
		cmocka_unit_test(test_speedscope_loads_in_chromium),
		cmocka_unit_test(test_chrome_trace_is_balanced),
		cmocka_unit_test(test_export_needs_a_format),
		cmocka_unit_test(test_thread_names_in_every_view),
	};

	return cmocka_run_group_tests(tests, record, cleanup);
}
