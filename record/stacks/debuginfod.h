/* Debug files fetched by build-id from debuginfod servers, off the hot path.
 *
 * When DEBUGINFOD_URLS is set, a module without symbols asks for its debug
 * file as soon as it is opened (usually when its mapping is first read);
 * one thread downloads, one file at a time, into libdebuginfod's cache
 * (DEBUGINFOD_CACHE_PATH).  Whoever needs the file first waits for it, but
 * only so long: NSK_DEBUGINFOD_WAIT_MS for one module and
 * NSK_DEBUGINFOD_BUDGET_MS summed over the recording, after which the
 * recording goes on with what it has (names from .eh_frame ranges); a
 * wait that timed out ends all waiting, as the queue is held up.  A
 * download is given up past NSK_DEBUGINFOD_MAX_BYTES, NSK_DEBUGINFOD_MAX_S
 * seconds, or NSK_DEBUGINFOD_STALL_S seconds without a byte.
 *
 * Compiled out when configure found no libdebuginfod: then
 * nsk_debuginfod__new returns NULL and the rest are never reached.
 */
#ifndef NUSKU_RECORD_DEBUGINFOD_H
#define NUSKU_RECORD_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

#define NSK_DEBUGINFOD_WAIT_MS 3000
#define NSK_DEBUGINFOD_BUDGET_MS 10000
#define NSK_DEBUGINFOD_MAX_BYTES (512L << 20)
#define NSK_DEBUGINFOD_MAX_S 120
#define NSK_DEBUGINFOD_STALL_S 5

struct nsk_debuginfod;

/* NULL when DEBUGINFOD_URLS is unset or empty, when Nusku was built
 * without libdebuginfod, or on ENOMEM: no fetching then. */
struct nsk_debuginfod *nsk_debuginfod__new(void);
void nsk_debuginfod__free(struct nsk_debuginfod *d); /* accepts NULL; joins */

/* Queues a fetch of build_id's debug file (once per build-id); returns at
 * once.  0, or a negative errno. */
int nsk_debuginfod__request(struct nsk_debuginfod *d, const uint8_t *build_id,
			    size_t len);

/* The path of build_id's fetched debug file (malloc), waiting for a
 * queued fetch within the bounds above; NULL when it was never requested,
 * failed, or did not come in time. */
char *nsk_debuginfod__wait(struct nsk_debuginfod *d, const uint8_t *build_id,
			   size_t len);

#endif
