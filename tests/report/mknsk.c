/* mknsk: writes synthetic recordings for the report tests and the bench.
 *   mknsk known OUT [noend]     the known-answer recording (synth.c)
 *   mknsk hostile OUT           names with escapes, empty strings, huge times
 *   mknsk deep OUT STACKS DEPTH NAME_BYTES  stacks and names made to
 *                               exhaust a reader's memory
 *   mknsk bench OUT N [HZ [STACKS]]  N samples over realistic stacks
 *   mknsk alloc OUT N LIVE      N allocations of a churn, LIVE never freed
 *   mknsk scan OUT REGIONS LIVE EXITS  what made the loader scan per record */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/synth.h"

int main(int argc, char **argv)
{
	struct nsk_writer *w = NULL;
	int err;

	if (argc < 3 || (strcmp(argv[1], "known") && strcmp(argv[1], "bench") &&
			 strcmp(argv[1], "hostile") && strcmp(argv[1], "deep") &&
			 strcmp(argv[1], "alloc") && strcmp(argv[1], "scan")) ||
	    (!strcmp(argv[1], "scan") && argc < 6) ||
	    (!strcmp(argv[1], "alloc") && argc < 5) ||
	    (!strcmp(argv[1], "deep") && argc < 6) ||
	    (!strcmp(argv[1], "bench") && argc < 4)) {
		fprintf(stderr, "usage: mknsk known OUT [noend] | mknsk hostile OUT | "
			"mknsk deep OUT STACKS DEPTH NAME_BYTES | mknsk bench OUT N [HZ [STACKS]] | "
			"mknsk alloc OUT N LIVE | mknsk scan OUT REGIONS LIVE EXITS\n");
		return 2;
	}
	err = synth__open(argv[2], &w);
	if (err) {
		fprintf(stderr, "mknsk: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	if (!strcmp(argv[1], "known"))
		err = synth__known(w, !(argc > 3 && !strcmp(argv[3], "noend")));
	else if (!strcmp(argv[1], "hostile"))
		err = synth__hostile(w);
	else if (!strcmp(argv[1], "deep"))
		err = synth__deep(w, (unsigned)atoi(argv[3]),
				  (uint32_t)strtoul(argv[4], NULL, 10),
				  (uint32_t)strtoul(argv[5], NULL, 10));
	else if (!strcmp(argv[1], "scan"))
		err = synth__scan(w, strtoull(argv[3], NULL, 10),
				  strtoull(argv[4], NULL, 10),
				  strtoull(argv[5], NULL, 10));
	else if (!strcmp(argv[1], "alloc"))
		err = synth__alloc(w, strtoull(argv[3], NULL, 10),
				   strtoull(argv[4], NULL, 10));
	else
		err = synth__bench(w, strtoull(argv[3], NULL, 10),
				   argc > 4 ? (unsigned)atoi(argv[4]) : 20000,
				   argc > 5 ? (unsigned)atoi(argv[5]) : 3000);
	if (err) {
		fprintf(stderr, "mknsk: writing: %s\n", strerror(-err));
		nsk_writer__free(w);
		return 1;
	}
	err = nsk_writer__close(w);
	if (err) {
		fprintf(stderr, "mknsk: closing: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
