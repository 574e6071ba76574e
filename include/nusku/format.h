/* The .nsk recording format: records as the rest of Nusku sees them.
 *
 * This header is the whole contract between the recorder, the reporter and the
 * file.  It names records as C structs; how they become bytes (varints, delta
 * timestamps, chunks, zstd, checksums) is known only to format/ and is
 * specified byte by byte in docs/format.md.
 *
 * A recording is a stream of records.  Definitions (strings, mappings, frames,
 * stacks, connections) carry an id chosen by the writer's caller and always
 * come before the first record that refers to them, so a reader that starts at
 * the beginning of a file or pipe can resolve every reference it has read.
 * Id 0 means "none" everywhere.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (the clock of bpf_ktime_get_ns()); a
 * NSK_REC_CLOCK record anchors them to wall-clock time.
 *
 * Pointers inside a record handed out by the reader stay valid until the next
 * call on that reader.  Pointers inside a record handed to the writer need only
 * stay valid for the duration of the call.
 */
#ifndef NUSKU_FORMAT_H
#define NUSKU_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nusku/names.h>

#define NSK_FORMAT_MAJOR 1
#define NSK_FORMAT_MINOR 4

/* Record types.  Numbers are part of the file format: never reuse one. */
enum nsk_rec_type {
	NSK_REC_META = 1,	 /* key/value about the recording */
	NSK_REC_CLOCK = 2,	 /* wall-clock anchor for monotonic times */
	NSK_REC_STRING = 3,	 /* interned string */
	NSK_REC_PROCESS = 4,	 /* a process seen: attach, launch, fork or exec */
	NSK_REC_THREAD = 5,	 /* a thread seen or renamed */
	NSK_REC_EXIT = 6,	 /* a thread or process ended */
	NSK_REC_MAPPING = 7,	 /* an executable mapping of a process */
	NSK_REC_FRAME = 8,	 /* a symbolized code location */
	NSK_REC_STACK = 9,	 /* a call stack: frame ids, leaf first */
	NSK_REC_SAMPLE = 10,	 /* a CPU sample */
	NSK_REC_ALLOC = 11,	 /* an allocation */
	NSK_REC_FREE = 12,	 /* a free */
	NSK_REC_OFFCPU = 13,	 /* an interval a thread spent off CPU */
	NSK_REC_SYSCALL_STAT = 14, /* aggregated syscalls over a window */
	NSK_REC_SYSCALL_SLOW = 15, /* one slow syscall */
	NSK_REC_CONN = 16,	 /* a TCP connection */
	NSK_REC_RETRANSMIT = 17, /* a TCP retransmit */
	NSK_REC_LOSS = 18,	 /* events lost, by source */
	NSK_REC_END = 19,	 /* the recording ended cleanly */
	NSK_REC_SYSCALL_PATH = 20, /* syscall time charged to a code path (1.1) */
	NSK_REC_SYSCALL_NAME = 21, /* a syscall's name in the kernel recorded (1.1) */
	NSK_REC_TYPE_MAX
};

struct nsk_bytes {
	const uint8_t *data;
	uint32_t len;
};

struct nsk_u64s {
	const uint64_t *v;
	uint32_t n;
};

struct nsk_rec_meta {
	struct nsk_bytes key; /* e.g. "host", "kernel", "cmdline", "events" */
	struct nsk_bytes value;
};

struct nsk_rec_clock {
	uint64_t monotonic_ns;
	uint64_t realtime_ns;
};

struct nsk_rec_string {
	uint64_t id;
	struct nsk_bytes str;
};

enum nsk_process_how {
	NSK_PROC_ATTACHED = 1, /* already running when recording started */
	NSK_PROC_LAUNCHED = 2, /* started by the recorder */
	NSK_PROC_FORKED = 3,
	NSK_PROC_EXECED = 4,
};

struct nsk_rec_process {
	uint64_t time;
	uint32_t pid;
	uint32_t ppid;
	uint32_t how;		/* enum nsk_process_how */
	struct nsk_bytes comm;
	struct nsk_bytes cmdline; /* NUL-separated argv, as /proc/PID/cmdline */
};

struct nsk_rec_thread {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	struct nsk_bytes name;
};

struct nsk_rec_exit {
	uint64_t time;
	uint32_t pid;
	uint32_t tid; /* tid == pid: the whole process */
	int32_t exit_code;
};

struct nsk_rec_mapping {
	uint64_t id;
	uint32_t pid;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t path_id; /* string id */
	struct nsk_bytes build_id;
	uint32_t flags; /* enum nsk_mapping_flags (1.2) */
};

enum nsk_mapping_flags {
	/* The file has no symbol table (.symtab, MiniDebugInfo) and no debug
	 * file was found for it: its functions are named by their .eh_frame
	 * ranges (module!0xstart), or not at all (1.2). */
	NSK_MAPPING_NO_SYMBOLS = 1u << 0,
};

enum nsk_frame_flags {
	NSK_FRAME_KERNEL = 1u << 0,
	NSK_FRAME_INLINED = 1u << 1,	/* an inlined call inside inline_parent */
	NSK_FRAME_UNRESOLVED = 1u << 2, /* no symbol: shown as module+offset */
};

struct nsk_rec_frame {
	uint64_t id;
	uint64_t mapping_id;	/* 0 for kernel frames */
	uint64_t addr;		/* module-relative (ELF vaddr) or kernel address */
	uint64_t function_id;	/* string id; 0 when unresolved */
	uint64_t file_id;	/* string id; 0 when unknown */
	uint32_t line;
	uint32_t flags;		/* enum nsk_frame_flags */
	uint64_t inline_parent; /* frame id of the enclosing function, 0 if none */
	uint64_t module_id;	/* string id of the module's short name */
};

enum nsk_stack_flags {
	NSK_STACK_TRUNCATED = 1u << 0,	/* the walk stopped early */
	NSK_STACK_UNWIND_FP = 1u << 1,	/* user part from frame pointers */
	NSK_STACK_UNWIND_DWARF = 1u << 2, /* user part from DWARF CFI */
	NSK_STACK_USER_ERROR = 1u << 3,	/* no user stack could be taken */
	NSK_STACK_OWN = 1u << 4,	/* taken inside Nusku's own probes (1.1):
					 * shown as one [nusku] frame */
};

struct nsk_rec_stack {
	uint64_t id;
	uint32_t flags;	      /* enum nsk_stack_flags */
	struct nsk_u64s frames; /* frame ids, leaf first; each the innermost
				 * frame of its address (see inline_parent) */
};

struct nsk_rec_sample {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint64_t stack_id;
	uint64_t weight; /* nanoseconds of CPU this sample stands for */
};


struct nsk_rec_alloc {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	uint64_t addr; /* 0: the allocation failed */
	uint64_t size;
	uint64_t stack_id;
	uint32_t fn;	 /* enum nsk_alloc_fn */
	uint64_t weight; /* bytes this record stands for (sampling); = size
			  * when not sampled */
};

struct nsk_rec_free {
	uint64_t time;
	uint32_t pid;
	uint32_t tid;
	uint64_t addr;
	uint32_t fn; /* enum nsk_alloc_fn: FREE, REALLOC (the old block),
		      * MUNMAP, BRK, MPROTECT (a commit made PROT_NONE) */
	uint64_t size; /* munmap, brk, mprotect: the range; 0 otherwise */
};


struct nsk_rec_offcpu {
	uint64_t time;	   /* when it went off CPU */
	uint64_t duration; /* ns until it ran again */
	uint32_t pid;
	uint32_t tid;
	uint32_t state;	   /* kernel task state at switch-out */
	uint32_t reason;   /* enum nsk_offcpu_reason */
	uint64_t stack_id; /* user + kernel stack at switch-out */
	int32_t syscall;   /* syscall in progress, -1 none */
	uint64_t wait_addr; /* futex address, when there is one */
	uint32_t waker_pid;
	uint32_t waker_tid;
	struct nsk_bytes waker_comm;
	uint64_t waker_stack_id;
	uint64_t detail_id; /* string id: the kernel function that decided the
			     * reason, 0 if none */
};

struct nsk_rec_syscall_stat {
	uint64_t time;	   /* end of the window */
	uint64_t window_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t nr;
	uint64_t stack_id;
	uint64_t count;
	uint64_t errors;
	uint64_t total_ns;
	uint64_t max_ns;
	struct nsk_u64s hist;	/* count per log2(ns) bucket, bucket i holds
				 * [2^i, 2^(i+1)) */
	struct nsk_u64s errnos; /* pairs: errno, count */
};

/* Sampled: the time (and calls, estimated) of one (thread, syscall)
 * charged to one code path over a window.  Summed over paths, total_ns
 * approaches the syscall_stat total; the expected value is exact.  Since
 * 1.1, syscall_stat's stack_id is 0 and its paths are these. */
struct nsk_rec_syscall_path {
	uint64_t time; /* end of the window */
	uint64_t window_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t nr;
	uint64_t stack_id;
	uint64_t calls;	   /* estimated */
	uint64_t total_ns; /* estimated */
};

/* The name the recorded kernel gives syscall nr (its own table, which may
 * know numbers the build's headers do not). */
struct nsk_rec_syscall_name {
	uint32_t nr;
	struct nsk_bytes name;
};

struct nsk_rec_syscall_slow {
	uint64_t time; /* entry */
	uint64_t duration;
	uint32_t pid;
	uint32_t tid;
	uint32_t nr;
	int64_t ret;
	struct nsk_u64s args;	/* the raw arguments */
	uint64_t target_id;	/* string id: file or socket behind the fd */
	uint64_t stack_id;
};

/* A TCP connection (one socket, seen from its owner's side).  Repeated with
 * the same id when its owner or state changes: the latest one read applies to
 * the records that follow. */
struct nsk_rec_conn {
	uint64_t id;
	uint32_t family; /* AF_INET or AF_INET6 */
	struct nsk_bytes saddr; /* 4 or 16 bytes, network order */
	struct nsk_bytes daddr;
	uint32_t sport;
	uint32_t dport;
	uint32_t pid; /* owner learned in process context */
	uint32_t tid;
	uint64_t time;	   /* when the owner (or state) was learned */
	uint32_t state;	   /* TCP state then (TCP_ESTABLISHED = 1, ...) */
	uint64_t stack_id; /* the owner's stack then, 0 if none was taken */
};

struct nsk_rec_retransmit {
	uint64_t time;
	uint64_t conn_id;
	uint32_t pid;
	uint32_t tid;
	uint32_t kind;	/* 1 data, 2 syn/ack, 3 loss probe */
	uint32_t state; /* TCP state */
	uint64_t srtt_us;
	uint64_t rto_us;
};

struct nsk_rec_loss {
	uint64_t time_start;
	uint64_t time_end;
	uint64_t source_id; /* string id, e.g. "cpu.ringbuf", "cpu.stack" */
	uint64_t count;
};

struct nsk_rec_end {
	uint64_t time;
	uint64_t records; /* records written before this one */
	uint64_t lost;	  /* sum of all loss counts */
};

struct nsk_record {
	uint32_t type; /* enum nsk_rec_type */
	union {
		struct nsk_rec_meta meta;
		struct nsk_rec_clock clock;
		struct nsk_rec_string string;
		struct nsk_rec_process process;
		struct nsk_rec_thread thread;
		struct nsk_rec_exit exit;
		struct nsk_rec_mapping mapping;
		struct nsk_rec_frame frame;
		struct nsk_rec_stack stack;
		struct nsk_rec_sample sample;
		struct nsk_rec_alloc alloc;
		struct nsk_rec_free free;
		struct nsk_rec_offcpu offcpu;
		struct nsk_rec_syscall_stat syscall_stat;
		struct nsk_rec_syscall_slow syscall_slow;
		struct nsk_rec_conn conn;
		struct nsk_rec_retransmit retransmit;
		struct nsk_rec_loss loss;
		struct nsk_rec_end end;
		struct nsk_rec_syscall_path syscall_path;
		struct nsk_rec_syscall_name syscall_name;
	};
};

/* Name of a record type ("sample"), or NULL for an unknown one. */
const char *nsk_rec_type__name(uint32_t type);

/* ---- I/O: pluggable so tests can inject faults ---------------------------- */

/* A byte sink or source.  write returns bytes written (may be short) or a
 * negative errno; read returns bytes read, 0 at end of data, or a negative
 * errno (-EAGAIN: nothing now, try later). */
struct nsk_io {
	ssize_t (*write)(void *ctx, const void *buf, size_t len);
	ssize_t (*read)(void *ctx, void *buf, size_t len);
	int (*close)(void *ctx);
	void *ctx;
};

/* I/O on a file descriptor; close_fd says whether close() closes it. */
struct nsk_io *nsk_io__from_fd(int fd, int close_fd);
void nsk_io__free(struct nsk_io *io); /* calls io->close; accepts NULL */

/* ---- writer ---------------------------------------------------------------- */

struct nsk_writer;

struct nsk_writer_opts {
	size_t chunk_bytes;	   /* raw bytes that close a chunk; 0: default 256 KiB */
	uint64_t flush_interval_ns; /* nsk_writer__tick flushes older data; 0: 250 ms */
	int zstd_level;		   /* 0: default (3) */
	uint64_t recording_id[2];  /* 128-bit id; zero: random */
};

/* Writes the file header at once.  Takes ownership of io. */
int nsk_writer__new(struct nsk_io *io, const struct nsk_writer_opts *opts,
		    struct nsk_writer **out);
int nsk_writer__append(struct nsk_writer *w, const struct nsk_record *rec);
/* Closes the current chunk if it holds anything. */
int nsk_writer__flush(struct nsk_writer *w);
/* Flushes when the oldest unflushed record is older than the flush interval;
 * call it from the recorder's event loop. */
int nsk_writer__tick(struct nsk_writer *w, uint64_t now_monotonic_ns);
/* Bytes handed to the io so far. */
uint64_t nsk_writer__bytes(const struct nsk_writer *w);
/* Flushes, writes an index chunk, frees; returns the first error seen during
 * the writer's life (the caller writes its NSK_REC_END first).  NULL is fine. */
int nsk_writer__close(struct nsk_writer *w);
/* Frees without flushing (after an error). NULL is fine. */
void nsk_writer__free(struct nsk_writer *w);

/* ---- reader ---------------------------------------------------------------- */

struct nsk_reader;

struct nsk_file_info {
	uint32_t major;
	uint32_t minor;
	uint64_t compat_flags;
	uint64_t incompat_flags;
	uint64_t recording_id[2];
};

struct nsk_chunk_info {
	uint64_t offset; /* of the chunk header in the stream */
	uint32_t type;
	uint32_t codec;
	uint64_t seq;
	uint32_t stored_len;
	uint32_t raw_len;
	uint32_t records;
	uint64_t first_time;
	uint64_t last_time;
};

struct nsk_reader_stats {
	uint64_t chunks;	  /* chunks read intact */
	uint64_t records;	  /* records returned */
	uint64_t skipped_records; /* records of unknown type skipped */
	uint64_t skipped_chunks;  /* chunks of unknown type skipped */
	uint64_t corrupt_chunks;  /* checksum or decode errors, skipped */
	uint64_t seq_gaps;	  /* chunks missing by sequence number */
	uint64_t truncated_bytes; /* bytes at the end that formed no whole chunk */
	uint64_t bytes;		  /* bytes consumed from the source */
	int ended;		  /* an NSK_REC_END was read */
};

struct nsk_reader_opts {
	/* Called for each problem found (corruption, truncation, skipped
	 * types), with a one-line message that names the offset.  The stats
	 * already count the problem when it is called.  nsk_reader__new
	 * reports why it failed through it too. */
	void (*on_problem)(void *ctx, const char *msg);
	void *ctx;
	/* Called when a chunk is entered, before its records. */
	void (*on_chunk)(void *ctx, const struct nsk_chunk_info *chunk);
	/* Follow mode: at the end of data return -EAGAIN instead of 0 so the
	 * caller can wait and call again (tail -f), unless END was read. */
	int follow;
};

/* Reads and checks the file header.  Takes ownership of io.  Errors:
 * -EPROTO not a .nsk stream, -ENOTSUP newer major or unknown incompat flag
 * (the message says which), -EIO read error. */
int nsk_reader__new(struct nsk_io *io, const struct nsk_reader_opts *opts,
		    struct nsk_reader **out);
/* 1: *rec filled; 0: end of stream; -EAGAIN (follow mode): nothing yet;
 * other negative errno: the stream cannot be read on. */
int nsk_reader__next(struct nsk_reader *r, struct nsk_record *rec);
const struct nsk_file_info *nsk_reader__info(const struct nsk_reader *r);
const struct nsk_reader_stats *nsk_reader__stats(const struct nsk_reader *r);
/* The last error as a one-line message ("" if none). */
const char *nsk_reader__error(const struct nsk_reader *r);
void nsk_reader__free(struct nsk_reader *r); /* also frees the io */

/* An off-CPU reason's name ("lock", "disk", ...; "other" for an unknown
 * value) and back (-EINVAL for an unknown name).  format/names.c. */
const char *nsk_offcpu_reason__name(uint32_t reason);
int nsk_offcpu_reason__parse(const char *name);

#endif
