/* The process picker of `nusku live` with no target (picker.c), and the
 * front end that runs it (cmd_live_pick.c). */
#ifndef NUSKU_CONTROLLER_PICKER_H
#define NUSKU_CONTROLLER_PICKER_H

#include <stddef.h>

#include "controller/ps.h"

/* Shows the processes of o (this machine, or o->ssh_host) full screen
 * until one is picked or the user leaves.  sort and filter (filterlen
 * bytes) carry the user's choices from one run to the next; *pid is the
 * process the cursor starts on (0: the first) and the one picked.  1
 * picked, 0 left, -errno (no terminal, no rows at all). */
int nsk_picker__run(const struct nsk_ps_opts *o, int *sort, char *filter, size_t filterlen,
		    int *pid);

/* `nusku live` as the CLI dispatches it: with a target (a file, a pipe,
 * -p, a command, --help) that is cmd_live; with none, on a terminal, the
 * picker, then the live view of what was picked (as a child: `q` there
 * comes back to the list). */
int cmd_live_entry(int argc, char **argv);

#endif
