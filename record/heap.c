/* The recorder's own heap (see heap.h). */
#include <malloc.h>

#include "record/heap.h"

/* Free memory at the top of an arena past this goes back at once.  Setting
 * it also turns off glibc's dynamic thresholds, so blocks of 128 KiB and
 * more keep being mmapped and are unmapped when freed. */
#define NSK_HEAP_TRIM (1u << 20)

void nsk_heap__bound(void)
{
	mallopt(M_TRIM_THRESHOLD, NSK_HEAP_TRIM);
}

void nsk_heap__trim(void)
{
	malloc_trim(0);
}
