/* What a main binary looks like to a profiler, read from its ELF file with
 * a bounded number of bytes: which runtime built it (Go, Rust or plain
 * native code), whether its functions keep frame pointers, and whether
 * debug info is at hand (in the file or by build-id under
 * /usr/lib/debug/.build-id).  No libelf: a few preads of the headers and
 * of small samples, so a hostile or huge file costs little. */
#ifndef NUSKU_CONTROLLER_ELF_PROBE_H
#define NUSKU_CONTROLLER_ELF_PROBE_H

#include <stddef.h>

enum nsk_elf_lang {
	NSK_ELF_NATIVE = 0,
	NSK_ELF_GO,
	NSK_ELF_RUST,
};

struct nsk_elf_info {
	int lang;	    /* enum nsk_elf_lang */
	int frame_pointers; /* 1 yes, 0 no, -1 cannot tell */
	int debug_info;	    /* 1 in the file or by build-id, 0 none */
	int fp_sampled;	    /* functions whose prologue was looked at */
	int fp_with;	    /* ... of which set up %rbp as a frame pointer */
	char build_id[41];  /* hex, "" when the file has none */
};

/* Most bytes read of any one file (headers, symbols, samples). */
#define NSK_ELF_PROBE_MAX_BYTES (8u << 20)

/* Probes the ELF file open at fd (a regular file; the caller checks).
 * debug_root: where build-id debug files live (NULL: /usr/lib/debug).
 * 0, or -ENOEXEC when it is not a 64-bit little-endian ELF file, -EIO. */
int nsk_elf_probe__fd(int fd, const char *debug_root, struct nsk_elf_info *out);

/* The same for a path: refuses anything that is not a regular file
 * (O_NONBLOCK open, fstat) with -EINVAL. */
int nsk_elf_probe__path(const char *path, const char *debug_root,
			struct nsk_elf_info *out);

/* Prologue check on code bytes (x86-64): optional endbr64, push %rbp,
 * then mov %rsp,%rbp within the next 16 bytes.  1 yes, 0 no. */
int nsk_elf_probe__fp_prologue(const unsigned char *code, size_t len);

const char *nsk_elf_probe__lang_name(int lang);

#endif
