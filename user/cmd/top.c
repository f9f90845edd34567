// SPDX-License-Identifier: GPL-2.0
/* `jitrace top`: record the whole host like `record -a`, into a live view instead of a log. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/liveopts.h"
#include "session/live.h"
#include "session/loader.h"
#include "views/top.h"
#include "base/util.h"

struct top_opts {
	struct jt_live_opts live;
	double interval;	/* seconds between screens */
	unsigned int rows;	/* 0: as many as the terminal has */
	unsigned long count;	/* screens before stopping; 0: until q */
	bool batch;
};

/* The terminal as we found it, restored on every way out. */
struct term {
	bool raw;
	struct termios saved;
};

/* The view as it goes: when the next screen is due, how many were shown. */
struct viewer {
	const struct top_opts *o;
	struct jt_top *top;
	bool term;
	uint64_t step, last, next;
	unsigned long screens;
};

/* Top's own options: -i, -n, -b, -c (a count here, not --calls). */
static int top_option(void *ctx, int c, const char *arg)
{
	struct top_opts *o = ctx;
	unsigned long v;

	switch (c) {
	case 'i':
		if (jt_parse_double(arg, &o->interval) ||
		    !(o->interval >= 0.1 && o->interval <= 3600)) {
			jt_err("-i: '%s' is not a number of seconds from 0.1 to 3600", arg);
			return -EINVAL;
		}
		return 0;
	case 'b':
		o->batch = true;
		return 0;
	default:	/* 'n', 'c' */
		if (jt_parse_uint(c == 'n' ? "-n" : "-c", arg, 0, 100000, &v))
			return -EINVAL;
		if (c == 'n')
			o->rows = v;
		else
			o->count = v;
		return 0;
	}
}

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
"      --no-jitdump       do not read jit-PID.dump files (perf's jitdump format)\n"
"      --no-attach        do not attach the JVMs running (by default each is asked for\n"
"                         its perf map, Compiler.perfmap, as record does)\n"
"      --jvm-agent        load libjitrace-jvmti.so into them instead\n"
"  -v, --verbose          show libbpf's messages\n"
"  -h, --help             this help\n"
"\n"
"Examples:\n"
"  sudo jitrace top\n"
"  sudo jitrace top -F 999 -i 0.5\n"
"  sudo jitrace top -b -c 5 > hot.txt      # five screens, for a ticket\n";

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "rows", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{},
	};
	const struct jt_live_cli cli = {
		.name = "top", .usage = usage, .min_hz = 1,
		.shared = JT_LIVE_OPT_FREQ | JT_LIVE_OPT_AGENT | JT_LIVE_OPT_NO_PERFMAP,
		.shortopts = "i:n:bc:", .longopts = longopts, .option = top_option, .ctx = o,
	};

	*o = (struct top_opts){ .interval = 1 };
	jt_liveopts__init(&o->live);
	o->live.no_usdt = true;	/* names from the agent and perf maps, as ever */
	o->live.hold_signals = true;	/* the terminal is given back before we exit */
	return jt_liveopts__parse(&o->live, &cli, argc, argv);
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

/* Each tick: q or the terminal gone stops; each interval, a screen. */
static int on_tick(void *ctx, uint64_t now)
{
	struct viewer *v = ctx;
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char key;
	int err;

	if (v->term && poll(&pfd, 1, 0) > 0) {
		if ((pfd.revents & POLLIN) && read(STDIN_FILENO, &key, 1) == 1 &&
		    (key == 'q' || key == 'Q'))
			return JT_LIVE_STOP;
		if (pfd.revents & (POLLHUP | POLLERR))
			return JT_LIVE_STOP;	/* the terminal went away */
	}
	if (now < v->next)
		return 0;
	err = show(v->top, v->o, (now - v->last) / 1e9, v->term);
	v->last = now;
	v->next = now + v->step;
	if (err)
		return err;
	return v->o->count && ++v->screens >= v->o->count ? JT_LIVE_STOP : 0;
}

int jt_cmd_top(int argc, char **argv)
{
	struct top_opts o;
	struct viewer v = { .o = &o };
	struct jt_live *live = NULL;
	struct term t = { 0 };
	struct jt_sink sink;
	int ret = 1, err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : 2;
	v.term = !o.batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	v.top = jt_top__new();
	if (!v.top)
		return 1;
	sink = jt_top__sink(v.top);
	live = jt_live__open(&o.live);
	if (!live || jt_live__start(live, &sink))
		goto out;
	if (v.term && term_raw(&t))
		goto out;
	if (!v.term)
		fprintf(stderr, "jitrace: top: samples at %u Hz on %d CPUs%s; Ctrl-C to stop\n",
			o.live.hz, jt_bpf__nr_samplers(jt_live__bpf(live)),
			o.live.agent_path ? "" : ", no agent");
	v.step = o.interval * 1e9;
	v.last = jt_now_ns();
	v.next = v.last + v.step;
	ret = jt_live__run(live, on_tick, &v) ? 1 : 0;
out:
	term_restore(&t);
	jt_live__close(live);
	jt_top__free(v.top);
	return ret;
}
