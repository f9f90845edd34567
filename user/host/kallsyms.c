// SPDX-License-Identifier: GPL-2.0
/* Kernel text symbols: /proc/kallsyms read once, sorted, searched by address. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/kallsyms.h"

#define KSYM_LINE_MAX 512

struct jt_kallsyms {
	struct jt_ksym *v;	/* sorted by addr; names owned */
	size_t n, cap;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct jt_ksym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

void jt_kallsyms__free(struct jt_kallsyms *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->n; i++)
		free((char *)k->v[i].name);
	free(k->v);
	free(k);
}

/* One "ADDR TYPE NAME [MODULE]" line; text symbols are kept. */
static int add_line(struct jt_kallsyms *k, char *line)
{
	char *type, *name, *end, *nl;
	unsigned long long addr;
	struct jt_ksym *v;

	addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	type = end + 1;
	if ((*type != 't' && *type != 'T') || type[1] != ' ')
		return 0;
	name = type + 2;
	nl = strchr(name, '\n');
	if (nl)
		*nl = '\0';
	for (end = name; *end; end++)	/* "name\t[module]" -> "name [module]" */
		if (*end == '\t')
			*end = ' ';
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;

		v = realloc(k->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	name = strdup(name);
	if (!name)
		return -ENOMEM;
	k->v[k->n++] = (struct jt_ksym){ addr, name };
	return 0;
}

struct jt_kallsyms *jt_kallsyms__load(const char *path, int *err)
{
	struct jt_kallsyms *k = calloc(1, sizeof(*k));
	char line[KSYM_LINE_MAX];
	bool any_addr = false;
	FILE *f;
	size_t i;

	*err = -ENOMEM;
	if (!k)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		*err = -errno;
		free(k);
		return NULL;
	}
	*err = 0;
	while (!*err && fgets(line, sizeof(line), f))
		*err = add_line(k, line);
	fclose(f);
	for (i = 0; i < k->n && !any_addr; i++)
		any_addr = k->v[i].addr != 0;
	if (!*err && !any_addr)
		*err = k->n ? -EPERM : -ENOENT;
	if (*err) {
		jt_kallsyms__free(k);
		return NULL;
	}
	qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	return k;
}

const struct jt_ksym *jt_kallsyms__find(const struct jt_kallsyms *k, uint64_t addr,
					 size_t *idx)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || lo == k->n)	/* below the first, or past the last: not text we know */
		return NULL;
	*idx = lo - 1;
	return &k->v[lo - 1];
}
