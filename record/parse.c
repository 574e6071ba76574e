/* Parsing of the record command's durations and sizes, kept apart from the
 * command so unit tests reach it. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"

int nsk_parse_duration(const char *s, uint64_t default_unit_ns, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
		{ "ns", 1 },	 { "us", 1e3 }, { "ms", 1e6 },
		{ "s", 1e9 },	 { "m", 60e9 }, { "min", 60e9 },
		{ "h", 3600e9 },
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!*end) {
		v *= (double)default_unit_ns;
	} else {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		v *= units[i].ns;
	}
	if (v >= 1.8e19)
		return -EINVAL;
	*ns = (uint64_t)(v + 0.5);
	return 0;
}

int nsk_parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 0:
		break;
	case 'k': case 'K':
		mul = 1ull << 10;
		break;
	case 'm': case 'M':
		mul = 1ull << 20;
		break;
	case 'g': case 'G':
		mul = 1ull << 30;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB"))
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*bytes = v * mul;
	return 0;
}
