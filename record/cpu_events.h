/* The perf events the cpu signal samples with, and where they count.
 *
 * A recording of every process (-a) opens one cpu-clock event per online
 * CPU.  A recording of a launched program or of a running process opens
 * events on the target's own threads instead, inherited by the threads and
 * children they start: the clock then runs only while a target runs, and
 * no other process on the machine takes a sampling interrupt (a per-CPU
 * event interrupts every CPU 999 times a second, whoever runs there: ~20
 * us each on a virtual machine, ~3% of a bystander's time).  This is what
 * perf record does for a command or -p.
 *
 * The BPF program attached to an event is inherited with it, so a child
 * event runs the same program; its target filter still decides.
 */
#ifndef NUSKU_RECORD_CPU_EVENTS_H
#define NUSKU_RECORD_CPU_EVENTS_H

#include <sys/types.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

struct nsk_cpu_events;

/* Where the events go: every CPU (all), or the threads of pid, which is
 * a launched child that has not started yet when launched is set (one
 * thread, nothing can start under us) or a running process (its threads
 * are listed until a pass finds no new one: a thread started by one
 * whose event is open inherits it). */
struct nsk_cpu_where {
	int all;
	pid_t pid;
	int launched;
};

/* Opens the events of attr where says, attaches prog to each, and returns
 * them in *out.  A process with more threads than the recorder may have
 * descriptors (two a thread, after the soft limit is raised to the hard
 * one) is sampled per CPU instead.  -ESRCH when the process is gone,
 * -ENODEV when no CPU could be opened, or the error of perf_event_open or
 * the attach. */
int nsk_cpu_events__open(const struct nsk_cpu_where *where,
			 const struct perf_event_attr *attr,
			 struct bpf_program *prog, struct nsk_cpu_events **out);

/* Whether the events are per CPU (-a, or the fallback above): every
 * process on the machine then takes the sampling interrupts. */
int nsk_cpu_events__per_cpu(const struct nsk_cpu_events *ev);

/* Detaches and closes; accepts NULL. */
void nsk_cpu_events__close(struct nsk_cpu_events *ev);

#endif
