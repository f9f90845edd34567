// SPDX-License-Identifier: GPL-2.0
/*
 * pprof export: samples merged by stack, encoded as profile.proto by hand, then gzipped. A
 * mapping per module the samples ran in (its file, range and file offset, from the log's
 * module records), "[jit]", "[kernel]" and "[unknown]" for the rest; every location at the
 * address its frame had in the process. Off-CPU waits are samples of their own, merged the
 * same way (and by state), with their time in an off_cpu sample type.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/common.h"
#include "export/pprof.h"
#include "base/hash.h"
#include "log/source.h"
#include "base/names.h"
#include "jt_events.h"
#include "export/pb.h"
#include "base/text.h"
#include "base/util.h"

/* Profile's fields (tests/views/profile.proto) */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE,
	P_DROP_FRAMES, P_KEEP_FRAMES, P_TIME_NANOS, P_DURATION_NANOS, P_PERIOD_TYPE, P_PERIOD,
	P_COMMENT, P_DEFAULT_SAMPLE_TYPE,
};

/* The key samples are merged by: who, on or off the CPU, then the locations leaf first. */
struct skey {
	uint32_t pid, tid;
	uint32_t comm;		/* string index */
	uint32_t thread;	/* string index of the thread's name, 0 if the log has none */
	uint32_t state;		/* 0: on the CPU; else the wait's enum jt_off_state */
	uint32_t nr;		/* (keys are compared as bytes: no padding above) */
	uint64_t locs[];	/* location ids */
};

/* loc_map of a location in no mapping: the one of sums of short waits */
#define NO_MAP UINT32_MAX

/* A module of the log (JT_REC_MODULE), by id, and its pprof mapping once a frame is in it. */
struct pmod {
	uint64_t start, end, pgoff;
	char *path;		/* NUL-terminated copy */
	long map;		/* mapping index, -1 until used */
};

/* A symbol of the log (JT_REC_SYMBOL), by id: where it is. */
struct psym {
	uint64_t module;	/* 0: the kernel */
	uint64_t start;		/* offset into the module's file, or kernel address */
};

/* A pprof mapping. */
struct pmap {
	long file;		/* string index */
	uint64_t start, limit, offset;
	bool bounds;		/* start and limit are the module's, not grown from addresses */
	bool has_functions;	/* some frame in it was named by a symbol (or all are) */
	bool program;		/* its file is a program (is_program()) */
	uint64_t weight;	/* samples with a frame in it */
	uint64_t off_weight;	/* off-CPU waits with a frame in it */
	uint64_t last;		/* the stack (nr_stacks) that last counted in a weight */
};

/* A line of a method inlined at a location: its function and line (0: not known). */
struct pline {
	uint32_t func;
	uint32_t line;
};

/* The mappings that are no module. */
enum { MAP_JIT, MAP_KERNEL, MAP_UNKNOWN, NR_SPECIAL };

struct pprof {
	struct jt_logsrc src;
	struct jt_hash mods;		/* module id -> struct pmod */
	struct jt_hash syms;		/* symbol id -> struct psym */
	struct pmap *maps;
	size_t nr_maps, cap_maps;
	long special[NR_SPECIAL];	/* mapping index, -1 until used */
	uint32_t *loc_map;		/* mapping index by location index */
	struct jt_xintern strings;	/* string_table */
	struct jt_xintern functions;	/* name '\0' file (a JIT frame's: its source file) */
	struct jt_xintern locations;	/* struct jt_frame, then 'c' for a caller with lines */
	struct jt_xintern samples;	/* struct skey */
	uint64_t *loc_addr;		/* by location index */
	uint32_t *loc_func;		/* function index by location index */
	uint32_t *loc_line;		/* source line by location index, 0 if none */
	uint32_t *loc_inl;		/* by location index: its first inlined line + 1, 0 none */
	uint32_t *loc_nr_inl;		/* by location index: how many inlined lines */
	struct pline *inl;		/* inlined lines of every location, innermost first */
	size_t nr_inl, cap_inl, cap_inl_first, cap_inl_nr;
	uint32_t *func_start;		/* start_line by function index, 0 if not known */
	uint64_t *counts;		/* by sample index: CPU samples */
	uint64_t *off_ns;		/* by sample index: time off the CPU */
	size_t cap_locs, cap_lines, cap_funcs, cap_samples, cap_off;
	struct skey *key;		/* scratch for one sample's key */
	uint64_t nr_samples;		/* CPU samples */
	uint64_t nr_offcpu;		/* off-CPU records */
	uint64_t nr_stacks;		/* both, for pmap.last */
	long short_loc;			/* location of "[short waits]", -1 until used */
	long s[8];			/* string indexes of fixed_strings() */
	long s_thread;			/* "thread", interned once a thread has a name */
	long s_state;			/* "state", interned at the first off-CPU wait */
};

static long str_idx(struct pprof *p, const char *s)
{
	return jt_xintern__get(&p->strings, s, strlen(s), NULL);
}

/*
 * A label's string from another process's bytes (a comm, a thread's name: 16 bytes at
 * most), cleaned as function names are: pprof prints labels to a terminal.
 */
static long label_idx(struct pprof *p, const char *s)
{
	char clean[JT_COMM_LEN + 1];

	jt_text__clean(clean, s, strnlen(s, JT_COMM_LEN));
	return str_idx(p, clean);
}

static void mod_free(struct pmod *m)
{
	if (m)
		free(m->path);
	free(m);
}

/* Keep a module or symbol definition for the mappings and addresses. 0 or -ENOMEM. */
static int define(struct pprof *p, const struct jt_rec_hdr *rec)
{
	if (rec->type == JT_REC_MODULE) {
		const struct jt_rec_module *r = (const void *)rec;
		struct pmod *m = malloc(sizeof(*m));

		if (!m || !(m->path = strndup(r->path, r->path_len))) {
			free(m);
			return -ENOMEM;
		}
		m->start = r->start;
		m->end = r->end;
		m->pgoff = r->pgoff;
		m->map = -1;
		mod_free(jt_hash__del(&p->mods, r->id));	/* --salvage may see one again */
		if (jt_hash__put(&p->mods, r->id, m)) {
			free(m->path);
			free(m);
			return -ENOMEM;
		}
	} else if (rec->type == JT_REC_SYMBOL) {
		const struct jt_rec_symbol *r = (const void *)rec;
		struct psym *y = jt_hash__get_new(&p->syms, r->id, sizeof(*y), NULL);

		if (!y)
			return -ENOMEM;
		y->module = r->module;
		y->start = r->start;
	}
	return 0;
}

/* Whether a file is a program, as pprof tells them: not "[...]", not a library (*.so*). */
static bool is_program(const char *path)
{
	const char *base = strrchr(path, '/'), *so;

	base = base ? base + 1 : path;
	if (!base[0] || base[0] == '[')
		return false;
	for (so = strstr(base, ".so"); so; so = strstr(so + 1, ".so"))
		if (!so[3] || so[3] == ' ' ||	/* " (deleted)" */
		    ((so[3] == '.' || so[3] == '_') && so[4] >= '0' && so[4] <= '9'))
			return false;
	return true;
}

/* A new mapping named file; its index, or -ENOMEM. */
static long new_map(struct pprof *p, const char *file)
{
	long name = str_idx(p, file);

	if (name < 0 || jt_array_grow(&p->maps, &p->cap_maps, p->nr_maps + 1, sizeof(*p->maps)))
		return -ENOMEM;
	p->maps[p->nr_maps] = (struct pmap){ .file = name, .program = is_program(file) };
	return p->nr_maps++;
}

/* The mapping of module m, made at its first frame. */
static long module_map(struct pprof *p, struct pmod *m)
{
	long map;

	if (m->map >= 0)
		return m->map;
	map = new_map(p, m->path);
	if (map < 0)
		return map;
	p->maps[map].start = m->start;
	p->maps[map].limit = m->end;
	p->maps[map].offset = m->pgoff;
	p->maps[map].bounds = true;
	m->map = map;
	return map;
}

static long special_map(struct pprof *p, int which)
{
	static const char *const names[] = {
		[MAP_JIT] = "[jit]", [MAP_KERNEL] = "[kernel]", [MAP_UNKNOWN] = "[unknown]",
	};
	long map = p->special[which];

	if (map >= 0)
		return map;
	map = new_map(p, names[which]);
	if (map < 0)
		return map;
	/* named by the join or by kallsyms: nothing for pprof to look up */
	p->maps[map].has_functions = which != MAP_UNKNOWN;
	p->special[which] = map;
	return map;
}

/*
 * Where frame f was in its process and in which mapping: a JIT method's start plus the
 * offset; a native frame's module start plus its file offset (a symbol's offset into the
 * file plus the frame's into the symbol) less the mapping's file offset; a kernel symbol's
 * address plus the offset; a bare address as it is. *addr gets the address. Returns the
 * mapping index or -ENOMEM.
 */
static long frame_map(struct pprof *p, const struct jt_frame *f, uint64_t *addr)
{
	uint64_t id = JT_FRAME_ID(f->ref);
	const struct jt_lv_method *meth;
	const struct psym *y = NULL;
	struct pmod *m = NULL;
	uint64_t file_off = f->off;
	long map;

	*addr = f->off;
	switch (JT_FRAME_KIND(f->ref)) {
	case JT_FRAME_METHOD:
		meth = jt_lv__method(p->src.lv, id);
		if (!meth)
			break;
		*addr = meth->start + f->off;
		return special_map(p, MAP_JIT);
	case JT_FRAME_KERNEL:
		return special_map(p, MAP_KERNEL);
	case JT_FRAME_SYMBOL:
		y = jt_hash__get(&p->syms, id);
		if (y && !y->module) {
			*addr = y->start + f->off;
			return special_map(p, MAP_KERNEL);
		}
		m = y ? jt_hash__get(&p->mods, y->module) : NULL;
		file_off = y ? y->start + f->off : 0;
		break;
	case JT_FRAME_MODULE:
		m = jt_hash__get(&p->mods, id);
		break;
	default:
		break;
	}
	if (!m)		/* a bare user address, or what --salvage left undefined */
		return special_map(p, MAP_UNKNOWN);
	map = module_map(p, m);
	if (map < 0)
		return map;
	*addr = m->start + file_off - m->pgoff;
	if (y)
		p->maps[map].has_functions = true;
	return map;
}

/*
 * The function named name in file, created at first sight (*added says so) with its
 * strings. Returns its index or -ENOMEM.
 */
static long function(struct pprof *p, const char *name, const char *file, bool *added)
{
	long fn = jt_xintern__pair(&p->functions, name, file, added);

	if (fn < 0 || (*added && (str_idx(p, name) < 0 || str_idx(p, file) < 0)))
		return -ENOMEM;
	if (*added && jt_array_grow(&p->func_start, &p->cap_funcs, fn + 1,
				    sizeof(*p->func_start)))
		return -ENOMEM;
	return fn;
}

/* Room for location loc in the arrays by location. 0 or -ENOMEM. */
static int grow_locations(struct pprof *p, long loc)
{
	size_t cap_func = p->cap_locs, cap_map = p->cap_locs;

	if (jt_array_grow(&p->loc_addr, &p->cap_locs, loc + 1, sizeof(*p->loc_addr)) ||
	    jt_array_grow(&p->loc_func, &cap_func, loc + 1, sizeof(*p->loc_func)) ||
	    jt_array_grow(&p->loc_map, &cap_map, loc + 1, sizeof(*p->loc_map)) ||
	    jt_array_grow(&p->loc_line, &p->cap_lines, loc + 1, sizeof(*p->loc_line)) ||
	    jt_array_grow(&p->loc_inl, &p->cap_inl_first, loc + 1, sizeof(*p->loc_inl)) ||
	    jt_array_grow(&p->loc_nr_inl, &p->cap_inl_nr, loc + 1, sizeof(*p->loc_nr_inl)))
		return -ENOMEM;
	p->loc_inl[loc] = 0;
	p->loc_nr_inl[loc] = 0;
	return 0;
}

/*
 * The lines of the methods inlined at location loc (sc[0, n): innermost first), each its
 * own function in its source file, as pprof lists them before the location's own line.
 * 0 or -ENOMEM.
 */
static int inlined_lines(struct pprof *p, long loc, const struct jt_lv_scope *sc, unsigned n)
{
	unsigned int k;
	bool added;
	long fn;

	if (jt_array_grow(&p->inl, &p->cap_inl, p->nr_inl + n, sizeof(*p->inl)))
		return -ENOMEM;
	p->loc_inl[loc] = p->nr_inl + 1;
	p->loc_nr_inl[loc] = n;
	for (k = 0; k < n; k++) {
		fn = function(p, sc[k].name, jt_lv__file(p->src.lv, sc[k].file), &added);
		if (fn < 0)
			return -ENOMEM;
		if (added)
			p->func_start[fn] = 0;
		p->inl[p->nr_inl++] = (struct pline){ .func = fn, .line = sc[k].line };
	}
	return 0;
}

/*
 * The location of a frame, with its function, created at first sight. Returns its index.
 * A JIT frame whose method has source lines gets its line (a caller's: that of its call,
 * so the same address as a leaf is another location) and a function named by its source
 * file, starting at the lowest line of the method there. One whose code there inlined
 * other methods gets a line for each of them before its own (the call's in it).
 */
static long location(struct pprof *p, const struct jt_frame *f, bool caller)
{
	char buf[JT_LOGSRC_NAME_CAP];
	unsigned char lkey[sizeof(*f) + 1];
	uint64_t id = JT_FRAME_ID(f->ref);
	bool method = JT_FRAME_KIND(f->ref) == JT_FRAME_METHOD, added, has_line;
	struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
	size_t klen = sizeof(*f);
	const char *name, *file;
	uint32_t src_file = 0, line = 0;
	enum jt_lv_kind kind;
	long loc, fn, map;
	unsigned int n;
	uint64_t addr;

	memcpy(lkey, f, sizeof(*f));
	if (caller && method && jt_lv__method_has_lines(p->src.lv, id))
		lkey[klen++] = 'c';
	loc = jt_xintern__get(&p->locations, lkey, klen, &added);
	if (loc < 0 || !added)
		return loc;
	name = jt_logsrc__frame(&p->src, f, buf, &file, &kind);
	n = jt_lv__frame_scopes(p->src.lv, f, caller, sc, JT_LV_DEPTH_MAX);
	has_line = jt_lv__own_line(p->src.lv, f, caller, sc, n, &src_file, &line);
	if (has_line)
		file = jt_lv__file(p->src.lv, src_file);
	fn = function(p, name, file, &added);
	if (fn < 0)
		return -ENOMEM;
	if (added)
		p->func_start[fn] = has_line ? jt_lv__first_line(p->src.lv, id, src_file) : 0;
	if (grow_locations(p, loc) || (n > 1 && inlined_lines(p, loc, sc, n - 1)))
		return -ENOMEM;
	map = frame_map(p, f, &addr);
	if (map < 0)
		return map;
	if (!p->maps[map].bounds) {	/* a mapping that is no module spans its addresses */
		if (p->maps[map].start == p->maps[map].limit || addr < p->maps[map].start)
			p->maps[map].start = addr;
		if (addr >= p->maps[map].limit)
			p->maps[map].limit = addr < UINT64_MAX ? addr + 1 : addr;
	}
	p->loc_addr[loc] = addr;
	p->loc_func[loc] = fn;
	p->loc_map[loc] = map;
	p->loc_line[loc] = has_line ? line : 0;
	return loc;
}

/*
 * The location of sums of short waits, which have no stack: "[short waits]", in no mapping
 * and at no address (pprof takes both as unknown). Returns its index or -ENOMEM.
 */
static long short_location(struct pprof *p)
{
	static const char name[] = "[short waits]";	/* no frame's key is this long */
	bool added;
	long loc, fn;

	if (p->short_loc >= 0)
		return p->short_loc;
	loc = jt_xintern__get(&p->locations, name, sizeof(name) - 1, &added);
	if (loc < 0)
		return -ENOMEM;
	fn = function(p, name, "", &added);
	if (fn < 0 || grow_locations(p, loc))
		return -ENOMEM;
	if (added)
		p->func_start[fn] = 0;
	p->loc_addr[loc] = 0;
	p->loc_func[loc] = fn;
	p->loc_map[loc] = NO_MAP;
	p->loc_line[loc] = 0;
	p->short_loc = loc;
	return loc;
}

/*
 * A stack into the samples it is merged into: a CPU sample (state 0) counts one, an
 * off-CPU wait (state: enum jt_off_state) adds off ns. A sum of short waits has no frames:
 * its one location is "[short waits]".
 */
static int add_stack(struct pprof *p, const struct jt_rec_sample *s, unsigned state,
		     uint64_t off)
{
	const struct jt_lv_proc *proc = jt_lv__proc(p->src.lv, s->pid);
	bool short_waits = state == JT_OFF_SHORT;
	unsigned i, nr = short_waits ? 1 : s->nr_frames;
	size_t klen = sizeof(*p->key) + nr * sizeof(p->key->locs[0]);
	unsigned user = jt_lv__has_lines(p->src.lv) ? jt_lv__user_leaf(p->src.lv, s) : 0;
	const char *tname;
	long idx, comm;
	bool added;

	comm = label_idx(p, proc ? proc->comm : "");
	if (comm < 0)
		return -ENOMEM;
	p->key->pid = s->pid;
	p->key->tid = s->tid;
	p->key->comm = comm;
	p->key->thread = 0;
	p->key->state = state;
	tname = jt_lv__thread(p->src.lv, s->tid);
	if (tname) {	/* its name as of this sample */
		if (!p->s_thread)
			p->s_thread = str_idx(p, "thread");
		idx = label_idx(p, tname);
		if (p->s_thread < 0 || idx < 0)
			return -ENOMEM;
		p->key->thread = idx;
	}
	if (state && !p->s_state && (p->s_state = str_idx(p, "state")) < 0)
		return -ENOMEM;
	p->key->nr = nr;
	p->nr_stacks++;
	if (short_waits) {
		idx = short_location(p);
		if (idx < 0)
			return -ENOMEM;
		p->key->locs[0] = idx + 1;
	}
	for (i = 0; !short_waits && i < nr; i++) {
		/* frames past the first user frame are callers (without lines: no matter) */
		long loc = location(p, &s->frames[i], user < i);
		struct pmap *map;

		if (loc < 0)
			return -ENOMEM;
		p->key->locs[i] = loc + 1;
		map = &p->maps[p->loc_map[loc]];
		if (map->last != p->nr_stacks) {	/* once a stack */
			map->last = p->nr_stacks;
			if (state)
				map->off_weight++;
			else
				map->weight++;
		}
	}
	idx = jt_xintern__get(&p->samples, p->key, klen, &added);
	if (idx < 0 || jt_array_grow(&p->counts, &p->cap_samples, idx + 1, sizeof(*p->counts)) ||
	    jt_array_grow(&p->off_ns, &p->cap_off, idx + 1, sizeof(*p->off_ns)))
		return -ENOMEM;
	if (added) {
		p->counts[idx] = 0;
		p->off_ns[idx] = 0;
	}
	if (state) {
		p->off_ns[idx] = off > UINT64_MAX - p->off_ns[idx] ? UINT64_MAX :
				 p->off_ns[idx] + off;
		p->nr_offcpu++;
	} else {
		p->counts[idx]++;
		p->nr_samples++;
	}
	return 0;
}

/* An off-CPU wait: the stack it left with, its time off the CPU, its state. */
static int add_wait(struct pprof *p, const struct jt_rec_offcpu *r)
{
	return add_stack(p, &r->smp, r->state, r->off_ns);
}

static void value_type(struct jt_pb *b, unsigned field, long type, long unit)
{
	size_t m = jt_pb__begin(b, field);

	jt_pb__uint(b, 1, type);
	jt_pb__uint(b, 2, unit);
	jt_pb__end(b, m);
}

static void label(struct jt_pb *b, long key, long str, uint64_t num)
{
	size_t m = jt_pb__begin(b, 3);

	jt_pb__uint(b, 1, key);
	if (str)
		jt_pb__uint(b, 2, str);
	else
		jt_pb__uint(b, 3, num);
	jt_pb__end(b, m);
}

/* The strings the encoding itself names, interned first so they lead the table. */
enum { S_SAMPLES, S_COUNT, S_CPU, S_NS, S_PID, S_TID, S_COMM, S_HOST, NR_S };

static int fixed_strings(struct pprof *p)
{
	const struct jt_log_header *h = p->src.hdr;
	static const char *const fixed[] = {
		[S_SAMPLES] = "samples", [S_COUNT] = "count", [S_CPU] = "cpu",
		[S_NS] = "nanoseconds", [S_PID] = "pid", [S_TID] = "tid", [S_COMM] = "comm",
	};
	char host[sizeof(h->hostname) + 8];
	int i;

	/* index 0 of the string table is "" */
	if (jt_xintern__get(&p->strings, "", 0, NULL) < 0)
		return -ENOMEM;
	for (i = 0; i < S_HOST; i++)
		if ((p->s[i] = str_idx(p, fixed[i])) < 0)
			return -ENOMEM;
	snprintf(host, sizeof(host), "host=%.*s", (int)sizeof(h->hostname), h->hostname);
	p->s[S_HOST] = str_idx(p, host);
	return p->s[S_HOST] < 0 ? -ENOMEM : 0;
}

/*
 * The CPU time of n samples at hz: n * 1e9 / hz nanoseconds, rounded, computed whole (999
 * samples at 999 Hz are 1 s, not 999 times a period cut to 1,001,001 ns).
 */
static uint64_t cpu_ns(uint64_t n, uint32_t hz)
{
	unsigned __int128 ns;

	if (!hz)
		return 0;
	ns = ((unsigned __int128)n * 1000000000U + hz / 2) / hz;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static int cmp_maps(const void *a, const void *b, void *ctx)
{
	const struct pmap *maps = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (maps[x].weight != maps[y].weight)
		return maps[x].weight > maps[y].weight ? -1 : 1;
	if (maps[x].off_weight != maps[y].off_weight)
		return maps[x].off_weight > maps[y].off_weight ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The mappings: the busiest program first (pprof's main binary, which names the profile:
 * "File: toyjit"), then the rest busiest first (most samples with a frame in them, then
 * most off-CPU waits); each one's id by index in *ids (malloc'd).
 */
static int encode_mappings(struct pprof *p, struct jt_pb *b, uint32_t **ids)
{
	uint32_t *order = malloc((p->nr_maps + 1) * sizeof(*order));
	size_t i, m;

	*ids = malloc((p->nr_maps + 1) * sizeof(**ids));
	if (!order || !*ids) {
		free(order);
		free(*ids);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_maps; i++)
		order[i] = i;
	qsort_r(order, p->nr_maps, sizeof(*order), cmp_maps, p->maps);
	for (i = 0; i < p->nr_maps; i++) {
		uint32_t main_map = order[i];

		if (!p->maps[main_map].program)
			continue;
		memmove(order + 1, order, i * sizeof(*order));
		order[0] = main_map;
		break;
	}
	for (i = 0; i < p->nr_maps; i++) {
		const struct pmap *map = &p->maps[order[i]];

		(*ids)[order[i]] = i + 1;
		m = jt_pb__begin(b, P_MAPPING);
		jt_pb__uint(b, 1, i + 1);
		jt_pb__uint(b, 2, map->start);
		jt_pb__uint(b, 3, map->limit);
		jt_pb__uint(b, 4, map->offset);
		jt_pb__uint(b, 5, map->file);
		if (map->has_functions)
			jt_pb__uint(b, 7, 1);
		jt_pb__end(b, m);
	}
	free(order);
	return 0;
}

/* The most samples first, then the most time off the CPU. */
static int cmp_samples(const void *a, const void *b, void *ctx)
{
	const struct pprof *p = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (p->counts[x] != p->counts[y])
		return p->counts[x] > p->counts[y] ? -1 : 1;
	if (p->off_ns[x] != p->off_ns[y])
		return p->off_ns[x] > p->off_ns[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Whether the profile has the off_cpu sample type: when the log was recorded with
 * --off-cpu (so that every profile of a recording, each segment's, has the same types,
 * waits or none), or has waits anyway.
 */
static bool has_offcpu(const struct pprof *p)
{
	return (p->src.hdr->flags & JT_LOG_F_OFFCPU) || p->nr_offcpu;
}

static int encode(struct pprof *p, struct jt_pb *b)
{
	const struct jt_log_header *h = p->src.hdr;
	uint32_t hz = h->sample_hz, *map_ids, *order;
	long s_samples = p->s[S_SAMPLES], s_count = p->s[S_COUNT], s_cpu = p->s[S_CPU];
	long s_ns = p->s[S_NS], s_pid = p->s[S_PID], s_tid = p->s[S_TID];
	long s_comm = p->s[S_COMM], s_host = p->s[S_HOST], s_off = 0;
	bool off = has_offcpu(p);
	size_t i, j, k, m, mm, len;

	/*
	 * The heaviest stacks first: pprof meets mappings in the order of its samples and
	 * takes the first program it meets for the main binary.
	 */
	order = malloc((p->samples.n + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < p->samples.n; i++)
		order[i] = i;
	qsort_r(order, p->samples.n, sizeof(*order), cmp_samples, p);
	if (off && (s_off = str_idx(p, "off_cpu")) < 0) {
		free(order);
		return -ENOMEM;
	}
	value_type(b, P_SAMPLE_TYPE, s_samples, s_count);
	value_type(b, P_SAMPLE_TYPE, s_cpu, s_ns);
	if (off)	/* a wait's time off the CPU (0 in CPU samples; samples, cpu 0 in it) */
		value_type(b, P_SAMPLE_TYPE, s_off, s_ns);
	for (i = 0; i < p->samples.n; i++) {
		uint64_t n = p->counts[order[i]];
		const struct skey *k = jt_xintern__key(&p->samples, order[i], &len);
		long state;

		m = jt_pb__begin(b, P_SAMPLE);
		mm = jt_pb__begin(b, 1);		/* location_id, packed */
		for (j = 0; j < k->nr; j++)
			jt_pb__varint(b, k->locs[j]);
		jt_pb__end(b, mm);
		mm = jt_pb__begin(b, 2);		/* value, packed */
		jt_pb__varint(b, n);
		jt_pb__varint(b, cpu_ns(n, hz));
		if (off)
			jt_pb__varint(b, p->off_ns[order[i]]);
		jt_pb__end(b, mm);
		label(b, s_pid, 0, k->pid);
		label(b, s_tid, 0, k->tid);
		if (k->comm)
			label(b, s_comm, k->comm, 0);
		if (k->thread)
			label(b, p->s_thread, k->thread, 0);
		if (k->state) {
			state = str_idx(p, jt_off_state__name(k->state));
			if (state < 0) {
				free(order);
				return -ENOMEM;
			}
			label(b, p->s_state, state, 0);
		}
		jt_pb__end(b, m);
	}
	free(order);
	if (encode_mappings(p, b, &map_ids))
		return -ENOMEM;
	for (i = 0; i < p->locations.n; i++) {
		m = jt_pb__begin(b, P_LOCATION);
		jt_pb__uint(b, 1, i + 1);
		if (p->loc_map[i] != NO_MAP)
			jt_pb__uint(b, 2, map_ids[p->loc_map[i]]);
		if (p->loc_addr[i])
			jt_pb__uint(b, 3, p->loc_addr[i]);
		for (k = 0; k < p->loc_nr_inl[i]; k++) {	/* inlined, innermost first */
			const struct pline *l = &p->inl[p->loc_inl[i] - 1 + k];

			mm = jt_pb__begin(b, 4);
			jt_pb__uint(b, 1, l->func + 1);
			if (l->line)
				jt_pb__uint(b, 2, l->line);
			jt_pb__end(b, mm);
		}
		mm = jt_pb__begin(b, 4);		/* line */
		jt_pb__uint(b, 1, p->loc_func[i] + 1);
		if (p->loc_line[i])
			jt_pb__uint(b, 2, p->loc_line[i]);
		jt_pb__end(b, mm);
		jt_pb__end(b, m);
	}
	free(map_ids);
	for (i = 0; i < p->functions.n; i++) {
		const char *key = jt_xintern__key(&p->functions, i, &len);
		size_t nlen = strlen(key);
		long name = jt_xintern__get(&p->strings, key, nlen, NULL);
		long file = jt_xintern__get(&p->strings, key + nlen + 1, len - nlen - 1, NULL);

		m = jt_pb__begin(b, P_FUNCTION);
		jt_pb__uint(b, 1, i + 1);
		jt_pb__uint(b, 2, name);
		jt_pb__uint(b, 3, name);
		jt_pb__uint(b, 4, file);
		if (p->func_start[i])
			jt_pb__uint(b, 5, p->func_start[i]);
		jt_pb__end(b, m);
	}
	for (i = 0; i < p->strings.n; i++) {
		const char *s = jt_xintern__key(&p->strings, i, &len);

		jt_pb__bytes(b, P_STRING_TABLE, s, len);
	}
	jt_pb__uint(b, P_TIME_NANOS, h->start_ns + h->realtime_offset_ns);
	jt_pb__uint(b, P_DURATION_NANOS, jt_logsrc__rel(&p->src, p->src.last_ts));
	value_type(b, P_PERIOD_TYPE, s_cpu, s_ns);
	jt_pb__uint(b, P_PERIOD, cpu_ns(1, hz));
	m = jt_pb__begin(b, P_COMMENT);
	jt_pb__varint(b, s_host);
	jt_pb__end(b, m);
	/*
	 * Samples by default: `go tool pprof` then prints the counts report has. A sample is
	 * 1e9 / Hz ns of CPU, rarely whole: at 999 Hz, 1.001001 ms, so durations would read
	 * "2749.75ms" for 2747 samples; -sample_index=cpu shows them.
	 */
	jt_pb__uint(b, P_DEFAULT_SAMPLE_TYPE, s_samples);
	return b->err;
}

/* gzip (windowBits 31: a gzip header and trailer) straight into out. */
static int gzip_to(FILE *out, const struct jt_pb *b, const char *what)
{
	unsigned char chunk[64 * 1024];
	z_stream zs = { 0 };
	int zerr, ret = 0;
	size_t n;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY)) {
		jt_err("%s: zlib: cannot start compressing", what);
		return -1;
	}
	zs.next_in = b->buf;
	zs.avail_in = b->len;	/* a profile is far below 4 GiB */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zerr = deflate(&zs, Z_FINISH);
		n = sizeof(chunk) - zs.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n) {
			jt_err("%s: writing the profile: %s", what, strerror(errno ? errno : EIO));
			ret = -1;
			break;
		}
	} while (zerr == Z_OK);
	if (!ret && zerr != Z_STREAM_END) {
		jt_err("%s: zlib: %s", what, zs.msg ? zs.msg : "compression failed");
		ret = -1;
	}
	deflateEnd(&zs);
	if (!ret && fflush(out)) {
		jt_err("%s: writing the profile: %s", what, strerror(errno));
		ret = -1;
	}
	return ret;
}

int jt_export_pprof(FILE *out, const char *path, const struct jt_filter *filter)
{
	struct pprof p = { .special = { -1, -1, -1 }, .short_loc = -1 };
	const struct jt_rec_hdr *rec;
	struct jt_pb b = { 0 };
	size_t pos = 0;
	uint64_t key;
	int ret = 1;
	void *val;
	bool kept;

	if (jt_logsrc__open(&p.src, path, filter))
		return 1;
	p.key = malloc(sizeof(*p.key) + UINT16_MAX * sizeof(p.key->locs[0]));
	if (!p.key || fixed_strings(&p))
		goto nomem;
	while ((rec = jt_logsrc__next(&p.src, &kept))) {
		if (define(&p, rec) ||
		    (kept && rec->type == JT_REC_SAMPLE && add_stack(&p, (const void *)rec, 0, 0)) ||
		    (kept && rec->type == JT_REC_OFFCPU && add_wait(&p, (const void *)rec)))
			goto nomem;
	}
	if (jt_logsrc__finish(&p.src, "exported"))
		goto cleanup;
	if (encode(&p, &b))
		goto nomem;
	if (!p.nr_samples && !p.nr_offcpu)
		jt_err("%s: no samples%s to export%s", path,
		       has_offcpu(&p) ? " or off-CPU waits" : "",
		       p.src.filtered ? " (the filter left none)" : "");
	ret = gzip_to(out, &b, path) ? 1 : 0;
	goto cleanup;
nomem:
	jt_err("%s: out of memory", path);
cleanup:
	jt_pb__fini(&b);
	free(p.key);
	free(p.loc_addr);
	free(p.loc_func);
	free(p.loc_line);
	free(p.loc_inl);
	free(p.loc_nr_inl);
	free(p.inl);
	free(p.loc_map);
	free(p.maps);
	free(p.func_start);
	while (jt_hash__next(&p.mods, &pos, &key, &val))
		mod_free(val);
	jt_hash__fini(&p.mods);
	jt_hash__fini_free(&p.syms);
	free(p.counts);
	free(p.off_ns);
	jt_xintern__fini(&p.strings);
	jt_xintern__fini(&p.functions);
	jt_xintern__fini(&p.locations);
	jt_xintern__fini(&p.samples);
	jt_logsrc__close(&p.src);
	return ret;
}
