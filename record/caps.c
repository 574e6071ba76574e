/* The recorder's own capabilities: the effective set of /proc/self/status,
 * so that an EPERM can be told apart: missing privileges, or a kernel that
 * refused a program for its own reasons. */
#include <stdio.h>

#include "record/caps.h"

static int effective(unsigned long long *caps)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", caps) == 1;
	fclose(f);
	return found;
}

int nsk_caps__have(int cap)
{
	unsigned long long caps = 0;

	return cap >= 0 && cap < 64 && effective(&caps) && (caps >> cap & 1);
}

int nsk_caps__can_trace(void)
{
	unsigned long long caps = 0;

	if (!effective(&caps))
		return 0;
	return (caps >> NSK_CAP_SYS_ADMIN & 1) ||
	       ((caps >> NSK_CAP_BPF & 1) && (caps >> NSK_CAP_PERFMON & 1));
}
