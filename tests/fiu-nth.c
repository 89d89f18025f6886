/* The one counter behind both failure enumerations (fiu-nth.h). */
#include <fiu-control.h>
#include <stdint.h>

#include "fiu-nth.h"

static unsigned long calls, target;
static fiu_nth_errno errno_of;

static int nth(const char *name, int *failnum, void **failinfo, unsigned int *flags)
{
	(void)failnum;
	(void)flags;
	if (++calls != target)
		return 0;
	*failinfo = (void *)(intptr_t)errno_of(name);
	return 1;
}

void fiu_nth_arm(const char *const *points, size_t n, unsigned long at, fiu_nth_errno why)
{
	calls = 0;
	target = at;
	errno_of = why;
	for (size_t i = 0; i < n; i++)
		fiu_enable_external(points[i], 1, NULL, 0, nth);
}

void fiu_nth_disarm(const char *const *points, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fiu_disable(points[i]);
}

unsigned long fiu_nth_calls(void)
{
	return calls;
}
