/* The batch of frees of sampled blocks (see free_batch.h). */
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "preload/free_batch.h"
#include "preload/probes.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* in .data: see sampled_set.c's filter */
static struct nsk_sampler_batch batch __attribute__((section(".data")));
static int lock;     /* 1 while a thread holds the batch */
static int final;    /* the process is ending: no batching */
static pid_t owner;  /* the process whose batch this is (0: not known yet) */
static TLS int tl_holding;
static TLS int tl_fork_held; /* before_fork took the lock */
static TLS uint32_t tl_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock BPF's ktime reads */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The thread says it is inside before it takes the lock and until it has
 * let go, so a signal handler that frees at any moment in between goes
 * around the batch instead of spinning on its own thread's lock. */
static int hold(void)
{
	if (__atomic_load_n(&tl_holding, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&tl_holding, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (int spins = 0; __atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE); spins++) {
		while (__atomic_load_n(&lock, __ATOMIC_RELAXED)) {
			if (++spins > 64)
				sched_yield(); /* the holder may be preempted in its trap */
			else
				cpu_relax();
		}
	}
	return 1;
}

static void unhold(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tl_holding, 0, __ATOMIC_RELAXED);
}

/* A process made by a raw clone (no fork handlers run) finds the batch as
 * its parent left it: the parent's frees, its owner, perhaps its lock.
 * The probes' page tells (preload/probes.h); the child, one thread,
 * starts the batch anew before it first uses it. */
static void restart_in_child(void)
{
	batch.n = 0;
	batch.dropped = 0;
	owner = (pid_t)syscall(SYS_getpid);
	tl_tid = 0;
	tl_fork_held = 0;
	__atomic_store_n(&tl_holding, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	nsk_probes__claim_batch();
}

static inline void own_batch(void)
{
	if (__builtin_expect(!nsk_probes__batch_mine(), 0))
		restart_in_child();
}

/* Told by itself, the lock held: the probe reads it in the trap. */
static void tell(void)
{
	nsk_probe__free((uintptr_t)&batch, NSK_SAMPLER_FN_BATCH, 0);
	batch.n = 0;
	batch.dropped = 0;
}

struct nsk_sampler_batch *nsk_free_batch__take(void)
{
	own_batch();
	return hold() ? &batch : NULL;
}

void nsk_free_batch__told(struct nsk_sampler_batch *b)
{
	if (!b)
		return;
	b->n = 0;
	b->dropped = 0;
	unhold();
}

int nsk_free_batch__add(uint64_t addr, uint32_t fn, uint64_t size)
{
	struct nsk_sampler_freed *f;
	uint64_t t;

	own_batch();
	if (__atomic_load_n(&final, __ATOMIC_ACQUIRE) || !hold())
		return -1;
	if (!tl_tid)
		tl_tid = (uint32_t)syscall(SYS_gettid);
	t = now_ns();
	f = &batch.e[batch.n++];
	f->time = t;
	f->addr = addr;
	f->size = size;
	f->fn = fn;
	f->tid = tl_tid;
	/* full, or its first has waited long enough (a live view shows it) */
	if (batch.n == NSK_SAMPLER_BATCH || t - batch.e[0].time > NSK_SAMPLER_BATCH_NS)
		tell();
	unhold();
	return 0;
}

void nsk_free_batch__drop(void)
{
	own_batch();
	if (!hold())
		return; /* inside the sampler already: the count is lost */
	batch.dropped++;
	unhold();
}

void nsk_free_batch__start(void)
{
	owner = (pid_t)syscall(SYS_getpid);
}

void nsk_free_batch__final(void)
{
	own_batch();
	if (owner != (pid_t)syscall(SYS_getpid) || !hold())
		return; /* a vfork child, or this thread is inside already */
	__atomic_store_n(&final, 1, __ATOMIC_RELEASE);
	if (batch.n || batch.dropped)
		tell();
	unhold();
}

void nsk_free_batch__before_fork(void)
{
	tl_fork_held = hold();
}

void nsk_free_batch__after_fork_parent(void)
{
	if (tl_fork_held)
		unhold();
}

void nsk_free_batch__after_fork_child(void)
{
	batch.n = 0;
	batch.dropped = 0;
	owner = (pid_t)syscall(SYS_getpid);
	tl_tid = 0;
	tl_fork_held = 0;
	nsk_probes__claim_batch();
	unhold();
}
