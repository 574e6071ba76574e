/* Synthetic recordings for the report tests and the benchmark, written
 * with the nsk_writer API so that they go through the real reader.
 *
 * synth__known: a small recording whose every report is known by
 * construction (see synth.c for the table of samples and the answers).
 * synth__bench: many samples over realistic stacks (deep, shared
 * prefixes, inline frames, a few modules), for timing reports. */
#ifndef NUSKU_TESTS_REPORT_SYNTH_H
#define NUSKU_TESTS_REPORT_SYNTH_H

#include <stdint.h>
#include <nusku/format.h>

#define SYNTH_T0 1000000000ull	      /* the recording's start, ns */
#define SYNTH_STEP 10000000ull	      /* 10 ms between samples */

/* Writes the known recording; with_end = 0 leaves out the END record.
 * 0 or a negative errno. */
int synth__known(struct nsk_writer *w, int with_end);
/* Writes 10 samples, 3 of them taken inside Nusku's own probes (a stack
 * with NSK_STACK_OWN: uprobe_prog_run <- main), and the cost META
 * (5 ms over 1000 runs). */
int synth__own(struct nsk_writer *w);
/* Writes a recording made to hurt its reader: names with terminal escape
 * sequences, an empty STRING body, times past 2^63 ns. */
int synth__hostile(struct nsk_writer *w);
/* Writes a recording made to exhaust its reader's memory (issue 17):
 * nstacks distinct stacks of depth frames each (frame ids cycle over
 * nstacks + 1 frames, so every stack differs), every function named by a
 * name_bytes-long string, one sample per stack.  The file stays small:
 * zstd folds the repeats. */
int synth__deep(struct nsk_writer *w, unsigned nstacks, uint32_t depth,
		uint32_t name_bytes);
/* Writes n allocations of a churn (frees, implied frees, failed calls)
 * and live allocations a child process exits holding, a region, a
 * reservation and its commit, a record out of time order, an exec. */
int synth__alloc(struct nsk_writer *w, uint64_t n, uint64_t live);
/* synth__scan: the shapes that made the allocation loader scan everything
 * per record: regions mapped and unmaps that end none of them, blocks one
 * process holds while exits processes allocate one block each and exit. */
int synth__scan(struct nsk_writer *w, uint64_t regions, uint64_t live,
		uint64_t exits);
/* Writes n samples at freq_hz on 4 threads over nstacks distinct stacks. */
int synth__bench(struct nsk_writer *w, uint64_t n, unsigned freq_hz,
		 unsigned nstacks);
/* Writes one recorder run's segment: a clock at t0 (realtime_ns then),
 * nsamples CPU samples from t0 on, all of one stack main -> func in module,
 * with the same ids every run uses (string 1 names func), then END.  Two
 * runs in one directory test that the loader keeps their ids apart. */
int synth__run(struct nsk_writer *w, uint64_t t0, uint64_t realtime_ns,
	       const char *func, const char *module, uint64_t nsamples);
/* Opens path (or stdout for "-") for writing and makes a writer. */
int synth__open(const char *path, struct nsk_writer **out);

#endif
