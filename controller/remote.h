/* nusku on another host over OpenSSH (controller/remote.c): ps, sessions
 * and stop --ssh. */
#ifndef NUSKU_CONTROLLER_REMOTE_H
#define NUSKU_CONTROLLER_REMOTE_H

#include <stddef.h>
#include <stdio.h>

struct nsk_remote {
	const char *host;  /* [user@]host */
	char **ssh_opts;   /* words for ssh, in order */
	int nssh_opts;
	const char *nusku; /* nusku there (NULL: "nusku", on its PATH) */
};

/* Runs `ssh HOST nusku WORDS...` and waits for it (at most 60 s of
 * silence).  *out (malloc'd, NUL not guaranteed) and *outlen: all it wrote
 * on stdout, at most 64 MiB.  Returns the remote's exit status (0 or
 * more; when not 0, msg says why in one line, from its stderr's last line,
 * escaped) or a negative errno (msg set for a timeout or too much). */
int nsk_remote__run(const struct nsk_remote *r, const char *const *words,
		    char **out, size_t *outlen, char *msg, size_t msglen);

/* Prints a remote's answer line by line, each escaped as a recording's
 * strings are (report/output.h): what a hostile host sends never reaches
 * the terminal as control bytes; nusku's own JSON and text pass unchanged
 * (they hold none).  0 or -errno. */
int nsk_remote__print(FILE *f, const char *buf, size_t len);

/* Adds the words of an --ssh-opt value (split at blanks, argv's string
 * cut in place) to r->ssh_opts.  -ENOMEM. */
int nsk_remote__add_opts(struct nsk_remote *r, char *value);

#endif
