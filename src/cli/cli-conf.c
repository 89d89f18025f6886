/* The values of the settings (the file's or the environment's) that the
 * shim can use, judged one way for the shim and rtid doctor. The file
 * itself has one reader, conf/. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "conf/conf.h"
#include "proc/proc.h"

#define SECONDS "seconds: a number above 0, at most 1000000, without a unit (2, 0.5)"

const char *cli_conf_unusable(const char *name, const char *value)
{
	struct rtid__matcher m;
	enum rtid_mode mode;
	double sec;
	int n;

	if (!value || !*value)
		return NULL; /* empty is unset: the default */
	if (!strcmp(name, "RTID_MODE"))
		return rtid_mode_parse(value, &mode) == 0 ? NULL : "driver, scan, crosscheck or canary";
	if (!strcmp(name, "RTID_BACKEND"))
		return !strcmp(value, "tool") || !strcmp(value, "api") ? NULL : "tool or api";
	if (!strcmp(name, "RTID_TIMEOUT") || !strcmp(name, "RTID_SERVICE_TIMEOUT") ||
	    !strcmp(name, "RTID_SERVICE_ACTION_TIMEOUT"))
		return cli_parse_seconds(value, &sec) == 0 ? NULL : SECONDS;
	if (!strcmp(name, "RTID_SERVE_UID"))
		return !strcmp(value, "0") || rtid__parse_pid(value, &n) == 0 ? NULL
		       : "a uid: a number (not a name)";
	if (!strcmp(name, "RTID_UNATTESTED"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL : "1 (scan unattested) or 0";
	if (!strcmp(name, "RTID_PLUGIN_NO_CUDA_ON_ERROR"))
		return !strcmp(value, "0") || !strcmp(value, "1") ? NULL
		       : "1 (dump a process of no word without GPU state) or 0";
	if (!strcmp(name, "RTID_PATTERN")) {
		if (rtid__matcher_init(&m, value) < 0)
			return "a POSIX extended regular expression";
		rtid__matcher_fini(&m);
	}
	return NULL; /* a path, or a name: any value is one the shim can try */
}

const char *cli_conf_env_unusable(const char **value, const char **accepted)
{
	const char *name;

	for (size_t i = 0; (name = rtid__conf_name(i)); i++) {
		const char *v = getenv(name), *why = cli_conf_unusable(name, v);

		if (why) {
			*value = v;
			*accepted = why;
			return name;
		}
	}
	return NULL;
}
