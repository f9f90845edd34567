/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a push to a fleet backend says, apart from sending it (push.h): the credentials file,
 * the labels, Pyroscope's /ingest URL and Parca's WriteRaw JSON body, the retry schedule.
 * Plain C, no libcurl, so that a unit test drives it.
 *
 * Pyroscope (POST /ingest): the labels in the name query parameter,
 *   name=SERVICE{host=H,service_name=SERVICE,pid=P,comm=C}&from=S&until=S&format=pprof&...
 * and the gzipped profile as the multipart form file "profile".
 * Parca (WriteRaw through its HTTP gateway, POST /profiles/writeraw):
 *   {"series":[{"labels":{"labels":[{"name":"__name__","value":"jitrace_cpu"},...]},
 *     "samples":[{"rawProfile":"BASE64"}]}],"normalized":true}
 */
#ifndef JT_PUSH_FMT_H
#define JT_PUSH_FMT_H

#include <stddef.h>
#include <stdint.h>

enum jt_push_format {
	JT_PUSH_PYROSCOPE,
	JT_PUSH_PARCA,
};

#define JT_PUSH_PYROSCOPE_PATH "/ingest"
#define JT_PUSH_PARCA_PATH "/profiles/writeraw"
#define JT_PUSH_PROFILE_NAME "jitrace_cpu"	/* Parca's __name__ */
#define JT_PUSH_LABEL_MAX 128			/* a label value's bytes at most */
#define JT_PUSH_AUTH_MAX 65536			/* a credentials file's bytes at most */

/*
 * Credentials, from a file of "KEY = VALUE" lines (# comments, blank lines):
 *   bearer_token = TOKEN        Authorization: Bearer TOKEN
 *   basic_auth = USER:PASSWORD  Authorization: Basic ...
 *   org_id = TENANT             X-Scope-OrgID: TENANT (Pyroscope's, Mimir's tenant)
 */
struct jt_push_auth {
	char *bearer;
	char *basic;
	char *org_id;
};

/*
 * Read the credentials at path. Refused (never read) when other users may read or write it
 * (any group or other bit in its mode), when it belongs to neither root nor the caller, is
 * not a regular file, or is reached through a symlink neither root's nor the caller's. An unknown key, a value with control characters or a key given twice
 * is an error naming the line, never the value. 0 or -errno (reported).
 */
int jt_push_auth__load(struct jt_push_auth *a, const char *path);
/* Wipe and free. */
void jt_push_auth__fini(struct jt_push_auth *a);

/*
 * A --push URL jitrace takes: http:// or https://, with no credentials in it (USER:PASSWORD@
 * shows in the process list; they come from --push-auth). -EINVAL (reported, never showing
 * the credentials) otherwise.
 */
int jt_push__check_url(const char *url);

/* "pyroscope" or "parca"; -EINVAL (reported) for anything else. */
int jt_push__parse_format(const char *s, enum jt_push_format *f);

/* One profile's labels. service NULL: the comm. */
struct jt_push_labels {
	const char *host;
	const char *service;
	const char *comm;
	uint32_t pid;
};

/*
 * A label value both backends and Pyroscope's name syntax take as it is: bytes other than
 * letters, digits and . _ - : / @ + become '_', cut to JT_PUSH_LABEL_MAX bytes; "unknown"
 * if empty. out holds JT_PUSH_LABEL_MAX + 1 bytes.
 */
void jt_push__label_value(char *out, const char *in, size_t len);

/* The endpoint's URL: base with the format's path added, unless it already ends in it. */
char *jt_push__endpoint(const char *base, enum jt_push_format f);

/*
 * Pyroscope's /ingest URL for one profile: endpoint (from jt_push__endpoint) with the query
 * parameters, from and until in Unix seconds, hz the sample rate. malloc'ed; NULL: no memory.
 */
char *jt_push__pyroscope_url(const char *endpoint, const struct jt_push_labels *l,
			     uint64_t from, uint64_t until, unsigned int hz);

/* Parca's WriteRaw JSON body for one profile (the gzipped pprof). malloc'ed, *len its bytes. */
char *jt_push__parca_body(const struct jt_push_labels *l, const void *pprof, size_t pprof_len,
			  size_t *len);

/* The wait before the next try after failures failed tries in a row: 1 s doubling to 30 s. */
uint64_t jt_push__backoff_ns(unsigned int failures);

#define JT_PUSH_BACKOFF_MIN_NS 1000000000ULL
#define JT_PUSH_BACKOFF_MAX_NS 30000000000ULL

#endif
