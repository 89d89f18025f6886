/* Enum <-> name tables used by JSON, tables and option parsing. */
#include <errno.h>
#include <string.h>

#include "rtid.h"

#define NAME_AT(tab, i) ((size_t)(i) < sizeof(tab) / sizeof((tab)[0]) ? (tab)[i] : "?")

static const char *const modes[] = { "driver", "scan", "crosscheck", "canary" };
static const char *const sources[] = { NULL, "scan", "tool", "api", "service" };
static const char *const fallbacks[] = {
	NULL, "zero-matches", "multiple-matches", "unstable",
	"scan-error", "unattested", "canary-mismatch", "version-mismatch",
};
static const char *const xchecks[] = { NULL, "agree", "agree-none", "mismatch" };
static const char *const errors[] = {
	NULL, "timeout", "tool-crashed", "tool-failed", "tool-not-found",
	"bad-output", "no-such-process", "deadline", "spawn-failed",
	"api-failed", "worker-crashed", "worker-failed", "not-a-process",
};

const char *rtid_mode_name(enum rtid_mode m) { return NAME_AT(modes, m); }
const char *rtid_source_name(enum rtid_source s) { return NAME_AT(sources, s); }
const char *rtid_fallback_name(enum rtid_fallback f) { return NAME_AT(fallbacks, f); }
const char *rtid_xcheck_name(enum rtid_xcheck x) { return NAME_AT(xchecks, x); }
const char *rtid_error_name(enum rtid_error e) { return NAME_AT(errors, e); }

int rtid_mode_parse(const char *s, enum rtid_mode *out)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (s && strcmp(s, modes[i]) == 0) {
			*out = (enum rtid_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}
