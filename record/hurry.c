/* Finishing promptly after a stop signal (see hurry.h). */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/hurry.h"

#define NSK_HURRY_MAX 64

static pid_t armed[NSK_HURRY_MAX];
static volatile int narmed;

void nsk_hurry__thread(pid_t tid)
{
	int saved = errno;

	struct sched_param p = { 0 };

	/* out of SCHED_IDLE (the session's thread gives way while the
	 * program runs, spill.h), whatever raced with its way back; the raw
	 * call keeps no glibc state, as a signal handler needs */
	if (syscall(SYS_sched_setscheduler, tid, SCHED_OTHER, &p)) {
		/* not allowed: as it is */
	}
	/* Linux: PRIO_PROCESS names a thread */
	if (setpriority(PRIO_PROCESS, (id_t)tid, NSK_HURRY_NICE)) {
		/* not allowed: finish at the priority we have */
	}
	errno = saved;
}

/* Calls fn on every thread of this process. */
static void each_thread(void (*fn)(pid_t))
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			fn((pid_t)atoi(e->d_name));
	closedir(d);
}

static void note(pid_t tid)
{
	int n = narmed;

	for (int i = 0; i < n; i++)
		if (armed[i] == tid)
			return;
	if (n < NSK_HURRY_MAX) {
		armed[n] = tid;
		narmed = n + 1; /* after the slot: a handler reads up to narmed */
	}
}

void nsk_hurry__arm(void)
{
	each_thread(note);
}

void nsk_hurry__armed(void)
{
	for (int i = 0; i < narmed; i++)
		nsk_hurry__thread(armed[i]);
}

void nsk_hurry__all(void)
{
	each_thread(nsk_hurry__thread);
}
