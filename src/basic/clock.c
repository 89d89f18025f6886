/* The one clock of rtid's timeouts and deadlines: monotonic, so that a
 * change of the wall clock neither fires nor delays one. */
#include <time.h>

#include "basic/basic.h"

double rtid__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
