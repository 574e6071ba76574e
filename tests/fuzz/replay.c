/* Replays the fuzz corpus through the fuzz target without libFuzzer, so
 * `make check` (and its ASan run) keeps every committed seed and every
 * crash found so far passing.  Arguments: files or directories; with none,
 * $TOP_SRCDIR/tests/fuzz/corpus. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef REPLAY_PREFIX_STEP
#define REPLAY_PREFIX_STEP 1
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	/* Every prefix of a small input too: truncation everywhere. */
	/* Small files: every prefix too, as a cut-off stream (every
	 * REPLAY_PREFIX_STEP-th one for targets that cost more per input). */
	for (size_t cut = len > 4096 ? len : 0; cut <= len;
	     cut = cut < len && cut + REPLAY_PREFIX_STEP > len ? len
							       : cut + REPLAY_PREFIX_STEP) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, buf, cut);
		LLVMFuzzerTestOneInput(copy, cut);
		free(copy);
	}
	free(buf);
	return 0;
}

static int replay(const char *path, unsigned *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char sub[4096];
	int err = 0;

	if (stat(path, &st)) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			err |= replay(sub, count);
		}
	closedir(d);
	return err;
}

int main(int argc, char **argv)
{
	const char *top = getenv("TOP_SRCDIR");
	char def[4096];
	unsigned count = 0;
	int err = 0;

	if (argc < 2) {
		snprintf(def, sizeof(def), "%s/tests/fuzz/corpus", top ? top : ".");
		err = replay(def, &count);
	}
	for (int i = 1; i < argc; i++)
		err |= replay(argv[i], &count);
	printf("replayed %u inputs\n", count);
	return err || !count ? 1 : 0;
}
