/* SPDX-License-Identifier: GPL-2.0 */
/* Perf map (/tmp/perf-PID.map) parsing and safe, incremental following of one map file. */
#ifndef JT_PERFMAP_H
#define JT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JT_PERFMAP_LINE_MAX 4096	/* longer lines are counted as bad and skipped */
#define JT_PERFMAP_READ_MAX (1 << 20)	/* bytes read from one file per poll */
/* What following one map holds (its read buffer, a partial line): at most this many bytes. */
#define JT_PERFMAP_FILE_BYTES (72 * 1024)

struct jt_perfmap_entry {
	uint64_t start;
	uint64_t size;
	const char *name;	/* not NUL-terminated; valid only during the callback */
	size_t name_len;
};

typedef void (*jt_perfmap_cb)(void *ctx, const struct jt_perfmap_entry *e);

/* Line parser: bytes in, entries out. Keeps a partial last line for the next feed. */
struct jt_perfmap_parser;

struct jt_perfmap_parser *jt_perfmap_parser__new(void);
void jt_perfmap_parser__free(struct jt_perfmap_parser *p);
/*
 * Parse from *buf (*len bytes) up to the next valid complete line: returns 1 with it in *e
 * (its name valid until the next call), 0 when the bytes ran out first; *buf and *len move
 * past what was taken.
 */
int jt_perfmap_parser__next(struct jt_perfmap_parser *p, const char **buf, size_t *len,
			    struct jt_perfmap_entry *e);
/* Parse len bytes; cb runs once per valid complete line. Returns entries produced. */
size_t jt_perfmap_parser__feed(struct jt_perfmap_parser *p, const char *buf, size_t len,
			       jt_perfmap_cb cb, void *ctx);
/* Forget any partial line (the file was truncated or replaced). */
void jt_perfmap_parser__reset(struct jt_perfmap_parser *p);
/* Lines rejected so far (garbage, too long, bad numbers). */
uint64_t jt_perfmap_parser__bad_lines(const struct jt_perfmap_parser *p);

/*
 * Path of PID's map as jitrace must open it: /proc/PID/root/tmp/perf-NSTGID.map, for
 * messages. Returns 0 or -errno (-ENAMETOOLONG if len is too small); nothing printed.
 */
int jt_perfmap__path(pid_t pid, char *buf, size_t len);

/* One followed map file. */
struct jt_perfmap_file;

/*
 * Open path for following. Refuses (returns NULL, errno set, nothing printed) anything but
 * a regular file owned by root or by uid, and never follows a symlink.
 */
struct jt_perfmap_file *jt_perfmap_file__open(const char *path, uid_t uid);
/*
 * Open PID's map as root must: tmp/perf-NSTGID.map resolved inside the process's own root
 * (/proc/PID/root), no symlinks, same checks as jt_perfmap_file__open. uid is the
 * process's uid. Returns NULL with errno set; nothing printed.
 */
struct jt_perfmap_file *jt_perfmap_file__open_pid(pid_t pid, uid_t uid);
/* The map of a process now gone, where it was while it lived (jt_safeopen__perfmap_gone). */
struct jt_mapsite;
struct jt_perfmap_file *jt_perfmap_file__open_gone(const struct jt_mapsite *site, uid_t uid);
void jt_perfmap_file__free(struct jt_perfmap_file *f);
/*
 * fd is the file now at f's path: if it is another file (the map was replaced by rename,
 * or unlinked and created again), follow it from its start instead and return 1; else
 * close it and return 0.
 */
int jt_perfmap_file__replace(struct jt_perfmap_file *f, int fd);
/* Times the file was found written anew (truncated, rewritten in place, replaced) and read
 * again from its start. */
uint64_t jt_perfmap_file__rewrites(const struct jt_perfmap_file *f);
/*
 * Reading what was appended since the last read, at most JT_PERFMAP_READ_MAX bytes: begin
 * it (a file that shrank, or whose bytes before where the last read stopped changed, is
 * read again from its start), then take its lines one by one
 * with next, which returns 1 with a line in *e (valid until the next call), 0 when this
 * read is over, or -errno. Both return -errno on failure. A read may stop after any line:
 * the next one goes on from the line after it.
 */
int jt_perfmap_file__begin(struct jt_perfmap_file *f);
int jt_perfmap_file__next(struct jt_perfmap_file *f, struct jt_perfmap_entry *e);
/* The same as one call: feed every line to cb. Returns entries produced, or -errno. */
int jt_perfmap_file__poll(struct jt_perfmap_file *f, jt_perfmap_cb cb, void *ctx);
/* Whether the last read reached the end of the file (not stopped by JT_PERFMAP_READ_MAX). */
bool jt_perfmap_file__at_end(const struct jt_perfmap_file *f);
uint64_t jt_perfmap_file__bad_lines(const struct jt_perfmap_file *f);

#endif
