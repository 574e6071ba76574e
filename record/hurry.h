/* Finishing promptly after a stop signal on an overloaded machine.
 *
 * After SIGINT the user waits for the recorder.  On a machine loaded past
 * its cores (load 14-18 on 2 CPUs, measured) the recorder's threads got a
 * few percent of a CPU each, so the ~60 ms of CPU that finishing a
 * recording takes (the last drain, the final reads of the BPF maps, the
 * teardown) stretched to 1.5-3 s, most of it waiting to run.  From the
 * stop on, the recorder's threads take a higher priority (root or
 * CAP_SYS_NICE; without them nothing changes).  The work itself is bounded
 * elsewhere: the last drain by a deadline, what is left by a ring's worth.
 */
#ifndef NUSKU_RECORD_HURRY_H
#define NUSKU_RECORD_HURRY_H

#include <sys/types.h>

/* The nice value taken after a stop signal. */
#define NSK_HURRY_NICE (-10)

/* Raises thread tid's priority; async-signal-safe (one syscall, errno
 * kept). */
void nsk_hurry__thread(pid_t tid);

/* Notes the threads this process has now, for nsk_hurry__armed: a signal
 * handler cannot list them.  Again after new threads start. */
void nsk_hurry__arm(void);

/* Raises the priority of the threads noted; async-signal-safe.  All of
 * them at once: the session's thread, raised alone, waited on the
 * draining thread's lock while that thread waited to run (0.85 s at load
 * 27). */
void nsk_hurry__armed(void);

/* Raises the priority of every thread of this process. */
void nsk_hurry__all(void);

#endif
