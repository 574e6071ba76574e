/* CRC32C (Castagnoli), the checksum of .nsk headers and chunk payloads.
 * Table-driven, slicing by 8, no dependency: it runs once per chunk over the
 * compressed payload, so a portable version is fast enough and keeps the
 * format free of CPU feature checks. */
#include <pthread.h>
#include <stdint.h>

#include "format/wire.h"

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			table[k][n] = (table[k - 1][n] >> 8) ^
				      table[0][table[k - 1][n] & 0xff];
}

/* crc is the value returned by a previous call (0 to start). */
uint32_t nsk_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ nsk_get32(p), hi = nsk_get32(p + 4);

		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
