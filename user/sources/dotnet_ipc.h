/* SPDX-License-Identifier: GPL-2.0 */
/*
 * .NET's diagnostics IPC, the client side jitrace needs: a runtime's socket found inside the
 * process's own root, one command sent and its reply read; EnablePerfMap and DisablePerfMap
 * for a live session (processes that were started with nothing set), AttachProfiler for the
 * CLR profiler module. The framing is dotnet/diagnostics' ipc-protocol.md: a 20-byte header
 * {"DOTNET_IPC_V1\0", u16 size of the whole message, u8 command set, u8 command id, u16 0},
 * little-endian, then the payload. Plain C (no libbpf), driven by tests over a socketpair.
 */
#ifndef JT_DOTNET_IPC_H
#define JT_DOTNET_IPC_H

#include <stddef.h>
#include <stdint.h>

#define JT_DOTNET_IPC_HDR 20
#define JT_DOTNET_IPC_MAX 65535		/* the header's size is a u16 */

/* command sets and the commands of each that jitrace sends */
#define JT_DOTNET_IPC_PROFILER 0x03
#define JT_DOTNET_IPC_ATTACH_PROFILER 0x01
#define JT_DOTNET_IPC_PROCESS 0x04
#define JT_DOTNET_IPC_ENABLE_PERFMAP 0x05	/* .NET 8 on; payload u32 type */
#define JT_DOTNET_IPC_DISABLE_PERFMAP 0x06
#define JT_DOTNET_IPC_SERVER 0xff		/* replies: OK 0x00, error 0xff, u32 HRESULT */
#define JT_DOTNET_IPC_OK 0x00
#define JT_DOTNET_IPC_ERROR 0xff

/* The CLSID of libjitrace-coreclr.so (agent/coreclr/profiler.c), for CORECLR_PROFILER */
#define JT_DOTNET_PROFILER_CLSID "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}"
#define JT_DOTNET_PROFILER_SO "libjitrace-coreclr.so"

/* EnablePerfMap's payload: what the runtime writes (DOTNET_PerfMapEnabled's values) */
enum jt_dotnet_perfmap {
	JT_DOTNET_PERFMAP_ALL = 1,	/* perf map and jitdump */
	JT_DOTNET_PERFMAP_JITDUMP = 2,
	JT_DOTNET_PERFMAP_MAP = 3,	/* the perf map alone: what jitrace reads */
};

/*
 * A message of command set and id with len bytes of payload into buf (cap bytes). Returns
 * its size, or -EMSGSIZE if it does not fit buf or the header's u16.
 */
int jt_dotnet_ipc__frame(uint8_t set, uint8_t id, const void *payload, size_t len, void *buf,
			 size_t cap);
/*
 * A message header in buf (len bytes): 0 with its command set, id and payload size, or
 * -EPROTO if it is not one (wrong magic, a size below the header's).
 */
int jt_dotnet_ipc__header(const void *buf, size_t len, uint8_t *set, uint8_t *id,
			  uint16_t *payload_size);
/*
 * AttachProfiler's payload into buf: u32 attach timeout (ms), the profiler's CLSID (16 bytes,
 * a GUID as it lies in memory), its path (u32 count of UTF-16 units with the NUL, then the
 * units; path must be ASCII), u32 size of client data, then the data. Returns its size, or
 * -EINVAL (guid not {8-4-4-4-12}, path not ASCII), -EMSGSIZE.
 */
int jt_dotnet_ipc__attach_payload(uint32_t timeout_ms, const char *guid, const char *path,
				  const void *data, uint32_t data_len, void *buf, size_t cap);
/*
 * Send one command on fd (a connected stream) and read its reply, waiting at most timeout_ms
 * in all. Returns 0 with the runtime's HRESULT in *hresult for an OK reply; -EREMOTEIO with
 * it for an error reply; -EPROTO for a reply that is not one; -ETIMEDOUT; -errno. Nothing is
 * reported: the caller knows which process and why.
 */
int jt_dotnet_ipc__command(int fd, uint8_t set, uint8_t id, const void *payload, size_t len,
			   int timeout_ms, uint32_t *hresult);
/* What an HRESULT a runtime answered means, for messages ("0x80131385" if unknown). */
const char *jt_dotnet_ipc__hresult_str(uint32_t hresult, char buf[16]);

/*
 * Connect to pid's diagnostics socket: $TMPDIR (from its environment, else /tmp) inside
 * PROC_ROOT/PID/root, named dotnet-diagnostic-NSPID-KEY-socket with NSPID its pid in its own
 * namespace and KEY its start time (field 22 of stat; the runtime writes 0 if it could not
 * read it); only a socket owned by root or by the process's user. proc_root is "/proc" (a
 * fixture tree in tests). Returns a connected fd, -ENOENT if there is none (not .NET, or its
 * diagnostics are off), -ECONNREFUSED for a socket nobody listens on, -errno. Not reported.
 */
int jt_dotnet_ipc__connect(const char *proc_root, uint32_t pid);
/*
 * Whether pid has its perf map or jitdump open (PROC_ROOT/PID/fd): it writes them already.
 * 1, 0, or -errno.
 */
int jt_dotnet_ipc__maps_open(const char *proc_root, uint32_t pid);

/*
 * A live session's .NET processes: those asked to write their perf maps, each asked to stop
 * again when the session ends. Every failure is reported once, with the pid and why.
 */
struct jt_dotnet_ipc;

/* proc_root: "/proc" (a fixture tree in tests). NULL if memory is short. */
struct jt_dotnet_ipc *jt_dotnet_ipc__new(const char *proc_root);
/*
 * Count this session's shares of each process's perf map with other sessions' in lock_dir
 * (root's alone, e.g. /run/jitrace; it must exist): the first to need a map turns it on, the
 * last to let it go turns it off, and a map the runtime wrote by itself is never turned off.
 * Without it, each session turns on and off what it needs alone.
 */
void jt_dotnet_ipc__share(struct jt_dotnet_ipc *d, const char *lock_dir);
/*
 * Ask pid's runtime to write its perf map (EnablePerfMap; it writes what it compiled before
 * first). 1: asked, and it is asked to stop at jt_dotnet_ipc__free; 0: nothing to do (not a
 * .NET process, or it writes its maps already); -errno: the runtime refused or did not answer
 * (reported).
 */
int jt_dotnet_ipc__enable(struct jt_dotnet_ipc *d, uint32_t pid);
/*
 * Ask pid's runtime to load the CLR profiler module at path (as pid sees it) with CLSID clsid
 * ("{...}"), now (AttachProfiler). The module replays the code compiled before. 1: loaded;
 * 0: not a .NET process; -errno: refused, or not answered (reported). A profiler stays
 * loaded until the process ends.
 */
int jt_dotnet_ipc__attach(struct jt_dotnet_ipc *d, uint32_t pid, const char *clsid,
			  const char *path);
/* jt_dotnet_ipc__enable, or __attach, for every process whose own root holds its socket where
 * its runtime puts it (a container's in the container's /tmp): how many were asked, or
 * loaded the module. */
int jt_dotnet_ipc__enable_all(struct jt_dotnet_ipc *d);
int jt_dotnet_ipc__attach_all(struct jt_dotnet_ipc *d, const char *clsid, const char *path);
/* How many processes it asked. */
int jt_dotnet_ipc__nr_enabled(const struct jt_dotnet_ipc *d);
/* Ask every process it turned on to stop (DisablePerfMap), then free. NULL is fine. */
void jt_dotnet_ipc__free(struct jt_dotnet_ipc *d);

#endif
