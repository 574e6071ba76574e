/* The vdso image, copied into a memfd so that libdwfl opens it as it opens
 * a file: its symbol table names [vdso] frames (__vdso_clock_gettime) and
 * its .eh_frame lets the DWARF unwinder step out of it.
 *
 * Whose image: the recorder's own, found through getauxval(AT_SYSINFO_EHDR).
 * The kernel builds one vdso image per ABI and maps that same image into
 * every process of the ABI, so for a 64-bit process on this kernel the
 * recorder's vdso is byte for byte the target's; reading each target's
 * through /proc/PID/mem would cost a read per process and could not be
 * shared by the one [vdso] module all processes use.  A 32-bit (ia32, x32)
 * process has another image: its [vdso] frames would be misnamed, but
 * the recorder walks only 64-bit stacks.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/stacks/vdso.h"

/* The vdso is two or three pages; anything past this is not one. */
#define VDSO_MAX (1u << 20)

/* The image's length: it ends with its section headers (the linker puts
 * them last), or with the last loaded segment if that goes further. */
static size_t image_size(const Elf64_Ehdr *eh)
{
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

const char *nsk_vdso__path(void)
{
	static char path[64];
	static int tried;
	const Elf64_Ehdr *eh;
	size_t size, done = 0;
	int fd;

	if (tried)
		return path[0] ? path : NULL;
	tried = 1;
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phoff > VDSO_MAX ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > 64)
		return NULL;
	size = image_size(eh);
	if (size < sizeof(*eh) || size > VDSO_MAX)
		return NULL;
	fd = memfd_create("nusku-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	while (done < size) {
		ssize_t n = write(fd, (const char *)eh + done, size - done);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		done += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}
