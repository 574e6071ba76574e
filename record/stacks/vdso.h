/* The vdso as a file the symbolizer can open like any other. */
#ifndef NUSKU_RECORD_VDSO_H
#define NUSKU_RECORD_VDSO_H

/* A path ("/proc/self/fd/N", an in-memory copy of the vdso image) to open
 * for the [vdso] of a traced process, or NULL when there is none.  Made on
 * first call, kept for the recorder's life.  Main thread. */
const char *nsk_vdso__path(void);

#endif
