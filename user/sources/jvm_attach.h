/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HotSpot's dynamic attach, the client side, in C: the trigger file .attach_pidNSPID, SIGQUIT,
 * the listener's socket tmp/.java_pidNSPID, one request "1\0CMD\0ARG\0ARG\0ARG\0" and its
 * reply (a decimal code, a newline, text). Through the target's pid and mount namespaces
 * (paths inside /proc/PID/root and /proc/PID/cwd, names by its pid inside its namespace),
 * and as the JVM's own user (HotSpot admits a peer by its euid and egid), in a child so the
 * recorder keeps its credentials. Plain C (no libbpf); the parsers are driven by tests.
 */
#ifndef JT_JVM_ATTACH_H
#define JT_JVM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JT_JVM_ATTACH_ARGS 3		/* a request always carries three arguments */
#define JT_JVM_ATTACH_TEXT_MAX 4096	/* of a reply's text kept for messages */
#define JT_JVM_ATTACH_WHY_MAX 256

/* What a JVM is, for attaching: read from PROC_ROOT/PID/status. */
struct jt_jvm_target {
	uint32_t pid;		/* in jitrace's namespace */
	uint32_t nspid;		/* in its own: the number in its socket's and trigger's names */
	uid_t euid;		/* whom its listener admits (and root) */
	gid_t egid;
	bool catches_quit;	/* a SIGQUIT handler: without one (-Xrs) SIGQUIT would kill it */
};

/*
 * A request into buf (cap bytes): protocol 1, cmd, then three arguments (args NULL, or fewer
 * than three non-NULL: the rest empty). Returns its size, or -EINVAL (empty cmd, or too long
 * a string: HotSpot takes a command of 16 bytes at most and arguments of 1024), -EMSGSIZE.
 */
int jt_jvm_attach__request(const char *cmd, const char *const *args, char *buf, size_t cap);
/*
 * A reply (len bytes, what the JVM wrote before closing): 0 with its code and the text after
 * the code's line in *text (not NUL-terminated: *text_len bytes), or -EPROTO if it does not
 * start with a decimal code and a newline (or its end).
 */
int jt_jvm_attach__reply(const char *buf, size_t len, int *code, const char **text,
			 size_t *text_len);
/*
 * A /proc/PID/status text into t (pid is set by the caller): the last NStgid (else Tgid),
 * the effective Uid and Gid, SigCgt's SIGQUIT bit. 0, or -EINVAL if a field is missing,
 * -ESRCH for a process leaving (NStgid with no number).
 */
int jt_jvm_attach__parse_status(const char *status, struct jt_jvm_target *t);
/*
 * Whether HotSpot options in text (a command line or an options variable, separated by
 * NULs or blanks) turn the attach mechanism off: the last -XX:[+-]DisableAttachMechanism
 * decides. Returns 1 (off), 0 (on), -1 (not said).
 */
int jt_jvm_attach__disabled_in(const char *text, size_t len);
/* "PATH/.java_pidNSPID" and "PATH/.attach_pidNSPID" names into buf: 0, or -ENAMETOOLONG. */
int jt_jvm_attach__socket_name(uint32_t nspid, char *buf, size_t cap);
int jt_jvm_attach__trigger_name(uint32_t nspid, char *buf, size_t cap);

/*
 * Whether PROC_ROOT/PID is a JVM: it maps a libjvm.so. 1, 0, or -errno (gone, say).
 */
int jt_jvm_attach__is_jvm(const char *proc_root, uint32_t pid);
/*
 * PROC_ROOT/PID's target and whether it refuses attach by its options (its command line,
 * JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS). 0, or -errno; *disabled set.
 */
int jt_jvm_attach__target(const char *proc_root, uint32_t pid, struct jt_jvm_target *t,
			  bool *disabled);

/* One command to one JVM, running in a child of its own. */
struct jt_jvm_call;

/*
 * Start cmd with args in PROC_ROOT/PID's JVM: NULL with why (reported by the caller, the pid
 * in it) if it cannot even begin (not attachable, and why). timeout_ms bounds it all: the
 * listener's start and the command's run.
 */
struct jt_jvm_call *jt_jvm_attach__start(const char *proc_root, uint32_t pid, const char *cmd,
					 const char *const *args, int timeout_ms,
					 char why[JT_JVM_ATTACH_WHY_MAX]);
/*
 * Wait for it (until its deadline) and free it. 0 with the JVM's code and text (at most
 * JT_JVM_ATTACH_TEXT_MAX - 1 bytes, NUL-terminated); -errno with why filled in, for a call
 * that got no reply.
 */
int jt_jvm_attach__finish(struct jt_jvm_call *call, int *code, char text[JT_JVM_ATTACH_TEXT_MAX],
			  char why[JT_JVM_ATTACH_WHY_MAX]);
/* The pid (in jitrace's namespace) a call is to. */
uint32_t jt_jvm_attach__pid(const struct jt_jvm_call *call);

/*
 * The perf map Compiler.perfmap writes, /tmp/perf-NSPID.map inside PROC_ROOT/PID's own root
 * (HotSpot's path, whatever $TMPDIR says). __perfmap_there: 1 if anything has that name
 * there, 0 if nothing has, -errno. __perfmap_remove: remove it, only if it is a regular file
 * owned by the JVM's user, reached without following any symlink (the JVM's /tmp may be a
 * container's): 0 (removed, or not there), -EPERM (something else: left), -errno.
 */
int jt_jvm_attach__perfmap_there(const char *proc_root, uint32_t pid);
int jt_jvm_attach__perfmap_remove(const char *proc_root, uint32_t pid);

#endif
