/* Where a frame-pointer walk of this program's stacks ends
 * (tests/e2e/frame_end.sh, preload/frame_end.c).
 *
 *   frame_end
 *
 * From a function called by main, and from one called by a thread's start
 * routine, follows the saved frame pointers the way the kernel's walk does,
 * but stops at the first that is not above the frame it was saved in (the
 * kernel would read it, and fault when it is not mapped).  For each walk it
 * prints one line:
 *
 *   main|thread frames=N end=0xVALUE caller=NAME under=NAME
 *
 * N frames walked, VALUE the saved frame pointer it stopped at, NAME the
 * file (dladdr) of the last return address walked, and of the one before
 * it.  Built with frame pointers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *file_of(uintptr_t addr)
{
	Dl_info info;
	const char *slash;

	if (!addr || !dladdr((void *)(addr - 1), &info) || !info.dli_fname)
		return "?";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

__attribute__((noinline)) static void walk(const char *who)
{
	uintptr_t *fp = __builtin_frame_address(0);
	uintptr_t last = 0, before = 0, hi = UINTPTR_MAX;
	pthread_attr_t attr;
	void *lo;
	size_t size;
	int n = 0;

	/* this thread's stack: a saved frame pointer outside it is no frame */
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &lo, &size))
			hi = (uintptr_t)lo + size;
		pthread_attr_destroy(&attr);
	}
	for (;;) {
		uintptr_t next = fp[0], ret = fp[1];

		before = last;
		last = ret;
		n++;
		if (next <= (uintptr_t)fp || next > hi - 16 || n > 64)
			break;
		fp = (uintptr_t *)next;
	}
	/* fp[0] is where the kernel's walk would have stopped, or faulted */
	printf("%s frames=%d end=%#lx caller=%s under=%s\n", who, n,
	       (unsigned long)fp[0], file_of(last), file_of(before));
	fflush(stdout);
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	walk("thread");
	return arg;
}

int main(void)
{
	pthread_t t;

	walk("main");
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
