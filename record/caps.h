/* The recorder's own capabilities, as the kernel sees them. */
#ifndef NSK_RECORD_CAPS_H
#define NSK_RECORD_CAPS_H

#include <stdint.h>

/* Capability numbers (linux/capability.h) the recorder asks about. */
#define NSK_CAP_SYS_ADMIN 21
#define NSK_CAP_SYS_NICE 23
#define NSK_CAP_PERFMON 38
#define NSK_CAP_BPF 39

/* Whether capability cap is in this process's effective set (from
 * /proc/self/status: no libcap).  0 when it cannot be told. */
int nsk_caps__have(int cap);

/* Whether the effective set allows loading and attaching tracing
 * programs: CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN. */
int nsk_caps__can_trace(void);

#endif
