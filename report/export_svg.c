#include <errno.h>
#include "report/export.h"
int nsk_export__svg(struct nsk_report *rep, const struct nsk_measure *m,
		    FILE *f)
{
	snprintf(rep->err, sizeof(rep->err), "svg: not yet");
	return -ENOSYS;
}
