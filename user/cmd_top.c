// SPDX-License-Identifier: GPL-2.0
/* `jitrace top`: record the whole host like `record -a`, into a live view instead of a log. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "cmds.h"
#include "loader.h"
#include "pipeline.h"
#include "ringbuf.h"
#include "top.h"
#include "util.h"

#define TICK_MS 10

struct top_opts {
	unsigned int hz;
	double interval;	/* seconds between screens */
	unsigned int rows;	/* 0: as many as the terminal has */
	unsigned long count;	/* screens before stopping; 0: until q */
	const char *agent_path;
	bool batch, no_agent, no_perfmap, verbose;
};

/* The terminal as we found it, restored on every way out. */
struct term {
	bool raw;
	struct termios saved;
};

static const char usage[] =
"Usage: jitrace top [-F HZ] [-i SECS] [-n ROWS] [-b] [OPTIONS]\n"
"\n"
"A live view of the hottest JIT-compiled methods on the whole host, refreshed every\n"
"second: samples/s, then per method the share of samples whose innermost JIT frame it\n"
"is (SELF%, native code it calls included), the share with it anywhere on the stack\n"
"(TOTAL%), its process id and command. Quit with q or Ctrl-C. Needs root, like record.\n"
"\n"
"  -F, --freq HZ          sampling frequency per CPU (default 99)\n"
"  -i, --interval SECS    seconds between refreshes (default 1)\n"
"  -n, --rows N           methods shown (default: what fits the terminal, or 20)\n"
"  -b, --batch            plain text screens one after another (no terminal control)\n"
"  -c, --count N          stop after N screens\n"
"      --agent PATH       the libjitrace-agent.so to probe (default: next to jitrace)\n"
"      --no-agent         names from perf maps only\n"
"      --no-perfmap       do not read /tmp/perf-PID.map files\n"
"  -v, --verbose          show libbpf's messages\n"
"  -h, --help             this help\n"
"\n"
"Examples:\n"
"  sudo jitrace top\n"
"  sudo jitrace top -F 999 -i 0.5\n"
"  sudo jitrace top -b -c 5 > hot.txt      # five screens, for a ticket\n";

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	enum { OPT_AGENT = 256, OPT_NO_AGENT, OPT_NO_PERFMAP };
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "interval", required_argument, NULL, 'i' },
		{ "rows", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "no-agent", no_argument, NULL, OPT_NO_AGENT },
		{ "no-perfmap", no_argument, NULL, OPT_NO_PERFMAP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned long v;
	char *end;
	int c;

	*o = (struct top_opts){ .hz = 99, .interval = 1 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "F:i:n:bc:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
		case 'n':
		case 'c':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v > 100000 ||
			    (c == 'F' && !v)) {
				jt_err("-%c: '%s' is not a whole number from %d to 100000", c,
				       optarg, c == 'F');
				return -EINVAL;
			}
			if (c == 'F')
				o->hz = v;
			else if (c == 'n')
				o->rows = v;
			else
				o->count = v;
			break;
		case 'i':
			o->interval = strtod(optarg, &end);
			if (*end || end == optarg || !(o->interval >= 0.1 && o->interval <= 3600)) {
				jt_err("-i: '%s' is not a number of seconds from 0.1 to 3600",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			o->batch = true;
			break;
		case OPT_AGENT:
			o->agent_path = optarg;
			break;
		case OPT_NO_AGENT:
			o->no_agent = true;
			break;
		case OPT_NO_PERFMAP:
			o->no_perfmap = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs("Try 'jitrace top --help'.\n", stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		jt_err("top takes no arguments ('%s')", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Keys one at a time, unechoed; Ctrl-C still a signal. The alternate screen, no cursor. */
static int term_raw(struct term *t)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &t->saved)) {
		jt_err("terminal: %s", strerror(errno));
		return -errno;
	}
	raw = t->saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)) {
		jt_err("terminal: %s", strerror(errno));
		return -errno;
	}
	t->raw = true;
	fputs("\033[?1049h\033[?25l\033[H", stdout);
	fflush(stdout);
	return 0;
}

static void term_restore(struct term *t)
{
	if (!t->raw)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	t->raw = false;
}

static int block_signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &set, NULL)) {
		jt_err("sigprocmask: %s", strerror(errno));
		return -1;
	}
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		jt_err("signalfd: %s", strerror(errno));
	return fd;
}

/* One screen, written at once so the terminal never shows half of it. */
static int show(struct jt_top *top, const struct top_opts *o, double secs, bool term)
{
	unsigned int rows = o->rows ? o->rows : 20, cols = 200;
	struct winsize ws;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int err;

	if (term && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 4 && ws.ws_col > 20) {
		cols = ws.ws_col;
		if (!o->rows)
			rows = ws.ws_row - 4;
	}
	mem = open_memstream(&buf, &len);
	if (!mem) {
		jt_err("top: %s", strerror(errno));
		return -errno;
	}
	if (term)
		fputs("\033[H", mem);
	err = jt_top__render(top, mem, rows, cols, secs, term);
	if (fclose(mem) || err) {
		free(buf);
		jt_err("top: out of memory drawing the screen");
		return -ENOMEM;
	}
	err = fwrite(buf, 1, len, stdout) != len || fflush(stdout) ? -EIO : 0;
	free(buf);
	if (err)
		jt_err("top: writing the screen: %s", strerror(errno));
	return err;
}

static int update_drops(struct jt_bpf *bpf, struct jt_pipeline *pl)
{
	uint64_t totals[JT_DROP_BPF_MAX];
	int err = jt_bpf__drops(bpf, totals);

	return err ?: jt_pipeline__bpf_drops(pl, totals);
}

static int run(const struct top_opts *o, struct jt_bpf *bpf, struct jt_pipeline *pl,
	       struct jt_rb *rb, struct jt_top *top, int sfd, bool term)
{
	uint64_t step = o->interval * 1e9, last = jt_now_ns(), next = last + step;
	struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN },
				 { .fd = STDIN_FILENO, .events = POLLIN } };
	unsigned long screens = 0;
	int err = 0;

	while (!err) {
		struct signalfd_siginfo si;
		uint64_t now;
		char key;

		if (poll(pfd, term ? 2 : 1, TICK_MS) > 0) {
			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				break;
			if (term && (pfd[1].revents & POLLIN) && read(STDIN_FILENO, &key, 1) == 1 &&
			    (key == 'q' || key == 'Q'))
				break;
			if (term && (pfd[1].revents & (POLLHUP | POLLERR)))
				break;	/* the terminal went away */
		}
		if (jt_rb__consume(rb) < 0)
			return -EIO;
		now = jt_now_ns();
		err = jt_pipeline__tick(pl, now);
		if (err || now < next)
			continue;
		err = update_drops(bpf, pl) ?: show(top, o, (now - last) / 1e9, term);
		last = now;
		next = now + step;
		if (o->count && ++screens >= o->count)
			break;
	}
	return err;
}

int jt_cmd_top(int argc, char **argv)
{
	struct jt_pipeline_opts po = { .window_ns = 100 * 1000000ULL, .max_pending = 1 << 20,
				       .proc_root = "/proc" };
	struct jt_bpf_opts bo = { .ringbuf_bytes = 64 << 20, .attach = true };
	struct jt_pipeline *pl = NULL;
	struct jt_top *top = NULL;
	struct jt_bpf *bpf = NULL;
	struct jt_rb *rb = NULL;
	struct term t = { 0 };
	struct top_opts o;
	struct jt_sink sink;
	char agent_buf[PATH_MAX];
	int sfd = -1, ret = 1, err = parse_args(argc, argv, &o);
	bool term;

	if (err)
		return err > 0 ? 0 : 2;
	if (jt_agent__resolve(o.agent_path, o.no_agent, agent_buf, sizeof(agent_buf),
			      &o.agent_path))
		return 2;
	term = !o.batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	sfd = block_signals();
	if (sfd < 0)
		return 1;
	top = jt_top__new();
	if (!top)
		goto out;
	sink = jt_top__sink(top);
	bo.agent_path = o.agent_path;
	bo.sample_hz = o.hz;
	bo.verbose = o.verbose;
	bpf = jt_bpf__open(&bo);
	if (!bpf)
		goto out;
	po.follow_perfmaps = !o.no_perfmap;
	pl = jt_pipeline__new(&po, &sink);
	if (!pl)
		goto out;
	rb = jt_rb__new(jt_bpf__ringbuf_fd(bpf), jt_pipeline__on_ring, pl);
	if (!rb)
		goto out;
	jt_pipeline__scan(pl, 0, jt_now_ns());
	if (term && term_raw(&t))
		goto out;
	if (!term)
		fprintf(stderr, "jitrace: top: samples at %u Hz on %d CPUs%s; Ctrl-C to stop\n",
			o.hz, jt_bpf__nr_samplers(bpf), o.agent_path ? "" : ", no agent");
	ret = run(&o, bpf, pl, rb, top, sfd, term) ? 1 : 0;
out:
	term_restore(&t);
	jt_rb__free(rb);
	jt_pipeline__free(pl);
	jt_bpf__close(bpf);
	jt_top__free(top);
	close(sfd);
	return ret;
}
