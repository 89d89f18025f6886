/* Enum <-> name tables used by JSON, tables and option parsing. Each table is
 * indexed by the enum's values (designated initialisers) and sized by its
 * _MAX, so that a reordered or grown enum cannot mislabel silently: a value
 * without a name fails the build, not a user's report. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "basic/basic.h"
#include "config.h"
#include "rtid.h"

#define ELEMENTS(tab) (sizeof(tab) / sizeof((tab)[0]))
#define NAME_AT(tab, i) ((size_t)(i) < ELEMENTS(tab) ? (tab)[i] : "?")

static const char *const modes[] = {
	[RTID_MODE_DRIVER] = "driver",
	[RTID_MODE_SCAN] = "scan",
	[RTID_MODE_CROSSCHECK] = "crosscheck",
	[RTID_MODE_CANARY] = "canary",
};
static const char *const sources[] = {
	[RTID_SRC_NONE] = NULL,
	[RTID_SRC_SCAN] = "scan",
	[RTID_SRC_TOOL] = "tool",
	[RTID_SRC_API] = "api",
	[RTID_SRC_SERVICE] = "service",
};
static const char *const fallbacks[] = {
	[RTID_FB_NONE] = NULL,
	[RTID_FB_ZERO_MATCHES] = "zero-matches",
	[RTID_FB_MULTIPLE_MATCHES] = "multiple-matches",
	[RTID_FB_UNSTABLE] = "unstable",
	[RTID_FB_SCAN_ERROR] = "scan-error",
	[RTID_FB_UNATTESTED] = "unattested",
	[RTID_FB_CANARY_MISMATCH] = "canary-mismatch",
	[RTID_FB_VERSION_MISMATCH] = "version-mismatch",
};
static const char *const xchecks[] = {
	[RTID_XC_NONE] = NULL,
	[RTID_XC_AGREE] = "agree",
	[RTID_XC_AGREE_NONE] = "agree-none",
	[RTID_XC_MISMATCH] = "mismatch",
};
static const char *const errors[] = {
	[RTID_OK] = NULL,
	[RTID_ERR_TIMEOUT] = "timeout",
	[RTID_ERR_TOOL_CRASHED] = "tool-crashed",
	[RTID_ERR_TOOL_FAILED] = "tool-failed",
	[RTID_ERR_TOOL_NOT_FOUND] = "tool-not-found",
	[RTID_ERR_BAD_OUTPUT] = "bad-output",
	[RTID_ERR_NO_SUCH_PROCESS] = "no-such-process",
	[RTID_ERR_DEADLINE] = "deadline",
	[RTID_ERR_SPAWN_FAILED] = "spawn-failed",
	[RTID_ERR_API_FAILED] = "api-failed",
	[RTID_ERR_WORKER_CRASHED] = "worker-crashed",
	[RTID_ERR_WORKER_FAILED] = "worker-failed",
	[RTID_ERR_NOT_A_PROCESS] = "not-a-process",
	[RTID_ERR_NOT_A_THREAD] = "not-a-thread",
	[RTID_ERR_PROCESS_CHANGED] = "process-changed",
};

/* A table one entry short of its enum would leave the last value nameless. */
static_assert(ELEMENTS(modes) == RTID__MODE_MAX, "a mode without a name");
static_assert(ELEMENTS(sources) == RTID__SRC_MAX, "a source without a name");
static_assert(ELEMENTS(fallbacks) == RTID__FB_MAX, "a fallback without a name");
static_assert(ELEMENTS(xchecks) == RTID__XC_MAX, "a verdict without a name");
static_assert(ELEMENTS(errors) == RTID__ERR_MAX, "an error without a name");

const char *rtid_mode_name(enum rtid_mode m) { return NAME_AT(modes, m); }
const char *rtid_source_name(enum rtid_source s) { return NAME_AT(sources, s); }
const char *rtid_fallback_name(enum rtid_fallback f) { return NAME_AT(fallbacks, f); }
const char *rtid_xcheck_name(enum rtid_xcheck x) { return NAME_AT(xchecks, x); }
const char *rtid_error_name(enum rtid_error e) { return NAME_AT(errors, e); }

int rtid_mode_parse(const char *s, enum rtid_mode *out)
{
	for (size_t i = 0; i < ELEMENTS(modes); i++) {
		if (s && strcmp(s, modes[i]) == 0) {
			*out = (enum rtid_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *rtid_version(void)
{
	return RTID_VERSION;
}

/* The children registry lives with the spawning code (basic/spawn.c); the
 * library exports it under its public name. */
void rtid_kill_children(void)
{
	rtid__kill_children();
}
