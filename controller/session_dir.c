/* The per-user directory that holds background sessions' state.
 *
 * It is where other users must not reach: a state file names the recorder
 * that `nusku stop` signals and the file `nusku live` reads, so someone
 * who could plant one could make root signal or read what they chose.  So
 * the directory is made 0700, opened O_NOFOLLOW | O_DIRECTORY, and checked
 * through that fd (owner, mode, kind), never by name twice; everything
 * after goes through the fd (openat, renameat).  In /tmp, where anyone may
 * have made /tmp/nusku-UID first, a directory that fails the checks is
 * refused, not repaired. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/sessions.h"

int nsk_sessions__name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > NSK_SESSION_NAME_MAX || name[0] == '.' || name[0] == '-')
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

/* The directory to use, into path: the first of $XDG_RUNTIME_DIR/nusku,
 * /run/user/UID/nusku whose parent is a directory of this user. */
static void pick(char *path, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	uid_t uid = geteuid();
	char run[64];
	struct stat st;

	if (xdg && xdg[0] == '/' && !stat(xdg, &st) && S_ISDIR(st.st_mode) &&
	    st.st_uid == uid) {
		snprintf(path, len, "%s/nusku", xdg);
		return;
	}
	snprintf(run, sizeof(run), "/run/user/%u", (unsigned)uid);
	if (!stat(run, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid) {
		snprintf(path, len, "%s/nusku", run);
		return;
	}
	snprintf(path, len, "/tmp/nusku-%u", (unsigned)uid);
}

int nsk_session_dir__open(int create, char *path, size_t pathlen, char *err,
			  size_t errlen)
{
	struct stat st;
	int fd = -1, e;

	pick(path, pathlen);
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST) {
		e = -errno;
		snprintf(err, errlen, "cannot make the session directory %s: %s",
			 path, strerror(errno));
		return e;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		if (errno == ENOENT)
			snprintf(err, errlen, "no sessions yet (%s does not exist)", path);
		else if (errno == ELOOP || errno == ENOTDIR)
			snprintf(err, errlen, "%s is not a directory (a symbolic link or a "
				 "file): refused as the session directory", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		e = -EPERM;
		snprintf(err, errlen, "%s belongs to uid %u, not to you (uid %u): "
			 "refused as the session directory", path,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if (st.st_mode & 077) {
		e = -EPERM;
		snprintf(err, errlen, "%s is open to others (mode %04o; it must be "
			 "0700): refused as the session directory", path,
			 (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return e;
}
