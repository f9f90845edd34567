// SPDX-License-Identifier: GPL-2.0
/* `jitrace flamegraph`: the log's stacks merged and drawn as a self-contained SVG with its
 * own script (zoom, search, tooltips), or written as folded stacks; CPU samples, or with
 * --off-cpu the time threads waited off the CPU. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "views/flamegraph.h"
#include "views/folded.h"
#include "base/hash.h"
#include "log/source.h"
#include "base/names.h"
#include "views/stacks.h"
#include "base/text.h"
#include "base/util.h"

#define FRAME_H 16		/* pixels per level */
#define PAD_X 10
#define PAD_TOP 44		/* title and buttons */
#define PAD_BOTTOM 28		/* the detail line */
#define CHAR_W 7.2		/* 12 px monospace */
#define SHORT_WAITS "[short waits]"	/* the frame of waits the log has no stacks for */
#define KIND_SHORT -3		/* its kind in the drawing (-1 a process, -2 everything) */

/*
 * --off-cpu: the time a log's kept records waited, in the tree's unit (us: each record's
 * off_ns / 1000, as folded stacks weigh it), and waits, by state (enum jt_off_state);
 * [0]: every state.
 */
struct offtime {
	uint64_t us[JT_OFF_MAX], n[JT_OFF_MAX];
	bool any;		/* the log says it recorded off-CPU time, or has a record of it */
};

/* The source lines a frame's samples were at: how many at each (file, line). */
struct line_n {
	uint32_t file, line;
	uint64_t n;
};

struct node_lines {
	uint32_t nr, cap;
	struct line_n v[];
};

/*
 * --diff: the base log's tree beside the new one's that is drawn. Both trees have a node
 * per command name (comm) where they would have one per process: processes differ
 * between recordings, command names carry over.
 */
struct fdiff {
	const struct jt_stacks *base;
	const struct jt_logsrc *base_src;
	const char *base_path;
	uint32_t *match;	/* by new node: the base node at the same path, or JT_STK_NONE */
	uint64_t base_total;	/* samples, or us off CPU */
	double scale;		/* the change, in points, that gets the deepest colour */
	struct jt_xintern *comms;	/* the node name of a process node - 1: its comm */
};

struct svg {
	FILE *out;
	const struct jt_stacks *s;
	const struct jt_lv *lv;
	const struct jt_hash *lines;	/* node -> struct node_lines, JIT frames with lines */
	const struct fdiff *diff;	/* NULL unless --diff */
	const struct offtime *off;	/* --off-cpu: weights are us waited; NULL: samples */
	bool per_proc;
	uint64_t total;
	double scale;		/* pixels per sample (per us) */
	double min_width;
	unsigned int width, height, levels;
};

/* Text for XML: names are clean UTF-8 (stacks.c); only markup characters need escaping. */
static void xml(FILE *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fputc(s[i], out);
		}
	}
}

/* Bytes of the first chars UTF-8 characters of s, and how many characters s has. */
static size_t utf8_prefix(const char *s, size_t chars, size_t *count)
{
	size_t i, n = 0, cut = 0;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (n == chars)
			cut = i;
		n++;
	}
	*count = n;
	return n > chars ? cut : i;
}

/* The label that fits w pixels: the name, or its start and "..", or nothing. */
static void label(FILE *out, const char *name, double w)
{
	long fit = (long)((w - 6) / CHAR_W);
	size_t chars, cut;

	if (fit < 3)
		return;
	cut = utf8_prefix(name, fit, &chars);
	if (chars <= (size_t)fit) {
		xml(out, name, SIZE_MAX);
		return;
	}
	cut = utf8_prefix(name, fit - 2, &chars);
	xml(out, name, cut);
	fputs("..", out);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261U;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619U;
	return h;
}

/*
 * A colour family per kind (JIT green, inlined into it cyan as async-profiler draws it,
 * native warm, kernel blue), the shade from the name.
 */
static void colour(char *buf, size_t cap, const char *name, int kind)
{
	uint32_t h = hash_str(name);
	double a = (h & 0xffff) / 65535.0, b = (h >> 16) / 65535.0;

	switch (kind) {
	case JT_LV_JIT:
		if (jt_lv__is_inlined(name, strlen(name))) {
			snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(60 + 40 * a),
				 (int)(190 + 40 * b), (int)(190 + 40 * a));
			break;
		}
		snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(60 + 70 * a), (int)(170 + 60 * b),
			 (int)(60 + 50 * a));
		break;
	case JT_LV_NATIVE:
		snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(220 + 35 * b), (int)(110 + 110 * a),
			 (int)(40 + 40 * b));
		break;
	case JT_LV_KERNEL:
		snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(90 + 50 * a), (int)(150 + 50 * b),
			 (int)(215 + 40 * a));
		break;
	case JT_LV_UNKNOWN:
		snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(170 + 30 * a), (int)(170 + 30 * a),
			 (int)(170 + 30 * a));
		break;
	case -1:		/* a process */
		snprintf(buf, cap, "rgb(%d,%d,%d)", (int)(180 + 30 * a), (int)(160 + 30 * b), 225);
		break;
	default:		/* everything, short waits */
		snprintf(buf, cap, "rgb(200,200,200)");
		break;
	}
}

static const char *kind_word(int kind)
{
	return kind == -1 ? "process" : kind == -2 ? "all" :
	       kind == KIND_SHORT ? "waits too short to record their stacks" :
	       jt_lv__kind_name(kind);
}

static double share(uint64_t n, uint64_t of)
{
	return of ? 100.0 * n / of : 0;
}

/* The base's samples at new node idx, and the change of its share in points. */
static double diff_change(const struct svg *g, uint32_t idx, uint64_t *base_n)
{
	const struct fdiff *d = g->diff;
	uint32_t b = d->match[idx];

	*base_n = b == JT_STK_NONE ? 0 : jt_stacks__node(d->base, b)->total;
	return share(jt_stacks__node(g->s, idx)->total, g->total) - share(*base_n, d->base_total);
}

/*
 * --diff: red where a frame's share of samples grew from the base, blue where it shrank,
 * the deeper the more (the largest change, or 1 point if all are smaller, is the deepest);
 * grey where it stayed.
 */
static void diff_colour(char *buf, size_t cap, double chg, double scale)
{
	double t = (chg < 0 ? -chg : chg) / scale;
	int v = (int)(220 - 200 * (t > 1 ? 1 : t));

	if (chg > -0.005 && chg < 0.005)
		snprintf(buf, cap, "rgb(225,225,225)");
	else if (chg > 0)
		snprintf(buf, cap, "rgb(255,%d,%d)", v, v);
	else
		snprintf(buf, cap, "rgb(%d,%d,255)", v, v);
}

static void frame(struct svg *g, uint32_t idx, const char *name, int kind, uint64_t start,
		  uint64_t n, unsigned int level, const char *more)
{
	double x = PAD_X + start * g->scale, w = n * g->scale, chg = 0;
	double y = g->height - PAD_BOTTOM - (level + 1.0) * FRAME_H;
	uint64_t base_n = 0;
	char fill[32];

	if (g->diff) {
		chg = diff_change(g, idx, &base_n);
		diff_colour(fill, sizeof(fill), chg, g->diff->scale);
	} else {
		colour(fill, sizeof(fill), name, kind);
	}
	fprintf(g->out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%u\"><title>", start, n, level);
	xml(g->out, name, SIZE_MAX);
	if (g->off)
		fprintf(g->out, "\n%.3f ms, %.2f%%, %s", n / 1e3, share(n, g->total),
			kind_word(kind));
	else
		fprintf(g->out, "\n%" PRIu64 " sample%s, %.2f%%, %s", n, n == 1 ? "" : "s",
			share(n, g->total), kind_word(kind));
	if (more)
		xml(g->out, more, SIZE_MAX);
	if (g->diff && g->off)
		fprintf(g->out, "; base: %.3f ms, %.2f%%; change: %+.2f points", base_n / 1e3,
			share(base_n, g->diff->base_total), chg);
	else if (g->diff)
		fprintf(g->out, "; base: %" PRIu64 " sample%s, %.2f%%; change: %+.2f points",
			base_n, base_n == 1 ? "" : "s", share(base_n, g->diff->base_total),
			chg);
	fprintf(g->out, "</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%.0f\">", x, y, w, FRAME_H - 1, fill,
		x + 3, y + 11.5);
	label(g->out, name, w);
	fputs("</text></g>\n", g->out);
}

/* Whether n gets a box: all but a lone process, whose frames sit on "all". */
static bool drawn(const struct svg *g, const struct jt_stk_node *n)
{
	return n->depth != 1 || g->per_proc;
}

/*
 * For a JIT frame with source lines: ", FILE:LINE in K of them", the line most of its
 * samples were at (a caller's: the line of its call; --off-cpu: "in K of its waits", the
 * line most of its waits left from), into buf; NULL for other frames. The file's name is
 * the traced process's: escaped as report escapes it (\xHH), so that it is UTF-8 XML can
 * hold.
 */
static const char *line_note(const struct svg *g, uint32_t idx, char *buf, size_t cap)
{
	const struct node_lines *nl = g->lines ? jt_hash__get(g->lines, idx) : NULL;
	const struct line_n *best = NULL;
	const char *file;
	char esc[256];
	uint32_t i;
	int c;

	for (i = 0; nl && i < nl->nr; i++) {
		const struct line_n *t = &nl->v[i];

		if (best && t->n == best->n) {
			c = strcmp(jt_lv__file(g->lv, t->file), jt_lv__file(g->lv, best->file));
			if (c > 0 || (!c && t->line > best->line))
				continue;
		} else if (best && t->n < best->n) {
			continue;
		}
		best = t;
	}
	if (!best)
		return NULL;
	file = jt_lv__file(g->lv, best->file);
	jt_text__escape(esc, sizeof(esc), file, strlen(file));
	snprintf(buf, cap, ", %s:%u in %" PRIu64 " of %s", esc, best->line, best->n,
		 g->off ? "its waits" : "them");
	return buf;
}

/* --diff: a process node's label, its command name (made printable), from its number. */
static void comm_label(const struct jt_xintern *comms, uint32_t num, char *buf, size_t cap)
{
	size_t len;
	const char *comm = jt_xintern__key(comms, num - 1, &len);

	jt_text__escape(buf, cap, comm, len);
}

static void draw_node(struct svg *g, uint32_t idx, uint64_t start, unsigned int level)
{
	const struct jt_stk_node *n = jt_stacks__node(g->s, idx);
	char label_buf[64], note[512];
	enum jt_lv_kind kind;
	const char *name;

	if (n->depth == 0) {
		frame(g, idx, "all", -2, start, n->total, level, NULL);
	} else if (n->depth == 1) {
		if (g->diff)
			comm_label(g->diff->comms, n->name, label_buf, sizeof(label_buf));
		else
			jt_stacks__proc_label(g->lv, n->name, label_buf, sizeof(label_buf));
		frame(g, idx, label_buf, -1, start, n->total, level, NULL);
	} else {
		name = jt_stacks__name(g->s, n->name, &kind);
		/* no frame the log names is unknown and called so: it is read_stacks' own */
		if (g->off && kind == JT_LV_UNKNOWN && !strcmp(name, SHORT_WAITS))
			frame(g, idx, name, KIND_SHORT, start, n->total, level, NULL);
		else
			frame(g, idx, name, kind, start, n->total, level,
			      line_note(g, idx, note, sizeof(note)));
	}
}

/* An open node in walk(): its next child to place, where that goes and on which level. */
struct cursor {
	uint32_t child;
	uint64_t start;
	unsigned int level;
};

/*
 * Every frame wide enough to be drawn, in preorder, children left to right from their
 * parent's start: drawn (draw) or only measured. *levels gets the levels they need. An
 * explicit stack instead of recursion: a crafted log's sample may be 65534 frames deep.
 * Returns 0 or -ENOMEM.
 */
static int walk(struct svg *g, bool draw, unsigned int *levels)
{
	const struct jt_stk_node *n = jt_stacks__node(g->s, JT_STK_ROOT);
	struct cursor *stack = NULL, *top;
	size_t cap = 0, sp = 0;
	unsigned int level, most = 1;
	uint64_t start;
	uint32_t idx;

	if (jt_array_grow(&stack, &cap, 1, sizeof(*stack)))
		return -ENOMEM;
	if (draw)
		draw_node(g, JT_STK_ROOT, 0, 0);
	stack[sp++] = (struct cursor){ n->child, 0, 1 };
	while (sp) {
		top = &stack[sp - 1];
		if (top->child == JT_STK_NONE) {
			sp--;
			continue;
		}
		idx = top->child;
		n = jt_stacks__node(g->s, idx);
		start = top->start;
		level = top->level;
		top->child = n->next;
		top->start += n->total;
		if (n->total * g->scale < g->min_width)
			continue;
		if (drawn(g, n)) {
			if (draw)
				draw_node(g, idx, start, level);
			if (level + 1 > most)
				most = level + 1;
			level++;
		}
		if (jt_array_grow(&stack, &cap, sp + 1, sizeof(*stack))) {
			free(stack);
			return -ENOMEM;
		}
		stack[sp++] = (struct cursor){ n->child, start, level };
	}
	free(stack);
	if (levels)
		*levels = most;
	return 0;
}

/*
 * The viewer: zoom on click (or #zoom=REGEX in the URL: the first frame matching), search
 * (button, Ctrl-F, or #search=REGEX), details on hover. An error anywhere marks the
 * document (data-jserror) and shows itself; data-ready says init() finished.
 */
static const char script[] =
"\"use strict\";\n"
"var frames = [], details, matched, unzoomBtn, searchBtn, W, XPAD, TOTAL;\n"
"var CHAR = 7.2;\n"
"function fail(msg) {\n"
"  var root = document.documentElement, t;\n"
"  root.setAttribute('data-jserror', String(msg));\n"
"  t = document.createElementNS('http://www.w3.org/2000/svg', 'text');\n"
"  t.setAttribute('id', 'jserror'); t.setAttribute('x', '10'); t.setAttribute('y', '40');\n"
"  t.setAttribute('fill', 'red'); t.textContent = 'JavaScript error: ' + msg;\n"
"  root.appendChild(t);\n"
"}\n"
"window.onerror = function (msg, src, line) { fail(msg + ' (line ' + line + ')'); };\n"
"function nameOf(g) { return g.firstChild.textContent.split('\\n')[0]; }\n"
"function infoOf(g) { return g.firstChild.textContent.split('\\n')[1]; }\n"
"function attr(g, a) { return +g.getAttribute(a); }\n"
"function place(g, x, w) {\n"
"  var r = g.childNodes[1], t = g.childNodes[2], name = nameOf(g);\n"
"  var fit = Math.floor((w - 6) / CHAR);\n"
"  r.setAttribute('x', x.toFixed(1)); r.setAttribute('width', w.toFixed(1));\n"
"  t.setAttribute('x', (x + 3).toFixed(1));\n"
"  t.textContent = fit < 3 ? '' : name.length <= fit ? name : name.slice(0, fit - 2) + '..';\n"
"  g.style.display = '';\n"
"}\n"
"function zoom(z) {\n"
"  var s = attr(z, 'data-s'), n = attr(z, 'data-n'), d = attr(z, 'data-d');\n"
"  frames.forEach(function (g) {\n"
"    var gs = attr(g, 'data-s'), gn = attr(g, 'data-n'), gd = attr(g, 'data-d');\n"
"    g.classList.remove('parent');\n"
"    if (gd < d && gs <= s && gs + gn >= s + n) {\n"
"      place(g, XPAD, W); g.classList.add('parent');\n"
"    } else if (gd >= d && gs >= s && gs + gn <= s + n && gn / n * W >= 0.1) {\n"
"      place(g, XPAD + (gs - s) / n * W, gn / n * W);\n"
"    } else {\n"
"      g.style.display = 'none';\n"
"    }\n"
"  });\n"
"  unzoomBtn.classList.toggle('hide', d === 0);\n"
"}\n"
"function unzoom() { zoom(frames[0]); }\n"
"function search(re) {\n"
"  var spans = [], n = 0, end = -1;\n"
"  frames.forEach(function (g) {\n"
"    var hit = re !== null && re.test(nameOf(g));\n"
"    g.classList.toggle('match', hit);\n"
"    if (hit) spans.push([attr(g, 'data-s'), attr(g, 'data-s') + attr(g, 'data-n')]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  spans.forEach(function (sp) {\n"
"    if (sp[1] <= end) return;\n"
"    n += sp[1] - Math.max(sp[0], end); end = sp[1];\n"
"  });\n"
"  matched.textContent = re === null ? '' : 'Matched: ' + (TOTAL ? 100 * n / TOTAL : 0).toFixed(1) + '%';\n"
"  searchBtn.classList.toggle('active', re !== null);\n"
"}\n"
"function askSearch() {\n"
"  var t = window.prompt('Search frames (regular expression; empty clears):', '');\n"
"  if (t === null) return;\n"
"  if (t === '') { search(null); return; }\n"
"  try { search(new RegExp(t)); } catch (e) { window.alert('Not a regular expression: ' + t); }\n"
"}\n"
"function init() {\n"
"  var root = document.documentElement, h = decodeURIComponent(location.hash || '');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  details = document.getElementById('details'); matched = document.getElementById('matched');\n"
"  unzoomBtn = document.getElementById('unzoom'); searchBtn = document.getElementById('search');\n"
"  W = +root.getAttribute('data-w'); XPAD = +root.getAttribute('data-x');\n"
"  TOTAL = +root.getAttribute('data-total');\n"
"  var box = document.getElementById('frames');\n"
"  box.addEventListener('click', function (e) {\n"
"    var g = e.target.closest('g.f'); if (g) zoom(g);\n"
"  });\n"
"  box.addEventListener('mouseover', function (e) {\n"
"    var g = e.target.closest('g.f');\n"
"    if (g) details.textContent = nameOf(g) + ': ' + infoOf(g);\n"
"  });\n"
"  box.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  unzoomBtn.addEventListener('click', unzoom);\n"
"  searchBtn.addEventListener('click', askSearch);\n"
"  window.addEventListener('keydown', function (e) {\n"
"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); askSearch(); }\n"
"    else if (e.key === 'Escape') { search(null); unzoom(); }\n"
"  });\n"
"  if (h.indexOf('#search=') === 0) search(new RegExp(h.slice(8)));\n"
"  if (h.indexOf('#zoom=') === 0) {\n"
"    var re = new RegExp(h.slice(6));\n"
"    var hit = frames.filter(function (g) { return re.test(nameOf(g)); })[0];\n"
"    if (hit) zoom(hit);\n"
"  }\n"
"  root.setAttribute('data-ready', frames.length);\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  try { init(); } catch (e) { fail(e && e.stack ? e.stack : e); }\n"
"});\n";

static const char style[] =
"text { font-family: monospace; font-size: 12px; fill: #000; }\n"
"g.f text { pointer-events: none; }\n"
"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
"g.f.match rect { fill: rgb(230,0,230); }\n"
"g.f.parent rect { opacity: 0.6; }\n"
"#title { font-size: 16px; }\n"
".btn { cursor: pointer; fill: #225; text-decoration: underline; }\n"
".btn.active { fill: rgb(180,0,180); }\n"
".hide { display: none; }\n";

/* --off-cpu: the subtitle's account of the time: "T ms off CPU in N waits (sleep T, ...)". */
static void off_subtitle(FILE *out, const struct offtime *off)
{
	unsigned int k;

	fprintf(out, "%.3f ms off CPU in %" PRIu64 " wait%s (", off->us[0] / 1e3, off->n[0],
		off->n[0] == 1 ? "" : "s");
	for (k = 1; k < JT_OFF_MAX; k++)
		fprintf(out, "%s%s %.3f ms", k > 1 ? ", " : "", jt_off_state__name(k),
			off->us[k] / 1e3);
	fputs(")", out);
}

static int write_svg(FILE *out, const struct jt_stacks *s, const struct jt_logsrc *src,
		     const struct jt_hash *lines, const struct fdiff *diff,
		     const struct offtime *off, const struct jt_flame_opts *o)
{
	const struct jt_stk_node *root = jt_stacks__node(s, JT_STK_ROOT);
	struct svg g = { .out = out, .s = s, .lv = src->lv, .lines = lines, .diff = diff,
			 .off = off, .total = root->total };
	const char *what = off ? "Off-CPU time: " : "Flame graph: ";
	unsigned int width = o->width ? o->width : 1200;

	g.per_proc = jt_stacks__per_proc(s, src->hdr->flags) ||
		     (diff && jt_stacks__per_proc(diff->base, diff->base_src->hdr->flags));
	g.width = width;
	g.min_width = o->min_width > 0 ? o->min_width : 0.1;
	g.scale = g.total ? (double)(width - 2 * PAD_X) / g.total : 0;
	if (walk(&g, false, &g.levels))
		return -ENOMEM;
	g.height = PAD_TOP + g.levels * FRAME_H + PAD_BOTTOM;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-total=\"%" PRIu64 "\" data-w=\"%u\" "
		"data-x=\"%d\">\n<style>\n%s</style>\n<script><![CDATA[\n%s]]></script>\n",
		width, g.height, width, g.height, g.total, width - 2 * PAD_X, PAD_X, style,
		script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f6f6f2\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"22\" text-anchor=\"middle\">", width / 2);
	if (o->title) {
		xml(out, o->title, SIZE_MAX);
	} else if (diff) {
		fputs(what, out);
		xml(out, o->path, SIZE_MAX);
		fputs(" against ", out);
		xml(out, diff->base_path, SIZE_MAX);
	} else {
		fputs(what, out);
		xml(out, o->path, SIZE_MAX);
	}
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"38\" text-anchor=\"middle\">",
		width / 2);
	if (off)
		off_subtitle(out, off);
	else
		fprintf(out, "%" PRIu64 " samples at %u Hz", g.total, src->hdr->sample_hz);
	fprintf(out, ", %" PRIu64 " lost; ",
		jt_logsrc__dropped(src) + (diff ? jt_logsrc__dropped(diff->base_src) : 0));
	if (diff && off)
		fprintf(out, "base %.3f ms; shares of each log's off-CPU time: red grew, blue "
			"shrank; click to zoom</text>\n", diff->base_total / 1e3);
	else if (diff)
		fprintf(out, "base %" PRIu64 " samples; shares of each log's samples: red grew, "
			"blue shrank; click to zoom</text>\n", diff->base_total);
	else
		fputs("JIT green, native warm, kernel blue; click to zoom</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"22\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"22\" text-anchor=\"end\">Search"
		"</text>\n<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<g id=\"frames\">\n", PAD_X, width - PAD_X, PAD_X, g.height - 10, width - PAD_X,
		g.height - 10);
	if (walk(&g, true, NULL))
		return -ENOMEM;
	fputs("</g>\n</svg>\n", out);
	return 0;
}

/* One more sample at (file, line) in node idx. */
static int tally(struct jt_hash *lines, uint32_t idx, uint32_t file, uint32_t line)
{
	struct node_lines *nl = jt_hash__get(lines, idx);
	uint32_t i;

	for (i = 0; nl && i < nl->nr; i++) {
		if (nl->v[i].file == file && nl->v[i].line == line) {
			nl->v[i].n++;
			return 0;
		}
	}
	if (!nl || nl->nr == nl->cap) {
		uint32_t cap = nl ? 2 * nl->cap : 2;
		struct node_lines *bigger = realloc(nl, sizeof(*nl) + cap * sizeof(nl->v[0]));

		if (!bigger)
			return -ENOMEM;
		if (!nl)
			bigger->nr = 0;
		bigger->cap = cap;
		nl = bigger;
		if (jt_hash__put(lines, idx, nl)) {	/* its place is taken: no failure */
			jt_hash__del(lines, idx);
			free(nl);
			return -ENOMEM;
		}
	}
	nl->v[nl->nr++] = (struct line_n){ file, line, 1 };
	return 0;
}

/*
 * The source line of each JIT frame of a sample just added (leaf: its node), tallied by
 * node: the leaf user frame's where it ran, a caller's at its call.
 */
static int tally_sample(struct jt_hash *lines, const struct jt_stacks *s, const struct jt_lv *lv,
			const struct jt_rec_sample *smp, uint32_t leaf)
{
	unsigned int i, user = jt_lv__user_leaf(lv, smp);
	uint32_t node = leaf, file, line;

	for (i = 0; i < smp->nr_frames; i++) {	/* leaf first: frame i's nodes next */
		struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
		/* as stacks.c expanded it */
		unsigned int k, n = jt_lv__expands(smp) ?
			jt_lv__frame_scopes(lv, &smp->frames[i], i > user, sc, JT_LV_DEPTH_MAX) : 0;

		/* a frame with inlined scopes has a node for each, innermost first */
		for (k = 0; k + 1 < n; k++) {
			if (sc[k].line && tally(lines, node, sc[k].file, sc[k].line))
				return -ENOMEM;
			node = jt_stacks__node(s, node)->parent;
		}
		if (jt_lv__own_line(lv, &smp->frames[i], i > user, sc, n, &file, &line) &&
		    tally(lines, node, file, line))
			return -ENOMEM;
		node = jt_stacks__node(s, node)->parent;
	}
	return 0;
}

/*
 * --diff: a copy of the sample (in *buf) under the number of its process's command name in
 * comms (from 1), so that the same program's stacks meet in both logs. NULL (reported)
 * without memory.
 */
static const struct jt_rec_sample *by_comm(const struct jt_rec_sample *smp, const struct jt_lv *lv,
					   struct jt_xintern *comms, struct jt_rec_sample **buf,
					   size_t *cap)
{
	const struct jt_lv_proc *p = jt_lv__proc(lv, smp->pid);
	char unknown[32];
	const char *comm = p && p->comm[0] ? p->comm : unknown;
	long num;

	snprintf(unknown, sizeof(unknown), "[pid %u]", smp->pid);
	num = jt_xintern__get(comms, comm, strlen(comm), NULL);
	if (num < 0 || num >= UINT32_MAX || jt_array_grow(buf, cap, smp->h.size, 1)) {
		jt_err("out of memory comparing flame graphs");
		return NULL;
	}
	memcpy(*buf, smp, smp->h.size);
	(*buf)->pid = num + 1;
	return *buf;
}

/* --off-cpu: take in a kept record's time and waits. Its weight in the tree: us. */
static uint64_t off_tally(struct offtime *off, const struct jt_rec_offcpu *rec)
{
	unsigned int st = rec->state;	/* known: the reader refuses any other */
	uint64_t us = rec->off_ns / 1000;

	off->us[0] += us;
	off->us[st] += us;
	off->n[0] += rec->count;
	off->n[st] += rec->count;
	return us;
}

/*
 * Read the log src was opened on into s: each kept sample, or with off (--off-cpu) each
 * kept off-CPU record weighing its us (its short waits, which have no stack, as one
 * SHORT_WAITS frame under the process); with lines the source line of each JIT frame
 * (tally_sample); with comms, each under its command name (by_comm). Returns 0 or -1
 * (reported; with off also a log that recorded no off-CPU time).
 */
static int read_stacks(struct jt_logsrc *src, struct jt_stacks *s, struct jt_hash *lines,
		       struct jt_xintern *comms, struct offtime *off)
{
	const struct jt_rec_offcpu *orec = NULL;
	const struct jt_rec_sample *smp;
	const struct jt_rec_hdr *rec;
	struct jt_rec_sample *buf = NULL;
	size_t cap = 0;
	uint64_t weight = 1;
	uint32_t leaf;
	int err = 0;
	bool kept;

	while (!err && (rec = jt_logsrc__next(src, &kept))) {
		err = jt_stacks__saw(s, rec);
		if (off && rec->type == JT_REC_OFFCPU)
			off->any = true;
		if (err || !kept || rec->type != (off ? JT_REC_OFFCPU : JT_REC_SAMPLE))
			continue;
		smp = (const void *)rec;
		if (off) {
			orec = (const void *)rec;
			smp = &orec->smp;
			weight = off_tally(off, orec);
		}
		if (comms && !(smp = by_comm(smp, src->lv, comms, &buf, &cap))) {
			err = -ENOMEM;
			break;
		}
		if (off && orec->state == JT_OFF_SHORT) {
			err = jt_stacks__add_named(s, smp->pid, SHORT_WAITS, JT_LV_UNKNOWN, weight,
						   &leaf);
			continue;
		}
		err = off ? jt_stacks__add_weight(s, src->lv, smp, weight, &leaf) :
			    jt_stacks__add(s, src->lv, smp, &leaf);
		if (!err && lines && jt_lv__has_lines(src->lv) &&
		    tally_sample(lines, s, src->lv, smp, leaf)) {
			jt_err("out of memory tallying source lines");
			err = -ENOMEM;
		}
	}
	free(buf);
	if (err || jt_logsrc__finish(src, "drawn"))
		return -1;
	if (off && !off->any && !(src->hdr->flags & JT_LOG_F_OFFCPU)) {
		jt_err("%s: no off-CPU time in this log: record it with 'jitrace record --off-cpu'",
		       src->path);
		return -1;
	}
	jt_stacks__sort(s);
	return 0;
}

/*
 * The key of node idx of s under the base node matched to its parent (parent), into *buf:
 * the parent, then a process node's number (0 when lone: the one process of each log),
 * or a frame's kind and name. Returns its length, or 0 without memory.
 */
static size_t path_key(const struct jt_stacks *s, uint32_t idx, uint32_t parent, bool lone,
		       char **buf, size_t *cap)
{
	const struct jt_stk_node *n = jt_stacks__node(s, idx);
	uint32_t key[2] = { parent, lone ? 0 : n->name };
	const char *name = "";
	enum jt_lv_kind kind;
	size_t len = 0;

	if (n->depth > 1) {
		name = jt_stacks__name(s, n->name, &kind);
		len = strlen(name);
		key[1] = kind;
	}
	if (jt_array_grow(buf, cap, sizeof(key) + len, 1))
		return 0;
	memcpy(*buf, key, sizeof(key));
	memcpy(*buf + sizeof(key), name, len);
	return sizeof(key) + len;
}

/*
 * --diff: for each node of the new tree, the node of the base tree at the same path (the
 * same names and kinds, and command names, from the root), or JT_STK_NONE. When neither
 * graph has a root per process (lone), the one process of each matches whatever its name.
 * A node's parent always comes before it. Returns the array (malloc'd) or NULL (out of
 * memory).
 */
static uint32_t *match_nodes(const struct jt_stacks *nw, const struct jt_stacks *base, bool lone)
{
	size_t nn = jt_stacks__nr_nodes(nw), nb = jt_stacks__nr_nodes(base), i, len, kcap = 0;
	uint32_t *match = malloc(nn * sizeof(*match)), *bnode = malloc(nb * sizeof(*bnode));
	struct jt_xintern paths = { 0 };
	size_t nr_base;
	char *kbuf = NULL;
	long k;

	if (!match || !bnode)
		goto nomem;
	for (i = 1; i < nb; i++) {	/* the base's nodes by path */
		len = path_key(base, i, jt_stacks__node(base, i)->parent, lone, &kbuf, &kcap);
		k = len ? jt_xintern__get(&paths, kbuf, len, NULL) : -ENOMEM;
		if (k < 0)
			goto nomem;
		bnode[k] = i;
	}
	nr_base = paths.n;
	match[JT_STK_ROOT] = JT_STK_ROOT;
	for (i = 1; i < nn; i++) {
		uint32_t parent = match[jt_stacks__node(nw, i)->parent];

		match[i] = JT_STK_NONE;
		if (parent == JT_STK_NONE)
			continue;
		len = path_key(nw, i, parent, lone, &kbuf, &kcap);
		k = len ? jt_xintern__get(&paths, kbuf, len, NULL) : -ENOMEM;
		if (k < 0)
			goto nomem;
		if ((size_t)k < nr_base)	/* else a key the base has not: added past them */
			match[i] = bnode[k];
	}
	free(kbuf);
	free(bnode);
	jt_xintern__fini(&paths);
	return match;
nomem:
	free(kbuf);
	free(bnode);
	free(match);
	jt_xintern__fini(&paths);
	return NULL;
}

/* The largest change, in points, of any new node's share, and at least 1. */
static double largest_change(const struct svg *g)
{
	size_t i, n = jt_stacks__nr_nodes(g->s);
	double most = 1, chg;
	uint64_t base_n;

	for (i = 0; i < n; i++) {
		chg = diff_change(g, i, &base_n);
		if (chg > most || -chg > most)
			most = chg < 0 ? -chg : chg;
	}
	return most;
}

/* --diff: the new log's flame graph coloured by how each frame's share moved. */
static int flame_diff(FILE *out, const struct jt_flame_opts *o)
{
	struct jt_stacks *s = NULL, *bs = NULL;
	struct jt_xintern comms = { 0 };
	struct jt_logsrc src, bsrc;
	struct fdiff d = { .base_path = o->base, .comms = &comms };
	struct offtime boff = { 0 }, off = { 0 };
	struct svg probe;
	bool lone;
	int ret = 1, err;

	if (jt_logsrc__open(&bsrc, o->base, &o->filter))
		return 1;
	if (jt_logsrc__open(&src, o->path, &o->filter)) {
		jt_logsrc__close(&bsrc);
		return 1;
	}
	bs = jt_stacks__new();
	s = jt_stacks__new();
	if (!bs || !s || read_stacks(&bsrc, bs, NULL, &comms, o->off_cpu ? &boff : NULL) ||
	    read_stacks(&src, s, NULL, &comms, o->off_cpu ? &off : NULL))
		goto out;
	lone = !jt_stacks__per_proc(s, src.hdr->flags) && !jt_stacks__per_proc(bs, bsrc.hdr->flags);
	d.base = bs;
	d.base_src = &bsrc;
	d.base_total = jt_stacks__node(bs, JT_STK_ROOT)->total;
	d.match = match_nodes(s, bs, lone);
	if (!d.match) {
		jt_err("out of memory comparing flame graphs");
		goto out;
	}
	probe = (struct svg){ .s = s, .diff = &d, .total = jt_stacks__node(s, JT_STK_ROOT)->total };
	d.scale = largest_change(&probe);
	err = write_svg(out, s, &src, NULL, &d, o->off_cpu ? &off : NULL, o);
	if (err == -ENOMEM)
		jt_err("out of memory writing the flame graph");
	else if (err || fflush(out) || ferror(out))
		jt_err("writing the flame graph: %s", strerror(errno ? errno : EIO));
	else
		ret = 0;
out:
	free(d.match);
	jt_xintern__fini(&comms);
	jt_stacks__free(s);
	jt_stacks__free(bs);
	jt_logsrc__close(&src);
	jt_logsrc__close(&bsrc);
	return ret;
}

int jt_flamegraph(FILE *out, const struct jt_flame_opts *o)
{
	struct jt_stacks *s = NULL;
	struct jt_hash lines = { 0 };
	struct offtime off = { 0 };
	struct jt_logsrc src;
	int ret = 1, err;

	if (o->base && o->folded) {
		jt_err("--diff draws an SVG: it has no --folded form");
		return 1;
	}
	if (o->base)
		return flame_diff(out, o);
	if (jt_logsrc__open(&src, o->path, &o->filter))
		return 1;
	s = jt_stacks__new();
	if (!s || read_stacks(&src, s, o->folded ? NULL : &lines, NULL, o->off_cpu ? &off : NULL))
		goto out;
	if (o->folded)
		err = jt_folded__write(out, s, src.lv, jt_stacks__per_proc(s, src.hdr->flags),
				       o->annotate);
	else
		err = write_svg(out, s, &src, &lines, NULL, o->off_cpu ? &off : NULL, o);
	if (err == -ENOMEM)
		jt_err("out of memory writing the flame graph");
	else if (err || fflush(out) || ferror(out))
		jt_err("writing the flame graph: %s", strerror(errno ? errno : EIO));
	else
		ret = 0;
out:
	jt_hash__fini_free(&lines);
	jt_stacks__free(s);
	jt_logsrc__close(&src);
	return ret;
}
