/* libnusku_alloc.so: the allocation sampler Nusku preloads into the
 * programs it launches (docs/alloc.md).
 *
 * It interposes the malloc family and passes every call on to the next
 * definition (RTLD_NEXT: the program's own allocator when it links one,
 * else libc), so the program's allocator is unchanged.  Per thread, a byte
 * counter runs down by each allocation's size; when it crosses zero the
 * allocation is sampled, with the probability 1 - exp(-S/R) of a Poisson
 * process of mean interval R over the allocated bytes, and recorded with
 * the weight S / (1 - exp(-S/R)), so totals stay unbiased.  Only sampled
 * allocations, the frees of sampled blocks and failed calls (of malloc
 * and calloc, those the counter stops at) reach the probe points
 * (preload/probes.h, nusku/events/sampler.h), whose uprobes exist only
 * while a recording runs and whose breakpoints only processes that load
 * this library can meet; the frees wait in a batch for the next sampled
 * allocation (preload/free_batch.c).  An unsampled malloc costs a
 * thread-local subtraction; an unsampled free a look at a 16 KiB filter
 * (preload/sampled_set.c).
 *
 * NUSKU_ALLOC_SAMPLE is R in bytes; 1 reports every call (exact mode, no
 * set to keep); absent or 0 leaves the library passive.
 *
 * Nothing here allocates.  Until dlsym has found the next allocator (its
 * own calls may come back here), allocations come from an arena, mapped
 * at its first use, whose blocks are never freed.  The library is never built with
 * sanitizers: it runs inside other programs.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/mman.h>

#include "nusku/events/sampler.h"
#include "nusku/names.h"
#include "preload/free_batch.h"
#include "preload/probes.h"
#include "preload/sampling_math.h"
#include "preload/sampled_set.h"

#define EXPORT __attribute__((visibility("default")))

/* <malloc.h> declares these two; it is not included, for its hooks. */
EXPORT void *memalign(size_t align, size_t size);
EXPORT void *pvalloc(size_t size);
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define unlikely(x) __builtin_expect(!!(x), 0)

struct next_allocator {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	/* the program's own mappings (see "mappings" below) */
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	int (*mprotect)(void *, size_t, int);
	void *(*sbrk)(intptr_t);
	int (*brk)(void *);
	void (*exit_now)(int); /* _exit */
};

enum { NOT_READY, STARTING, READY };

static void *boot_malloc(size_t size);
static void *boot_calloc(size_t n, size_t m);
static void boot_free(void *p);

/* malloc, calloc and free call the next allocator without asking whether
 * it is known yet: until it is, these point to the boot_ functions, which
 * find it. */
static struct next_allocator next = {
	.malloc = boot_malloc,
	.calloc = boot_calloc,
	.free = boot_free,
};
static int state;	  /* NOT_READY, STARTING, READY */
/* Nonzero while a free must look before it calls the next allocator
 * (free_slow): until the allocator is known, forever when the arena
 * handed out blocks during the search (they must never reach it), and in
 * exact mode (every free is told).  Otherwise a free looks only when the
 * sampled set's filter says its block may be sampled. */
static int free_looks = 1;
static uint64_t rate;	  /* R in bytes; 1 exact; 0 passive */
static double rate_d;
static uint64_t seed_base; /* NUSKU_ALLOC_SEED, 0: from the clock */
static uint64_t threads;  /* threads seeded so far (fixed seeds) */

/* Bytes to the next sample point: an allocation of at least this many
 * is looked at.  0 (a new thread, exact mode) looks at every one;
 * UINT64_MAX (a passive library) at none after the thread's first. */
static TLS uint64_t tl_until;
static TLS uint64_t tl_rng;  /* 0: not seeded */
static TLS int tl_starting;  /* this thread is in init() */
static TLS void *tl_new_frame; /* inside operator new: its frame */
static TLS int tl_inside; /* in the sampler's own dl* calls: not the program's */

/* ---- the arena for allocations made before the allocator is known ---- */

/* Mapped by its first use, which is rare (no program here has needed
 * it): a static arena would be a quarter MiB of .bss, one more mapping
 * for the loader to make in every process. */
#define ARENA_BYTES (256 << 10)
static char *arena;
static size_t arena_used;

static int in_arena(const void *p)
{
	const char *a = __atomic_load_n(&arena, __ATOMIC_ACQUIRE);

	return a && (const char *)p >= a && (const char *)p < a + ARENA_BYTES;
}

static char *arena_get(void)
{
	char *a = __atomic_load_n(&arena, __ATOMIC_ACQUIRE), *want = NULL;
	long m;

	if (a)
		return a;
	/* the kernel's mmap: the exported one is not ready */
	m = syscall(SYS_mmap, NULL, (size_t)ARENA_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
	if (m == -1)
		return NULL;
	if (!__atomic_compare_exchange_n(&arena, &want, (char *)m, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		syscall(SYS_munmap, (void *)m, (size_t)ARENA_BYTES);
		return want;
	}
	return (char *)m;
}

/* Blocks carry their size in the 16 bytes before them (for realloc). */
static void *arena_alloc(size_t size, size_t align)
{
	size_t off, end, cur = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
	char *a = arena_get();

	if (!a)
		return NULL;
	if (align < 16)
		align = 16;
	if (align > 4096 || size > ARENA_BYTES)
		return NULL;
	do {
		off = (cur + 16 + align - 1) & ~(align - 1);
		end = off + size;
		if (end > ARENA_BYTES)
			return NULL;
	} while (!__atomic_compare_exchange_n(&arena_used, &cur, end, 0,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	memcpy(a + off - sizeof(size_t), &size, sizeof(size_t));
	return a + off; /* fresh anonymous memory: already zero */
}

static size_t arena_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* ---- start-up ---------------------------------------------------------- */

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : 0;
}

#define FIND(fn) found.fn = (__typeof__(found.fn))dlsym(RTLD_NEXT, #fn)

/* The first call: find the next allocator and read the settings. */
__attribute__((noinline)) static int init_slow(void)
{
	int want = NOT_READY;

	if (!__atomic_compare_exchange_n(&state, &want, STARTING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (tl_starting)
			return 0;
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY)
			sched_yield();
		return 1;
	}
	tl_starting = 1;
	/* found whole before any of it is used: the boot_ functions of
	 * other threads wait for READY */
	struct next_allocator found = { 0 };

	FIND(malloc);
	FIND(calloc);
	FIND(realloc);
	FIND(reallocarray);
	FIND(free);
	FIND(memalign);
	FIND(aligned_alloc);
	FIND(posix_memalign);
	FIND(valloc);
	FIND(pvalloc);
	FIND(mmap);
	FIND(munmap);
	FIND(mprotect);
	FIND(sbrk);
	FIND(brk);
	found.exit_now = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	rate = env_u64(NSK_SAMPLER_ENV_RATE);
	rate_d = (double)rate;
	seed_base = env_u64(NSK_SAMPLER_ENV_SEED);
	if (!found.malloc || !found.free || !found.realloc || !found.calloc)
		abort(); /* no C library below us: nothing to pass calls on to */
	next = found;
	tl_starting = 0;
	__atomic_store_n(&free_looks,
			 rate == 1 || __atomic_load_n(&arena_used, __ATOMIC_RELAXED),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&state, READY, __ATOMIC_RELEASE);
	return 1;
}

/* 1 once the next allocator is known; 0 for a call that must use the arena
 * (dlsym's own allocations, on the thread running it). */
static inline int init(void)
{
	if (__builtin_expect(__atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY, 1))
		return 1;
	return init_slow();
}

/* ---- sampling ---------------------------------------------------------- */

static uint64_t rng_next(void)
{
	/* xorshift64* */
	tl_rng ^= tl_rng >> 12;
	tl_rng ^= tl_rng << 25;
	tl_rng ^= tl_rng >> 27;
	return tl_rng * 0x2545f4914f6cdd1dULL;
}

static void seed_thread(void)
{
	uint64_t s = seed_base;

	if (s) {
		s += 0x9e3779b97f4a7c15ULL * __atomic_add_fetch(&threads, 1, __ATOMIC_RELAXED);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		    ((uint64_t)gettid() << 16) ^ (uint64_t)(uintptr_t)&tl_rng;
	}
	tl_rng = s ? s : 1;
	for (int i = 0; i < 4; i++)
		rng_next();
}

/* An exponential interval of mean R (inverse transform of a uniform in
 * (0, 1]). */
static uint64_t draw(void)
{
	double u = (double)((rng_next() >> 11) + 1) * 0x1p-53;
	double v = -nsk_ln01(u) * rate_d;

	return v < 1.0 ? 1 : v > 9e18 ? (uint64_t)9e18 : (uint64_t)v;
}

/* The counter of this thread crossed zero at an allocation of size bytes:
 * its weight when it is sampled, 0 when not (the thread's first
 * allocation only seeds it). */
static uint64_t weigh(uint64_t size)
{
	double w;

	if (rate == 1)
		return size;
	if (unlikely(!tl_rng)) {
		uint64_t first;

		seed_thread();
		first = draw();
		if (first > size) {
			tl_until = first - size;
			return 0;
		}
	}
	tl_until = draw();
	if (size / 40 >= rate)
		return size; /* P(sampled) = 1 to within 4e-18 */
	w = (double)size / nsk_one_minus_exp((double)size / rate_d);
	return (uint64_t)(w + 0.5);
}

/* Counts the bytes; 1 when this allocation is to be looked at (the
 * counter is then left for weigh to draw again). */
static inline int counts(size_t size)
{
	uint64_t left = tl_until;

	if (size >= left)
		return 1;
	tl_until = left - size;
	return 0;
}

/* Tells the probe of an allocation, with the frees waiting before it. */
static void tell_alloc(void *p, size_t size, uint64_t w, uint32_t fn, void *frame)
{
	struct nsk_sampler_batch *b = nsk_free_batch__take();

	nsk_probe__alloc((uintptr_t)p, size, w, fn, (uintptr_t)frame, (uintptr_t)b);
	nsk_free_batch__told(b);
}

/* A sampled (or failed) allocation: remember it and tell the probe.
 * frame is the interposed function's frame, which the probe uses to stand
 * where the program called it; new_frame, when operator new called us,
 * the wrapper's (the program called new, not malloc). */
__attribute__((noinline)) static void sampled(void *p, size_t size, uint32_t fn,
					      void *frame, void *new_frame, int counted)
{
	uint64_t w = 0;

	if (tl_inside)
		return; /* the loader's allocations for our dlopen, not the program's */
	if (counted && !(w = weigh(size)) && p)
		return;
	nsk_probes__start(); /* before the block is in the set (probes.h) */
	if (new_frame)
		frame = new_frame;
	if (p && rate > 1 && nsk_sampled_set__add((uintptr_t)p)) {
		nsk_free_batch__drop();
		return;
	}
	tell_alloc(p, size, p ? w : 0, fn, frame);
}

/* Where operator new stands, if it called us: taken, so a note left behind
 * by a new that threw without allocating serves one call at most. */
static inline void *take_new_frame(void)
{
	void *f = tl_new_frame;

	if (unlikely(f))
		tl_new_frame = NULL;
	return f;
}

/* An allocation the counter stopped at, or a failed one: the slow half of
 * AFTER.  Until the allocator is known the calls are the loader's (an
 * arena block); a passive library moves the counter out of reach. */
__attribute__((noinline)) static void looked_at(void *p, size_t size, uint32_t fn,
						void *frame)
{
	void *nf = take_new_frame();
	int counted;

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY)
		return;
	if (!rate) {
		tl_until = UINT64_MAX;
		return;
	}
	counted = counts(size);
	if (counted || !p)
		sampled(p, size, fn, frame, nf, counted);
}

/* After the allocator returned p for size bytes: a subtraction, unless the
 * counter runs out or the call failed.  The note of operator new is taken
 * only then: when not, the wrapper that left it takes it back itself. */
#define AFTER(p, size, fn)                                                   \
	do {                                                                  \
		uint64_t left_ = tl_until;                                    \
		if (unlikely((size) >= left_ || !(p)))                        \
			looked_at((p), (size), (fn), __builtin_frame_address(0)); \
		else                                                          \
			tl_until = left_ - (size);                            \
	} while (0)

/* Before the block p is released: keep its free for the next trap if it
 * was sampled (before the real free, so before its address can be handed
 * out again). */
static inline void released(void *p, uint32_t fn)
{
	if (!rate || !p)
		return;
	if (rate == 1 || (nsk_sampled_set__may_hold((uintptr_t)p) &&
			  nsk_sampled_set__remove((uintptr_t)p)))
		if (nsk_free_batch__add((uintptr_t)p, fn, 0))
			nsk_probe__free((uintptr_t)p, fn, 0);
}

static size_t mul_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

/* ---- the interposed family --------------------------------------------- */

/* The first calls, while next still points here. */
static void *boot_malloc(size_t size)
{
	return init() ? next.malloc(size) : arena_alloc(size, 16);
}

static void *boot_calloc(size_t n, size_t m)
{
	size_t size = mul_sat(n, m);

	if (init())
		return next.calloc(n, m);
	return size == SIZE_MAX ? NULL : arena_alloc(size, 16);
}

static void boot_free(void *p)
{
	if (init())
		next.free(p);
	/* else inside dlsym, a block from before us: keep it */
}

/* malloc and calloc count before the call, so the call is a jump and the
 * program's own return goes straight back (counted after it, each malloc
 * cost ~1.6 ns, 10% of alloc_churn's 15 ns pairs, where a bare forwarder
 * of malloc and free cost ~0.2 ns a pair).  So they see a failed call only when the counter
 * stops at it: a size far above the interval (a size gone wrong, the
 * usual failure) always, a small one (memory exhausted) with its chance
 * to be sampled; exact mode sees every one.  The others count after the
 * call (AFTER).  frame: the interposed function's, which the slow half
 * takes as its own (a jump to it puts its frame where this one was). */
__attribute__((noinline)) static void *malloc_looked(size_t size, void *frame)
{
	void *p = next.malloc(size);

	looked_at(p, size, NSK_ALLOC_MALLOC, frame);
	return p;
}

__attribute__((noinline)) static void *calloc_looked(size_t n, size_t m, size_t size,
						     void *frame)
{
	void *p = next.calloc(n, m);

	looked_at(p, size, NSK_ALLOC_CALLOC, frame);
	return p;
}

EXPORT void *malloc(size_t size)
{
	uint64_t left = tl_until;

	if (__builtin_expect(size < left, 1)) {
		tl_until = left - size;
		return next.malloc(size);
	}
	return malloc_looked(size, __builtin_frame_address(0));
}

EXPORT void *calloc(size_t n, size_t m)
{
	size_t size = mul_sat(n, m);
	uint64_t left = tl_until;

	if (__builtin_expect(size < left, 1)) {
		tl_until = left - size;
		return next.calloc(n, m);
	}
	return calloc_looked(n, m, size, __builtin_frame_address(0));
}

/* A free that looks: the arena's blocks stay, a sampled block is told. */
__attribute__((noinline)) static void free_slow(void *p)
{
	if (!p || in_arena(p))
		return;
	if (!init())
		return; /* inside dlsym, a block from before us: keep it */
	released(p, NSK_ALLOC_FREE);
	next.free(p);
}

EXPORT void free(void *p)
{
	if (unlikely(__atomic_load_n(&free_looks, __ATOMIC_ACQUIRE) ||
		     nsk_sampled_set__may_hold((uintptr_t)p)))
		free_slow(p);
	else
		next.free(p);
}

/* realloc and reallocarray: the old block is released before the call (so
 * its free is recorded before another thread can be handed its address),
 * then the new one counted like any allocation.  realloc(p, 0) that frees
 * is a free only.  A failed call leaves p live, but no longer sampled. */
static void *arena_move(void *p, size_t size)
{
	size_t old = arena_size(p);
	void *q = malloc(size);

	if (q)
		memcpy(q, p, old < size ? old : size);
	return q;
}

EXPORT void *realloc(void *p, size_t size)
{
	void *q;

	if (unlikely(!init())) {
		q = arena_alloc(size, 16);
		if (q && p && in_arena(p))
			memcpy(q, p, arena_size(p) < size ? arena_size(p) : size);
		return q;
	}
	if (unlikely(p && in_arena(p)))
		return arena_move(p, size);
	released(p, NSK_ALLOC_REALLOC);
	q = next.realloc(p, size);
	if (p && !size && !q)
		return NULL;
	AFTER(q, size, NSK_ALLOC_REALLOC);
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t size = mul_sat(n, m);
	void *q;

	if (unlikely(!init() || !next.reallocarray)) {
		if (size == SIZE_MAX) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc(p, size);
	}
	if (unlikely(p && in_arena(p)))
		return size == SIZE_MAX ? NULL : arena_move(p, size);
	released(p, NSK_ALLOC_REALLOC);
	q = next.reallocarray(p, n, m);
	if (p && !size && !q)
		return NULL;
	AFTER(q, size, NSK_ALLOC_REALLOCARRAY);
	return q;
}

EXPORT void *memalign(size_t align, size_t size)
{
	void *p;

	if (unlikely(!init() || !next.memalign))
		return arena_alloc(size, align);
	p = next.memalign(align, size);
	AFTER(p, size, NSK_ALLOC_MEMALIGN);
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (unlikely(!init() || !next.aligned_alloc))
		return arena_alloc(size, align);
	p = next.aligned_alloc(align, size);
	AFTER(p, size, NSK_ALLOC_ALIGNED_ALLOC);
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p = NULL;
	int rc;

	if (unlikely(!init() || !next.posix_memalign)) {
		*out = arena_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	rc = next.posix_memalign(out, align, size);
	if (!rc)
		p = *out;
	AFTER(p, size, NSK_ALLOC_POSIX_MEMALIGN);
	return rc;
}

EXPORT void *valloc(size_t size)
{
	void *p;

	if (unlikely(!init() || !next.valloc))
		return arena_alloc(size, 4096);
	p = next.valloc(size);
	AFTER(p, size, NSK_ALLOC_VALLOC);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p;

	if (unlikely(!init() || !next.pvalloc))
		return arena_alloc((size + 4095) & ~(size_t)4095, 4096);
	p = next.pvalloc(size);
	AFTER(p, size, NSK_ALLOC_PVALLOC);
	return p;
}

/* ---- mappings ----------------------------------------------------------- */

/* The program's own anonymous mappings are memory it allocated, as the
 * kernel-side syscall probe saw them before (bpf/alloc.bpf.c): told here,
 * that probe needs not run for every syscall of the machine.  The
 * allocator's mappings are made inside libc, past these symbols (malloc
 * calls libc's own mmap), so what arrives here is the program's, or an
 * allocator library's that calls the exported mmap (jemalloc), which
 * record/alloc.c tells by its call site.  A direct syscall(SYS_mmap) is
 * not seen. */

/* A range made: fn MMAP is sampled by bytes like an allocation; the
 * others (RESERVE, MPROTECT, BRK) are always told, weighing their size. */
__attribute__((noinline)) static void map_made(void *p, size_t len, uint32_t fn,
					       void *frame)
{
	uint64_t w = len;

	if (tl_inside)
		return;
	if (fn == NSK_ALLOC_MMAP && p && rate > 1) {
		if (!counts(len) || !(w = weigh(len)))
			return;
	}
	nsk_probes__start();
	tell_alloc(p, len, w, fn, frame);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (unlikely(!init() || !next.mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	p = next.mmap(addr, len, prot, flags, fd, off);
	if (rate && (flags & MAP_ANONYMOUS))
		map_made(p == MAP_FAILED ? NULL : p, len,
			 !prot || (flags & MAP_NORESERVE) ? NSK_ALLOC_RESERVE : NSK_ALLOC_MMAP,
			 __builtin_frame_address(0));
	return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
	int rc;

	if (unlikely(!init() || !next.munmap))
		return (int)syscall(SYS_munmap, addr, len);
	rc = next.munmap(addr, len);
	if (rate && !rc && !tl_inside)
		nsk_probe__free((uintptr_t)addr, NSK_ALLOC_MUNMAP, len);
	return rc;
}

/* Writable: a commit (kept by record/alloc.c inside a reservation only);
 * PROT_NONE: its end; read-only or executable (RELRO, JIT code): no
 * memory. */
EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int rc;

	if (unlikely(!init() || !next.mprotect))
		return (int)syscall(SYS_mprotect, addr, len, prot);
	rc = next.mprotect(addr, len, prot);
	if (!rate || rc || tl_inside)
		return rc;
	if (!prot)
		nsk_probe__free((uintptr_t)addr, NSK_ALLOC_MPROTECT, len);
	else if (prot & PROT_WRITE)
		map_made(addr, len, NSK_ALLOC_MPROTECT, __builtin_frame_address(0));
	return rc;
}

/* The break moved by the program itself: what it grew is allocated, what
 * it shrank released (malloc moves it from inside libc, unseen here). */
static void break_moved(char *from, char *to, void *frame)
{
	if (to > from)
		map_made(from, (size_t)(to - from), NSK_ALLOC_BRK, frame);
	else if (to < from && !tl_inside)
		nsk_probe__free((uintptr_t)to, NSK_ALLOC_BRK, (size_t)(from - to));
}

EXPORT void *sbrk(intptr_t incr)
{
	char *old;

	if (unlikely(!init() || !next.sbrk)) {
		errno = ENOMEM; /* not before the C library is found */
		return (void *)-1;
	}
	old = next.sbrk(incr);
	if (rate && old != (char *)-1 && incr)
		break_moved(old, old + incr, __builtin_frame_address(0));
	return old;
}

EXPORT int brk(void *addr)
{
	char *old;
	int rc;

	if (unlikely(!init() || !next.brk || !next.sbrk)) {
		errno = ENOMEM;
		return -1;
	}
	old = next.sbrk(0);
	rc = next.brk(addr);
	if (rate && !rc && old != (char *)-1)
		break_moved(old, addr, __builtin_frame_address(0));
	return rc;
}

/* ---- C++ operator new -------------------------------------------------- */

/* The call site of new is the program's.  libstdc++'s operator new keeps
 * no frame pointer and calls malloc: a sample taken in malloc would stand
 * in operator new, and the frame-pointer walk would skip the program's
 * caller.  So these wrappers only note their own frame, whose return
 * address is the program's call of new, for the allocator call below
 * them, and call the next operator new.  That call takes the note (AFTER),
 * so a bad_alloc thrown through here leaves none behind (an operator new
 * of the program's own that throws without calling malloc leaves one, for
 * the next allocation).  No cleanup handler: it would make the library
 * need libgcc_s, and load it into every program. */
/* The loaded objects' names, collected by dl_iterate_phdr (whose lock is
 * not held when they are opened). */
#define MAX_OBJECTS 512
struct objects {
	const char *name[MAX_OBJECTS];
	int n;
};

static int collect_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct objects *o = ctx;

	(void)size;
	if (info->dlpi_name && *info->dlpi_name && o->n < MAX_OBJECTS)
		o->name[o->n++] = info->dlpi_name;
	return 0;
}

/* The definition of operator new that ours stands before.  Usually the
 * next in the global scope (RTLD_NEXT); but a C++ runtime loaded by
 * dlopen with RTLD_LOCAL (a plugin: ar and ld load LLVMgold, which brings
 * libstdc++) is in no global scope, while its users' calls of new bind to
 * ours, the global one: then it is looked for in every loaded object, and
 * the object that has it stays open (it must not go away under us). */
static void *next_operator(const char *sym, void *self)
{
	/* one search at a time: two threads may call new first at once */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	/* in .data: see sampled_set.c's filter */
	static struct objects o __attribute__((section(".data")));
	void *f;

	tl_inside++; /* dlsym's own allocations (a dlerror text) are not ours */
	f = dlsym(RTLD_NEXT, sym);
	if (f) {
		tl_inside--;
		return f;
	}
	pthread_mutex_lock(&lock);
	o.n = 0;
	dl_iterate_phdr(collect_object, &o);
	for (int i = 0; i < o.n && !f; i++) {
		void *h = dlopen(o.name[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			continue;
		f = dlsym(h, sym);
		if (f == self)
			f = NULL;
		if (!f)
			dlclose(h);
	}
	pthread_mutex_unlock(&lock);
	tl_inside--;
	return f;
}

#define NEW_WRAPPER(sym, params, args)                                        \
	EXPORT void *sym params;                                              \
	EXPORT void *sym params                                               \
	{                                                                     \
		static void *(*next_fn) params;                               \
		void *(*f) params = __atomic_load_n(&next_fn, __ATOMIC_ACQUIRE); \
		void *saved = tl_new_frame, *p_;                              \
                                                                              \
		if (unlikely(!f)) {                                           \
			f = (void *(*) params)next_operator(#sym, (void *)sym); \
			if (!f)                                               \
				abort(); /* called, so some object defines it */ \
			__atomic_store_n(&next_fn, f, __ATOMIC_RELEASE);      \
		}                                                             \
		if (!saved)                                                   \
			tl_new_frame = __builtin_frame_address(0);            \
		p_ = f args;                                                  \
		tl_new_frame = saved;                                         \
		return p_;                                                    \
	}

NEW_WRAPPER(_Znwm, (size_t n), (n))
NEW_WRAPPER(_Znam, (size_t n), (n))
NEW_WRAPPER(_ZnwmRKSt9nothrow_t, (size_t n, const void *t), (n, t))
NEW_WRAPPER(_ZnamRKSt9nothrow_t, (size_t n, const void *t), (n, t))
NEW_WRAPPER(_ZnwmSt11align_val_t, (size_t n, size_t a), (n, a))
NEW_WRAPPER(_ZnamSt11align_val_t, (size_t n, size_t a), (n, a))
NEW_WRAPPER(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *t), (n, a, t))
NEW_WRAPPER(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *t), (n, a, t))

/* ---- the end of a process ---------------------------------------------- */

/* The frees still waiting are told before the process goes: at exit (the
 * destructor below), or at _exit, which runs no destructor.  A process
 * killed by a signal, or replaced by exec, loses up to a batch of them
 * (their blocks count as live at its end). */
EXPORT void _exit(int status)
{
	nsk_free_batch__final();
	if (next.exit_now)
		next.exit_now(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _Exit(int status) __attribute__((alias("_exit")));

__attribute__((destructor)) static void sampler_end(void)
{
	if (rate)
		nsk_free_batch__final();
}

/* A forked child draws its own intervals (the parent's would repeat). */
static void child_after_fork(void)
{
	tl_rng = 0;
	nsk_free_batch__after_fork_child();
}

__attribute__((constructor)) static void sampler_start(void)
{
	if (init() && rate) {
		if (rate == 1)
			nsk_probes__start(); /* every free may go to the batch */
		nsk_free_batch__start();
		pthread_atfork(nsk_free_batch__before_fork, nsk_free_batch__after_fork_parent,
			       child_after_fork);
	}
}
