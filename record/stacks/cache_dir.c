/* Opening the recorder's cache directory (see cache_dir.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/stacks/cache_dir.h"

void nsk_cache_dir__warn(int err, const char *why)
{
	static int warned;

	if (err != -EPERM && err != -ELOOP && err != -ENOTDIR && err != -EINVAL)
		return;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "nusku: record: warning: symbol cache off: %s\n",
			why);
}

/* The directory name under at, made 0700 if missing, open and checked. */
static int open_owned(int at, const char *name, const char *path, char *why,
		      size_t whylen)
{
	struct stat st;
	int fd, err;

	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST) {
		err = -errno;
		snprintf(why, whylen, "cannot make %s: %s", path, strerror(errno));
		return err;
	}
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (errno == ELOOP || errno == ENOTDIR)
			snprintf(why, whylen, "%s is not a directory (a symbolic "
				 "link or a file)", path);
		else
			snprintf(why, whylen, "cannot open %s: %s", path,
				 strerror(errno));
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		err = -EPERM;
		snprintf(why, whylen, "%s belongs to uid %u, not to uid %u", path,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if (st.st_mode & 077) {
		err = -EPERM;
		snprintf(why, whylen, "%s is open to others (mode %04o, not 0700)",
			 path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int nsk_cache_dir__open(const char *sub, char *path, size_t pathlen,
			char *why, size_t whylen)
{
	const char *env = getenv("NUSKU_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct passwd *pw;
	char base[4096];
	const char *last, *slash;
	int at, top, fd, err;

	if (env && (!*env || !strcmp(env, "off")))
		return -ENOENT;
	if (env) {
		/* the named directory is the cache itself: its parent is
		 * opened as given, the last component made and checked */
		slash = strrchr(env, '/');
		if (env[0] != '/' || !slash || !slash[1] || strlen(env) >= sizeof(base)) {
			snprintf(why, whylen, "NUSKU_CACHE_DIR must be an absolute "
				 "path not ending in /, not %s", env);
			return -EINVAL;
		}
		snprintf(base, sizeof(base), "%.*s", slash == env ? 1 : (int)(slash - env),
			 env);
		last = slash + 1;
		snprintf(path, pathlen, "%s", env);
	} else {
		if (xdg && xdg[0] == '/') {
			snprintf(base, sizeof(base), "%s", xdg);
		} else {
			pw = getpwuid(geteuid());
			if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
				snprintf(why, whylen, "uid %u has no home directory",
					 (unsigned)geteuid());
				return -ENOENT;
			}
			snprintf(base, sizeof(base), "%s/.cache", pw->pw_dir);
			/* ~/.cache itself, as the XDG spec has it: 0700 */
			if (mkdir(base, 0700) < 0 && errno != EEXIST) {
				err = -errno;
				snprintf(why, whylen, "cannot make %s: %s", base,
					 strerror(errno));
				return err;
			}
		}
		last = "nusku";
		snprintf(path, pathlen, "%s/nusku", base);
	}
	at = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (at < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open %s: %s", base, strerror(errno));
		return err;
	}
	top = open_owned(at, last, path, why, whylen);
	close(at);
	if (top < 0)
		return top;
	snprintf(base, sizeof(base), "%s", path);
	snprintf(path, pathlen, "%s/%s", base, sub);
	fd = open_owned(top, sub, path, why, whylen);
	close(top);
	return fd;
}

int nsk_cache_dir__read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

int nsk_cache_dir__write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		done += (size_t)w;
	}
	return 0;
}
