// SPDX-License-Identifier: GPL-2.0
/* Credentials, labels and request bodies of pushes to Pyroscope and Parca. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/push_fmt.h"
#include "sources/safeopen.h"
#include "base/util.h"

static char *dup_value(const char *s, size_t n)
{
	char *v = malloc(n + 1);

	if (v) {
		memcpy(v, s, n);
		v[n] = '\0';
	}
	return v;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void jt_push_auth__fini(struct jt_push_auth *a)
{
	wipe_free(a->bearer);
	wipe_free(a->basic);
	wipe_free(a->org_id);
	memset(a, 0, sizeof(*a));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line (without its newline). 0 or -EINVAL (reported, naming the line, not the value). */
static int auth_line(struct jt_push_auth *a, const char *path, int nr, const char *s, size_t n)
{
	static const char *const keys[] = { "bearer_token", "basic_auth", "org_id" };
	char **slots[] = { &a->bearer, &a->basic, &a->org_id };
	const char *end = s + n, *eq, *k_end, *v;
	size_t i;

	while (s < end && is_space(*s))
		s++;
	while (end > s && is_space(end[-1]))
		end--;
	if (s == end || *s == '#')
		return 0;
	eq = memchr(s, '=', end - s);
	if (!eq) {
		jt_err("%s:%d: not KEY = VALUE", path, nr);
		return -EINVAL;
	}
	for (k_end = eq; k_end > s && is_space(k_end[-1]); k_end--)
		;
	for (v = eq + 1; v < end && is_space(*v); v++)
		;
	for (i = 0; i < JT_ARRAY_SIZE(keys); i++)
		if ((size_t)(k_end - s) == strlen(keys[i]) && !memcmp(s, keys[i], k_end - s))
			break;
	if (i == JT_ARRAY_SIZE(keys)) {
		jt_err("%s:%d: unknown key '%.*s' (bearer_token, basic_auth, org_id)", path, nr,
		       (int)(k_end - s > 32 ? 32 : k_end - s), s);
		return -EINVAL;
	}
	if (*slots[i]) {
		jt_err("%s:%d: %s given twice", path, nr, keys[i]);
		return -EINVAL;
	}
	if (v == end) {
		jt_err("%s:%d: %s has no value", path, nr, keys[i]);
		return -EINVAL;
	}
	for (eq = v; eq < end; eq++) {
		if ((unsigned char)*eq < 0x20 || *eq == 0x7f) {
			jt_err("%s:%d: %s has a control character in its value", path, nr, keys[i]);
			return -EINVAL;
		}
	}
	if (i == 1 && !memchr(v, ':', end - v)) {
		jt_err("%s:%d: basic_auth is USER:PASSWORD", path, nr);
		return -EINVAL;
	}
	*slots[i] = dup_value(v, end - v);
	if (!*slots[i]) {
		jt_err("%s: out of memory", path);
		return -ENOMEM;
	}
	return 0;
}

/* The file's bytes, once its owner and mode are checked; NULL on error (reported). */
static char *read_secret(const char *path, size_t *len)
{
	struct jt_safeopen_link bad;
	int fd = jt_safeopen__trusted_links(path, geteuid(), &bad);
	struct stat st;
	char *buf = NULL;
	ssize_t n;

	if (fd < 0 && errno == EPERM) {
		/* its owner could point root at any file: a Secret mount's links are root's */
		jt_err("refusing the credentials in %s: '%s' is a symlink owned by uid %u, "
		       "neither root nor you; give the real file", path, bad.name,
		       (unsigned)bad.owner);
		return NULL;
	}
	if (fd < 0) {
		jt_err("%s: cannot open the credentials: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st)) {
		jt_err("%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		jt_err("%s: the credentials must be a regular file", path);
	} else if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		jt_err("refusing the credentials in %s: other users may read or write it (mode "
		       "%04o); chmod 600 it", path, (unsigned)(st.st_mode & 07777));
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		jt_err("refusing the credentials in %s: it belongs to uid %u, neither root nor you",
		       path, (unsigned)st.st_uid);
	} else if (st.st_size > JT_PUSH_AUTH_MAX) {
		jt_err("%s: larger than %d bytes: not a credentials file", path, JT_PUSH_AUTH_MAX);
	} else if (!(buf = malloc(st.st_size + 1))) {
		jt_err("%s: out of memory", path);
	} else {
		n = read(fd, buf, st.st_size);
		if (n != st.st_size) {
			jt_err("%s: read: %s", path, n < 0 ? strerror(errno) : "short read");
			explicit_bzero(buf, st.st_size + 1);
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			*len = n;
		}
	}
	close(fd);
	return buf;
}

int jt_push_auth__load(struct jt_push_auth *a, const char *path)
{
	size_t len = 0;
	char *buf = read_secret(path, &len);
	const char *s, *end, *nl;
	int nr = 0, err = 0;

	memset(a, 0, sizeof(*a));
	if (!buf)
		return -EACCES;
	for (s = buf, end = buf + len; s < end && !err; s = nl + 1) {
		nl = memchr(s, '\n', end - s);
		if (!nl)
			nl = end;
		err = auth_line(a, path, ++nr, s, nl - s);
	}
	if (!err && !a->bearer && !a->basic && !a->org_id) {
		jt_err("%s: no credentials in it (bearer_token, basic_auth, org_id)", path);
		err = -EINVAL;
	}
	if (!err && a->bearer && a->basic) {
		jt_err("%s: bearer_token and basic_auth both given; one Authorization only", path);
		err = -EINVAL;
	}
	explicit_bzero(buf, len);
	free(buf);
	if (err)
		jt_push_auth__fini(a);
	return err;
}

int jt_push__check_url(const char *url)
{
	const char *host = strstr(url, "://"), *end;

	if (host) {
		host += 3;
		end = host + strcspn(host, "/?#");
		/* userinfo (user:password@) would sit in argv, in ps and in what record prints */
		if (memchr(host, '@', end - host)) {
			jt_err("--push: the URL carries credentials (USER:PASSWORD@ before its host), "
			       "which every user sees in the process list; give the URL without "
			       "them and the credentials in a --push-auth file (basic_auth = "
			       "USER:PASSWORD)");
			return -EINVAL;
		}
	}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		jt_err("--push: '%s' is not an http:// or https:// URL", url);
		return -EINVAL;
	}
	return 0;
}

int jt_push__parse_format(const char *s, enum jt_push_format *f)
{
	if (!strcmp(s, "pyroscope"))
		*f = JT_PUSH_PYROSCOPE;
	else if (!strcmp(s, "parca"))
		*f = JT_PUSH_PARCA;
	else {
		jt_err("--push-format: '%s': give pyroscope or parca", s);
		return -EINVAL;
	}
	return 0;
}

void jt_push__label_value(char *out, const char *in, size_t len)
{
	size_t i;

	if (len > JT_PUSH_LABEL_MAX)
		len = JT_PUSH_LABEL_MAX;
	for (i = 0; i < len && in[i]; i++) {
		char c = in[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || strchr("._-:/@+", c);

		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
	if (!i)
		strcpy(out, "unknown");
}

char *jt_push__endpoint(const char *base, enum jt_push_format f)
{
	const char *path = f == JT_PUSH_PARCA ? JT_PUSH_PARCA_PATH : JT_PUSH_PYROSCOPE_PATH;
	size_t n = strlen(base), p = strlen(path);
	char *url;

	while (n && base[n - 1] == '/')
		n--;
	if (n >= p && !memcmp(base + n - p, path, p))
		p = 0;
	url = malloc(n + p + 1);
	if (!url)
		return NULL;
	memcpy(url, base, n);
	memcpy(url + n, path, p);
	url[n + p] = '\0';
	return url;
}

/* A growing string. */
struct str {
	char *s;
	size_t len, cap;
	bool nomem;
};

static void put(struct str *b, const void *p, size_t n)
{
	if (b->nomem)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *s;

		while (cap < b->len + n + 1)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->nomem = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(struct str *b, const char *s)
{
	put(b, s, strlen(s));
}

/* Percent-encode all but RFC 3986's unreserved characters. */
static void put_escaped(struct str *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = *s;
		char e[3] = { '%', hex[c >> 4], hex[c & 15] };

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			put(b, s, 1);
		else
			put(b, e, 3);
	}
}

static char *done(struct str *b, size_t *len)
{
	if (b->nomem) {
		free(b->s);
		return NULL;
	}
	if (len)
		*len = b->len;
	return b->s;
}

/* The labels as safe values: host, service, pid, comm. */
struct values {
	char host[JT_PUSH_LABEL_MAX + 1];
	char service[JT_PUSH_LABEL_MAX + 1];
	char comm[JT_PUSH_LABEL_MAX + 1];
	char pid[16];
};

static void values_of(struct values *v, const struct jt_push_labels *l)
{
	const char *service = l->service ? l->service : l->comm;

	jt_push__label_value(v->host, l->host, strlen(l->host));
	jt_push__label_value(v->service, service, strlen(service));
	jt_push__label_value(v->comm, l->comm, strlen(l->comm));
	snprintf(v->pid, sizeof(v->pid), "%u", l->pid);
}

char *jt_push__pyroscope_url(const char *endpoint, const struct jt_push_labels *l,
			     uint64_t from, uint64_t until, unsigned int hz)
{
	struct str b = { 0 }, name = { 0 };
	char num[64];
	struct values v;
	char *n;

	values_of(&v, l);
	puts_(&name, v.service);
	puts_(&name, "{host=");
	puts_(&name, v.host);
	puts_(&name, ",service_name=");
	puts_(&name, v.service);
	puts_(&name, ",pid=");
	puts_(&name, v.pid);
	puts_(&name, ",comm=");
	puts_(&name, v.comm);
	puts_(&name, "}");
	n = done(&name, NULL);
	if (!n)
		return NULL;
	puts_(&b, endpoint);
	puts_(&b, strchr(endpoint, '?') ? "&name=" : "?name=");
	put_escaped(&b, n);
	free(n);
	snprintf(num, sizeof(num), "&from=%llu&until=%llu&format=pprof&sampleRate=%u",
		 (unsigned long long)from, (unsigned long long)until, hz ? hz : 100);
	puts_(&b, num);
	puts_(&b, "&spyName=jitrace");
	return done(&b, NULL);
}

static void put_base64(struct str *b, const unsigned char *p, size_t n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		q[0] = abc[p[i] >> 2];
		q[1] = abc[(p[i] & 3) << 4 | p[i + 1] >> 4];
		q[2] = abc[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		q[3] = abc[p[i + 2] & 63];
		put(b, q, 4);
	}
	if (i < n) {
		q[0] = abc[p[i] >> 2];
		q[1] = abc[(p[i] & 3) << 4 | (i + 1 < n ? p[i + 1] >> 4 : 0)];
		q[2] = i + 1 < n ? abc[(p[i + 1] & 15) << 2] : '=';
		q[3] = '=';
		put(b, q, 4);
	}
}

static void json_label(struct str *b, const char *name, const char *value, bool first)
{
	/* names and values hold only label-safe bytes: nothing to escape */
	puts_(b, first ? "{\"name\":\"" : ",{\"name\":\"");
	puts_(b, name);
	puts_(b, "\",\"value\":\"");
	puts_(b, value);
	puts_(b, "\"}");
}

char *jt_push__parca_body(const struct jt_push_labels *l, const void *pprof, size_t pprof_len,
			  size_t *len)
{
	struct str b = { 0 };
	struct values v;

	values_of(&v, l);
	puts_(&b, "{\"series\":[{\"labels\":{\"labels\":[");
	json_label(&b, "__name__", JT_PUSH_PROFILE_NAME, true);
	json_label(&b, "host", v.host, false);
	json_label(&b, "service_name", v.service, false);
	json_label(&b, "pid", v.pid, false);
	json_label(&b, "comm", v.comm, false);
	puts_(&b, "]},\"samples\":[{\"rawProfile\":\"");
	put_base64(&b, pprof, pprof_len);
	puts_(&b, "\"}]}],\"normalized\":true}");
	return done(&b, len);
}

uint64_t jt_push__backoff_ns(unsigned int failures)
{
	uint64_t ns = JT_PUSH_BACKOFF_MIN_NS;

	while (failures-- > 1 && ns < JT_PUSH_BACKOFF_MAX_NS)
		ns *= 2;
	return ns < JT_PUSH_BACKOFF_MAX_NS ? ns : JT_PUSH_BACKOFF_MAX_NS;
}
