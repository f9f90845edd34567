// SPDX-License-Identifier: GPL-2.0
/*
 * HotSpot's attach, the client side, without a JVM: the request byte for byte, replies read
 * or refused, a process's ids and options from a fixture tree standing for /proc, and the
 * whole handshake (trigger file, SIGQUIT, socket, request, reply) against a fake JVM: a
 * forked process that starts its "listener" only when signalled with the trigger in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/jvm_attach.h"
#include "scratch.h"

#define NSPID 7

/* ---- the request and the reply ---- */

static void test_request_is_version_command_and_three_arguments(void **state)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0";	/* and the last NUL */
	static const char want_load[] = "1\0load\0/lib/a.so\0true\0calls";
	const char *args[] = { "Compiler.perfmap", NULL };
	const char *load[] = { "/lib/a.so", "true", "calls" };
	char buf[256];

	(void)state;
	assert_int_equal(jt_jvm_attach__request("jcmd", args, buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(jt_jvm_attach__request("load", load, buf, sizeof(buf)),
			 sizeof(want_load));
	assert_memory_equal(buf, want_load, sizeof(want_load));
	/* no arguments at all: three empty ones */
	assert_int_equal(jt_jvm_attach__request("properties", NULL, buf, sizeof(buf)), 16);
	assert_memory_equal(buf, "1\0properties\0\0\0", 16);
}

static void test_request_refuses_what_hotspot_would_not_read(void **state)
{
	static char long_arg[1100];
	const char *args[] = { long_arg, NULL };
	char buf[4096];

	(void)state;
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	assert_int_equal(jt_jvm_attach__request("jcmd", args, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(jt_jvm_attach__request("a_command_too_long", NULL, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(jt_jvm_attach__request("", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(jt_jvm_attach__request("jcmd", NULL, buf, 7), -EMSGSIZE);
}

static void test_reply_is_a_code_then_text(void **state)
{
	static const char ok[] = "0\n", load[] = "0\nreturn code: 0\n";
	static const char bad[] = "-1\njava.lang.IllegalArgumentException: Unknown diagnostic "
				  "command\n";
	const char *text;
	size_t len;
	int code = 99;

	(void)state;
	assert_int_equal(jt_jvm_attach__reply(ok, 2, &code, &text, &len), 0);
	assert_int_equal(code, 0);
	assert_int_equal(len, 0);
	assert_int_equal(jt_jvm_attach__reply(load, sizeof(load) - 1, &code, &text, &len), 0);
	assert_int_equal(code, 0);
	assert_int_equal(len, 15);
	assert_memory_equal(text, "return code: 0\n", 15);
	assert_int_equal(jt_jvm_attach__reply(bad, sizeof(bad) - 1, &code, &text, &len), 0);
	assert_int_equal(code, -1);
	assert_true(len > 20 && !memcmp(text, "java.lang.", 10));
	/* a code alone, without its newline: the JVM closed right after it */
	assert_int_equal(jt_jvm_attach__reply("100", 3, &code, &text, &len), 0);
	assert_int_equal(code, 100);
	assert_int_equal(len, 0);
}

static void test_reply_that_is_not_hotspots_is_refused(void **state)
{
	const char *text;
	size_t len;
	int code;

	(void)state;
	assert_int_equal(jt_jvm_attach__reply("", 0, &code, &text, &len), -EPROTO);
	assert_int_equal(jt_jvm_attach__reply("-", 1, &code, &text, &len), -EPROTO);
	assert_int_equal(jt_jvm_attach__reply("HTTP/1.1 400\n", 13, &code, &text, &len),
			 -EPROTO);
	assert_int_equal(jt_jvm_attach__reply("0 ok\n", 5, &code, &text, &len), -EPROTO);
	assert_int_equal(jt_jvm_attach__reply("99999999999\n", 12, &code, &text, &len),
			 -EPROTO);
}

/* ---- a process's ids and options ---- */

static const char status_in_container[] =
	"Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\n"
	"Pid:\t4242\nPPid:\t1\nUid:\t1000\t1001\t1001\t1001\nGid:\t50\t51\t51\t51\n"
	"NStgid:\t4242\t7\nNSpid:\t4242\t7\nSigBlk:\t0000000000000000\n"
	"SigIgn:\t0000000000000000\nSigCgt:\t2000000181005ccf\n";

static void test_status_gives_the_innermost_pid_and_effective_ids(void **state)
{
	struct jt_jvm_target t = { 0 };

	(void)state;
	assert_int_equal(jt_jvm_attach__parse_status(status_in_container, &t), 0);
	assert_int_equal(t.nspid, NSPID);	/* the name inside its /tmp */
	assert_int_equal(t.euid, 1001);		/* effective: what its listener compares */
	assert_int_equal(t.egid, 51);
	assert_true(t.catches_quit);		/* 0x...cf: bit 2 (SIGQUIT 3) set */
}

static void test_status_without_a_quit_handler_or_namespaces(void **state)
{
	/* -Xrs: SIGQUIT not caught; a kernel without NStgid: Tgid is the pid */
	static const char old[] = "Name:\tjava\nTgid:\t99\nPid:\t99\nUid:\t0\t0\t0\t0\n"
				  "Gid:\t0\t0\t0\t0\nSigCgt:\t0000000180000000\n";
	static const char leaving[] = "Name:\tjava\nTgid:\t99\nUid:\t0\t0\t0\t0\n"
				      "Gid:\t0\t0\t0\t0\nNStgid:\t\nSigCgt:\t0\n";
	struct jt_jvm_target t = { 0 };

	(void)state;
	assert_int_equal(jt_jvm_attach__parse_status(old, &t), 0);
	assert_int_equal(t.nspid, 99);
	assert_false(t.catches_quit);
	assert_int_equal(jt_jvm_attach__parse_status(leaving, &t), -ESRCH);
	assert_int_equal(jt_jvm_attach__parse_status("Name:\tjava\n", &t), -EINVAL);
}

static void test_disable_attach_is_read_as_hotspot_reads_it(void **state)
{
	static const char cmdline[] = "java\0-XX:+DisableAttachMechanism\0-cp\0.\0Hot";
	static const char both[] = "java\0-XX:+DisableAttachMechanism\0-XX:-DisableAttachMechanism";
	static const char longer[] = "java\0-XX:+DisableAttachMechanismX\0Hot";
	static const char blanks[] = "-Xmx1g -XX:+DisableAttachMechanism -Dx=1";

	(void)state;
	assert_int_equal(jt_jvm_attach__disabled_in(cmdline, sizeof(cmdline) - 1), 1);
	assert_int_equal(jt_jvm_attach__disabled_in(both, sizeof(both) - 1), 0);	/* last */
	assert_int_equal(jt_jvm_attach__disabled_in(longer, sizeof(longer) - 1), -1);
	assert_int_equal(jt_jvm_attach__disabled_in(blanks, sizeof(blanks) - 1), 1);
	assert_int_equal(jt_jvm_attach__disabled_in("java\0Hot", 8), -1);
	assert_int_equal(jt_jvm_attach__disabled_in("", 0), -1);
}

static void test_names_carry_the_pid_inside_its_namespace(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(jt_jvm_attach__socket_name(NSPID, buf, sizeof(buf)), 0);
	assert_string_equal(buf, ".java_pid7");
	assert_int_equal(jt_jvm_attach__trigger_name(4194304, buf, sizeof(buf)), 0);
	assert_string_equal(buf, ".attach_pid4194304");
	assert_int_equal(jt_jvm_attach__socket_name(4194304, buf, 12), -ENAMETOOLONG);
}

/* ---- a fixture /proc ---- */

struct fixture {
	char root[256];		/* stands for /proc */
	char pid_dir[300];
	char tmp[320];		/* PID/root/tmp: its /tmp as its mount namespace has it */
	char cwd[320];
	uint32_t pid;
};

static void put_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The names of f's PID directories (made or not). */
static void fixture_paths(struct fixture *f, uint32_t pid)
{
	f->pid = pid;
	snprintf(f->pid_dir, sizeof(f->pid_dir), "%s/%u", f->root, pid);
	snprintf(f->tmp, sizeof(f->tmp), "%s/root/tmp", f->pid_dir);
	snprintf(f->cwd, sizeof(f->cwd), "%s/cwd", f->pid_dir);
}

/* A /proc/PID of pid in f's root with status fields of ours (so the child can take them),
 * its own namespace pid NSPID, sigcgt as said; cmdline and environ as given. */
static void fixture_pid(struct fixture *f, uint32_t pid, const char *sigcgt, const char *cmdline,
			size_t cmdline_len, const char *environ, size_t environ_len)
{
	char status[512], path[400];

	fixture_paths(f, pid);
	assert_int_equal(mkdir(f->pid_dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/root", f->pid_dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(mkdir(f->tmp, 0755), 0);
	assert_int_equal(mkdir(f->cwd, 0755), 0);
	snprintf(status, sizeof(status), "Name:\tjava\nTgid:\t%u\nUid:\t%u\t%u\t%u\t%u\n"
		 "Gid:\t%u\t%u\t%u\t%u\nNStgid:\t%u\t%u\nSigCgt:\t%s\n", pid, getuid(), geteuid(),
		 geteuid(), geteuid(), getgid(), getegid(), getegid(), getegid(), pid, NSPID,
		 sigcgt);
	put_file(f->pid_dir, "status", status, strlen(status));
	put_file(f->pid_dir, "cmdline", cmdline, cmdline_len);
	put_file(f->pid_dir, "environ", environ, environ_len);
}

static void fixture_make(struct fixture *f, uint32_t pid, const char *sigcgt, const char *cmdline,
			 size_t cmdline_len, const char *environ, size_t environ_len)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(scratch_make(f->root, sizeof(f->root), "jvm_attach"), 0);
	fixture_pid(f, pid, sigcgt, cmdline, cmdline_len, environ, environ_len);
}

static void fixture_remove(struct fixture *f)
{
	char cmd[600];

	/* a tree of directories: simpler than a walk, and only under our scratch name */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
}

static void test_target_reads_options_in_hotspots_order(void **state)
{
	static const char cmdline[] = "java\0-XX:-DisableAttachMechanism\0Hot";
	static const char tool[] = "PATH=/bin\0JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism\0";
	static const char later[] = "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism\0"
				    "_JAVA_OPTIONS=-Xmx1g -XX:+DisableAttachMechanism\0";
	struct jt_jvm_target t;
	struct fixture f;
	bool disabled = true;

	(void)state;
	/* the command line comes after JAVA_TOOL_OPTIONS: it turns attach back on */
	fixture_make(&f, 4242, "0000000000000004", cmdline, sizeof(cmdline), tool, sizeof(tool));
	assert_int_equal(jt_jvm_attach__target(f.root, 4242, &t, &disabled), 0);
	assert_false(disabled);
	assert_int_equal(t.pid, 4242);
	assert_int_equal(t.nspid, NSPID);
	fixture_remove(&f);
	/* _JAVA_OPTIONS comes after the command line */
	fixture_make(&f, 4242, "0000000000000004", cmdline, sizeof(cmdline), later, sizeof(later));
	assert_int_equal(jt_jvm_attach__target(f.root, 4242, &t, &disabled), 0);
	assert_true(disabled);
	assert_int_equal(jt_jvm_attach__target(f.root, 4243, &t, &disabled), -ENOENT);
	fixture_remove(&f);
}

static void test_a_jvm_is_a_process_mapping_libjvm(void **state)
{
	static const char jvm[] =
		"55d0c0000000-55d0c0001000 r-xp 00000000 08:01 11 /usr/lib/jvm/j/bin/java\n"
		"7f0000000000-7f0000100000 r-xp 00000000 08:01 12 "
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n";
	static const char not_jvm[] =
		"7f0000000000-7f0000100000 r-xp 00000000 08:01 12 /usr/lib/libjvm.so.old\n"
		"7f0000200000-7f0000300000 r-xp 00000000 08:01 13 /usr/bin/node\n";
	struct fixture f;

	(void)state;
	fixture_make(&f, 4242, "0", "", 0, "", 0);
	put_file(f.pid_dir, "maps", jvm, sizeof(jvm) - 1);
	assert_int_equal(jt_jvm_attach__is_jvm(f.root, 4242), 1);
	put_file(f.pid_dir, "maps", not_jvm, sizeof(not_jvm) - 1);
	assert_int_equal(jt_jvm_attach__is_jvm(f.root, 4242), 0);
	assert_true(jt_jvm_attach__is_jvm(f.root, 4243) < 0);
	fixture_remove(&f);
}

/* The map a session's attach made is removed only as a regular file of the JVM's user, in
 * its own /tmp, with no symlink followed on the way. */
static void test_perfmap_is_removed_only_if_a_regular_file_of_the_jvms_user(void **state)
{
	char map[400], other[300], path[400];
	struct fixture f;
	struct stat st;

	(void)state;
	fixture_make(&f, 4242, "0", "", 0, "", 0);
	snprintf(map, sizeof(map), "%s/perf-%u.map", f.tmp, NSPID);	/* its pid inside */
	snprintf(other, sizeof(other), "%s/elsewhere", f.root);
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(jt_jvm_attach__perfmap_there(f.root, 4242), 0);
	assert_int_equal(jt_jvm_attach__perfmap_remove(f.root, 4242), 0);	/* none: done */
	put_file(f.tmp, strrchr(map, '/') + 1, "1 2 a\n", 6);
	assert_int_equal(jt_jvm_attach__perfmap_there(f.root, 4242), 1);
	assert_int_equal(jt_jvm_attach__perfmap_remove(f.root, 4242), 0);
	assert_int_equal(lstat(map, &st), -1);
	/* a symlink to a file elsewhere: neither followed nor removed */
	put_file(other, "target", "x", 1);
	snprintf(path, sizeof(path), "%s/target", other);
	assert_int_equal(symlink(path, map), 0);
	assert_int_equal(jt_jvm_attach__perfmap_there(f.root, 4242), 1);
	assert_int_equal(jt_jvm_attach__perfmap_remove(f.root, 4242), -EPERM);
	assert_int_equal(lstat(map, &st), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(unlink(map), 0);
	/* a directory */
	assert_int_equal(mkdir(map, 0755), 0);
	assert_int_equal(jt_jvm_attach__perfmap_remove(f.root, 4242), -EPERM);
	assert_int_equal(rmdir(map), 0);
	/* another user's file (only root can make one) */
	if (!geteuid()) {
		put_file(f.tmp, strrchr(map, '/') + 1, "1 2 a\n", 6);
		assert_int_equal(chown(map, 12345, 12345), 0);
		assert_int_equal(jt_jvm_attach__perfmap_remove(f.root, 4242), -EPERM);
		assert_int_equal(lstat(map, &st), 0);
		assert_int_equal(unlink(map), 0);
	}
	/* its /tmp a symlink to a directory holding such a map: not followed */
	snprintf(path, sizeof(path), "%s/perf-%u.map", other, NSPID);
	put_file(other, strrchr(path, '/') + 1, "1 2 a\n", 6);
	assert_int_equal(rmdir(f.tmp), 0);
	assert_int_equal(symlink(other, f.tmp), 0);
	assert_true(jt_jvm_attach__perfmap_remove(f.root, 4242) < 0);
	assert_int_equal(stat(path, &st), 0);
	fixture_remove(&f);
}

/* ---- the handshake against a fake JVM ---- */

static volatile sig_atomic_t quit_seen;

static void on_quit(int sig)
{
	(void)sig;
	quit_seen = 1;
}

/*
 * The fake JVM: waits for SIGQUIT; then, as HotSpot does, starts its listener only if the
 * trigger is in its cwd or /tmp (else exits 3); reads one request, checks it is want (else
 * exits 4), answers reply and exits 0. listen_ever false: never starts one.
 */
static void fake_jvm(const struct fixture *f, int ready, const char *want, size_t want_len,
		     const char *reply, bool listen_ever)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char trig[400], trig2[400], got[256];
	size_t n = 0;
	sigset_t none;
	int s, c;

	alarm(10);	/* a failed test leaves no fake behind */
	signal(SIGQUIT, on_quit);
	sigemptyset(&none);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	while (!quit_seen)
		sigsuspend(&none);
	if (!listen_ever) {
		pause();
		_exit(0);
	}
	snprintf(trig, sizeof(trig), "%s/.attach_pid%d", f->cwd, NSPID);
	snprintf(trig2, sizeof(trig2), "%s/.attach_pid%d", f->tmp, NSPID);
	if (access(trig, F_OK) && access(trig2, F_OK))
		_exit(3);
	/* bound by a short name, from inside its /tmp */
	snprintf(sa.sun_path, sizeof(sa.sun_path), ".java_pid%d", NSPID);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (chdir(f->tmp) || s < 0)
		_exit(5);
	usleep(100000);		/* as HotSpot's listener thread takes its time to start */
	unlink(sa.sun_path);	/* as HotSpot does: a socket left by a JVM of that pid before */
	if ( bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 1))
		_exit(5);
	c = accept(s, NULL, NULL);
	while (c >= 0 && n < want_len) {
		ssize_t r = read(c, got + n, sizeof(got) - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (n != want_len || memcmp(got, want, want_len))
		_exit(4);
	if (write(c, reply, strlen(reply)) != (ssize_t)strlen(reply))
		_exit(6);
	close(c);
	_exit(0);
}

/* Start the fake and its fixture (named by its real pid: SIGQUIT goes there). */
static pid_t fake_start(struct fixture *f, const char *sigcgt, const char *want,
			size_t want_len, const char *reply, bool listen_ever)
{
	int p[2];
	char c;
	pid_t pid;

	memset(f, 0, sizeof(*f));
	assert_int_equal(scratch_make(f->root, sizeof(f->root), "jvm_attach"), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(p[0]);
		fixture_pid(f, getpid(), sigcgt, "java", 4, "", 0);
		fake_jvm(f, p[1], want, want_len, reply, listen_ever);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);	/* its fixture and handler are in place */
	close(p[0]);
	fixture_paths(f, (uint32_t)pid);
	return pid;
}

static const char perfmap_request[] = "1\0jcmd\0Compiler.perfmap\0\0";

/* Compiler.perfmap to the fake at pid: its answer's code 0 and text into text; the fake
 * saw the trigger and the request (it exits 0). */
static void perfmap_call(const struct fixture *f, pid_t pid, char *text)
{
	const char *args[] = { "Compiler.perfmap", NULL };
	char why[JT_JVM_ATTACH_WHY_MAX] = "";
	struct jt_jvm_call *call;
	int code = 99, status;

	call = jt_jvm_attach__start(f->root, pid, "jcmd", args, 5000, why);
	assert_non_null(call);
	assert_int_equal(jt_jvm_attach__pid(call), pid);
	assert_int_equal(jt_jvm_attach__finish(call, &code, text, why), 0);
	assert_int_equal(code, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_handshake_trigger_signal_socket_request_reply(void **state)
{
	char text[JT_JVM_ATTACH_TEXT_MAX];
	struct fixture f;
	pid_t pid;

	(void)state;
	pid = fake_start(&f, "0000000000000004", perfmap_request, sizeof(perfmap_request),
			 "0\nwritten\n", true);
	perfmap_call(&f, pid, text);
	assert_string_equal(text, "written\n");
	/* the trigger is gone again; only the listener's socket stays, as HotSpot keeps it */
	assert_int_equal(scratch_entries(f.cwd), 0);
	assert_int_equal(scratch_entries(f.tmp), 1);
	fixture_remove(&f);
}

static void test_stale_socket_is_waited_past(void **state)
{
	char text[JT_JVM_ATTACH_TEXT_MAX], cwd[PATH_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fixture f;
	pid_t pid;
	int s;

	(void)state;
	pid = fake_start(&f, "0000000000000004", perfmap_request, sizeof(perfmap_request), "0\n",
			 true);
	/* a socket nobody listens on, where the listener will bind: a JVM of that pid before */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f.tmp), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), ".java_pid%d", NSPID);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	assert_int_equal(chdir(cwd), 0);
	perfmap_call(&f, pid, text);
	assert_string_equal(text, "");
	fixture_remove(&f);
}

static void test_listener_that_never_starts_is_a_bounded_wait(void **state)
{
	char why[JT_JVM_ATTACH_WHY_MAX] = "", text[JT_JVM_ATTACH_TEXT_MAX];
	struct jt_jvm_call *call;
	struct fixture f;
	int code;
	pid_t pid;

	(void)state;
	pid = fake_start(&f, "0000000000000004", "", 0, "", false);
	call = jt_jvm_attach__start(f.root, pid, "jcmd", NULL, 300, why);
	assert_non_null(call);
	assert_int_equal(jt_jvm_attach__finish(call, &code, text, why), -ETIMEDOUT);
	assert_non_null(strstr(why, "attach listener did not start"));
	assert_int_equal(scratch_entries(f.cwd), 0);	/* its trigger taken back */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fixture_remove(&f);
}

static void test_a_process_without_a_quit_handler_is_not_signalled(void **state)
{
	char why[JT_JVM_ATTACH_WHY_MAX] = "";
	struct fixture f;
	pid_t pid;
	int status;

	(void)state;
	/* the fake catches SIGQUIT, but its status says it does not: it must not get one */
	pid = fake_start(&f, "0000000000000000", "", 0, "", true);
	assert_null(jt_jvm_attach__start(f.root, pid, "jcmd", NULL, 300, why));
	assert_non_null(strstr(why, "does not handle SIGQUIT"));
	usleep(100000);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);	/* still waiting for it */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fixture_remove(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_is_version_command_and_three_arguments),
		cmocka_unit_test(test_request_refuses_what_hotspot_would_not_read),
		cmocka_unit_test(test_reply_is_a_code_then_text),
		cmocka_unit_test(test_reply_that_is_not_hotspots_is_refused),
		cmocka_unit_test(test_status_gives_the_innermost_pid_and_effective_ids),
		cmocka_unit_test(test_status_without_a_quit_handler_or_namespaces),
		cmocka_unit_test(test_disable_attach_is_read_as_hotspot_reads_it),
		cmocka_unit_test(test_names_carry_the_pid_inside_its_namespace),
		cmocka_unit_test(test_target_reads_options_in_hotspots_order),
		cmocka_unit_test(test_a_jvm_is_a_process_mapping_libjvm),
		cmocka_unit_test(test_handshake_trigger_signal_socket_request_reply),
		cmocka_unit_test(test_stale_socket_is_waited_past),
		cmocka_unit_test(test_listener_that_never_starts_is_a_bounded_wait),
		cmocka_unit_test(test_a_process_without_a_quit_handler_is_not_signalled),
		cmocka_unit_test(test_perfmap_is_removed_only_if_a_regular_file_of_the_jvms_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
