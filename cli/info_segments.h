/* nusku info over a continuous recording's directory (info_segments.c). */
#ifndef NUSKU_CLI_INFO_SEGMENTS_H
#define NUSKU_CLI_INFO_SEGMENTS_H

#include <stdio.h>

/* Lists the segments of dir overlapping [from, until] (NULL: open-ended)
 * to f, as text or JSON; the exit status (1: said why on stderr). */
int nsk_info__segments(FILE *f, const char *dir, const char *from,
		       const char *until, int json);

#endif
