// SPDX-License-Identifier: GPL-2.0
/*
 * What a push says: credentials read only from a file no one else may read, and never
 * echoed; labels both backends take as they are; Pyroscope's /ingest URL; Parca's WriteRaw
 * JSON; the retry schedule.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "export/push_fmt.h"

struct tmp {
	char dir[256];
	char path[300];
	char err[300];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "push_fmt")) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/auth", t->dir);
	snprintf(t->err, sizeof(t->err), "%s/stderr", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	scratch_remove(t->dir);
	free(t);
	return 0;
}

static void write_auth(struct tmp *t, const char *text, mode_t mode)
{
	int fd;

	unlink(t->path);
	fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* stderr into t->err until said(), which returns what was said there */
static int hear(struct tmp *t)
{
	int fd = open(t->err, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved;

	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
	return saved;
}

static char *said(struct tmp *t, int saved)
{
	size_t len;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return slurp(t->err, &len);
}

/* Load path with stderr in t->err; returns what load returned, *text what it said. */
static int load_at(struct tmp *t, const char *path, struct jt_push_auth *a, char **text)
{
	int saved = hear(t), ret;

	ret = jt_push_auth__load(a, path);
	*text = said(t, saved);
	return ret;
}

static int load(struct tmp *t, struct jt_push_auth *a, char **text)
{
	return load_at(t, t->path, a, text);
}

static void credentials_come_from_a_private_file(void **state)
{
	struct tmp *t = *state;
	struct jt_push_auth a;
	char *text;

	write_auth(t, "# the fleet's\n  bearer_token =  abc.def-123  \n\norg_id=tenant-9\r\n",
		   0600);
	assert_int_equal(load(t, &a, &text), 0);
	assert_string_equal(a.bearer, "abc.def-123");
	assert_string_equal(a.org_id, "tenant-9");
	assert_null(a.basic);
	assert_string_equal(text, "");
	free(text);
	jt_push_auth__fini(&a);
	assert_null(a.bearer);

	write_auth(t, "basic_auth = 1234:glc_secret==\n", 0400);
	assert_int_equal(load(t, &a, &text), 0);
	assert_string_equal(a.basic, "1234:glc_secret==");
	free(text);
	jt_push_auth__fini(&a);
}

static void a_file_others_may_read_or_write_is_refused(void **state)
{
	static const mode_t modes[] = { 0640, 0604, 0620, 0602, 0644 };
	struct tmp *t = *state;
	struct jt_push_auth a;
	char *text, want[32];
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		write_auth(t, "bearer_token = hush-hush\n", modes[i]);
		assert_int_equal(load(t, &a, &text), -EACCES);
		snprintf(want, sizeof(want), "(mode %04o)", modes[i]);
		assert_non_null(strstr(text, "refusing the credentials in "));
		assert_non_null(strstr(text, want));
		assert_null(strstr(text, "hush"));
		assert_null(a.bearer);
		free(text);
	}
}

static void a_bad_line_is_named_never_its_value(void **state)
{
	static const struct {
		const char *text, *said;
	} cases[] = {
		{ "password = hush-hush\n", ":1: unknown key 'password'" },
		{ "# c\nbearer_token hush-hush\n", ":2: not KEY = VALUE" },
		{ "bearer_token = hush\x01hush\n", ":1: bearer_token has a control character" },
		{ "org_id = a\norg_id = hush-hush\n", ":2: org_id given twice" },
		{ "basic_auth = hush-hush\n", ":1: basic_auth is USER:PASSWORD" },
		{ "bearer_token = x\nbasic_auth = hush:hush\n", "both given" },
		{ "# nothing\n", "no credentials in it" },
		{ "bearer_token =\n", ":1: bearer_token has no value" },
	};
	struct tmp *t = *state;
	struct jt_push_auth a;
	char *text;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_auth(t, cases[i].text, 0600);
		assert_int_equal(load(t, &a, &text), -EINVAL);
		if (!strstr(text, cases[i].said))
			fail_msg("case %zu said '%s', not '%s'", i, text, cases[i].said);
		assert_null(strstr(text, "hush"));
		assert_null(a.bearer);
		assert_null(a.org_id);
		free(text);
	}
}

/*
 * A symlink lets its owner choose what root reads as credentials: another user's link is
 * refused whether it is the file's name or a directory on the way, as for outputs.
 */
static void a_credentials_symlink_of_another_user_is_refused(void **state)
{
	struct tmp *t = *state;
	char link[320], dir_link[320], via[340];
	struct jt_push_auth a;
	char *text;

	if (geteuid())
		skip();	/* only root can give a symlink to another user */
	write_auth(t, "bearer_token = hush-hush\n", 0600);
	snprintf(link, sizeof(link), "%s/link", t->dir);
	snprintf(dir_link, sizeof(dir_link), "%s/dirlink", t->dir);
	snprintf(via, sizeof(via), "%s/auth", dir_link);
	assert_int_equal(symlink(t->path, link), 0);
	assert_int_equal(symlink(t->dir, dir_link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(lchown(dir_link, 65534, 65534), 0);

	assert_int_equal(load_at(t, link, &a, &text), -EACCES);
	assert_non_null(strstr(text, "refusing the credentials in "));
	assert_non_null(strstr(text, "'link' is a symlink owned by uid 65534"));
	assert_null(strstr(text, "hush"));
	assert_null(a.bearer);
	free(text);

	assert_int_equal(load_at(t, via, &a, &text), -EACCES);
	assert_non_null(strstr(text, "'dirlink' is a symlink owned by uid 65534"));
	assert_null(a.bearer);
	free(text);

	/* the caller's own link is followed */
	assert_int_equal(lchown(link, geteuid(), getegid()), 0);
	assert_int_equal(load_at(t, link, &a, &text), 0);
	assert_string_equal(a.bearer, "hush-hush");
	free(text);
	jt_push_auth__fini(&a);
}

/* A Kubernetes Secret volume: token -> ..data/token, ..data -> ..DATE, all root's links. */
static void a_secret_mount_s_links_are_followed(void **state)
{
	struct tmp *t = *state;
	char dated[320], data[320], file[340], token[320];
	struct jt_push_auth a;
	char *text;
	int fd;

	snprintf(dated, sizeof(dated), "%s/..2026_11_27_05_00_00.123", t->dir);
	snprintf(data, sizeof(data), "%s/..data", t->dir);
	snprintf(file, sizeof(file), "%s/token", dated);
	snprintf(token, sizeof(token), "%s/token", t->dir);
	assert_int_equal(mkdir(dated, 0755), 0);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "org_id = t1\n", 12), 12);
	close(fd);
	assert_int_equal(symlink("..2026_11_27_05_00_00.123", data), 0);
	assert_int_equal(symlink("..data/token", token), 0);

	assert_int_equal(load_at(t, token, &a, &text), 0);
	assert_string_equal(a.org_id, "t1");
	assert_string_equal(text, "");
	free(text);
	jt_push_auth__fini(&a);
	unlink(file);
	rmdir(dated);
}

/* user:password@ in --push would show in ps and in what record prints: refused, unsaid. */
static void a_url_with_credentials_is_refused_unsaid(void **state)
{
	static const char *const refused[] = {
		"http://user:SECRETPW@127.0.0.1:18464",
		"https://SECRETPW@example.com/ingest",
		"http://user:SECRETPW@[::1]:4040/",
		"ftp://user:SECRETPW@example.com/",
	};
	static const char *const taken[] = {
		"http://127.0.0.1:18464",
		"https://pyroscope.example.com/prefix/",
		"http://host:4040/path/with@sign?q=a@b",
		"http://[::1]:4040",
	};
	struct tmp *t = *state;
	char *text;
	int saved, ret;
	size_t i;

	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		if (jt_push__check_url(taken[i]))
			fail_msg("%s refused", taken[i]);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		saved = hear(t);
		ret = jt_push__check_url(refused[i]);
		text = said(t, saved);
		assert_int_equal(ret, -EINVAL);
		assert_non_null(strstr(text, "--push"));
		if (strstr(text, "SECRETPW") || strstr(text, "user:"))
			fail_msg("%s: the message shows it: %s", refused[i], text);
		free(text);
	}
}

static void labels_are_safe_for_both_backends(void **state)
{
	char out[JT_PUSH_LABEL_MAX + 1], long_in[300];

	(void)state;
	jt_push__label_value(out, "java", 4);
	assert_string_equal(out, "java");
	jt_push__label_value(out, "my app{x=1,y}", 13);
	assert_string_equal(out, "my_app_x_1_y_");
	jt_push__label_value(out, "host-1.example:9/a@b+c", 22);
	assert_string_equal(out, "host-1.example:9/a@b+c");
	jt_push__label_value(out, "", 0);
	assert_string_equal(out, "unknown");
	jt_push__label_value(out, "ab\0cd", 5);	/* a comm stops at its NUL */
	assert_string_equal(out, "ab");
	memset(long_in, 'x', sizeof(long_in));
	jt_push__label_value(out, long_in, sizeof(long_in));
	assert_int_equal(strlen(out), JT_PUSH_LABEL_MAX);
}

static void endpoints_get_their_path_once(void **state)
{
	static const struct {
		const char *base;
		enum jt_push_format f;
		const char *url;
	} cases[] = {
		{ "http://p:4040", JT_PUSH_PYROSCOPE, "http://p:4040/ingest" },
		{ "http://p:4040/", JT_PUSH_PYROSCOPE, "http://p:4040/ingest" },
		{ "https://p/prefix/ingest", JT_PUSH_PYROSCOPE, "https://p/prefix/ingest" },
		{ "http://parca:7070", JT_PUSH_PARCA, "http://parca:7070/profiles/writeraw" },
		{ "http://parca:7070/profiles/writeraw/", JT_PUSH_PARCA,
		  "http://parca:7070/profiles/writeraw" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *u = jt_push__endpoint(cases[i].base, cases[i].f);

		assert_string_equal(u, cases[i].url);
		free(u);
	}
}

static void pyroscope_gets_labels_in_the_name_parameter(void **state)
{
	struct jt_push_labels l = { .host = "web-1", .service = NULL, .comm = "java main",
				    .pid = 4242 };
	char *u;

	(void)state;
	u = jt_push__pyroscope_url("http://p:4040/ingest", &l, 1700000000, 1700000060, 49);
	assert_string_equal(u, "http://p:4040/ingest?name=java_main%7Bhost%3Dweb-1%2C"
			       "service_name%3Djava_main%2Cpid%3D4242%2Ccomm%3Djava_main%7D"
			       "&from=1700000000&until=1700000060&format=pprof&sampleRate=49"
			       "&spyName=jitrace");
	free(u);
	l.service = "checkout";
	u = jt_push__pyroscope_url("http://p/ingest?tenant=x", &l, 1, 2, 0);
	assert_non_null(strstr(u, "http://p/ingest?tenant=x&name=checkout%7Bhost%3Dweb-1%2C"
				  "service_name%3Dcheckout%2C"));
	assert_non_null(strstr(u, "&sampleRate=100&"));	/* 0 Hz: Pyroscope's default */
	free(u);
}

static void parca_gets_a_writeraw_json_body(void **state)
{
	struct jt_push_labels l = { .host = "h", .service = "svc", .comm = "node", .pid = 7 };
	static const struct {
		const char *in, *b64;
	} b64[] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "\xff\xfe\x00", "//4A" },
	};
	char want[512], *body;
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(b64) / sizeof(b64[0]); i++) {
		size_t n = i == 5 ? 3 : strlen(b64[i].in);

		body = jt_push__parca_body(&l, b64[i].in, n, &len);
		snprintf(want, sizeof(want),
			 "{\"series\":[{\"labels\":{\"labels\":["
			 "{\"name\":\"__name__\",\"value\":\"jitrace_cpu\"},"
			 "{\"name\":\"host\",\"value\":\"h\"},"
			 "{\"name\":\"service_name\",\"value\":\"svc\"},"
			 "{\"name\":\"pid\",\"value\":\"7\"},"
			 "{\"name\":\"comm\",\"value\":\"node\"}]},"
			 "\"samples\":[{\"rawProfile\":\"%s\"}]}],\"normalized\":true}",
			 b64[i].b64);
		assert_string_equal(body, want);
		assert_int_equal(len, strlen(want));
		free(body);
	}
}

static void retries_back_off_to_a_bound(void **state)
{
	static const uint64_t want[] = { 1, 1, 2, 4, 8, 16, 30, 30, 30 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(jt_push__backoff_ns(i), want[i] * 1000000000ULL);
	assert_int_equal(jt_push__backoff_ns(1000), JT_PUSH_BACKOFF_MAX_NS);
}

static void formats_by_name(void **state)
{
	enum jt_push_format f;

	(void)state;
	assert_int_equal(jt_push__parse_format("parca", &f), 0);
	assert_int_equal(f, JT_PUSH_PARCA);
	assert_int_equal(jt_push__parse_format("pyroscope", &f), 0);
	assert_int_equal(f, JT_PUSH_PYROSCOPE);
	assert_int_equal(jt_push__parse_format("otlp", &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(credentials_come_from_a_private_file, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(a_file_others_may_read_or_write_is_refused,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(a_bad_line_is_named_never_its_value, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(a_credentials_symlink_of_another_user_is_refused,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(a_secret_mount_s_links_are_followed, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(a_url_with_credentials_is_refused_unsaid,
						tmp_setup, tmp_teardown),
		cmocka_unit_test(labels_are_safe_for_both_backends),
		cmocka_unit_test(endpoints_get_their_path_once),
		cmocka_unit_test(pyroscope_gets_labels_in_the_name_parameter),
		cmocka_unit_test(parca_gets_a_writeraw_json_body),
		cmocka_unit_test(retries_back_off_to_a_bound),
		cmocka_unit_test(formats_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
