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

/* CRIU's side that the pieces reach without a test calling it (no tree, no
 * image directory); a test of the hooks gives its own. */
__attribute__((weak)) size_t plug_criu_tasks(int *pids, size_t max)
{
	(void)pids;
	(void)max;
	return 0;
}

__attribute__((weak)) int plug_criu_image_dir(void)
{
	return -1;
}

__attribute__((weak)) const char *plug_criu_run_id(void)
{
	return "";
}
