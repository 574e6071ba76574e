/* Output files made safely on a machine other people use.
 *
 * Nusku runs as root and writes where it is told, often in /tmp or in a
 * directory another user owns.  So an output file is never opened by its
 * name: it is created new (O_CREAT|O_EXCL, mode 0600) under a temporary
 * name in the same directory and then renamed over the name asked for.
 * rename() replaces the directory entry and follows nothing, so a symbolic
 * link or a hard link planted at the name cannot point the write at
 * another file.  What is at the name beforehand is looked at first
 * (nsk_outfile__probe) and refused unless it is a regular file the caller
 * agrees to replace: Nusku never writes to, chmods or unlinks a symbolic
 * link, a device node, a FIFO or a directory, and it removes only files
 * it created itself.
 *
 * All functions return 0 or a negative errno and, on error, put a one-line
 * message that names the path into err.
 */
#ifndef NUSKU_OUTFILE_H
#define NUSKU_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct nsk_outfile {
	int fd;	    /* the new file, open for writing; the caller may take
		     * it (then set fd to -1) */
	char *path; /* the name asked for */
	char *tmp;  /* the temporary name until committed, then NULL */
	dev_t dev;  /* the new file, to recognize it before a rename or an */
	ino_t ino;  /* unlink */
};

/* What is at path now.  0: nothing; 1: a regular file, whose first bytes
 * (up to *headlen) are read into head, *headlen set to how many, and *st
 * filled.  -ELOOP a symbolic link, -EISDIR a directory, -EEXIST another
 * kind of file (device, FIFO, socket): all refused with a message.  The
 * file is opened O_NOFOLLOW | O_NONBLOCK, so nothing is followed and
 * nothing blocks.  head may be NULL (then headlen too). */
int nsk_outfile__probe(const char *path, struct stat *st, uint8_t *head,
		       size_t *headlen, char *err, size_t errlen);

/* Creates a new empty 0600 file next to path (the same directory, a
 * hidden temporary name) and opens it for writing in of->fd. */
int nsk_outfile__create(struct nsk_outfile *of, const char *path, char *err,
			size_t errlen);

/* Renames the new file over path, after checking that the temporary name
 * still names the file created (not something put there meanwhile). */
int nsk_outfile__commit(struct nsk_outfile *of, char *err, size_t errlen);

/* Removes the file created: the temporary before a commit, path after one
 * when path still names that file (same device and inode; call it while
 * the file is still open, in of->fd or wherever it was taken, so that its
 * inode number cannot have gone to another file).  Then as __release. */
void nsk_outfile__discard(struct nsk_outfile *of);

/* Closes of->fd (unless taken) and frees the names; the file stays.
 * Accepts a zeroed or half-built struct. */
void nsk_outfile__release(struct nsk_outfile *of);

/* The .nsk policy, shared by `record -o` and `live -o`: probe path, refuse
 * an existing file unless it is empty or a .nsk recording (one line:
 * "exists and is not a .nsk recording"), then create. */
int nsk_outfile__create_recording(struct nsk_outfile *of, const char *path,
				  char *err, size_t errlen);

#endif
