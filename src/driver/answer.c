/* The answer helpers every backend uses, apart from the dispatch in
 * driver.c so that no backend calls back into what calls it. */
#include <stdarg.h>
#include <stdio.h>

#include "driver/driver.h"

void rtid__answer_fail(struct rtid__answer *a, enum rtid_error e, const char *fmt, ...)
{
	va_list ap;

	a->error = e;
	a->tid = 0;
	va_start(ap, fmt);
	vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
	va_end(ap);
}
