/* Symbolization of user addresses with libdw: function (demangled), source
 * file and line, and the chain of inlined calls at an address.
 *
 * One Dwfl per ELF file, reported at bias 0, so a module is queried in ELF
 * virtual addresses and serves every process that maps the file, wherever
 * it was loaded.  Separate debug info is found by build-id, .gnu_debuglink
 * or debuginfod (record/stacks/debuginfo.h).  Code the symbol tables do not
 * cover is named by its function's .eh_frame range (fde_ranges.h).  Each
 * address is resolved once: the caller (record/stacks/stacks.c) caches the
 * frames it made of the result, and the answers are kept by build-id for
 * the next recordings (symcache.h), which then need no table at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>

#include "record/stacks/debug_cache.h"
#include "record/stacks/debuginfo.h"
#include "record/stacks/debuginfod.h"
#include "record/stacks/fde_ranges.h"
#include "record/stacks/cache_dir.h"
#include "record/stacks/scopes.h"
#include "record/stacks/symcache.h"
#include "record/stacks/symtab.h"
#include "record/stacks/demangle_rust.h"
#include "record/stacks/gosym.h"
#include "record/stacks/intern.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind_rules.h"
#include "record/stacks/vdso.h"

/* From libstdc++ (the C++ ABI); declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

struct load {
	uint64_t offset, filesz, vaddr;
};

struct nsk_module {
	char *path;
	const char *name;
	uint64_t serial;
	Dwfl *dwfl;
	Dwfl_Module *dwmod;
	GElf_Addr bias;
	struct load *loads;
	size_t nloads;
	int fd; /* the file, kept open for the DWARF unwinder; -1 if none */
	uint8_t build_id[64];
	size_t build_id_len;
	struct nsk_gosym *go; /* Go's own pc-line table, NULL if none */
	char *scratch[NSK_SYMLOC_MAX]; /* demangled names of the last call */
	struct nsk_debuginfo di; /* libdwfl's userdata for the module */
	int has_symtab;		 /* in the file itself */
	struct nsk_fde_ranges *fde; /* loaded on first need */
	int fde_tried;
	struct nsk_symtab *symtab; /* sorted symbols, on first need */
	int symtab_tried;
	struct nsk_scopes *scopes; /* each unit's code ranges, on first need */
	struct nsk_symbols *owner;
	struct nsk_symcache *answers; /* kept by build-id, on first need */
	int answers_tried;
	unsigned answers_from; /* NSK_SYMCACHE_* */
	int uncacheable; /* the last answer names the module: not kept */
	int answered_without_dwarf; /* an answer kept while it had none */
	struct nsk_unwind_rules *rules; /* by vaddr, on first need */
	int rules_tried;
};

struct nsk_symbols {
	struct nsk_intern *index; /* path + ino -> 1 + index in mods */
	struct nsk_module **mods;
	size_t n;
	struct nsk_debuginfod *dbgd; /* NULL: DEBUGINFOD_URLS unset */
	struct nsk_debug_cache *cache; /* NULL: the cache is off */
	int answers_dir; /* the cache's symbols/, -1 off (symcache.h) */
	uint64_t answered; /* addresses answered from there */
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = nsk_debuginfo__find,
	.section_address = dwfl_offline_section_address,
};

char *nsk_demangle(const char *name)
{
	int status = -1;
	char *d = nsk_demangle_rust(name);

	/* Rust's legacy names are Itanium-shaped: asked first, so they do
	 * not come out with their $LT$ escapes and hash */
	if (d)
		return d;
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

int nsk_symbols__new(struct nsk_symbols **out)
{
	struct nsk_symbols *s = calloc(1, sizeof(*s));
	char path[4096], why[256];

	if (!s || !(s->index = nsk_intern__new())) {
		free(s);
		return -ENOMEM;
	}
	s->dbgd = nsk_debuginfod__new();
	s->cache = nsk_debug_cache__open();
	s->answers_dir = nsk_cache_dir__open("symbols", path, sizeof(path), why,
					     sizeof(why));
	if (s->answers_dir < 0)
		nsk_cache_dir__warn(s->answers_dir, why);
	*out = s;
	return 0;
}

static void scratch_clear(struct nsk_module *m)
{
	for (int i = 0; i < NSK_SYMLOC_MAX; i++) {
		free(m->scratch[i]);
		m->scratch[i] = NULL;
	}
}

static void module_free(struct nsk_module *m)
{
	if (!m)
		return;
	scratch_clear(m);
	nsk_gosym__free(m->go);
	nsk_fde_ranges__free(m->fde); /* before its Elf ends with the Dwfl */
	nsk_symtab__free(m->symtab);
	nsk_scopes__free(m->scopes); /* before the Dwfl its DIEs are in */
	nsk_symcache__free(m->answers);
	nsk_unwind_rules__free(m->rules); /* before the Dwfl its CFI is in */
	if (m->fd >= 0)
		close(m->fd);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->loads);
	free(m->path);
	free(m);
}

void nsk_symbols__free(struct nsk_symbols *s)
{
	if (!s)
		return;
	nsk_debuginfod__free(s->dbgd); /* first: it may be in a module's Dwfl */
	for (size_t i = 0; i < s->n; i++)
		module_free(s->mods[i]);
	nsk_debug_cache__free(s->cache);
	if (s->answers_dir >= 0)
		close(s->answers_dir);
	free(s->mods);
	nsk_intern__free(s->index);
	free(s);
}

/* Reads the PT_LOAD headers and the build-id; leaves dwmod NULL when the
 * file is not a readable ELF file. */
static void module_open(struct nsk_module *m, const char *open_path,
			const struct nsk_symbols *s)
{
	const unsigned char *bits;
	GElf_Addr bits_vaddr;
	size_t nph = 0;
	void **userdata;
	Elf *elf;
	int len;

	/* /proc/PID/map_files paths vanish with the process: keep the file */
	m->fd = open(open_path, O_RDONLY | O_CLOEXEC);
	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl)
		return;
	dwfl_report_begin(m->dwfl);
	m->dwmod = dwfl_report_elf(m->dwfl, m->name, open_path, -1, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dwmod)
		return;
	m->di.path = m->path;
	m->di.dbgd = s->dbgd;
	m->di.cache = s->cache;
	dwfl_module_info(m->dwmod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = &m->di;
	elf = dwfl_module_getelf(m->dwmod, &m->bias);
	if (!elf || elf_getphdrnum(elf, &nph))
		nph = 0;
	nsk_gosym__open_elf(elf, &m->go); /* most Go binaries have one */
	m->loads = calloc(nph ? nph : 1, sizeof(*m->loads));
	for (size_t i = 0; m->loads && i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads++] = (struct load){ ph.p_offset, ph.p_filesz,
						       ph.p_vaddr };
	}
	len = dwfl_module_build_id(m->dwmod, &bits, &bits_vaddr);
	if (len > 0 && (size_t)len <= sizeof(m->build_id)) {
		memcpy(m->build_id, bits, len);
		m->build_id_len = len;
	}
	m->has_symtab = nsk_debuginfo__has_symtab(elf);
	if (!m->has_symtab && !m->go)
		nsk_debuginfo__prefetch(&m->di, elf, m->build_id, m->build_id_len);
}

struct nsk_module *nsk_symbols__module(struct nsk_symbols *s, const char *path,
				       const char *open_path, uint64_t ino)
{
	size_t plen = strlen(path);
	char key[4096 + 8];
	struct nsk_module *m, **mods;
	const char *slash;
	uint64_t idx;

	if (plen > 4096)
		plen = 4096;
	memcpy(key, &ino, 8);
	memcpy(key + 8, path, plen);
	idx = nsk_intern__find(s->index, key, plen + 8);
	if (idx) {
		m = s->mods[idx - 1];
		/* a module first seen when its file could not be opened (a
		 * process gone a moment after it mapped the file, in a mount
		 * namespace we cannot see): another process mapping the same
		 * file may hold it open now */
		if (!m->dwmod && m->fd < 0 && open_path) {
			if (m->dwfl)
				dwfl_end(m->dwfl);
			m->dwfl = NULL;
			module_open(m, open_path, s);
		}
		return m;
	}
	m = calloc(1, sizeof(*m));
	mods = s->mods;
	if ((s->n & (s->n - 1)) == 0) /* grow at powers of two */
		mods = realloc(s->mods, (s->n ? s->n * 2 : 16) * sizeof(*mods));
	if (!m || !mods || !(m->path = strdup(path))) {
		if (mods)
			s->mods = mods;
		free(m);
		return NULL;
	}
	s->mods = mods;
	slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	m->serial = s->n + 1;
	m->fd = -1;
	m->owner = s;
	/* the vdso has no file: a copy of its image stands for one */
	if (!open_path && !strcmp(path, "[vdso]"))
		open_path = nsk_vdso__path();
	if (open_path)
		module_open(m, open_path, s);
	if (nsk_intern__add(s->index, key, plen + 8, s->n + 1)) {
		module_free(m);
		return NULL;
	}
	s->mods[s->n++] = m;
	return m;
}

void nsk_symbols__store_cache(struct nsk_symbols *s)
{
	int wrote = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct nsk_module *m = s->mods[i];
		Dwarf_Addr bias;
		int dwarf;

		if (!nsk_symcache__changed(m->answers))
			continue;
		/* a debug file that came while the recording ran (debuginfod):
		 * the answers made before it are not kept as its answers */
		dwarf = dwfl_module_getdwarf(m->dwmod, &bias) != NULL;
		if (!dwarf || !m->answered_without_dwarf) {
			nsk_symcache__write(s->answers_dir, m->build_id, m->build_id_len,
					    m->answers,
					    (dwarf ? NSK_SYMCACHE_DWARF : 0) |
						    (m->has_symtab ? NSK_SYMCACHE_SYMTAB : 0));
			wrote = 1;
		}
	}
	if (wrote)
		nsk_symcache__prune(s->answers_dir, NSK_SYMCACHE_MAX);
	nsk_debug_cache__store(s->cache);
}

uint64_t nsk_symbols__answered(const struct nsk_symbols *s)
{
	return s->answered;
}

/* The answers kept for the module's build, read on first need.  Answers
 * worked out without DWARF hold only while there is none (a -dbgsym
 * package installed since), and without a symbol table only for a module
 * without one (the same build-id unstripped): else they are dropped and
 * worked out again. */
static struct nsk_symcache *answers_of(struct nsk_module *m)
{
	Dwarf_Addr bias;

	if (m->answers_tried)
		return m->answers;
	m->answers_tried = 1;
	if (m->owner->answers_dir < 0 || !m->build_id_len || !m->dwmod)
		return NULL;
	m->answers = nsk_symcache__read(m->owner->answers_dir, m->build_id,
					m->build_id_len, &m->answers_from);
	if (m->answers && !(m->answers_from & NSK_SYMCACHE_DWARF) &&
	    ((m->has_symtab && !(m->answers_from & NSK_SYMCACHE_SYMTAB)) ||
	     dwfl_module_getdwarf(m->dwmod, &bias))) {
		nsk_symcache__free(m->answers);
		m->answers = nsk_symcache__read(-1, m->build_id, m->build_id_len,
						&m->answers_from);
	}
	return m->answers;
}

int nsk_module__unwind_rule(struct nsk_module *m, uint64_t vaddr,
			    struct nsk_unwind_rule *out)
{
	Dwarf_Addr bias;

	if (!m->rules_tried) {
		m->rules_tried = 1;
		/* .eh_frame only: .debug_frame would be looked for in debug
		 * files, through debuginfod too, in the middle of a walk */
		if (m->dwmod && dwfl_module_eh_cfi(m->dwmod, &bias) &&
		    nsk_unwind_rules__new(&m->rules))
			m->rules = NULL;
	}
	if (!m->rules)
		return 0;
	*out = *nsk_unwind_rules__at(m->rules, m->dwfl, vaddr);
	return 1;
}

int nsk_module__fd(const struct nsk_module *m)
{
	return m->fd;
}

const char *nsk_module__path(const struct nsk_module *m)
{
	return m->path;
}

const char *nsk_module__name(const struct nsk_module *m)
{
	return m->name;
}

uint64_t nsk_module__serial(const struct nsk_module *m)
{
	return m->serial;
}

const uint8_t *nsk_module__build_id(const struct nsk_module *m, size_t *len)
{
	*len = m->build_id_len;
	return m->build_id_len ? m->build_id : NULL;
}

uint64_t nsk_module__vaddr(const struct nsk_module *m, uint64_t file_off)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (file_off >= l->offset && file_off < l->offset + l->filesz)
			return file_off - l->offset + l->vaddr;
	}
	return file_off;
}

int nsk_module__lacks_symbols(struct nsk_module *m)
{
	Dwarf_Addr bias;

	if (!m->dwmod || m->has_symtab || m->go) /* Go: its own table */
		return 0;
	/* answers kept that were worked out with DWARF or a symbol table (a
	 * copy of this build that has one) name its functions */
	if (answers_of(m) && (m->answers_from & (NSK_SYMCACHE_DWARF | NSK_SYMCACHE_SYMTAB)))
		return 0;
	/* looks for the debug file, if nothing has yet */
	dwfl_module_getdwarf(m->dwmod, &bias);
	return !m->di.found;
}

/* The function range of an address no symbol covers, named module!0xSTART
 * into scratch slot; NULL when no FDE covers it. */
static const char *fde_name(struct nsk_module *m, uint64_t vaddr, int slot,
			    uint64_t *start)
{
	GElf_Addr bias;
	uint64_t end;
	char *name;

	if (!m->fde_tried) {
		m->fde_tried = 1;
		m->fde = nsk_fde_ranges__new(dwfl_module_getelf(m->dwmod, &bias));
	}
	if (nsk_fde_ranges__find(m->fde, vaddr, start, &end) ||
	    asprintf(&name, "%s!0x%" PRIx64, m->name, *start) < 0)
		return NULL;
	free(m->scratch[slot]);
	m->scratch[slot] = name;
	return name;
}

void nsk_module__warm(struct nsk_module *m)
{
	struct nsk_symloc locs[NSK_SYMLOC_MAX];

	/* any address will do: tables are loaded whole on first use */
	if (m->nloads)
		nsk_module__symbolize(m, m->loads[m->nloads > 1].vaddr, locs,
				      NSK_SYMLOC_MAX);
}

/* The name of a subprogram or inlined call: the linkage name demangled when
 * there is one (C++), else DW_AT_name; both through abstract_origin. */
static const char *die_name(struct nsk_module *m, Dwarf_Die *die, int slot)
{
	Dwarf_Attribute a;
	const char *name;
	char *d;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (name) {
		d = nsk_demangle(name);
		if (d) {
			m->scratch[slot] = d;
			return d;
		}
		return name;
	}
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static int symbolize_live(struct nsk_module *m, uint64_t vaddr,
			  struct nsk_symloc *out, int max)
{
	Dwarf_Addr addr = vaddr + m->bias, cubias = 0;
	const char *symname, *file = NULL;
	Dwarf_Files *files = NULL;
	Dwarf_Die *cu, scopes[NSK_SYMLOC_MAX];
	size_t nfiles = 0;
	uint64_t off = 0, size = 0;
	Dwfl_Line *l;
	int n = 0, line = 0, ns;

	scratch_clear(m);
	if (max > NSK_SYMLOC_MAX)
		max = NSK_SYMLOC_MAX;
	if (!m->dwmod || max < 2)
		return 0;
	/* dwfl_module_addrinfo reads every symbol on every call: the table
	 * is sorted once instead (symtab.h) */
	if (!m->symtab_tried) {
		m->symtab_tried = 1;
		m->symtab = nsk_symtab__new(m->dwmod);
	}
	symname = nsk_symtab__find(m->symtab, addr, &off, &size);
	l = dwfl_module_getsrc(m->dwmod, addr);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	cu = dwfl_module_addrdie(m->dwmod, addr, &cubias);
	if (cu && !m->scopes)
		m->scopes = nsk_scopes__new();
	ns = cu && m->scopes ? nsk_scopes__at(m->scopes, cu, addr - cubias, scopes, max) : 0;
	if (ns < 0)
		ns = 0;
	if (cu && dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	/* Innermost first: each inlined call's location in its caller is its
	 * DW_AT_call_file/line, which becomes the caller's location. */
	for (int i = 0; i < ns && n < max - 1; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute a;
		Dwarf_Word cf, cl;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		out[n].function = die_name(m, &scopes[i], n);
		out[n].file = file;
		out[n].line = line > 0 ? (uint32_t)line : 0;
		out[n].inlined = tag == DW_TAG_inlined_subroutine;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		file = NULL;
		line = 0;
		if (files && !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf))
			file = dwarf_filesrc(files, cf, NULL, NULL);
		if (!dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl))
			line = (int)cl;
	}
	/* A symbol without a size (.dynsym's hand-written entries) is only
	 * the nearest one below: a function range that starts above it is
	 * where the address really is.  No symbol at all (stripped code):
	 * the range is the function.  A Go binary's own table (.gopclntab)
	 * comes first: it is exact, and Go's code has no FDEs. */
	if (n == 0 && (!symname || !size) && m->go &&
	    !nsk_gosym__find(m->go, vaddr, &symname, NULL)) {
		nsk_gosym__line(m->go, vaddr, &file, &line);
	} else if (n == 0 && (!symname || !size)) {
		uint64_t start;
		const char *r = fde_name(m, vaddr, NSK_SYMLOC_MAX - 2, &start);

		if (r && (!symname || start > addr - off)) {
			symname = r;
			m->uncacheable = 1; /* module!0x...: another path, another name */
		}
	}
	/* No DWARF, or the chain did not reach a real function: the ELF
	 * symbol is the outermost function. */
	if ((n == 0 || out[n - 1].inlined) && symname) {
		char *d = nsk_demangle(symname);

		if (d)
			m->scratch[NSK_SYMLOC_MAX - 1] = d;
		out[n].function = d ? d : symname;
		out[n].file = file;
		out[n].line = line > 0 ? (uint32_t)line : 0;
		out[n].inlined = 0;
		n++;
	} else if (n > 0 && symname && !out[n - 1].function) {
		out[n - 1].function = symname;
	}
	if (n == 1 && !out[0].function && !out[0].file)
		n = 0;
	return n;
}

int nsk_module__symbolize(struct nsk_module *m, uint64_t vaddr,
			  struct nsk_symloc *out, int max)
{
	struct nsk_symcache *kept = max >= NSK_SYMLOC_MAX ? answers_of(m) : NULL;
	Dwarf_Addr bias;
	int n;

	if (kept && (n = nsk_symcache__find(kept, vaddr, out)) >= 0) {
		scratch_clear(m);
		m->owner->answered++;
		return n;
	}
	m->uncacheable = 0;
	n = symbolize_live(m, vaddr, out, max);
	if (kept && !m->uncacheable) {
		if (!dwfl_module_getdwarf(m->dwmod, &bias))
			m->answered_without_dwarf = 1;
		nsk_symcache__add(kept, vaddr, out, n); /* full: not kept */
	}
	return n;
}
