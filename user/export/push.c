// SPDX-License-Identifier: GPL-2.0
/* Pushing closed segments to Pyroscope or Parca from a thread of its own, with libcurl. */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "export/pprof.h"
#include "base/hash.h"
#include "log/source.h"
#include "base/outfile.h"
#include "export/push.h"
#include "log/segment.h"
#include "base/util.h"

#define CONNECT_TIMEOUT_S 10L
#define REQUEST_TIMEOUT_S 60L
#define PUSH_NICE 10		/* pushing yields to the recorder and to the host's work */

struct jt_push {
	struct jt_push_opts o;
	struct jt_push_auth auth;	/* our own copy */
	char *endpoint;
	int dirfd;
	CURL *curl;
	pthread_t thread;
	bool started, curl_init;
	pthread_mutex_t mu;		/* guards what follows */
	pthread_cond_t cv;
	char (*queue)[JT_SEGMENT_NAME_MAX];
	size_t head, n, cap;
	bool stopping;
	uint64_t deadline;		/* once stopping: give up at this CLOCK_MONOTONIC time */
	struct jt_push_stats st;
	unsigned int streak;		/* tries failed in a row */
};

/* What a segment holds that its pushes need. */
struct seg_info {
	char host[64];
	uint64_t from, until;		/* Unix seconds */
	unsigned int hz;
	struct proc_info {
		uint32_t pid;
		char comm[16];
	} *procs;
	size_t n, cap;
};

/* ---- the queue and the clock, under mu ---- */

static bool stop_due(const struct jt_push *p)
{
	return p->stopping && jt_now_ns() >= p->deadline;
}

static void enqueue_locked(struct jt_push *p, const char *name)
{
	size_t len = strlen(name);

	if (len >= JT_SEGMENT_NAME_MAX)
		return;
	if (p->head && p->head == p->n) {	/* all taken: start again at 0 */
		p->head = p->n = 0;
	}
	if (jt_array_grow(&p->queue, &p->cap, p->n + 1, sizeof(*p->queue))) {
		jt_err("push: out of memory: %s/%s stays unpushed", p->o.dir, name);
		return;
	}
	memcpy(p->queue[p->n++], name, len + 1);
	p->st.queued++;
}

/* Wait ns, or less if the time to stop comes first: false once it has. */
static bool pause_for(struct jt_push *p, uint64_t ns)
{
	uint64_t until = jt_now_ns() + ns, t;
	struct timespec ts;
	bool ok;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		t = p->stopping && p->deadline < until ? p->deadline : until;
		if (jt_now_ns() >= t)
			break;
		ts.tv_sec = t / 1000000000ULL;
		ts.tv_nsec = t % 1000000000ULL;
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	ok = !stop_due(p);
	pthread_mutex_unlock(&p->mu);
	return ok;
}

/* Count one in *stat; failing: whether the backend is failing now (-1: as it was). */
static void count(struct jt_push *p, uint64_t *stat, int failing)
{
	pthread_mutex_lock(&p->mu);
	(*stat)++;
	if (failing >= 0)
		p->st.failing = failing;
	pthread_mutex_unlock(&p->mu);
}

/* ---- what was delivered: NAME.pushed ---- */

struct delivered {
	struct jt_hash pids;		/* pid -> (void *)1 */
	bool done;
};

static void read_marker(struct jt_push *p, const char *name, struct delivered *d)
{
	char marker[JT_SEGMENT_NAME_MAX + 16], buf[4096], line[64];
	size_t len = 0;
	ssize_t n;
	unsigned int pid;
	int fd;

	snprintf(marker, sizeof(marker), "%s" JT_SEGMENT_PUSHED, name);
	fd = openat(p->dirfd, marker, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			len = 0;
			if (!strcmp(line, "done"))
				d->done = true;
			else if ((sscanf(line, "pid %u", &pid) == 1 ||
				  sscanf(line, "rejected %u", &pid) == 1) && pid)
				jt_hash__put(&d->pids, pid, (void *)1);
		}
	}
	close(fd);
}

/* Note a line in NAME.pushed, on disk before the next push begins. */
static void note(struct jt_push *p, const char *name, const char *line)
{
	char marker[JT_SEGMENT_NAME_MAX + 16];
	size_t len = strlen(line);
	int fd;

	snprintf(marker, sizeof(marker), "%s" JT_SEGMENT_PUSHED, name);
	fd = openat(p->dirfd, marker, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || write(fd, line, len) != (ssize_t)len || fdatasync(fd))
		jt_err("push: %s/%s: %s: it may be pushed again", p->o.dir, marker,
		       strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* ---- reading a segment ---- */

static int scan(const char *path, struct seg_info *si)
{
	struct jt_hash seen = { 0 };
	const struct jt_rec_hdr *rec;
	struct jt_logsrc src;
	int64_t off;
	size_t pos = 0;
	uint64_t key;
	void *val;
	int err = 0;

	if (jt_logsrc__open(&src, path, NULL))
		return -1;
	while ((rec = jt_logsrc__next(&src, NULL))) {
		const struct jt_rec_sample *s = (const void *)rec;

		if (rec->type == JT_REC_SAMPLE && !jt_hash__get(&seen, s->pid) &&
		    jt_hash__put(&seen, s->pid, (void *)1)) {
			err = -1;
			break;
		}
	}
	if (!err && jt_logsrc__finish(&src, "pushed"))
		err = -1;
	while (!err && jt_hash__next(&seen, &pos, &key, &val)) {
		const struct jt_lv_proc *proc = jt_lv__proc(src.lv, key);

		if (jt_array_grow(&si->procs, &si->cap, si->n + 1, sizeof(*si->procs))) {
			err = -1;
			break;
		}
		si->procs[si->n].pid = key;
		snprintf(si->procs[si->n].comm, sizeof(si->procs[0].comm), "%s",
			 proc ? proc->comm : "");
		si->n++;
	}
	if (!err) {
		off = src.hdr->realtime_offset_ns;
		memcpy(si->host, src.hdr->hostname, sizeof(si->host) - 1);
		si->host[sizeof(si->host) - 1] = '\0';
		si->hz = src.hdr->sample_hz;
		si->from = (uint64_t)((int64_t)src.hdr->start_ns + off) / 1000000000ULL;
		si->until = ((uint64_t)((int64_t)src.last_ts + off) + 999999999ULL) / 1000000000ULL;
		if (si->until <= si->from)
			si->until = si->from + 1;
	}
	jt_hash__fini(&seen);
	jt_logsrc__close(&src);
	return err;
}

/* One process's samples of the segment as a gzipped pprof profile, into *buf. */
static int profile_of(const char *path, uint32_t pid, char **buf, size_t *len)
{
	struct jt_filter f;
	FILE *out;
	int ret;

	jt_filter__init(&f);
	f.pids[0] = pid;
	f.nr_pids = 1;
	*buf = NULL;
	out = open_memstream(buf, len);
	if (!out) {
		jt_err("push: %s: %s", path, strerror(errno));
		return -1;
	}
	ret = jt_export_pprof(out, path, &f);
	if (fclose(out))
		ret = 1;
	if (ret) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}

/* ---- sending ---- */

static size_t discard(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	(void)ptr, (void)ctx;
	return size * nmemb;
}

/* A request under way stops once the recorder has stopped waiting for it. */
static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct jt_push *p = ctx;
	bool stop;

	(void)a, (void)b, (void)c, (void)d;
	pthread_mutex_lock(&p->mu);
	stop = stop_due(p);
	pthread_mutex_unlock(&p->mu);
	return stop;
}

enum sent { SENT, RETRY, REJECTED };

/* Add a header line (curl copies it); false when out of memory, the list kept. */
static bool add_header(struct curl_slist **l, const char *line)
{
	struct curl_slist *n = curl_slist_append(*l, line);

	if (n)
		*l = n;
	return n;
}

static enum sent send_profile(struct jt_push *p, const struct seg_info *si,
			      const struct proc_info *pi, const char *pb, size_t pb_len,
			      char *why, size_t cap)
{
	struct jt_push_labels l = { .host = si->host, .service = p->o.service, .comm = pi->comm,
				    .pid = pi->pid };
	struct curl_slist *hdrs = NULL;
	char *url = NULL, *body = NULL, line[JT_PUSH_AUTH_MAX + 64];
	curl_mime *mime = NULL;
	curl_mimepart *part;
	size_t body_len = 0;
	enum sent ret = RETRY;
	long code = 0;
	CURLcode rc;
	bool ok;

	curl_easy_reset(p->curl);
	if (p->o.format == JT_PUSH_PARCA) {
		url = strdup(p->endpoint);
		body = jt_push__parca_body(&l, pb, pb_len, &body_len);
	} else {
		url = jt_push__pyroscope_url(p->endpoint, &l, si->from, si->until, si->hz);
	}
	if (!url || (p->o.format == JT_PUSH_PARCA && !body)) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	ok = add_header(&hdrs, "Expect:");	/* no 100-continue round trip */
	if (ok && p->o.format == JT_PUSH_PARCA)
		ok = add_header(&hdrs, "Content-Type: application/json");
	if (ok && p->auth.bearer) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", p->auth.bearer);
		ok = add_header(&hdrs, line);
	}
	if (ok && p->auth.org_id) {
		snprintf(line, sizeof(line), "X-Scope-OrgID: %s", p->auth.org_id);
		ok = add_header(&hdrs, line);
	}
	explicit_bzero(line, sizeof(line));
	if (!ok) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT, REQUEST_TIMEOUT_S);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "jitrace");
	if (p->auth.basic) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(p->curl, CURLOPT_USERPWD, p->auth.basic);
	}
	if (p->o.format == JT_PUSH_PARCA) {
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	} else {
		mime = curl_mime_init(p->curl);
		part = mime ? curl_mime_addpart(mime) : NULL;
		if (!part || curl_mime_name(part, "profile") ||
		    curl_mime_filename(part, "profile.pprof") ||
		    curl_mime_type(part, "application/octet-stream") ||
		    curl_mime_data(part, pb, pb_len)) {
			snprintf(why, cap, "out of memory");
			goto out;
		}
		curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, mime);
	}
	rc = curl_easy_perform(p->curl);
	if (rc != CURLE_OK) {
		snprintf(why, cap, "%s", curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		ret = SENT;
	} else {
		snprintf(why, cap, "HTTP status %ld", code);
		/* the backend's own trouble, or too much at once: later may do */
		ret = code == 408 || code == 429 || code >= 500 ? RETRY : REJECTED;
	}
out:
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	free(body);
	free(url);
	return ret;
}

/* Push one process's profile until it is delivered or refused: false if told to stop. */
static bool push_proc(struct jt_push *p, const char *name, const char *path,
		      const struct seg_info *si, const struct proc_info *pi)
{
	char why[256], line[64], *pb;
	size_t pb_len;
	enum sent r;

	if (profile_of(path, pi->pid, &pb, &pb_len)) {
		count(p, &p->st.rejected, -1);
		snprintf(line, sizeof(line), "rejected %u\n", pi->pid);
		note(p, name, line);
		return true;
	}
	for (;;) {
		r = send_profile(p, si, pi, pb, pb_len, why, sizeof(why));
		if (r != RETRY)
			break;
		count(p, &p->st.failures, true);
		if (!p->streak++)
			jt_err("push: %s: %s; trying again (segments wait in %s)", p->endpoint, why,
			       p->o.dir);
		if (!pause_for(p, jt_push__backoff_ns(p->streak))) {
			free(pb);
			return false;
		}
	}
	free(pb);
	if (r == REJECTED) {
		jt_err("push: %s: %s/%s, pid %u: refused: %s; not tried again", p->endpoint,
		       p->o.dir, name, pi->pid, why);
		count(p, &p->st.rejected, false);
		snprintf(line, sizeof(line), "rejected %u\n", pi->pid);
	} else {
		if (p->streak)
			jt_err("push: %s: delivering again after %u failed tries", p->endpoint,
			       p->streak);
		p->streak = 0;
		count(p, &p->st.profiles, false);
		snprintf(line, sizeof(line), "pid %u\n", pi->pid);
	}
	note(p, name, line);
	return true;
}

/* Push a segment's profiles that are not delivered yet: false if told to stop first. */
static bool push_segment(struct jt_push *p, const char *name)
{
	struct delivered d = { 0 };
	struct seg_info si = { 0 };
	char *path;
	bool ok = true;
	size_t i;

	if (faccessat(p->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW)) {
		jt_err("push: %s/%s: deleted before it was pushed (--max-age, --max-size)",
		       p->o.dir, name);
		count(p, &p->st.expired, -1);
		return true;
	}
	read_marker(p, name, &d);
	if (d.done)
		goto out;
	if (asprintf(&path, "%s/%s", p->o.dir, name) < 0) {
		jt_err("push: out of memory");
		ok = pause_for(p, JT_PUSH_BACKOFF_MAX_NS);
		goto out_marker;
	}
	if (scan(path, &si)) {
		count(p, &p->st.rejected, -1);
		note(p, name, "done\n");
		goto out_path;
	}
	for (i = 0; i < si.n && ok; i++)
		if (!jt_hash__get(&d.pids, si.procs[i].pid))
			ok = push_proc(p, name, path, &si, &si.procs[i]);
	if (ok) {
		note(p, name, "done\n");
		count(p, &p->st.segments, -1);
	}
out_path:
	free(path);
out_marker:
	free(si.procs);
out:
	jt_hash__fini(&d.pids);
	return ok;
}

static void *run(void *ctx)
{
	struct jt_push *p = ctx;
	char name[JT_SEGMENT_NAME_MAX];

	setpriority(PRIO_PROCESS, syscall(SYS_gettid), PUSH_NICE);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->head == p->n && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->head == p->n || stop_due(p))
			break;
		memcpy(name, p->queue[p->head], sizeof(name));
		pthread_mutex_unlock(&p->mu);
		if (!push_segment(p, name)) {
			pthread_mutex_lock(&p->mu);
			break;
		}
		pthread_mutex_lock(&p->mu);
		p->head++;
		p->st.queued--;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- start, queue, stop ---- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The directory's segments that are not pushed whole, oldest first. */
static int queue_unpushed(struct jt_push *p)
{
	int fd = openat(p->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	size_t first = p->n, i;

	if (!dir) {
		jt_err("push: %s: cannot list: %s", p->o.dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(dir)))
		if (jt_segment__is_name(de->d_name))
			enqueue_locked(p, de->d_name);
	closedir(dir);
	if (p->n > first)
		qsort(p->queue + first, p->n - first, sizeof(*p->queue), cmp_name);
	for (i = first; i < p->n; i++) {
		struct delivered d = { 0 };

		read_marker(p, p->queue[i], &d);
		jt_hash__fini(&d.pids);
		if (d.done) {	/* pushed whole by an earlier recorder */
			memmove(p->queue + i, p->queue + i + 1, (p->n - i - 1) * sizeof(*p->queue));
			p->n--;
			p->st.queued--;
			i--;
		}
	}
	return 0;
}

static char *dup_or_null(const char *s, bool *nomem)
{
	char *d = s ? strdup(s) : NULL;

	*nomem |= s && !d;
	return d;
}

static void push_free(struct jt_push *p)
{
	if (p->curl)
		curl_easy_cleanup(p->curl);
	if (p->curl_init)
		curl_global_cleanup();
	if (p->dirfd >= 0)
		close(p->dirfd);
	jt_push_auth__fini(&p->auth);
	free(p->endpoint);
	free(p->queue);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

struct jt_push *jt_push__start(const struct jt_push_opts *o)
{
	struct jt_push *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	bool nomem = false;
	int err;

	if (!p) {
		jt_err("push: out of memory");
		return NULL;
	}
	/* checked by record already; a caller that did not must not send them either */
	if (jt_push__check_url(o->url)) {
		free(p);
		return NULL;
	}
	p->o = *o;
	p->dirfd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);	/* the clock jt_now_ns reads */
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (o->auth) {
		p->auth.bearer = dup_or_null(o->auth->bearer, &nomem);
		p->auth.basic = dup_or_null(o->auth->basic, &nomem);
		p->auth.org_id = dup_or_null(o->auth->org_id, &nomem);
	}
	p->endpoint = jt_push__endpoint(o->url, o->format);
	if (nomem || !p->endpoint) {
		jt_err("push: out of memory");
		goto fail;
	}
	/* libcurl's own setup is not thread-safe: done here, before the thread */
	p->curl_init = !curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!p->curl_init || !(p->curl = curl_easy_init())) {
		jt_err("push: libcurl would not start");
		goto fail;
	}
	p->dirfd = jt_outfile__dir(o->dir);
	if (p->dirfd < 0 || queue_unpushed(p))
		goto fail;
	err = pthread_create(&p->thread, NULL, run, p);
	if (err) {
		jt_err("push: cannot start its thread: %s", strerror(err));
		goto fail;
	}
	p->started = true;
	return p;
fail:
	push_free(p);
	return NULL;
}

void jt_push__segment(struct jt_push *p, const char *name)
{
	pthread_mutex_lock(&p->mu);
	enqueue_locked(p, name);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void jt_push__stats(struct jt_push *p, struct jt_push_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}

void jt_push__stop(struct jt_push *p, double wait_s)
{
	pthread_mutex_lock(&p->mu);
	if (!p->stopping) {
		p->stopping = true;
		p->deadline = jt_now_ns() + (uint64_t)(wait_s > 0 ? wait_s * 1e9 : 0);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	p->started = false;
}

void jt_push__free(struct jt_push *p)
{
	if (!p)
		return;
	jt_push__stop(p, 0);
	push_free(p);
}
