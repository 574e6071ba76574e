/* Growing an array of the recorder's tables by doubling. */
#ifndef NUSKU_RECORD_GROW_H
#define NUSKU_RECORD_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* Makes *p (of *cap elements of size bytes) hold at least need elements:
 * 0, or -ENOMEM with *p and *cap unchanged. */
static inline int nsk_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

#endif
