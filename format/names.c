/* Names of the numbers both halves share (include/nusku/names.h). */
#include <errno.h>
#include <string.h>

#include <nusku/format.h>

static const char *const reason_names[NSK_OFFCPU_REASON_MAX] = {
	[NSK_OFFCPU_OTHER] = "other",
	[NSK_OFFCPU_LOCK] = "lock",
	[NSK_OFFCPU_DISK] = "disk",
	[NSK_OFFCPU_PROCESS] = "process",
	[NSK_OFFCPU_NETWORK] = "network",
	[NSK_OFFCPU_SLEEP] = "sleep",
	[NSK_OFFCPU_POLL] = "poll",
	[NSK_OFFCPU_RUNQUEUE] = "runqueue",
	[NSK_OFFCPU_PAGE_FAULT] = "page-fault",
};

const char *nsk_offcpu_reason__name(uint32_t reason)
{
	if (reason >= NSK_OFFCPU_REASON_MAX)
		return "other";
	return reason_names[reason];
}

int nsk_offcpu_reason__parse(const char *name)
{
	for (int i = 0; i < NSK_OFFCPU_REASON_MAX; i++)
		if (!strcmp(name, reason_names[i]))
			return i;
	return -EINVAL;
}
