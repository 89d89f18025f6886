/* The thread-name matcher: a POSIX extended regex over the comm bytes. */
#include <errno.h>
#include <string.h>

#include "internal.h"

int rtid__matcher_init(struct rtid__matcher *m, const char *pattern)
{
	/* REG_NOSUB: only whether it matches counts. The C locale is assumed, so
	 * [0-9a-f] means exactly those bytes. */
	if (regcomp(&m->re, pattern ? pattern : RTID_PATTERN_DEFAULT,
		    REG_EXTENDED | REG_NOSUB) != 0)
		return -EINVAL;
	return 0;
}

void rtid__matcher_fini(struct rtid__matcher *m)
{
	regfree(&m->re);
}

bool rtid__matcher_match(const struct rtid__matcher *m, const char *comm, size_t len)
{
	char buf[64];

	/* regexec stops at a NUL, which would let "cuda00001400006\0junk" match. */
	if (len >= sizeof(buf) || memchr(comm, '\0', len))
		return false;
	memcpy(buf, comm, len);
	buf[len] = '\0';
	return regexec(&m->re, buf, 0, NULL, 0) == 0;
}
