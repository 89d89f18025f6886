/* The stand-in for CRIU's log (plug_log is CRIU's print_on_level in the
 * plugin): every line kept in logged, for the tests to read. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin/plugin.h"
#include "plug-log.h"

char logged[16384];

void plug_log(enum plug_level level, const char *fmt, ...)
{
	size_t n = strlen(logged);
	va_list ap;

	(void)level;
	va_start(ap, fmt);
	if (n < sizeof(logged) - 1)
		vsnprintf(logged + n, sizeof(logged) - n, fmt, ap);
	va_end(ap);
}
