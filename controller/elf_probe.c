/* The ELF checks behind `nusku ps`: runtime, frame pointers, debug info.
 *
 * Everything is read with pread into small buffers and every size taken
 * from the file is bounded before it is used (NSK_ELF_PROBE_MAX_BYTES in
 * all), so a corrupt or hostile binary costs a few reads.
 *
 * Markers, chosen to survive stripping where possible:
 *   Go    a .go.buildinfo, .gopclntab or .note.go.buildid section (the
 *         linker writes them into every Go binary, stripped or not).
 *   Rust  a .rustc section (dylibs), or in the symbols one of
 *         __rust_alloc, rust_begin_unwind, __rust_start_panic or a name of
 *         Rust's std in either mangling (_ZN3std..., C++ spells std as St;
 *         _R...3std); stripped: the "/rustc/" prefix of the panic
 *         locations std leaves in .rodata.
 *   Frame pointers  up to 64 functions spread evenly over the symbol table
 *         (named functions of executable sections, not the C runtime's
 *         _start, frame_dummy, ... which are built without) or, when the
 *         file has no symbols, over the .eh_frame_hdr table of FDE starts;
 *         a function keeps frame pointers when its code starts with
 *         [endbr64] push %rbp, then mov %rsp,%rbp within 16 bytes (GCC
 *         may schedule an instruction between).  Half or more: yes.  Go
 *         binaries: yes by rule on x86-64 and arm64 (Go keeps frame
 *         pointers there since 1.7 and its prologue differs by version).
 *         Other architectures: cannot tell (-1).
 *   Debug info  a .debug_info / .zdebug_info section with contents, or a
 *         regular file ROOT/.build-id/xx/yyyy.debug for the GNU build-id. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elf.h>

#include "controller/elf_probe.h"

#define MAX_SECTIONS 4096
#define MAX_SHSTRTAB (1u << 20)
#define MAX_SYMTAB (4u << 20)
#define MAX_STRTAB (2u << 20)
#define MAX_RODATA_SCAN (1u << 20)
#define FP_SAMPLE 64
#define MAX_CANDIDATES 8192

struct probe {
	int fd;
	size_t budget; /* bytes still allowed */
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	int nsh;
	char *shstr;
	size_t shstr_len;
};

static int rd(struct probe *p, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (len > p->budget)
		return -E2BIG;
	p->budget -= len;
	n = pread(p->fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

static void *rd_alloc(struct probe *p, uint64_t len, uint64_t off, size_t max)
{
	void *buf;

	if (len == 0 || len > max)
		return NULL;
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	if (rd(p, buf, len, off) < 0) {
		free(buf);
		return NULL;
	}
	((char *)buf)[len] = '\0';
	return buf;
}

static const char *sec_name(const struct probe *p, const Elf64_Shdr *s)
{
	if (!p->shstr || s->sh_name >= p->shstr_len)
		return "";
	return p->shstr + s->sh_name;
}

static const Elf64_Shdr *find_sec(const struct probe *p, const char *name)
{
	for (int i = 0; i < p->nsh; i++)
		if (!strcmp(sec_name(p, &p->sh[i]), name))
			return &p->sh[i];
	return NULL;
}

int nsk_elf_probe__fp_prologue(const unsigned char *c, size_t len)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (len >= 4 && !memcmp(c, endbr64, 4)) {
		c += 4;
		len -= 4;
	}
	if (len < 4 || c[0] != 0x55)
		return 0;
	/* GCC schedules an instruction or two between the push and the mov
	 * (push %rbp; movslq %edi,%rdi; mov %rsp,%rbp): look a little
	 * further for mov %rsp,%rbp in either encoding. */
	for (size_t i = 1; i + 3 <= len && i <= 16; i++)
		if (c[i] == 0x48 && ((c[i + 1] == 0x89 && c[i + 2] == 0xe5) ||
				     (c[i + 1] == 0x8b && c[i + 2] == 0xec)))
			return 1;
	return 0;
}

/* File offset of virtual address a in an executable section; 0: none. */
static uint64_t code_offset(const struct probe *p, uint64_t a, uint64_t *room)
{
	for (int i = 0; i < p->nsh; i++) {
		const Elf64_Shdr *s = &p->sh[i];

		if (s->sh_type != SHT_PROGBITS || !(s->sh_flags & SHF_EXECINSTR))
			continue;
		if (a >= s->sh_addr && a - s->sh_addr < s->sh_size) {
			*room = s->sh_size - (a - s->sh_addr);
			return s->sh_offset + (a - s->sh_addr);
		}
	}
	return 0;
}

static int exec_section(const struct probe *p, unsigned idx)
{
	return idx < (unsigned)p->nsh && p->sh[idx].sh_type == SHT_PROGBITS &&
	       (p->sh[idx].sh_flags & SHF_EXECINSTR);
}

/* The C runtime's own functions, compiled without frame pointers whatever
 * the program was built with. */
static int crt_function(const char *n)
{
	static const char *const crt[] = { "deregister_tm_clones",
		"register_tm_clones", "frame_dummy", NULL };

	if (n[0] == '_' || n[0] == '\0' || n[0] == '.')
		return 1;
	for (int i = 0; crt[i]; i++)
		if (!strcmp(n, crt[i]))
			return 1;
	return 0;
}

static int rust_symbol(const char *n)
{
	if (!strcmp(n, "__rust_alloc") || !strcmp(n, "rust_begin_unwind") ||
	    !strcmp(n, "__rust_start_panic"))
		return 1;
	if (!strncmp(n, "_ZN3std", 7))
		return 1;
	return n[0] == '_' && n[1] == 'R' && strstr(n, "3std") != NULL;
}

static void sample_prologues(struct probe *p, const uint64_t *addr, int n,
			     struct nsk_elf_info *out)
{
	int step_num = n > FP_SAMPLE ? FP_SAMPLE : n;

	for (int k = 0; k < step_num; k++) {
		uint64_t a = addr[(size_t)k * n / step_num], off, room = 0;
		unsigned char code[24];

		size_t len;

		off = code_offset(p, a, &room);
		if (!off || room < 4)
			continue;
		len = room < sizeof(code) ? (size_t)room : sizeof(code);
		if (rd(p, code, len, off) < 0)
			break;
		out->fp_sampled++;
		out->fp_with += nsk_elf_probe__fp_prologue(code, len);
	}
}

/* Function starts from the symbol table; sets *rust when a Rust marker is
 * among the names.  Returns the count (0: no usable table). */
static int symbol_starts(struct probe *p, const char *tab, uint64_t *addr,
			 int *rust)
{
	const Elf64_Shdr *s = find_sec(p, tab), *str;
	Elf64_Sym *sym = NULL;
	char *names = NULL;
	size_t count;
	int n = 0;

	if (!s || s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= (unsigned)p->nsh)
		return 0;
	str = &p->sh[s->sh_link];
	sym = rd_alloc(p, s->sh_size, s->sh_offset, MAX_SYMTAB);
	names = rd_alloc(p, str->sh_size, str->sh_offset, MAX_STRTAB);
	if (!sym || !names)
		goto cleanup;
	count = s->sh_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < count; i++) {
		const char *nm = sym[i].st_name < str->sh_size ? names + sym[i].st_name : "";

		if (!*rust && rust_symbol(nm))
			*rust = 1;
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_size < 8 ||
		    !exec_section(p, sym[i].st_shndx) || crt_function(nm) ||
		    n >= MAX_CANDIDATES)
			continue;
		addr[n++] = sym[i].st_value;
	}
cleanup:
	free(sym);
	free(names);
	return n;
}

/* Function starts from .eh_frame_hdr's binary-search table, in the one
 * encoding linkers write (datarel sdata4 pairs, a udata4 count). */
static int eh_frame_starts(struct probe *p, uint64_t *addr)
{
	const Elf64_Shdr *s = find_sec(p, ".eh_frame_hdr");
	unsigned char h[12];
	uint32_t count, m;
	int n = 0;

	if (!s || s->sh_size < sizeof(h) || rd(p, h, sizeof(h), s->sh_offset) < 0)
		return 0;
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&count, h + 8, 4);
	if ((uint64_t)count * 8 > s->sh_size - sizeof(h))
		return 0;
	m = count < FP_SAMPLE ? count : FP_SAMPLE;
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = (uint32_t)((uint64_t)k * count / m);
		int32_t loc;

		if (rd(p, &loc, 4, s->sh_offset + sizeof(h) + (uint64_t)i * 8) < 0)
			break;
		addr[n++] = s->sh_addr + (int64_t)loc;
	}
	return n;
}

static int rodata_mentions_rustc(struct probe *p)
{
	const Elf64_Shdr *s = find_sec(p, ".rodata");
	uint64_t len;
	char *buf;
	int found;

	if (!s || s->sh_type != SHT_PROGBITS)
		return 0;
	len = s->sh_size < MAX_RODATA_SCAN ? s->sh_size : MAX_RODATA_SCAN;
	buf = rd_alloc(p, len, s->sh_offset, MAX_RODATA_SCAN);
	if (!buf)
		return 0;
	found = memmem(buf, len, "/rustc/", 7) != NULL;
	free(buf);
	return found;
}

static void read_build_id(struct probe *p, struct nsk_elf_info *out)
{
	const Elf64_Shdr *s = find_sec(p, ".note.gnu.build-id");
	unsigned char note[256];
	uint32_t namesz, descsz, type;
	size_t at;

	if (!s || s->sh_size < 16 || s->sh_size > sizeof(note) ||
	    rd(p, note, s->sh_size, s->sh_offset) < 0)
		return;
	memcpy(&namesz, note, 4);
	memcpy(&descsz, note + 4, 4);
	memcpy(&type, note + 8, 4);
	at = 12 + ((namesz + 3u) & ~3u);
	if (type != NT_GNU_BUILD_ID || namesz != 4 || memcmp(note + 12, "GNU", 4) ||
	    descsz == 0 || descsz > 20 || at + descsz > s->sh_size)
		return;
	for (uint32_t i = 0; i < descsz; i++)
		snprintf(out->build_id + 2 * i, 3, "%02x", note[at + i]);
}

static int debug_file_exists(const char *root, const char *bid)
{
	char path[4096];
	struct stat st;

	if (strlen(bid) < 4)
		return 0;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
		 root ? root : "/usr/lib/debug", bid, bid + 2);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int nsk_elf_probe__fd(int fd, const char *debug_root, struct nsk_elf_info *out)
{
	struct probe p = { .fd = fd, .budget = NSK_ELF_PROBE_MAX_BYTES };
	uint64_t *addr = NULL;
	int err = 0, rust = 0, n;
	const Elf64_Shdr *s;

	memset(out, 0, sizeof(*out));
	out->frame_pointers = -1;
	if (rd(&p, &p.eh, sizeof(p.eh), 0) < 0 || memcmp(p.eh.e_ident, ELFMAG, SELFMAG) ||
	    p.eh.e_ident[EI_CLASS] != ELFCLASS64 || p.eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (p.eh.e_shentsize != sizeof(Elf64_Shdr) || p.eh.e_shnum == 0 ||
	    p.eh.e_shnum > MAX_SECTIONS)
		goto cleanup; /* no sections to read: native, cannot tell */
	p.nsh = p.eh.e_shnum;
	p.sh = rd_alloc(&p, (uint64_t)p.nsh * sizeof(Elf64_Shdr), p.eh.e_shoff,
			MAX_SECTIONS * sizeof(Elf64_Shdr));
	if (!p.sh) {
		p.nsh = 0;
		err = -EIO;
		goto cleanup;
	}
	if (p.eh.e_shstrndx < p.nsh) {
		s = &p.sh[p.eh.e_shstrndx];
		p.shstr = rd_alloc(&p, s->sh_size, s->sh_offset, MAX_SHSTRTAB);
		p.shstr_len = p.shstr ? s->sh_size : 0;
	}
	for (int i = 0; i < p.nsh; i++) {
		const char *nm = sec_name(&p, &p.sh[i]);

		if (!strcmp(nm, ".go.buildinfo") || !strcmp(nm, ".gopclntab") ||
		    !strcmp(nm, ".note.go.buildid"))
			out->lang = NSK_ELF_GO;
		else if (!strcmp(nm, ".rustc") && out->lang == NSK_ELF_NATIVE)
			rust = 1;
		if ((!strcmp(nm, ".debug_info") || !strcmp(nm, ".zdebug_info")) &&
		    p.sh[i].sh_type != SHT_NOBITS && p.sh[i].sh_size > 0)
			out->debug_info = 1;
	}
	read_build_id(&p, out);
	if (!out->debug_info && out->build_id[0])
		out->debug_info = debug_file_exists(debug_root, out->build_id);

	addr = calloc(MAX_CANDIDATES, sizeof(*addr));
	if (!addr) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = symbol_starts(&p, ".symtab", addr, &rust);
	if (!n) {
		int r2 = 0;

		if (!find_sec(&p, ".symtab"))
			symbol_starts(&p, ".dynsym", addr, &r2);
		rust |= r2;
		n = eh_frame_starts(&p, addr);
	}
	if (out->lang == NSK_ELF_NATIVE && !rust && !find_sec(&p, ".symtab"))
		rust = rodata_mentions_rustc(&p);
	if (out->lang == NSK_ELF_NATIVE && rust)
		out->lang = NSK_ELF_RUST;

	if (out->lang == NSK_ELF_GO &&
	    (p.eh.e_machine == EM_X86_64 || p.eh.e_machine == EM_AARCH64)) {
		out->frame_pointers = 1;
	} else if (p.eh.e_machine == EM_X86_64) {
		sample_prologues(&p, addr, n, out);
		if (out->fp_sampled)
			out->frame_pointers = 2 * out->fp_with >= out->fp_sampled;
	}
cleanup:
	free(addr);
	free(p.sh);
	free(p.shstr);
	return err;
}

int nsk_elf_probe__path(const char *path, const char *debug_root,
			struct nsk_elf_info *out)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	err = nsk_elf_probe__fd(fd, debug_root, out);
cleanup:
	close(fd);
	return err;
}

const char *nsk_elf_probe__lang_name(int lang)
{
	switch (lang) {
	case NSK_ELF_GO: return "go";
	case NSK_ELF_RUST: return "rust";
	default: return "native";
	}
}
