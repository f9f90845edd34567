// SPDX-License-Identifier: GPL-2.0
/*
 * Native and kernel names: ELF symbols by file offset (of this very test program),
 * kallsyms from a fixture, demangling, the per-file cache, and the collector naming a
 * sample's frames from them through a /proc tree built here.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>
#include <libelf.h>

#include "capture.h"
#include "join/collector.h"
#include "host/elfsyms.h"
#include "jt_events.h"
#include "host/kallsyms.h"
#include "host/symbols.h"

#define KALLSYMS "tests/fixtures/kallsyms/kallsyms"
#define PID 4321

/* Functions to find by address; noinline and used so that each keeps its own symbol. */
__attribute__((noinline, used)) int jt_test_marker_one(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int jt_test_marker_two(int x)
{
	return x * 5 + 2;
}

struct mapping {
	uint64_t start, end, pgoff;
	char line[512];
};

/* The executable mapping of this program that holds addr, from /proc/self/maps. */
static void find_mapping(uint64_t addr, struct mapping *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;

		if (sscanf(line, "%llx-%llx %*s %llx", &s, &e, &off) == 3 && addr >= s &&
		    addr < e) {
			*m = (struct mapping){ .start = s, .end = e, .pgoff = off };
			snprintf(m->line, sizeof(m->line), "%s", line);
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no mapping holds %llx", (unsigned long long)addr);
}

static uint64_t file_off(const void *fn)
{
	struct mapping m;

	find_mapping((uintptr_t)fn, &m);
	return (uintptr_t)fn - m.start + m.pgoff;
}

/* This program's own symbols, from its file. */
static struct jt_elfsyms *own_symbols(void)
{
	struct jt_elfsyms *es;
	int fd, err;

	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	es = jt_elfsyms__load(fd, -1, &err);
	close(fd);
	assert_non_null(es);
	return es;
}

static void elf_symbols_are_found_by_file_offset(void **state)
{
	uint64_t one = file_off((const void *)jt_test_marker_one);
	uint64_t two = file_off((const void *)jt_test_marker_two);
	const struct jt_sym *s;
	struct jt_elfsyms *es;
	size_t idx, idx2;

	(void)state;
	es = own_symbols();
	assert_true(jt_elfsyms__count(es) > 10);

	s = jt_elfsyms__find(es, one, &idx);
	assert_non_null(s);
	assert_string_equal(s->name, "jt_test_marker_one");
	assert_int_equal(s->start, one);
	assert_true(s->size > 0);
	s = jt_elfsyms__find(es, one + s->size - 1, &idx2);	/* its last byte */
	assert_non_null(s);
	assert_int_equal(idx2, idx);
	s = jt_elfsyms__find(es, two + 1, &idx2);
	assert_non_null(s);
	assert_string_equal(s->name, "jt_test_marker_two");
	assert_int_not_equal(idx2, idx);
	assert_null(jt_elfsyms__find(es, 0, &idx));	/* the ELF header: no function */
	jt_elfsyms__free(es);
}

/* An entry point written in assembly: a label of no type in .text, as ld.so's _dl_start_user. */
void jt_test_label(void);
extern char jt_test_data_label[];
__asm__(".text\n"
	".globl jt_test_label\n"
	"jt_test_label:\n"
	"	nop\n"
	"	ret\n"
	".data\n"
	".globl jt_test_data_label\n"
	"jt_test_data_label:\n"
	"	.quad 0\n"
	".text\n");

static void code_labels_are_symbols_data_labels_are_not(void **state)
{
	uint64_t at = file_off((const void *)jt_test_label);
	const struct jt_sym *s;
	struct jt_elfsyms *es;
	size_t idx;

	(void)state;
	es = own_symbols();
	s = jt_elfsyms__find(es, at + 1, &idx);
	assert_non_null(s);
	assert_string_equal(s->name, "jt_test_label");
	/* a label in data is no code symbol: whatever holds its offset, it is not it */
	s = jt_elfsyms__find(es, file_off(jt_test_data_label), &idx);
	assert_true(!s || strcmp(s->name, "jt_test_data_label"));
	jt_elfsyms__free(es);
}

/* The file offset of address vaddr of the ELF file at fd, by its loadable segments. */
static uint64_t vaddr_to_off(int fd, uint64_t vaddr)
{
	Elf *elf;
	size_t i, n;

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_memsz) {
			elf_end(elf);
			return vaddr - ph.p_vaddr + ph.p_offset;
		}
	}
	elf_end(elf);
	fail_msg("no segment holds %llx", (unsigned long long)vaddr);
	return 0;
}

/*
 * PLT entries are named by what they call, as objdump names them ("free@plt"), in this
 * program and in the C library (whose .rela.plt holds IFUNC relocations too, without a
 * name, which count in the numbering all the same); every entry objdump names, at each of
 * its first and last bytes. _init, which only .symtab names, is found by its section in a
 * stripped library (libgcc_s: .init at 0x3000, 0x17 bytes, no .symtab).
 */
static void plt_entries_are_named_as_objdump_names_them(void **state)
{
	char self[4096] = "";
	const char *files[] = { self, "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	const struct jt_sym *s;
	struct jt_elfsyms *es;
	size_t f, idx;
	int fd, err;

	(void)state;
	/* by its path: objdump's own /proc/self/exe is objdump */
	assert_true(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
	for (f = 0; f < 2; f++) {
		char cmd[256], line[512], name[256];
		unsigned int checked = 0, entry = 16;
		unsigned long long at;
		FILE *p;

		fd = open(files[f], O_RDONLY);
		assert_true(fd >= 0);
		es = jt_elfsyms__load(fd, -1, &err);
		assert_non_null(es);
		snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got %s",
			 files[f]);
		p = popen(cmd, "r");
		assert_non_null(p);
		while (fgets(line, sizeof(line), p)) {
			uint64_t off;
			unsigned int k;

			if (!strncmp(line, "Disassembly of section ", 23))
				entry = strstr(line, ".plt.got") ? 8 : 16;
			/* not the header ("<first@plt-0x10>"), nor an IFUNC's ("*ABS*+0x...@plt") */
			if (sscanf(line, "%llx <%255[^>]>:", &at, name) != 2 ||
			    strlen(name) < 4 || strcmp(name + strlen(name) - 4, "@plt") ||
			    !strncmp(name, "*ABS*", 5))
				continue;
			off = vaddr_to_off(fd, at);
			for (k = 0; k < entry; k += entry - 1) {
				s = jt_elfsyms__find(es, off + k, &idx);
				if (!s)
					fail_msg("%s: nothing names %s at %llx", files[f], name, at + k);
				assert_string_equal(s->name, name);
			}
			checked++;
		}
		assert_int_equal(pclose(p), 0);
		printf("%s: %u PLT entries named as objdump names them\n", files[f], checked);
		assert_true(checked >= 10);
		jt_elfsyms__free(es);
		close(fd);
	}
	fd = open("/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", O_RDONLY);
	assert_true(fd >= 0);
	es = jt_elfsyms__load(fd, -1, &err);
	assert_non_null(es);
	s = jt_elfsyms__find(es, 0x3000 + 0x16, &idx);
	assert_non_null(s);
	assert_string_equal(s->name, "_init");
	jt_elfsyms__free(es);
	close(fd);
}

static void non_elf_files_have_no_symbols(void **state)
{
	char path[] = "/tmp/jt-symbols-XXXXXX";
	int fd = mkstemp(path), err = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_null(jt_elfsyms__load(fd, -1, &err));	/* empty */
	assert_int_equal(err, -ENOEXEC);
	assert_int_equal(write(fd, "\177ELF garbage that is not an ELF file", 36), 36);
	assert_null(jt_elfsyms__load(fd, -1, &err));
	assert_int_equal(err, -ENOEXEC);
	close(fd);
	unlink(path);
}

static void kallsyms_keeps_text_and_finds_by_address(void **state)
{
	struct jt_kallsyms *k;
	const struct jt_ksym *s;
	size_t idx;
	int err;

	(void)state;
	k = jt_kallsyms__load(KALLSYMS, &err);
	assert_non_null(k);
	s = jt_kallsyms__find(k, 0xffffffff81000090ULL, &idx);
	assert_non_null(s);
	assert_string_equal(s->name, "entry_SYSCALL_64");
	/* data symbols are skipped: 0x150 is still in entry_SYSCALL_64 */
	s = jt_kallsyms__find(k, 0xffffffff81000150ULL, &idx);
	assert_string_equal(s->name, "entry_SYSCALL_64");
	s = jt_kallsyms__find(k, 0xffffffff81000200ULL, &idx);
	assert_string_equal(s->name, "do_thing");
	s = jt_kallsyms__find(k, 0xffffffffc0001010ULL, &idx);
	assert_string_equal(s->name, "mod_func [ext4]");
	assert_null(jt_kallsyms__find(k, 0xffffffff80000000ULL, &idx));	/* below text */
	assert_null(jt_kallsyms__find(k, 0xffffffffc0002010ULL, &idx));	/* past the last */
	jt_kallsyms__free(k);

	assert_null(jt_kallsyms__load("tests/fixtures/kallsyms/hidden", &err));
	assert_int_equal(err, -EPERM);
	assert_null(jt_kallsyms__load("tests/fixtures/kallsyms/absent", &err));
	assert_int_equal(err, -ENOENT);
}

static void cxx_names_are_demangled(void **state)
{
	struct jt_symbols *s = jt_symbols__new("/proc");
	char buf[256], small[16];
	const char *n;

	(void)state;
	assert_non_null(s);
	n = jt_symbols__demangle(s, "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandle"
				    "P17JavaCallArgumentsP10JavaThread", buf, sizeof(buf));
	assert_string_equal(n, "JavaCalls::call_helper(JavaValue*, methodHandle const&, "
			       "JavaCallArguments*, JavaThread*)");
	assert_string_equal(jt_symbols__demangle(s, "memcpy", buf, sizeof(buf)), "memcpy");
	assert_string_equal(jt_symbols__demangle(s, "_Znot valid", buf, sizeof(buf)),
			    "_Znot valid");
	n = jt_symbols__demangle(s, "_ZN3foo3barEv", small, sizeof(small));
	assert_string_equal(n, "foo::bar()");
	n = jt_symbols__demangle(s, "_ZN9JavaCalls11call_helperEv", small, sizeof(small));
	assert_string_equal(n, "JavaCalls::call");	/* cut to fit */
	jt_symbols__free(s);
}

/* A /proc tree for pid PID (and PID+1): this program's mapping and the kallsyms fixture. */
struct tree {
	char root[64];
	struct mapping m;
};

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void tree_pid(struct tree *t, int pid)
{
	char path[256], link[256];

	snprintf(path, sizeof(path), "%s/%d", t->root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", t->root, pid);
	put_file(path, t->m.line);
	snprintf(path, sizeof(path), "%s/%d/map_files", t->root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(link, sizeof(link), "%s/%d/map_files/%llx-%llx", t->root, pid,
		 (unsigned long long)t->m.start, (unsigned long long)t->m.end);
	assert_int_equal(symlink("/proc/self/exe", link), 0);
	snprintf(path, sizeof(path), "%s/%d/comm", t->root, pid);
	put_file(path, "symtest\n");
	snprintf(path, sizeof(path), "%s/%d/cmdline", t->root, pid);
	put_file(path, "symtest");
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char cmd[512];

	assert_non_null(t);
	snprintf(t->root, sizeof(t->root), "/tmp/jt-symtree-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	find_mapping((uintptr_t)jt_test_marker_one, &t->m);
	tree_pid(t, PID);
	tree_pid(t, PID + 1);
	snprintf(cmd, sizeof(cmd), "cp %s %s/kallsyms", KALLSYMS, t->root);
	assert_int_equal(system(cmd), 0);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->root);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void one_file_is_read_once_for_every_process(void **state)
{
	struct tree *t = *state;
	struct jt_symbols *s = jt_symbols__new(t->root);
	const struct jt_file_info *a, *b;

	assert_non_null(s);
	a = jt_symbols__file(s, PID, t->m.start, t->m.end);
	b = jt_symbols__file(s, PID + 1, t->m.start, t->m.end);
	assert_non_null(a);
	assert_non_null(a->syms);
	assert_ptr_equal(a, b);
	assert_null(jt_symbols__file(s, PID + 2, t->m.start, t->m.end));	/* no such pid */
	assert_non_null(jt_symbols__kernel(s));
	jt_symbols__free(s);
}

static const struct jt_rec_hdr *find_rec(const struct capture *cap, unsigned type, size_t k)
{
	size_t i;

	for (i = 0; i < cap->n; i++)
		if (cap->recs[i]->type == type && !k--)
			return cap->recs[i];
	return NULL;
}

static void collector_names_native_and_kernel_frames(void **state)
{
	struct tree *t = *state;
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_collector_opts o = { .proc_root = t->root };
	struct jt_collector *c = jt_collector__new(&o, &sink);
	uint64_t one = (uintptr_t)jt_test_marker_one, two = (uintptr_t)jt_test_marker_two;
	/* kernel leaf, kernel return address, user leaf, a return address into one */
	__u64 ips[] = { 0xffffffff81000090ULL, 0xffffffff81000201ULL, two + 2, one + 1,
			0x1000 };
	union jt_event_buf b = { .ev = { .ts = 100, .len = jt_event__size(sizeof(ips)),
					 .type = JT_EV_SAMPLE, .pid = PID, .tid = PID,
					 .nr_kernel = 2, .nr_user = 3 } };
	struct jt_event *ev = &b.ev;
	const struct jt_rec_symbol *sym[4];
	const struct jt_rec_sample *smp;
	const struct jt_rec_module *mod;
	size_t i;

	assert_non_null(c);
	memcpy(ev->tail, ips, sizeof(ips));
	assert_int_equal(jt_collector__event(c, ev), 0);
	ev->ts = 200;
	assert_int_equal(jt_collector__event(c, ev), 0);	/* defined once */

	for (i = 0; i < 4; i++) {
		sym[i] = (const void *)find_rec(&cap, JT_REC_SYMBOL, i);
		assert_non_null(sym[i]);
	}
	assert_null(find_rec(&cap, JT_REC_SYMBOL, 4));
	mod = (const void *)find_rec(&cap, JT_REC_MODULE, 0);
	assert_non_null(mod);
	smp = (const void *)find_rec(&cap, JT_REC_SAMPLE, 0);
	assert_non_null(smp);
	assert_int_equal(smp->nr_frames, 5);

	/* kernel: names from kallsyms, pid and module 0 */
	assert_memory_equal(sym[0]->name, "entry_SYSCALL_64", sym[0]->name_len);
	assert_int_equal(sym[0]->module, 0);
	assert_int_equal(sym[0]->size, 0x180);	/* up to the next text symbol */
	assert_memory_equal(sym[1]->name, "do_thing", sym[1]->name_len);
	assert_int_equal(smp->frames[0].ref, JT_FRAME_REF(JT_FRAME_SYMBOL, sym[0]->id));
	assert_int_equal(smp->frames[0].off, 0x10);
	assert_int_equal(smp->frames[1].off, 1);
	/* native: the leaf inside two, then the return address just past one's start */
	assert_int_equal(sym[2]->module, mod->id);
	assert_int_equal(sym[2]->pid, PID);
	assert_memory_equal(sym[2]->name, "jt_test_marker_two", sym[2]->name_len);
	assert_int_equal(smp->frames[2].ref, JT_FRAME_REF(JT_FRAME_SYMBOL, sym[2]->id));
	assert_int_equal(smp->frames[2].off, 2);
	assert_memory_equal(sym[3]->name, "jt_test_marker_one", sym[3]->name_len);
	assert_int_equal(sym[3]->start, file_off((const void *)jt_test_marker_one));
	assert_int_equal(smp->frames[3].off, 1);
	/* a caller nothing maps: the walk went astray there, cut and said how much */
	assert_int_equal(smp->frames[4].ref, JT_FRAME_REF(JT_FRAME_TRUNCATED, 0));
	assert_int_equal(smp->frames[4].off, 1);
	/* definitions precede the sample that uses them */
	assert_true((const void *)find_rec(&cap, JT_REC_SYMBOL, 3) != NULL);
	for (i = 0; i < cap.n && cap.recs[i]->type != JT_REC_SAMPLE; i++)
		;
	assert_true(i > 0);
	for (; i < cap.n; i++)
		assert_int_not_equal(cap.recs[i]->type, JT_REC_SYMBOL);

	jt_collector__free(c);
	for (i = 0; i < cap.n; i++)
		free(cap.recs[i]);
	free(cap.recs);
}

/* Where main returns to: inside libc's __libc_start_call_main, a symbol only its debug file has */
static uintptr_t main_caller;

static void stripped_library_is_named_from_its_debug_file(void **state)
{
	struct jt_symbols *s = jt_symbols__new("/proc");
	const struct jt_file_info *file;
	const struct jt_elfsyms *syms;
	const struct jt_sym *sym;
	struct mapping m;
	size_t idx;

	(void)state;
	assert_non_null(s);
	find_mapping(main_caller, &m);
	file = jt_symbols__file(s, getpid(), m.start, m.end);
	assert_non_null(file);
	syms = file->syms;
	assert_non_null(syms);
	sym = jt_elfsyms__find(syms, main_caller - m.start + m.pgoff - 1, &idx);
	assert_non_null(sym);
	print_message("main returns into %s (%s)\n", sym->name, strchr(m.line, '/'));
	assert_string_equal(sym->name, "__libc_start_call_main");
	jt_symbols__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stripped_library_is_named_from_its_debug_file),
		cmocka_unit_test(elf_symbols_are_found_by_file_offset),
		cmocka_unit_test(code_labels_are_symbols_data_labels_are_not),
		cmocka_unit_test(non_elf_files_have_no_symbols),
		cmocka_unit_test(plt_entries_are_named_as_objdump_names_them),
		cmocka_unit_test(kallsyms_keeps_text_and_finds_by_address),
		cmocka_unit_test(cxx_names_are_demangled),
		cmocka_unit_test_setup_teardown(one_file_is_read_once_for_every_process,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(collector_names_native_and_kernel_frames,
						tree_setup, tree_teardown),
	};

	main_caller = (uintptr_t)__builtin_return_address(0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
