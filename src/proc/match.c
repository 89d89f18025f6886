/* The thread-name matcher. The default pattern, ^cuda[0-9a-f]{11}$, is
 * matched by hand: it is the hot path, and glibc's regcomp double-frees when
 * malloc fails inside it (found by the libfiu enumeration, glibc 2.36), so
 * the default never calls it. Any other pattern is a POSIX extended regex. */
#include <errno.h>
#include <string.h>

#include "proc/proc.h"

int rtid__matcher_init(struct rtid__matcher *m, const char *pattern)
{
	m->builtin = !pattern || strcmp(pattern, RTID_PATTERN_DEFAULT) == 0;
	if (m->builtin)
		return 0;
	/* REG_NOSUB: only whether it matches counts. The C locale is assumed, so
	 * [0-9a-f] means exactly those bytes. */
	if (regcomp(&m->re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return -EINVAL;
	return 0;
}

void rtid__matcher_fini(struct rtid__matcher *m)
{
	if (!m->builtin)
		regfree(&m->re);
}

static bool default_match(const char *comm, size_t len)
{
	if (len != 15 || memcmp(comm, "cuda", 4) != 0)
		return false;
	for (size_t i = 4; i < 15; i++)
		if (!((comm[i] >= '0' && comm[i] <= '9') || (comm[i] >= 'a' && comm[i] <= 'f')))
			return false;
	return true;
}

bool rtid__matcher_match(const struct rtid__matcher *m, const char *comm, size_t len)
{
	char buf[64];

	/* regexec stops at a NUL, which would let "cuda00001400006\0junk" match. */
	if (len >= sizeof(buf) || memchr(comm, '\0', len))
		return false;
	if (m->builtin)
		return default_match(comm, len);
	memcpy(buf, comm, len);
	buf[len] = '\0';
	return regexec(&m->re, buf, 0, NULL, 0) == 0;
}
