/* The off-CPU classification table: kernel stack + syscall -> reason.
 *
 * Applied in user space, once per recorded interval, after the kernel stack
 * at switch-out has been symbolized.  The order of decisions:
 *
 *   1. preempted while runnable                      -> runqueue
 *   2. the stack rules below, in table order: the first rule that matches
 *      any frame of the stack wins (rule order is priority, frame position
 *      is not: a wait inside a page fault is a page fault even when the
 *      frame that slept is io_schedule)
 *   3. the syscall rules, for stacks nothing matched (or no kernel stack)
 *   4. other, detail = first frame that is not the scheduler's own
 *
 * Names are matched on the function name as kallsyms gives it, with
 * compiler suffixes (.isra.0, .cold, .constprop.0) left in: PREFIX and
 * SUBSTR rules are written so the suffixes do not matter.  Keep
 * docs/blocking.md in step with this table.
 */
#include <errno.h>
#include <string.h>

#include "record/offcpu_reason.h"

enum match { PREFIX, SUBSTR };

struct stack_rule {
	enum match how;
	const char *pat;
	enum nsk_offcpu_reason reason;
};

/* In priority order. */
static const struct stack_rule stack_rules[] = {
	/* Blocked inside a page fault, whatever it then waited on. */
	{ PREFIX, "exc_page_fault", NSK_OFFCPU_PAGE_FAULT },
	{ PREFIX, "do_user_addr_fault", NSK_OFFCPU_PAGE_FAULT },
	{ PREFIX, "handle_mm_fault", NSK_OFFCPU_PAGE_FAULT },
	/* Locks: futexes (pthread mutexes, condvars, rwlocks), kernel mutexes,
	 * rwsems, semaphores.  Before disk: waiting for the inode lock held
	 * by another fsync is waiting on a lock. */
	{ PREFIX, "futex_", NSK_OFFCPU_LOCK },
	{ PREFIX, "__futex_", NSK_OFFCPU_LOCK },
	{ SUBSTR, "mutex_lock", NSK_OFFCPU_LOCK },
	{ PREFIX, "rwsem_down_", NSK_OFFCPU_LOCK },
	{ PREFIX, "percpu_down_", NSK_OFFCPU_LOCK },
	{ PREFIX, "rt_mutex_", NSK_OFFCPU_LOCK },
	{ PREFIX, "__down", NSK_OFFCPU_LOCK },
	/* Disk: block I/O, page cache, writeback, journal, fsync; the
	 * operation (fsync, direct I/O, journal) before the generic waits so
	 * the detail names it. */
	{ PREFIX, "jbd2_", NSK_OFFCPU_DISK },
	{ SUBSTR, "_sync_file", NSK_OFFCPU_DISK },
	{ SUBSTR, "_fsync", NSK_OFFCPU_DISK },
	{ PREFIX, "file_write_and_wait", NSK_OFFCPU_DISK },
	{ PREFIX, "__filemap_fdatawait", NSK_OFFCPU_DISK },
	{ PREFIX, "iomap_dio", NSK_OFFCPU_DISK },
	{ PREFIX, "__blkdev_direct_IO", NSK_OFFCPU_DISK },
	{ PREFIX, "submit_bio_wait", NSK_OFFCPU_DISK },
	{ PREFIX, "blk_", NSK_OFFCPU_DISK },
	{ PREFIX, "bio_", NSK_OFFCPU_DISK },
	{ PREFIX, "filemap_", NSK_OFFCPU_DISK },
	{ PREFIX, "folio_wait", NSK_OFFCPU_DISK },
	{ PREFIX, "__folio_lock", NSK_OFFCPU_DISK },
	{ PREFIX, "wait_on_page", NSK_OFFCPU_DISK },
	{ SUBSTR, "wait_on_buffer", NSK_OFFCPU_DISK },
	{ PREFIX, "bit_wait_io", NSK_OFFCPU_DISK },
	{ PREFIX, "io_schedule", NSK_OFFCPU_DISK },
	/* Another process: pipes, unix sockets, children, signals.  Before
	 * network: unix datagram receives sleep in the generic datagram
	 * code too. */
	{ SUBSTR, "pipe_read", NSK_OFFCPU_PROCESS },
	{ SUBSTR, "pipe_write", NSK_OFFCPU_PROCESS },
	{ PREFIX, "pipe_wait", NSK_OFFCPU_PROCESS },
	{ PREFIX, "unix_", NSK_OFFCPU_PROCESS },
	{ PREFIX, "do_wait", NSK_OFFCPU_PROCESS },
	{ PREFIX, "__do_wait", NSK_OFFCPU_PROCESS },
	{ PREFIX, "kernel_wait", NSK_OFFCPU_PROCESS },
	{ PREFIX, "ptrace_stop", NSK_OFFCPU_PROCESS },
	{ PREFIX, "do_signal_stop", NSK_OFFCPU_PROCESS },
	{ PREFIX, "sigsuspend", NSK_OFFCPU_PROCESS },
	/* Network: socket waits. */
	{ PREFIX, "sk_wait_data", NSK_OFFCPU_NETWORK },
	{ PREFIX, "sk_stream_wait", NSK_OFFCPU_NETWORK },
	{ PREFIX, "inet_csk_accept", NSK_OFFCPU_NETWORK },
	{ PREFIX, "inet_csk_wait_for_connect", NSK_OFFCPU_NETWORK },
	{ PREFIX, "inet_wait_for_connect", NSK_OFFCPU_NETWORK },
	{ PREFIX, "__inet_stream_connect", NSK_OFFCPU_NETWORK },
	{ PREFIX, "tcp_recvmsg", NSK_OFFCPU_NETWORK },
	{ PREFIX, "tcp_sendmsg", NSK_OFFCPU_NETWORK },
	{ PREFIX, "udp_recvmsg", NSK_OFFCPU_NETWORK },
	{ PREFIX, "udpv6_recvmsg", NSK_OFFCPU_NETWORK },
	{ PREFIX, "__skb_wait_for_more_packets", NSK_OFFCPU_NETWORK },
	{ PREFIX, "__skb_recv_datagram", NSK_OFFCPU_NETWORK },
	{ PREFIX, "__lock_sock", NSK_OFFCPU_NETWORK },
	/* Waiting for any of several things, with nothing to do. */
	{ PREFIX, "ep_poll", NSK_OFFCPU_POLL },
	{ PREFIX, "do_epoll_wait", NSK_OFFCPU_POLL },
	{ PREFIX, "do_epoll_pwait", NSK_OFFCPU_POLL },
	{ PREFIX, "do_sys_poll", NSK_OFFCPU_POLL },
	{ PREFIX, "do_poll", NSK_OFFCPU_POLL },
	{ PREFIX, "do_select", NSK_OFFCPU_POLL },
	{ PREFIX, "core_sys_select", NSK_OFFCPU_POLL },
	{ PREFIX, "io_cqring_wait", NSK_OFFCPU_POLL },
	/* Sleeping on purpose. */
	{ PREFIX, "do_nanosleep", NSK_OFFCPU_SLEEP },
	{ PREFIX, "hrtimer_nanosleep", NSK_OFFCPU_SLEEP },
	{ PREFIX, "common_nsleep", NSK_OFFCPU_SLEEP },
	{ SUBSTR, "clock_nanosleep", NSK_OFFCPU_SLEEP },
	{ PREFIX, "msleep", NSK_OFFCPU_SLEEP },
	{ PREFIX, "__x64_sys_pause", NSK_OFFCPU_PROCESS },
};

struct syscall_rule {
	int nr;
	const char *name;
	enum nsk_offcpu_reason reason;
};

/* x86-64 numbers; used when no stack rule matched. */
static const struct syscall_rule syscall_rules[] = {
	{ 202, "futex", NSK_OFFCPU_LOCK },
	{ 449, "futex_waitv", NSK_OFFCPU_LOCK },
	{ 454, "futex_wait", NSK_OFFCPU_LOCK },
	{ 74, "fsync", NSK_OFFCPU_DISK },
	{ 75, "fdatasync", NSK_OFFCPU_DISK },
	{ 162, "sync", NSK_OFFCPU_DISK },
	{ 277, "sync_file_range", NSK_OFFCPU_DISK },
	{ 306, "syncfs", NSK_OFFCPU_DISK },
	{ 61, "wait4", NSK_OFFCPU_PROCESS },
	{ 247, "waitid", NSK_OFFCPU_PROCESS },
	{ 34, "pause", NSK_OFFCPU_PROCESS },
	{ 130, "rt_sigsuspend", NSK_OFFCPU_PROCESS },
	{ 128, "rt_sigtimedwait", NSK_OFFCPU_PROCESS },
	{ 42, "connect", NSK_OFFCPU_NETWORK },
	{ 43, "accept", NSK_OFFCPU_NETWORK },
	{ 288, "accept4", NSK_OFFCPU_NETWORK },
	{ 44, "sendto", NSK_OFFCPU_NETWORK },
	{ 45, "recvfrom", NSK_OFFCPU_NETWORK },
	{ 46, "sendmsg", NSK_OFFCPU_NETWORK },
	{ 47, "recvmsg", NSK_OFFCPU_NETWORK },
	{ 299, "recvmmsg", NSK_OFFCPU_NETWORK },
	{ 7, "poll", NSK_OFFCPU_POLL },
	{ 23, "select", NSK_OFFCPU_POLL },
	{ 232, "epoll_wait", NSK_OFFCPU_POLL },
	{ 270, "pselect6", NSK_OFFCPU_POLL },
	{ 271, "ppoll", NSK_OFFCPU_POLL },
	{ 281, "epoll_pwait", NSK_OFFCPU_POLL },
	{ 441, "epoll_pwait2", NSK_OFFCPU_POLL },
	{ 426, "io_uring_enter", NSK_OFFCPU_POLL },
	{ 35, "nanosleep", NSK_OFFCPU_SLEEP },
	{ 230, "clock_nanosleep", NSK_OFFCPU_SLEEP },
};

static int rule_matches(const struct stack_rule *r, const char *fn)
{
	if (r->how == PREFIX)
		return !strncmp(fn, r->pat, strlen(r->pat));
	return strstr(fn, r->pat) != NULL;
}

/* The scheduler's own frames: never a reason, never a detail. */
static int is_sched_frame(const char *fn)
{
	static const char *const own[] = {
		"__schedule", "schedule", "preempt_schedule", "__switch_to",
		"__cond_resched", "__traceiter_", "finish_task_switch",
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strncmp(fn, own[i], strlen(own[i])))
			return 1;
	return 0;
}

enum nsk_offcpu_reason nsk_offcpu__classify(const struct nsk_offcpu_facts *f,
					    const char **detail)
{
	*detail = NULL;
	if (f->preempted) {
		*detail = "preempted";
		return NSK_OFFCPU_RUNQUEUE;
	}
	for (size_t r = 0; r < sizeof(stack_rules) / sizeof(stack_rules[0]); r++)
		for (size_t i = 0; i < f->nkfuncs; i++) {
			const char *fn = f->kfuncs[i];

			if (fn && rule_matches(&stack_rules[r], fn)) {
				*detail = fn;
				return stack_rules[r].reason;
			}
		}
	for (size_t r = 0; r < sizeof(syscall_rules) / sizeof(syscall_rules[0]); r++)
		if (syscall_rules[r].nr == f->syscall) {
			*detail = syscall_rules[r].name;
			return syscall_rules[r].reason;
		}
	for (size_t i = 0; i < f->nkfuncs; i++)
		if (f->kfuncs[i] && !is_sched_frame(f->kfuncs[i])) {
			*detail = f->kfuncs[i];
			break;
		}
	return NSK_OFFCPU_OTHER;
}

/* Frames that mean "this ran in an interrupt": the task that was current
 * is not the waker. */
static const char *const irq_frames[] = {
	"asm_sysvec_", "sysvec_", "__sysvec_", "asm_common_interrupt",
	"common_interrupt", "asm_exc_nmi", "handle_irq_event",
};

const char *nsk_offcpu__waker_kind(const char *const *kfuncs, size_t n)
{
	int irq = 0, timer = 0;

	for (size_t i = 0; i < n; i++) {
		const char *fn = kfuncs[i];

		if (!fn)
			continue;
		if (!strncmp(fn, "hrtimer_wakeup", 14) ||
		    !strncmp(fn, "hrtimer_interrupt", 17) ||
		    !strncmp(fn, "process_timeout", 15) ||
		    !strncmp(fn, "call_timer_fn", 13))
			timer = 1;
		for (size_t j = 0; j < sizeof(irq_frames) / sizeof(irq_frames[0]); j++)
			if (!strncmp(fn, irq_frames[j], strlen(irq_frames[j])))
				irq = 1;
	}
	if (!irq)
		return NULL;
	return timer ? "[timer]" : "[irq]";
}
