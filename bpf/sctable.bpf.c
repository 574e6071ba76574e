// SPDX-License-Identifier: GPL-2.0
/* Reads the running kernel's syscall table, once, when a recording starts
 * (record/sctable.c runs it with BPF_PROG_TEST_RUN; it is never attached).
 *
 * Without CONFIG_KALLSYMS_ALL, /proc/kallsyms has the handlers
 * (__x64_sys_read, ...) but not sys_call_table itself, a data symbol.  The
 * table is const, so it sits between __start_rodata and the end of
 * read-only data, which kallsyms does list: the recorder passes those
 * bounds and the addresses of two handlers at a known distance (read and
 * write), this program finds the first place where both sit at that
 * distance, and then copies NSK_SCT_MAX words from the table's start.  The
 * recorder names each word by its kallsyms symbol and stops at the first
 * word that is not a handler, so nothing here needs the table's length.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include <nusku/events/sctable.h>

char LICENSE[] SEC("license") = "GPL";

/* In: set by the recorder before the run. */
__u64 scan_start = 0; /* 8-aligned */
__u64 scan_end = 0;
__u64 want_first = 0; /* handler expected at table[nr_first] */
__u64 want_second = 0;
__u32 first_nr = 0;   /* its number */
__u32 gap_words = 0;  /* nr of the second handler minus first_nr, < NSK_SCT_CHUNK */

/* Out. */
__u64 table_addr = 0; /* 0: not found */
__u64 words[NSK_SCT_MAX];

/* One chunk of the scan plus the words that may follow a match at its end. */
__u64 chunk[2 * NSK_SCT_CHUNK];

static long scan_one(__u64 i, void *unused)
{
	__u64 at = scan_start + i * NSK_SCT_CHUNK * 8;
	__u32 j;

	if (at >= scan_end)
		return 1;
	if (bpf_probe_read_kernel(chunk, sizeof(chunk), (void *)at))
		return 0; /* a hole: on to the next chunk */
	for (j = 0; j < NSK_SCT_CHUNK; j++) {
		__u32 k = j + gap_words;

		if (chunk[j] != want_first)
			continue;
		if (k < 2 * NSK_SCT_CHUNK && chunk[k & (2 * NSK_SCT_CHUNK - 1)] == want_second) {
			table_addr = at + j * 8 - (__u64)first_nr * 8;
			return 1;
		}
	}
	return 0;
}

SEC("raw_tp")
int nsk_sctable(void *ctx)
{
	__u64 n;

	if (!scan_start || scan_end <= scan_start || gap_words >= NSK_SCT_CHUNK)
		return 0;
	n = (scan_end - scan_start) / (NSK_SCT_CHUNK * 8) + 1;
	bpf_loop(n < (1 << 20) ? n : (1 << 20), scan_one, NULL, 0);
	if (table_addr &&
	    bpf_probe_read_kernel(words, sizeof(words), (void *)table_addr))
		table_addr = 0;
	return 0;
}
