/* What the loader accepts from one recording, so that no file, however
 * small, can make a reader use memory out of proportion to it (issue 17).
 * The recorder stays far inside every limit: it writes at most
 * NSK_MAX_STACK_DEPTH (127) kernel + 256 user frames per stack and names
 * as the symbol tables hold them.
 *
 * Past a per-item limit the item is kept shortened and the load goes on:
 * loss is data, so the report shows the rest with one warning per kind
 * (a problem row, counted in the recording table).  Past a limit on the
 * whole file the load stops with an error: the file is not one nusku can
 * read in bounded memory.  docs/schema.md ("Limits") says the same. */
#ifndef NUSKU_REPORT_LIMITS_H
#define NUSKU_REPORT_LIMITS_H

/* Bytes of one name or text field (function, file, module, thread name,
 * command line, META value); longer ones keep their first bytes and end
 * in "...".  4 KiB holds the longest demangled C++ names seen in
 * practice. */
#define NSK_LIMIT_NAME_BYTES 4096u

/* Recorded frames (addresses) of one stack: the leaf-most are kept, the
 * stack is marked truncated.  Inline expansion may add frames: at most
 * NSK_LIMIT_STACK_ROWS rows per stack in stack_frame. */
#define NSK_LIMIT_STACK_FRAMES 1024u
#define NSK_LIMIT_STACK_ROWS 4096u

/* Bytes of a stack's path and of its chain (the whole call path as text);
 * longer ones end in "...".  Only a stack of hundreds of long names
 * reaches it. */
#define NSK_LIMIT_PATH_BYTES (64u << 10)

/* Whole file: interned definitions (strings, frames, stacks, mappings,
 * connections, thread names) and the bytes of text they and the events
 * carry (a name is held twice, as a string and as a function: the budget
 * counts both), stack paths aside (those grow with the distinct stacks).  Past
 * either the load fails. */
#define NSK_LIMIT_DEFS (4u << 20)
/* Blocks live at once (and mmap/brk regions live at once), as the
 * allocation loader follows them to match frees: 56 bytes each in a table
 * at most 3/4 full, so 1.5M blocks keep it to 2M slots (112 MiB; 168 MiB
 * as it grows).  Only a recording of every allocation of a program
 * holding over a million blocks comes near it; a sampled one (the
 * default) holds far fewer.  Past either the load fails. */
#define NSK_LIMIT_LIVE_BLOCKS (3u << 19)
#define NSK_LIMIT_LIVE_REGIONS (1u << 20)
#define NSK_LIMIT_TEXT_BYTES (64ull << 20)

#endif
