/* The one place that owns the database schema.  Each signal has a block:
 * its CREATE TABLE statements, the indexes made after the bulk load (an
 * index maintained during a million inserts costs more than building it
 * once), and its event tables.  Adding a signal = adding a block here, a
 * loader file and a view file.
 *
 * Names are resolved at load: frames carry their function name through
 * func, stacks carry their paths, samples their comm id; nobody needs the
 * file's string ids after the load. */
#include <errno.h>
#include <stddef.h>

#include "report/schema.h"
#include "report/syscall_names.h"

/* ---- core: the recording, processes, code locations, stacks, losses ---- */
static const char *const core_create[] = {
	/* What the loader learned: file, format, time span, reader stats,
	 * unresolved counts (see docs/schema.md for the keys). */
	"CREATE TABLE recording (key TEXT PRIMARY KEY, value)",
	/* Problems the reader reported (truncation, corruption), in order. */
	"CREATE TABLE problem (seq INTEGER PRIMARY KEY, message TEXT)",
	"CREATE TABLE meta (key TEXT, value TEXT)",
	"CREATE TABLE clock (monotonic_ns INTEGER, realtime_ns INTEGER)",
	"CREATE TABLE process (time INTEGER, pid INTEGER, ppid INTEGER, "
	"how TEXT, comm TEXT, cmdline TEXT)",
	"CREATE TABLE thread (time INTEGER, pid INTEGER, tid INTEGER, name TEXT)",
	"CREATE TABLE exit (time INTEGER, pid INTEGER, tid INTEGER, "
	"exit_code INTEGER)",
	/* Thread names as the loader tracked them; events point here. */
	"CREATE TABLE comm (id INTEGER PRIMARY KEY, name TEXT)",
	"CREATE TABLE mapping (id INTEGER PRIMARY KEY, pid INTEGER, "
	"start INTEGER, end INTEGER, pgoff INTEGER, path TEXT, build_id TEXT, "
	/* 1: the file had no symbol table, nor a debug file (format 1.2) */
	"no_symbols INTEGER)",
	/* A function: the unit --by function counts.  Unresolved code gets a
	 * name "module+0xoffset"; ids the file never defined get
	 * "[unknown frame N]" (unresolved = 1 in both cases). */
	"CREATE TABLE func (id INTEGER PRIMARY KEY, name TEXT, module TEXT, "
	"kernel INTEGER, unresolved INTEGER)",
	"CREATE TABLE frame (id INTEGER PRIMARY KEY, func_id INTEGER, "
	"mapping_id INTEGER, addr INTEGER, file TEXT, line INTEGER, "
	"flags INTEGER, inline_parent INTEGER, known INTEGER)",
	/* path: root first, ';'-separated (flamegraph's folded form);
	 * chain: leaf first, ' <- '-separated (for text reports). */
	"CREATE TABLE stack (id INTEGER PRIMARY KEY, flags INTEGER, "
	"depth INTEGER, leaf_func_id INTEGER, path TEXT, chain TEXT, "
	"known INTEGER)",
	/* A stack's frames with inline frames expanded, leaf first (pos 0).
	 * level is the position of the address in the recorded stack. */
	"CREATE TABLE stack_frame (stack_id INTEGER, pos INTEGER, "
	"level INTEGER, frame_id INTEGER, func_id INTEGER, inlined INTEGER, "
	"PRIMARY KEY (stack_id, pos)) WITHOUT ROWID",
	/* Each function of a stack once (recursion counts once); leaf = 1
	 * for the function that was running. */
	"CREATE TABLE stack_func (stack_id INTEGER, func_id INTEGER, "
	"leaf INTEGER, PRIMARY KEY (stack_id, func_id)) WITHOUT ROWID",
	"CREATE TABLE loss (time_start INTEGER, time_end INTEGER, source TEXT, "
	"count INTEGER)",
	NULL
};

static const char *const core_index[] = {
	NULL
};

/* ---- cpu: samples ---- */
static const char *const cpu_create[] = {
	"CREATE TABLE sample (time INTEGER, pid INTEGER, tid INTEGER, "
	"cpu INTEGER, stack_id INTEGER, weight INTEGER, comm_id INTEGER)",
	NULL
};

static const char *const cpu_index[] = {
	NULL
};

/* ---- alloc ---- */
static const char *const alloc_create[] = {
	/* One row per allocation; addr 0: the call failed.  weight: bytes the
	 * row stands for (= size unless sampled).  fn: malloc, calloc, ...,
	 * mmap, brk, reserve (address space only: not heap), mprotect (a
	 * commit inside a reservation); C++ operator new is recorded as
	 * malloc. */
	"CREATE TABLE alloc (id INTEGER PRIMARY KEY, time INTEGER, pid INTEGER, "
	"tid INTEGER, comm_id INTEGER, addr INTEGER, size INTEGER, "
	"weight INTEGER, stack_id INTEGER, fn TEXT)",
	/* One row per free; alloc_id: the allocation it ends, NULL when the
	 * recording never saw it allocated (before an attach).  fn: free,
	 * realloc (the old block), munmap, brk, mprotect, implied (the
	 * address was handed out again, so it was freed unseen), exit (never
	 * freed: its process exited or exec'd, live at exit). */
	"CREATE TABLE free (time INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, addr INTEGER, size INTEGER, fn TEXT, "
	"alloc_id INTEGER)",
	/* Instead of alloc and free rows, for a report of the memory views
	 * without filters (report/load_alloc_sum.c; empty in --db files):
	 * per (stack, pid, tid, comm, fn) the allocations (n, their size
	 * and bytes = weights, allocs = weight / size summed), failed calls,
	 * and how they ended: freed, live at the end, live at their
	 * process's exit (_n records, allocations, bytes). */
	"CREATE TABLE alloc_sum (stack_id INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, fn TEXT, n INTEGER, failed INTEGER, size INTEGER, "
	"bytes INTEGER, allocs REAL, frees_n INTEGER, frees REAL, "
	"freed_bytes INTEGER, live_n INTEGER, live_allocs REAL, "
	"live_bytes INTEGER, exit_n INTEGER, exit_allocs REAL, "
	"exit_bytes INTEGER)",
	/* With them, from a second read (report/load_alloc_time.c): peak
	 * live bytes per site (func id), and per interval of --by
	 * memory-time and site, bytes and allocations in and out, of them
	 * gone with their process (exb). */
	"CREATE TABLE alloc_peak (site INTEGER PRIMARY KEY, peak INTEGER)",
	"CREATE TABLE alloc_bucket (bucket INTEGER, site INTEGER, inb REAL, "
	"outb REAL, inn REAL, outn REAL, exb REAL)",
	NULL
};

static const char *const alloc_index[] = {
	"CREATE INDEX free_alloc ON free (alloc_id)",
	NULL
};

/* ---- offcpu: intervals off CPU (docs/blocking.md) ---- */
static const char *const offcpu_create[] = {
	/* reason: "lock", "disk", ... (record/offcpu_reason.c); detail: the
	 * kernel function or syscall that decided it; waker_comm "[timer]" or
	 * "[irq]" with waker_pid 0 when an interrupt woke the thread. */
	"CREATE TABLE offcpu (time INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, duration INTEGER, state INTEGER, reason TEXT, "
	"detail TEXT, syscall INTEGER, wait_addr INTEGER, stack_id INTEGER, "
	"waker_pid INTEGER, waker_tid INTEGER, waker_comm TEXT, "
	"waker_stack_id INTEGER)",
	NULL
};

static const char *const offcpu_index[] = {
	NULL
};

/* ---- syscall ---- */
/* Names by number: the build architecture's (generated from the kernel
 * headers: report/syscall_names.c), replaced by the recorded kernel's own
 * (kernel = 1) when the recording carries them (format 1.1).  Views show
 * "syscall_N" for a build name when the recording's meta "syscall.arch"
 * differs. */
static const char *const syscall_create[] = {
	"CREATE TABLE syscall_name (nr INTEGER PRIMARY KEY, name TEXT, "
	"kernel INTEGER DEFAULT 0)",
	nsk_syscall_names_sql,
	/* One row per NSK_REC_SYSCALL_STAT: a (thread, syscall) over a
	 * window ending at time, exact.  In recordings before format 1.1
	 * the rows of one (tid, nr) split its calls between code paths
	 * (stack_id); since, stack_id is 0 and paths are in syscall_path. */
	"CREATE TABLE syscall_stat (id INTEGER PRIMARY KEY, time INTEGER, "
	"pid INTEGER, tid INTEGER, comm_id INTEGER, nr INTEGER, "
	"stack_id INTEGER, window_ns INTEGER, count INTEGER, errors INTEGER, "
	"total_ns INTEGER, max_ns INTEGER)",
	/* Non-zero latency buckets: bucket b counts calls of [2^b, 2^(b+1)) ns. */
	"CREATE TABLE syscall_hist (stat_id INTEGER, bucket INTEGER, "
	"count INTEGER)",
	/* Failures by errno; 512..516 (ERESTART*) are calls interrupted to be
	 * restarted, not counted in errors. */
	"CREATE TABLE syscall_errno (stat_id INTEGER, errno INTEGER, "
	"name TEXT, count INTEGER)",
	/* Time (and calls) of a (thread, syscall) charged to a code path over
	 * a window: sampled, exact in expectation (NSK_REC_SYSCALL_PATH; for
	 * older recordings, copied from their syscall_stat rows). */
	"CREATE TABLE syscall_path (time INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, nr INTEGER, stack_id INTEGER, window_ns INTEGER, "
	"count INTEGER, total_ns INTEGER)",
	/* Calls slower than --slow-syscall, one by one; time is the entry. */
	"CREATE TABLE syscall_slow (time INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, nr INTEGER, duration INTEGER, ret INTEGER, "
	"errno TEXT, arg0 INTEGER, arg1 INTEGER, arg2 INTEGER, arg3 INTEGER, "
	"arg4 INTEGER, arg5 INTEGER, target TEXT, stack_id INTEGER)",
	NULL
};

static const char *const syscall_index[] = {
	"CREATE INDEX syscall_hist_stat ON syscall_hist (stat_id)",
	"CREATE INDEX syscall_errno_stat ON syscall_errno (stat_id)",
	NULL
};

/* ---- net: TCP connections and retransmits (docs/net.md) ---- */
static const char *const net_create[] = {
	/* One row per connection (a socket seen from its owner's side): the
	 * latest owner and state; local and remote as "addr:port". */
	"CREATE TABLE conn (id INTEGER PRIMARY KEY, family INTEGER, "
	"local TEXT, remote TEXT, pid INTEGER, tid INTEGER, comm_id INTEGER, "
	"state TEXT, first_time INTEGER, last_time INTEGER)",
	/* Every owner, state and owner's stack the recorder learned, in
	 * time: --by retransmit looks back here for the code that owned a
	 * socket when it retransmitted. */
	"CREATE TABLE conn_owner (time INTEGER, conn_id INTEGER, pid INTEGER, "
	"tid INTEGER, comm_id INTEGER, state TEXT, stack_id INTEGER)",
	/* One row per retransmitted segment; pid/tid: the socket's owner.
	 * kind: "timeout" (RTO or fast retransmit), "probe" (tail loss
	 * probe), "synack". */
	"CREATE TABLE retransmit (time INTEGER, pid INTEGER, tid INTEGER, "
	"comm_id INTEGER, conn_id INTEGER, kind TEXT, state TEXT, "
	"srtt_us INTEGER, rto_us INTEGER)",
	NULL
};

static const char *const net_index[] = {
	"CREATE INDEX conn_owner_conn ON conn_owner (conn_id, time)",
	"CREATE INDEX retransmit_conn ON retransmit (conn_id, time)",
	NULL
};

struct block {
	const char *signal;
	const char *const *create;
	const char *const *index;
};

static const struct block blocks[] = {
	{ "core", core_create, core_index },
	{ "cpu", cpu_create, cpu_index },
	{ "alloc", alloc_create, alloc_index },
	{ "offcpu", offcpu_create, offcpu_index },
	{ "syscall", syscall_create, syscall_index },
	{ "net", net_create, net_index },
};

const struct nsk_event_table nsk_schema__events[] = {
	{ "sample", "CPU samples" },
	{ "alloc", "allocations" },
	{ "free", "frees" },
	{ "offcpu", "off-CPU intervals" },
	{ "syscall_stat", "syscall aggregates" },
	{ "syscall_slow", "slow syscalls" },
	{ "syscall_path", "syscall path samples" },
	{ "retransmit", "TCP retransmits" },
	{ "conn_owner", "TCP connection updates" },
};
const unsigned nsk_schema__nevents =
	sizeof(nsk_schema__events) / sizeof(nsk_schema__events[0]);

static int run_all(sqlite3 *db, int create, char **errmsg)
{
	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
		const char *const *sql = create ? blocks[b].create : blocks[b].index;

		for (; *sql; sql++)
			if (sqlite3_exec(db, *sql, NULL, NULL, errmsg) != SQLITE_OK)
				return -EIO;
	}
	return 0;
}

int nsk_schema__create(sqlite3 *db, char **errmsg)
{
	return run_all(db, 1, errmsg);
}

int nsk_schema__index(sqlite3 *db, char **errmsg)
{
	return run_all(db, 0, errmsg);
}
