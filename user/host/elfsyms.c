// SPDX-License-Identifier: GPL-2.0
/*
 * Function symbols of an ELF file by file offset. A sample's native frame is a file
 * offset (address - mapping start + mapping offset), so each symbol's address is turned
 * into the offset of the loadable segment that holds it, once, at load.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host/elfsyms.h"
#include "base/util.h"

struct jt_elfsyms {
	struct jt_sym *v;	/* sorted by start, one per start */
	size_t n;
	char *names;		/* every name, NUL-terminated, back to back */
};

struct seg {
	uint64_t vaddr, memsz, offset;
};

struct raw {
	uint64_t start, size;
	size_t name;		/* offset into the names arena */
	int global;
	int label;		/* a code label (STT_NOTYPE), not a function */
};

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->label != y->label)	/* an alias: a function before a label, */
		return x->label - y->label;
	if (x->global != y->global)	/* the global name first */
		return y->global - x->global;
	return (x->size < y->size) - (x->size > y->size);	/* then the one with a size */
}

/* The loadable segments, to turn addresses into file offsets. */
static int read_segs(Elf *elf, struct seg **out, size_t *nr)
{
	size_t i, n, k = 0;
	struct seg *v;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		v[k++] = (struct seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
	}
	*out = v;
	*nr = k;
	return 0;
}

static bool to_offset(const struct seg *segs, size_t nr, uint64_t addr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (addr >= segs[i].vaddr && addr - segs[i].vaddr < segs[i].memsz) {
			*off = addr - segs[i].vaddr + segs[i].offset;
			return true;
		}
	return false;
}

struct collect {
	struct raw *raw;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

/*
 * Whether section shndx holds code. An assembly entry point is often a label of no type
 * there (ld.so's _dl_start_user), which perf names too; a label elsewhere is data.
 */
static bool in_code(Elf *elf, size_t shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* One symbol at file offset off, named name and then suffix. */
static int add_raw(struct collect *c, uint64_t off, uint64_t size, const char *name,
		   const char *suffix, int global, int label)
{
	size_t len = strlen(name), slen = strlen(suffix);

	if (jt_array_grow(&c->raw, &c->cap, c->n + 1, sizeof(*c->raw)) ||
	    jt_array_grow(&c->names, &c->names_cap, c->names_len + len + slen + 1, 1))
		return -ENOMEM;
	c->raw[c->n++] = (struct raw){ off, size, c->names_len, global, label };
	memcpy(c->names + c->names_len, name, len);
	memcpy(c->names + c->names_len + len, suffix, slen + 1);
	c->names_len += len + slen + 1;
	return 0;
}

static int collect_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			   const struct seg *segs, size_t nsegs, struct collect *c)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		uint64_t off;
		int type;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(type == STT_NOTYPE && in_code(elf, sym.st_shndx))) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name || !to_offset(segs, nsegs, sym.st_value, &off))
			continue;
		if (add_raw(c, off, sym.st_size, name, "", GELF_ST_BIND(sym.st_info) != STB_LOCAL,
			    type == STT_NOTYPE))
			return -ENOMEM;
	}
	return 0;
}

/* A GOT slot a PLT entry jumps through, and the function the loader puts there. */
struct got_slot {
	uint64_t got;
	const char *name;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return (x->got > y->got) - (x->got < y->got);
}

/* The slots that relocation section scn fills with a function's address (by name). */
static int collect_slots(Elf *elf, Elf_Scn *scn, struct got_slot **v, size_t *n, size_t *cap)
{
	Elf_Data *rdata = elf_getdata(scn, NULL), *sdata;
	GElf_Shdr sh, dyn_sh;
	Elf_Scn *dyn;
	size_t i, nr;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !rdata ||
	    !(dyn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(dyn, &dyn_sh) ||
	    !(sdata = elf_getdata(dyn, NULL)))
		return 0;
	nr = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < nr; i++) {
		const char *name;
		GElf_Rela r;
		GElf_Sym sym;

		if (!gelf_getrela(rdata, i, &r))
			break;
		if ((GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
		     GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT) || !GELF_R_SYM(r.r_info) ||
		    !gelf_getsym(sdata, GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(elf, dyn_sh.sh_link, sym.st_name)) || !*name)
			continue;
		if (jt_array_grow(v, cap, *n + 1, sizeof(**v)))
			return -ENOMEM;
		(*v)[(*n)++] = (struct got_slot){ r.r_offset, name };
	}
	return 0;
}

/* Each entry of a PLT section that jumps through a named GOT slot (jmp *disp32(%rip)). */
static int name_entries(Elf_Scn *scn, const GElf_Shdr *sh, const struct got_slot *slots,
			size_t nslots, const struct seg *segs, size_t nsegs, struct collect *c)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t es = sh->sh_entsize >= 8 ? sh->sh_entsize : 16, at, off;
	const uint8_t *b;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0;
	b = data->d_buf;
	for (at = 0; at + es <= sh->sh_size; at += es) {
		struct got_slot key, *slot;
		uint64_t k;
		int32_t disp;

		for (k = 0; k + 6 <= es && !(b[at + k] == 0xff && b[at + k + 1] == 0x25); k++)
			;
		if (k + 6 > es)
			continue;	/* a header, or a lazy stub that jumps back to it */
		memcpy(&disp, b + at + k + 2, 4);
		key.got = sh->sh_addr + at + k + 6 + (int64_t)disp;
		slot = bsearch(&key, slots, nslots, sizeof(*slots), cmp_slot);
		if (slot && to_offset(segs, nsegs, sh->sh_addr + at, &off) &&
		    add_raw(c, off, es, slot->name, "@plt", 0, 1))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The PLT's entries by the functions they call, as perf and objdump name them ("free@plt"):
 * each entry of .plt, .plt.sec (IBT) and .plt.got jumps through a GOT slot that a
 * relocation fills with a named function. And _init and _fini by their sections, which a
 * stripped file keeps though their symbols are gone. A real symbol at the same place wins
 * (these count as labels).
 */
static int collect_plt(Elf *elf, const struct seg *segs, size_t nsegs, struct collect *c)
{
	struct got_slot *slots = NULL;
	size_t shstrndx, nslots = 0, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	uint64_t off;
	int err = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA)
			err = collect_slots(elf, scn, &slots, &nslots, &cap);
	if (nslots)
		qsort(slots, nslots, sizeof(*slots), cmp_slot);
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(name, ".plt", 4) && nslots)
			err = name_entries(scn, &sh, slots, nslots, segs, nsegs, c);
		else if ((!strcmp(name, ".init") || !strcmp(name, ".fini")) &&
			 to_offset(segs, nsegs, sh.sh_addr, &off))
			err = add_raw(c, off, sh.sh_size, name[1] == 'i' ? "_init" : "_fini", "",
				      0, 1);
	}
	free(slots);
	return err;
}

/* Sorted, one symbol per start, into s. */
static int finish(struct collect *c, struct jt_elfsyms *s)
{
	size_t i, k = 0;

	if (c->n)	/* c->raw is NULL for a file without symbols: not for qsort */
		qsort(c->raw, c->n, sizeof(*c->raw), cmp_raw);
	s->v = calloc(c->n, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		if (k && s->v[k - 1].start == c->raw[i].start)
			continue;	/* an alias (or .dynsym repeating .symtab) */
		s->v[k++] = (struct jt_sym){ c->raw[i].start, c->raw[i].size,
					     c->names + c->raw[i].name };
	}
	s->n = k;
	s->names = c->names;
	c->names = NULL;
	return 0;
}

/* Every symbol section of elf into c, at offsets given by segs. */
static int collect_file(Elf *elf, const struct seg *segs, size_t nsegs, struct collect *c)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		err = collect_section(elf, scn, &sh, segs, nsegs, c);
		if (err)
			return err;
	}
	return 0;
}

static Elf *open_elf(int fd)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

struct jt_elfsyms *jt_elfsyms__load(int fd, int debug_fd, int *err)
{
	struct collect c = { 0 };
	struct jt_elfsyms *s = NULL;
	struct seg *segs = NULL;
	Elf *elf, *dbg = NULL;
	size_t nsegs;

	*err = -ENOEXEC;
	elf = open_elf(fd);
	if (!elf)
		return NULL;
	/* a debug file's segments have no file offsets: the file's own are used for both */
	*err = read_segs(elf, &segs, &nsegs) ?: collect_file(elf, segs, nsegs, &c) ?:
	       collect_plt(elf, segs, nsegs, &c);
	if (!*err && debug_fd >= 0) {
		dbg = open_elf(debug_fd);
		if (dbg)
			*err = collect_file(dbg, segs, nsegs, &c);
	}
	if (*err)
		goto out;
	*err = -ENOEXEC;
	if (!c.n)
		goto out;
	*err = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	*err = finish(&c, s);
	if (*err) {
		free(s);
		s = NULL;
	}
out:
	free(c.raw);
	free(c.names);
	free(segs);
	elf_end(dbg);
	elf_end(elf);
	return s;
}

size_t jt_elfsyms__build_id(int fd, char *hex, size_t cap)
{
	Elf *elf = open_elf(fd);
	Elf_Scn *scn = NULL;
	size_t n = 0;

	while (elf && !n && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off, i;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    2 * nh.n_descsz + 1 > cap)
				continue;
			for (i = 0; i < nh.n_descsz; i++) {
				hex[2 * i] = "0123456789abcdef"[desc[i] >> 4];
				hex[2 * i + 1] = "0123456789abcdef"[desc[i] & 15];
			}
			hex[2 * i] = '\0';
			n = nh.n_descsz;
			break;
		}
	}
	elf_end(elf);
	return n;
}

void jt_elfsyms__free(struct jt_elfsyms *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->names);
	free(s);
}

const struct jt_sym *jt_elfsyms__find(const struct jt_elfsyms *s, uint64_t off, size_t *idx)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {	/* the first symbol starting after off */
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	if (s->v[lo].size && off - s->v[lo].start >= s->v[lo].size)
		return NULL;	/* in a gap between functions */
	*idx = lo;
	return &s->v[lo];
}

size_t jt_elfsyms__count(const struct jt_elfsyms *s)
{
	return s->n;
}
