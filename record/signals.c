/* The signals a recording can hold, in the order they start.  Each signal
 * uncomments its line when it lands; --events picks among them by name. */
#include <stddef.h>

#include "record/session.h"
#include "record/signals.h"

extern const struct nsk_signal nsk_signal_cpu;
extern const struct nsk_signal nsk_signal_alloc;
extern const struct nsk_signal nsk_signal_offcpu;
extern const struct nsk_signal nsk_signal_syscall;
extern const struct nsk_signal nsk_signal_net;

const struct nsk_signal *const nsk_signals[] = {
	&nsk_signal_cpu,
	&nsk_signal_alloc,
	&nsk_signal_offcpu,
	&nsk_signal_syscall,
	&nsk_signal_net,
	NULL,
};
