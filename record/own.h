/* Nusku's own cost: which BPF programs are ours, which kernel functions are
 * probe machinery, and what our programs' run time was.
 *
 * A CPU sample taken while the target runs one of our probes is not the
 * program's work.  The recorder knows its own programs exactly (it holds
 * their fds), so it marks such samples itself, as NSK_STACK_OWN on their
 * stack, and a report on any machine shows them as one [nusku] frame.
 * Pure: no session, so the rules are testable without BPF.
 */
#ifndef NUSKU_RECORD_OWN_H
#define NUSKU_RECORD_OWN_H

#include <stdint.h>

struct nsk_own;

/* The kernel's run-time statistics (BPF_ENABLE_STATS: an fd that keeps
 * them on while held, and puts kernel.bpf_stats_enabled back as it was
 * when closed) are not left on: two clock reads in every run of every BPF
 * program on the machine cost about 70 ns here, a third of what a
 * syscall probe costs, paid by the target and by every other process.  So
 * they are on in windows (nsk_own__start): NSK_OWN_WINDOW_NS of every
 * NSK_OWN_PERIOD_NS from the start of the recording, and the cost is
 * estimated from them.  Failing to turn them on is not an error: the cost
 * is then not recorded. */
int nsk_own__new(struct nsk_own **out);
void nsk_own__free(struct nsk_own *o);

#define NSK_OWN_WINDOW_NS 100000000ull	/* 100 ms on */
#define NSK_OWN_PERIOD_NS 2000000000ull /* of every 2 s: 5% */

/* Opens the first window now; a thread of its own closes and opens them
 * as their time comes.  Not the session's loop: its thread gives way to
 * the program (record/spill.h) and may not run for a second, and a window
 * held open meanwhile costs the whole machine.  0 or -errno. */
int nsk_own__start(struct nsk_own *o);

/* Learns the BPF programs this process holds, and the probe-type
 * programs of the system (tracepoint, perf event, k/uprobe, tracing: a
 * second tracer on the same hooks runs through the same machinery), with
 * their JIT images.  Call once every signal is loaded; -errno. */
int nsk_own__scan(struct nsk_own *o);
/* Scans again, at most every 100 ms: for a kernel frame in BPF code
 * (kallsyms module "bpf") that no known image holds. */
int nsk_own__rescan(struct nsk_own *o);

/* 1 when addr is inside the JIT image of a probe program (ours or a
 * probe-type program of another tracer), -1 inside another kind of
 * program's (cgroup, socket, XDP), 0 in no image a scan saw. */
int nsk_own__prog_at(const struct nsk_own *o, uint64_t addr);
/* The name kallsyms gives the program whose image holds addr
 * (bpf_prog_TAG_NAME), valid while o is; 0 when no scan saw one there. */
int nsk_own__name_at(const struct nsk_own *o, uint64_t addr, const char **name);

/* 1 when a kernel function is part of the machinery that runs probes
 * (uprobe breakpoints and return trampolines, BPF tracepoint and perf
 * event dispatch).  outermost: the function is the kernel's entry from
 * user space (where int3 means a uprobe breakpoint). */
int nsk_own__machinery(const char *name, int outermost);

struct nsk_own_cost {
	uint64_t run_ns; /* run time of our programs, summed (estimated) */
	uint64_t runs;	 /* how many times they ran (estimated) */
	uint32_t progs;	 /* programs read */
	uint64_t on_ns;	 /* the windows' length, summed */
	uint64_t total_ns; /* the time since nsk_own__new */
};

/* Our programs' run time so far (bpf_obj_get_info_by_fd; libbpf 1.1 has
 * no bpf_prog_get_info_by_fd): what the windows measured, scaled by
 * total_ns / on_ns.  Visits each program with its name and its scaled
 * figures, for a per-program account, when visit is set. */
int nsk_own__cost(struct nsk_own *o, struct nsk_own_cost *c,
		  void (*visit)(void *ctx, const char *name, uint64_t run_ns,
				uint64_t runs),
		  void *ctx);

/* The same figures so far, for a running recording's state (about once
 * a second), leaving the statistics window as it is. */
int nsk_own__cost_so_far(struct nsk_own *o, struct nsk_own_cost *c);

/* Why statistics are off (0 when they are on): -errno of BPF_ENABLE_STATS. */
int nsk_own__stats_error(const struct nsk_own *o);

#endif
