// SPDX-License-Identifier: GPL-2.0
/*
 * The .NET diagnostics IPC client: framing byte for byte, replies read whole or refused,
 * the socket found inside a process's root (a fixture tree standing for /proc), and a
 * session's EnablePerfMap and DisablePerfMap against a fake runtime on a real socket.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/dotnet_ipc.h"

#define PID 4242
#define NSPID 7
#define START 123456ULL

/* ---- framing ---- */

static void test_frame_is_the_protocols_header_then_the_payload(void **state)
{
	static const uint8_t want[] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
		24, 0,		/* the whole message, little-endian */
		0x04, 0x05,	/* Process, EnablePerfMap */
		0, 0,		/* reserved */
		3, 0, 0, 0,	/* perf map only */
	};
	uint8_t payload[4] = { 3, 0, 0, 0 }, buf[64];

	(void)state;
	assert_int_equal(jt_dotnet_ipc__frame(JT_DOTNET_IPC_PROCESS, JT_DOTNET_IPC_ENABLE_PERFMAP,
					      payload, sizeof(payload), buf, sizeof(buf)),
			 sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	/* no payload: the header alone, size 20 */
	assert_int_equal(jt_dotnet_ipc__frame(0x04, 0x06, NULL, 0, buf, sizeof(buf)), 20);
	assert_int_equal(buf[14], 20);
	assert_int_equal(buf[17], 0x06);
}

static void test_frame_refuses_what_does_not_fit(void **state)
{
	static uint8_t big[70000], out[70000];
	uint8_t buf[32];

	(void)state;
	assert_int_equal(jt_dotnet_ipc__frame(0x04, 0x05, big, 13, buf, sizeof(buf)), -EMSGSIZE);
	/* the header's u16 size caps a message at 65535 bytes whatever the buffer */
	assert_int_equal(jt_dotnet_ipc__frame(0x04, 0x05, big, 65535 - 20 + 1, out, sizeof(out)),
			 -EMSGSIZE);
	assert_int_equal(jt_dotnet_ipc__frame(0x04, 0x05, big, 65535 - 20, out, sizeof(out)),
			 65535);
}

static void test_header_checks_magic_and_size(void **state)
{
	uint8_t buf[32], set, id;
	uint16_t size;

	(void)state;
	assert_int_equal(jt_dotnet_ipc__frame(0xff, 0x00, "\0\0\0\0", 4, buf, sizeof(buf)), 24);
	assert_int_equal(jt_dotnet_ipc__header(buf, 24, &set, &id, &size), 0);
	assert_int_equal(set, 0xff);
	assert_int_equal(id, 0);
	assert_int_equal(size, 4);
	assert_int_equal(jt_dotnet_ipc__header(buf, 19, &set, &id, &size), -EPROTO);
	buf[14] = 19;	/* smaller than its own header */
	assert_int_equal(jt_dotnet_ipc__header(buf, 24, &set, &id, &size), -EPROTO);
	buf[14] = 24;
	buf[12] = '2';	/* DOTNET_IPC_V2 */
	assert_int_equal(jt_dotnet_ipc__header(buf, 24, &set, &id, &size), -EPROTO);
}

static void test_attach_payload_layout(void **state)
{
	static const uint8_t want[] = {
		0x88, 0x13, 0, 0,	/* 5000 ms */
		/* {8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13} as the GUID lies in memory */
		0x41, 0x7a, 0x2b, 0x8e, 0x3d, 0x5c, 0x1e, 0x4f,
		0x9a, 0x6b, 0x2d, 0x7c, 0x0e, 0x4f, 0x8a, 0x13,
		4, 0, 0, 0, '/', 0, 'a', 0, 'b', 0, 0, 0,	/* "/ab" and its NUL, UTF-16 */
		2, 0, 0, 0, 'h', 'i',				/* client data */
	};
	uint8_t buf[128];

	(void)state;
	assert_int_equal(jt_dotnet_ipc__attach_payload(5000,
						       "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}",
						       "/ab", "hi", 2, buf, sizeof(buf)),
			 sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(jt_dotnet_ipc__attach_payload(0, "8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13",
						       "/ab", NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(jt_dotnet_ipc__attach_payload(0, "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A1G}",
						       "/ab", NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(jt_dotnet_ipc__attach_payload(0, "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}x",
						       "/ab", NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(jt_dotnet_ipc__attach_payload(0, "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}",
						       "/\xc3\xa9", NULL, 0, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(jt_dotnet_ipc__attach_payload(0, "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}",
						       "/ab", NULL, 0, buf, 30), -EMSGSIZE);
}

/* ---- a fake runtime: answers each connection with a reply chosen by the test ---- */

enum reply { REPLY_OK, REPLY_ERROR, REPLY_GARBAGE, REPLY_CLOSE, REPLY_SILENT, REPLY_LONG };

struct fake {
	int listen_fd;		/* -1: serve the one connected fd in conn */
	int conn;
	int nr_conns;		/* connections to serve */
	enum reply reply;
	uint32_t hresult;
	/* what it was sent, per connection */
	uint8_t set[4], id[4];
	uint8_t payload[4][64];
	uint16_t payload_len[4];
	int served;
	pthread_t thread;
};

static int read_n(int fd, uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t got = read(fd, buf, n);

		if (got <= 0)
			return -1;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

static void serve_one(struct fake *f, int fd)
{
	static const uint8_t zeros[300];
	uint8_t hdr[20], buf[512];
	int k = f->served, n;
	uint16_t size;

	if (read_n(fd, hdr, 20) || memcmp(hdr, "DOTNET_IPC_V1", 14))
		return;
	size = (uint16_t)(hdr[14] | hdr[15] << 8);
	if (k < 4) {
		f->set[k] = hdr[16];
		f->id[k] = hdr[17];
		f->payload_len[k] = size - 20;
		if (size - 20 <= 64 && read_n(fd, f->payload[k], size - 20))
			return;
	}
	f->served++;
	switch (f->reply) {
	case REPLY_OK:
	case REPLY_ERROR:
	case REPLY_LONG:
		n = jt_dotnet_ipc__frame(0xff, f->reply == REPLY_ERROR ? 0xff : 0x00, zeros,
					 f->reply == REPLY_LONG ? 300 : 4, buf, sizeof(buf));
		buf[20] = f->hresult & 0xff;
		buf[21] = (f->hresult >> 8) & 0xff;
		buf[22] = (f->hresult >> 16) & 0xff;
		buf[23] = f->hresult >> 24;
		assert_int_equal(write(fd, buf, n), n);
		break;
	case REPLY_GARBAGE:
		assert_int_equal(write(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28), 28);
		break;
	case REPLY_CLOSE:
		break;
	case REPLY_SILENT:
		usleep(300000);
		break;
	}
}

static void *serve(void *arg)
{
	struct fake *f = arg;
	int i;

	for (i = 0; i < f->nr_conns; i++) {
		int fd = f->listen_fd >= 0 ? accept(f->listen_fd, NULL, NULL) : f->conn;

		if (fd < 0)
			break;
		serve_one(f, fd);
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f)
{
	assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
}

static void fake_join(struct fake *f)
{
	pthread_join(f->thread, NULL);
}

/* One command over a socketpair against the fake's reply. */
static int over_pair(enum reply reply, uint32_t hr, int timeout_ms, uint32_t *hresult,
		     struct fake *f)
{
	uint8_t type[4] = { 3, 0, 0, 0 };
	int sv[2], err;

	memset(f, 0, sizeof(*f));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->listen_fd = -1;
	f->conn = sv[1];
	f->nr_conns = 1;
	f->reply = reply;
	f->hresult = hr;
	fake_start(f);
	err = jt_dotnet_ipc__command(sv[0], 0x04, 0x05, type, sizeof(type), timeout_ms, hresult);
	close(sv[0]);
	fake_join(f);
	return err;
}

static void test_command_ok_reply(void **state)
{
	struct fake f;
	uint32_t hr = 99;

	(void)state;
	assert_int_equal(over_pair(REPLY_OK, 0, 1000, &hr, &f), 0);
	assert_int_equal(hr, 0);
	assert_int_equal(f.set[0], 0x04);
	assert_int_equal(f.id[0], 0x05);
	assert_int_equal(f.payload_len[0], 4);
	assert_int_equal(f.payload[0][0], 3);
}

static void test_command_error_reply_carries_its_hresult(void **state)
{
	struct fake f;
	uint32_t hr = 0;
	char buf[16];

	(void)state;
	assert_int_equal(over_pair(REPLY_ERROR, 0x80131385, 1000, &hr, &f), -EREMOTEIO);
	assert_int_equal(hr, 0x80131385);
	assert_non_null(strstr(jt_dotnet_ipc__hresult_str(hr, buf), ".NET 8"));
	assert_string_equal(jt_dotnet_ipc__hresult_str(0x12345678, buf), "0x12345678");
}

static void test_command_long_reply_is_read_whole(void **state)
{
	struct fake f;
	uint32_t hr = 1;

	(void)state;
	assert_int_equal(over_pair(REPLY_LONG, 0, 1000, &hr, &f), 0);
	assert_int_equal(hr, 0);
}

static void test_command_refuses_what_is_not_a_reply(void **state)
{
	struct fake f;
	uint32_t hr;

	(void)state;
	assert_int_equal(over_pair(REPLY_GARBAGE, 0, 1000, &hr, &f), -EPROTO);
	assert_int_equal(over_pair(REPLY_CLOSE, 0, 1000, &hr, &f), -ECONNRESET);
	assert_int_equal(over_pair(REPLY_SILENT, 0, 100, &hr, &f), -ETIMEDOUT);
}

/* ---- a process tree: PROC/PID/{status,stat,environ,fd/,root/TMP/socket} ---- */

struct tree {
	char proc[256];		/* stands for /proc */
	int listen_fd;
};

static void put_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* A process PID (NSPID in its namespace, started at START) whose environment holds env. */
static void tree_make(struct tree *t, const char *env, size_t env_len)
{
	const char *base = getenv("TMPDIR");
	char dir[512], text[512];

	memset(t, 0, sizeof(*t));
	t->listen_fd = -1;
	snprintf(t->proc, sizeof(t->proc), "%s/jt_test_dotnet.XXXXXX", base ? base : "/tmp");
	assert_non_null(mkdtemp(t->proc));
	snprintf(dir, sizeof(dir), "%s/%d", t->proc, PID);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(text, sizeof(text), "Name:\tdotnet\nUid:\t%u\t%u\t%u\t%u\nNStgid:\t%d\t%d\n"
		 "NSpid:\t%d\t%d\n", getuid(), getuid(), getuid(), getuid(), PID, NSPID, PID,
		 NSPID);
	put_file(dir, "status", text, strlen(text));
	/* a name with spaces and a ')' in it: fields count from the last ')' */
	snprintf(text, sizeof(text), "%d (a b) c) S 1 1 1 0 -1 4194560 1 0 0 0 2 3 0 0 20 0 9 0 "
		 "%llu 1000 10 0\n", PID, START);
	put_file(dir, "stat", text, strlen(text));
	put_file(dir, "environ", env, env_len);
	snprintf(dir, sizeof(dir), "%s/%d/fd", t->proc, PID);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/%d/root", t->proc, PID);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/%d/root/tmp", t->proc, PID);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/%d/root/t2", t->proc, PID);
	assert_int_equal(mkdir(dir, 0755), 0);
}

/* A socket at root/REL, listening or not (a runtime that crashed left its name). */
static void tree_socket(struct tree *t, const char *rel, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/root/%s", t->proc, PID, rel);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening) {
		assert_int_equal(listen(fd, 4), 0);
		t->listen_fd = fd;
	} else {
		close(fd);	/* the name stays, nobody listens */
	}
}

static void rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static void tree_free(struct tree *t)
{
	if (t->listen_fd >= 0)
		close(t->listen_fd);
	rm_rf(t->proc);
}

static void serve_tree(struct fake *f, struct tree *t, int conns, enum reply reply,
		       uint32_t hr)
{
	memset(f, 0, sizeof(*f));
	f->listen_fd = t->listen_fd;
	f->nr_conns = conns;
	f->reply = reply;
	f->hresult = hr;
	fake_start(f);
}

static void test_connect_finds_the_socket_by_namespace_pid_and_start(void **state)
{
	static const char env[] = "PATH=/bin\0HOME=/root";
	struct tree t;
	struct fake f;
	uint32_t hr;
	int fd;

	(void)state;
	tree_make(&t, env, sizeof(env));
	assert_int_equal(jt_dotnet_ipc__connect(t.proc, PID), -ENOENT);
	/* an older runtime's socket of another pid, and a stale one of ours nobody serves */
	tree_socket(&t, "tmp/dotnet-diagnostic-8-123456-socket", false);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-99-socket", false);
	assert_int_equal(jt_dotnet_ipc__connect(t.proc, PID), -ECONNREFUSED);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 1, REPLY_OK, 0);
	fd = jt_dotnet_ipc__connect(t.proc, PID);
	assert_true(fd >= 0);
	assert_int_equal(jt_dotnet_ipc__command(fd, 0x04, 0x06, NULL, 0, 1000, &hr), 0);
	close(fd);
	fake_join(&f);
	assert_int_equal(f.served, 1);
	assert_int_equal(f.id[0], 0x06);
	assert_int_equal(jt_dotnet_ipc__connect(t.proc, PID + 1), -ENOENT);
	tree_free(&t);
}

static void test_connect_uses_the_processes_tmpdir(void **state)
{
	static const char env[] = "A=1\0TMPDIR=/t2/\0B=2";
	struct tree t;
	struct fake f;
	uint32_t hr;
	int fd;

	(void)state;
	tree_make(&t, env, sizeof(env));
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", false);	/* not this one */
	tree_socket(&t, "t2/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 1, REPLY_OK, 0);
	fd = jt_dotnet_ipc__connect(t.proc, PID);
	assert_true(fd >= 0);
	assert_int_equal(jt_dotnet_ipc__command(fd, 0x04, 0x06, NULL, 0, 1000, &hr), 0);
	close(fd);
	fake_join(&f);
	tree_free(&t);
}

/* Only a socket: a regular file in its place is someone else's doing. */
static void test_connect_refuses_what_is_not_a_socket(void **state)
{
	static const char env[] = "";
	char dir[512];
	struct tree t;

	(void)state;
	tree_make(&t, env, 0);
	snprintf(dir, sizeof(dir), "%s/%d/root/tmp", t.proc, PID);
	put_file(dir, "dotnet-diagnostic-7-123456-socket", "x", 1);
	assert_int_equal(jt_dotnet_ipc__connect(t.proc, PID), -EPERM);
	tree_free(&t);
}

/* ---- a session ---- */

static FILE *err_file;
static int err_saved = -1;

static void errs_begin(void)
{
	fflush(stderr);
	err_file = tmpfile();
	err_saved = dup(STDERR_FILENO);
	assert_true(err_file && err_saved >= 0);
	dup2(fileno(err_file), STDERR_FILENO);
}

static char *errs_end(void)
{
	long len;
	char *text;

	fflush(stderr);
	dup2(err_saved, STDERR_FILENO);
	close(err_saved);
	len = ftell(err_file);
	text = calloc(1, len + 1);
	assert_non_null(text);
	rewind(err_file);
	assert_int_equal(fread(text, 1, len, err_file), (size_t)len);
	fclose(err_file);
	return text;
}

static void test_session_enables_once_and_disables_at_the_end(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *d;
	struct tree t;
	struct fake f;

	(void)state;
	tree_make(&t, env, 0);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 2, REPLY_OK, 0);
	d = jt_dotnet_ipc__new(t.proc);
	assert_non_null(d);
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), 1);
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), 0);	/* asked already */
	assert_int_equal(jt_dotnet_ipc__enable(d, PID + 1), 0);	/* no such process */
	assert_int_equal(jt_dotnet_ipc__nr_enabled(d), 1);
	jt_dotnet_ipc__free(d);
	fake_join(&f);
	assert_int_equal(f.served, 2);
	assert_int_equal(f.id[0], JT_DOTNET_IPC_ENABLE_PERFMAP);
	assert_int_equal(f.payload_len[0], 4);
	assert_int_equal(f.payload[0][0], JT_DOTNET_PERFMAP_MAP);
	assert_int_equal(f.set[1], JT_DOTNET_IPC_PROCESS);
	assert_int_equal(f.id[1], JT_DOTNET_IPC_DISABLE_PERFMAP);
	assert_int_equal(f.payload_len[1], 0);
	tree_free(&t);
}

/*
 * -a: a process whose own root holds its socket where its runtime puts it, named by its pid
 * in its namespace (7, as in a container), is asked, once; nothing in jitrace's own /tmp
 * names it (a container's /tmp is not the host's, a pod's not the node's).
 */
static void test_session_enable_all_finds_sockets_in_each_processes_root(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *d;
	struct tree t;
	struct fake f;

	(void)state;
	tree_make(&t, env, 0);
	/* another process's, in the same /tmp: not this one's to answer */
	tree_socket(&t, "tmp/dotnet-diagnostic-8-123456-socket", false);
	d = jt_dotnet_ipc__new(t.proc);
	assert_int_equal(jt_dotnet_ipc__enable_all(d), 0);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 2, REPLY_OK, 0);
	assert_int_equal(jt_dotnet_ipc__enable_all(d), 1);
	assert_int_equal(jt_dotnet_ipc__enable_all(d), 0);	/* asked already */
	assert_int_equal(jt_dotnet_ipc__nr_enabled(d), 1);
	jt_dotnet_ipc__free(d);
	fake_join(&f);
	assert_int_equal(f.served, 2);
	assert_int_equal(f.id[0], JT_DOTNET_IPC_ENABLE_PERFMAP);
	assert_int_equal(f.id[1], JT_DOTNET_IPC_DISABLE_PERFMAP);
	tree_free(&t);
}

/* A process writing its maps already is left alone: not enabled, so never disabled. */
static void test_session_leaves_a_process_that_writes_its_maps(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *d;
	char dir[512];
	struct tree t;

	(void)state;
	tree_make(&t, env, 0);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	snprintf(dir, sizeof(dir), "%s/%d/fd/5", t.proc, PID);
	assert_int_equal(symlink("/tmp/perf-7.map", dir), 0);
	assert_int_equal(jt_dotnet_ipc__maps_open(t.proc, PID), 1);
	d = jt_dotnet_ipc__new(t.proc);
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), 0);
	assert_int_equal(jt_dotnet_ipc__nr_enabled(d), 0);
	jt_dotnet_ipc__free(d);		/* nothing to say, nobody to call */
	unlink(dir);
	assert_int_equal(symlink("/tmp/perf-4242.map", dir), 0);	/* another pid's */
	assert_int_equal(jt_dotnet_ipc__maps_open(t.proc, PID), 0);
	tree_free(&t);
}

/* --dotnet-module: AttachProfiler, in the Profiler command set, with the module's path. */
static void test_session_attaches_the_module(void **state)
{
	static const char env[] = "";
	static const char path[] = "/usr/lib/libjitrace-coreclr.so";
	struct jt_dotnet_ipc *d;
	struct tree t;
	struct fake f;

	(void)state;
	tree_make(&t, env, 0);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 1, REPLY_OK, 0);
	d = jt_dotnet_ipc__new(t.proc);
	assert_int_equal(jt_dotnet_ipc__attach(d, PID, JT_DOTNET_PROFILER_CLSID, path), 1);
	assert_int_equal(jt_dotnet_ipc__attach(d, PID + 1, JT_DOTNET_PROFILER_CLSID, path), 0);
	fake_join(&f);
	assert_int_equal(f.served, 1);
	assert_int_equal(f.set[0], JT_DOTNET_IPC_PROFILER);
	assert_int_equal(f.id[0], JT_DOTNET_IPC_ATTACH_PROFILER);
	assert_int_equal(f.payload_len[0], 4 + 16 + 4 + 2 * sizeof(path) + 4);
	assert_int_equal(jt_dotnet_ipc__nr_enabled(d), 0);	/* nothing to turn off */
	jt_dotnet_ipc__free(d);
	tree_free(&t);
}

/* A runtime that refuses is said once, with the pid, the command and why. */
static void test_session_says_why_a_runtime_refused(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *d;
	char *text;
	struct tree t;
	struct fake f;

	(void)state;
	tree_make(&t, env, 0);
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 1, REPLY_ERROR, 0x80131385);
	d = jt_dotnet_ipc__new(t.proc);
	errs_begin();
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), -EREMOTEIO);
	text = errs_end();
	assert_non_null(strstr(text, "pid 4242"));
	assert_non_null(strstr(text, "EnablePerfMap"));
	assert_non_null(strstr(text, ".NET 8"));
	assert_null(strchr(strchr(text, '\n') + 1, '\n'));	/* one line */
	free(text);
	assert_int_equal(jt_dotnet_ipc__nr_enabled(d), 0);
	jt_dotnet_ipc__free(d);
	fake_join(&f);
	tree_free(&t);
}

/* A lock directory for sessions' shares, inside t's tree. */
static void tree_locks(struct tree *t, char *dir, size_t len)
{
	snprintf(dir, len, "%s/locks", t->proc);
	assert_int_equal(mkdir(dir, 0700), 0);
}

static int count_files(const char *dir, const char *prefix)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/*
 * Two sessions on one process, overlapping: the first turns the map on, the second joins it
 * (no command), the first to end leaves it on for the other, the last turns it off; nothing
 * of theirs is left in the lock directory.
 */
static void test_sessions_share_a_map_and_the_last_turns_it_off(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *a, *b;
	char locks[512];
	struct tree t;
	struct fake f;

	(void)state;
	tree_make(&t, env, 0);
	tree_locks(&t, locks, sizeof(locks));
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	serve_tree(&f, &t, 2, REPLY_OK, 0);
	a = jt_dotnet_ipc__new(t.proc);
	b = jt_dotnet_ipc__new(t.proc);
	jt_dotnet_ipc__share(a, locks);
	jt_dotnet_ipc__share(b, locks);
	assert_int_equal(jt_dotnet_ipc__enable(a, PID), 1);
	assert_int_equal(jt_dotnet_ipc__enable(b, PID), 1);
	assert_int_equal(count_files(locks, "dotnet-4242-"), 1);
	jt_dotnet_ipc__free(a);
	jt_dotnet_ipc__free(b);
	fake_join(&f);
	assert_int_equal(f.served, 2);
	assert_int_equal(f.id[0], JT_DOTNET_IPC_ENABLE_PERFMAP);
	assert_int_equal(f.id[1], JT_DOTNET_IPC_DISABLE_PERFMAP);
	assert_int_equal(count_files(locks, "dotnet-4242-"), 0);
	tree_free(&t);
}

/*
 * A map the runtime writes by itself is never a session's to turn off; one a session turned
 * on and left behind when it died with its guard ("on", nobody's share) is taken over.
 */
static void test_sessions_leave_the_runtimes_own_map_and_take_over_a_dead_ones(void **state)
{
	static const char env[] = "";
	struct jt_dotnet_ipc *d;
	char locks[512], path[600];
	struct tree t;
	struct fake f;
	int fd;

	(void)state;
	tree_make(&t, env, 0);
	tree_locks(&t, locks, sizeof(locks));
	tree_socket(&t, "tmp/dotnet-diagnostic-7-123456-socket", true);
	snprintf(path, sizeof(path), "%s/%d/fd/5", t.proc, PID);
	assert_int_equal(symlink("/tmp/perf-7.map", path), 0);
	d = jt_dotnet_ipc__new(t.proc);
	jt_dotnet_ipc__share(d, locks);
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), 0);
	jt_dotnet_ipc__free(d);		/* nobody to call: no fake serves */
	assert_int_equal(count_files(locks, "dotnet-4242-"), 0);

	snprintf(path, sizeof(path), "%s/dotnet-%d-%llu", locks, PID, START);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "on", 2), 2);
	close(fd);
	serve_tree(&f, &t, 1, REPLY_OK, 0);
	d = jt_dotnet_ipc__new(t.proc);
	jt_dotnet_ipc__share(d, locks);
	assert_int_equal(jt_dotnet_ipc__enable(d, PID), 1);	/* on already: not asked */
	jt_dotnet_ipc__free(d);
	fake_join(&f);
	assert_int_equal(f.served, 1);
	assert_int_equal(f.id[0], JT_DOTNET_IPC_DISABLE_PERFMAP);
	assert_int_equal(count_files(locks, "dotnet-4242-"), 0);
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_is_the_protocols_header_then_the_payload),
		cmocka_unit_test(test_frame_refuses_what_does_not_fit),
		cmocka_unit_test(test_header_checks_magic_and_size),
		cmocka_unit_test(test_attach_payload_layout),
		cmocka_unit_test(test_command_ok_reply),
		cmocka_unit_test(test_command_error_reply_carries_its_hresult),
		cmocka_unit_test(test_command_long_reply_is_read_whole),
		cmocka_unit_test(test_command_refuses_what_is_not_a_reply),
		cmocka_unit_test(test_connect_finds_the_socket_by_namespace_pid_and_start),
		cmocka_unit_test(test_connect_uses_the_processes_tmpdir),
		cmocka_unit_test(test_connect_refuses_what_is_not_a_socket),
		cmocka_unit_test(test_session_enables_once_and_disables_at_the_end),
		cmocka_unit_test(test_session_enable_all_finds_sockets_in_each_processes_root),
		cmocka_unit_test(test_session_leaves_a_process_that_writes_its_maps),
		cmocka_unit_test(test_session_attaches_the_module),
		cmocka_unit_test(test_session_says_why_a_runtime_refused),
		cmocka_unit_test(test_sessions_share_a_map_and_the_last_turns_it_off),
		cmocka_unit_test(test_sessions_leave_the_runtimes_own_map_and_take_over_a_dead_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
