/* The recorder's own heap: returned to the kernel once it is free.
 *
 * Loading the signals parses the kernel's BTF in a thread per signal
 * (megabytes each), and glibc keeps freed memory in each thread's arena:
 * its trim threshold grows with every large block freed (up to 64 MiB), so
 * 24 MB of a `record -- sleep 3` stayed resident, free, for the whole
 * recording.  A fixed threshold keeps trimming on, and one trim once the
 * signals are loaded hands back what the loads left.
 */
#ifndef NUSKU_RECORD_HEAP_H
#define NUSKU_RECORD_HEAP_H

/* Before the first large allocation: a fixed trim threshold. */
void nsk_heap__bound(void);

/* Once a burst of temporary allocations is over (the loads): returns the
 * free memory of every arena to the kernel. */
void nsk_heap__trim(void);

#endif
