/* CPU samples, from bpf/cpu.bpf.c to record/cpu.c.
 *
 * A sample carries its stacks by value (kernel ips then user ips, leaf
 * first), never a stack-map id: those collide, and user space interns.
 * The record is variable-length: only nkernel + nuser ips are sent.
 */
#ifndef NUSKU_EVENTS_CPU_H
#define NUSKU_EVENTS_CPU_H

#include <nusku/events/common.h>
#include <nusku/events/ustack.h>

/* Indexes of the per-CPU counters (map cpu_lost): losses first. */
#define NSK_CPU_LOST_RINGBUF 0 /* ring buffer full: sample dropped */
#define NSK_CPU_LOST_KSTACK 1  /* kernel stack walk failed */
#define NSK_CPU_LOST_USTACK 2  /* user stack walk failed */
#define NSK_CPU_LOST_MAX 3
/* Not a loss: samples the events took of a process not recorded (a
 * child not followed, the recorder under -a, a target after the recording
 * ended; not a target's last thread on its way out).  A recording of a launched program or of -p PID samples its
 * threads only (record/cpu_events.h), so a process outside it adds none. */
#define NSK_CPU_ELSEWHERE 3
#define NSK_CPU_COUNTERS 4 /* the map's size */

/* Pending uretprobes a sample reports (innermost first); deeper ones are
 * left as the trampoline address. */
#define NSK_CPU_URET_MAX 4

/* flags */
#define NSK_EV_CPU_USTACK_ERR 1u
#define NSK_EV_CPU_KSTACK_ERR 2u

/* A uretprobe pending in the sampled thread: the kernel replaced the
 * return address at slot (a user stack address) with its trampoline, and
 * ret is the real one. */
struct nsk_ev_uret {
	__u64 slot;
	__u64 ret;
};

struct nsk_ev_cpu_sample {
	struct nsk_ev_header hdr; /* NSK_EV_CPU_SAMPLE */
	__u64 time;
	__u64 period; /* ns of CPU this sample stands for */
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 flags;
	__u32 nkernel;
	__u32 nuser;
	/* the uprobes page of the process (its first bytes are the uretprobe
	 * trampoline), 0: none yet; and the uretprobes pending, so that user
	 * space puts the real return addresses back into the stack copy */
	__u64 xol;
	__u32 nuret;
	__u32 pad;
	struct nsk_ev_uret uret[NSK_CPU_URET_MAX];
	/* --call-graph dwarf/auto: registers and ustack.len bytes of user
	 * stack, sent right after the nkernel + nuser ips in use */
	struct nsk_ev_ustack ustack;
	__u64 ips[2 * NSK_MAX_STACK_DEPTH];
	__u8 stack_room[NSK_USTACK_ROOM];
};

#define NSK_EV_CPU_SAMPLE_HDR_SIZE 160
_Static_assert(sizeof(struct nsk_ev_cpu_sample) ==
		       NSK_EV_CPU_SAMPLE_HDR_SIZE + 8 * 2 * NSK_MAX_STACK_DEPTH +
			       NSK_USTACK_ROOM,
	       "nsk_ev_cpu_sample size");

#endif
