/* Strategy names and the attach distribution: the parts of the model that
 * the engine, the table and the check share. */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "basic/parse.h"
#include "rtid.h"

const char *const sim_hook_names[SIM_NHOOKS] = { "pause_devices", "checkpoint_devices",
						 "resume_devices_late" };
const char *const sim_call_names[SIM_NCALLS] = { "get_restore_tid", "get_state", "lock",
						 "checkpoint", "restore", "unlock", "toggle",
						 "resume" };

enum { P_SCAN = 1, P_CANARY = 2, P_API = 4, P_SERVE = 8, P_TOGGLE = 16, P_PARALLEL = 32,
       P_UPSTREAM = 64, P_PLUGIN = 128, P_COALESCED = 256, P_BATCH = 512, P_RUNS = 1024,
       P_QUEUE = 2048 };

#define PARTS "upstream, scan, canary, api, serve, plugin, toggle, coalesced, parallel:K, " \
	      "batch:K, runs:R, queue"

static const struct { const char *name; unsigned bit; } parts[] = {
	{ "upstream", P_UPSTREAM }, { "scan", P_SCAN }, { "canary", P_CANARY },
	{ "api", P_API }, { "serve", P_SERVE }, { "toggle", P_TOGGLE }, { "plugin", P_PLUGIN },
	{ "coalesced", P_COALESCED }, { "queue", P_QUEUE } };

/* The parts with a number: "parallel:K", "batch:K", "runs:R". */
static const struct { const char *prefix; unsigned bit; size_t at; } counted[] = {
	{ "parallel:", P_PARALLEL, offsetof(struct sim_strategy, k) },
	{ "batch:", P_BATCH, offsetof(struct sim_strategy, batch) },
	{ "runs:", P_RUNS, offsetof(struct sim_strategy, runs) },
};

/* A counted part's number (1..64) into its field of st; its bit, 0 when buf
 * is not one, or -EINVAL with why. */
static int count_part(const char *buf, struct sim_strategy *st, char *why, size_t len)
{
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		size_t n = strlen(counted[i].prefix);
		int k;

		if (strncmp(buf, counted[i].prefix, n))
			continue;
		if (rtid__parse_pid(buf + n, &k) < 0 || k > 64)
			return snprintf(why, len, "%.*sK needs K from 1 to 64, got '%s'", (int)n,
					counted[i].prefix, buf + n), -EINVAL;
		*(unsigned *)((char *)st + counted[i].at) = (unsigned)k;
		return (int)counted[i].bit;
	}
	return 0;
}

/* Two parts that cannot go together, named, or NULL. */
static const char *clash(unsigned seen)
{
	if ((seen & (P_SCAN | P_CANARY)) == (P_SCAN | P_CANARY))
		return "scan and canary are two ways to look the thread up: pick one";
	if (__builtin_popcount(seen & (P_API | P_SERVE | P_PLUGIN)) > 1)
		return "api, serve and plugin are three backends: pick one";
	if ((seen & (P_TOGGLE | P_COALESCED)) == (P_TOGGLE | P_COALESCED))
		return "toggle already makes restore and unlock one call: pick toggle or coalesced";
	if ((seen & (P_PARALLEL | P_BATCH)) == (P_PARALLEL | P_BATCH))
		return "batch:K already runs K processes' actions at once: pick parallel or batch";
	if ((seen & (P_API | P_BATCH)) == (P_API | P_BATCH))
		return "api is one worker, whose calls follow each other: it takes no batch:K";
	if ((seen & P_UPSTREAM) && seen != P_UPSTREAM)
		return "upstream stands alone (it is the plugin as it is)";
	if ((seen & (P_API | P_PARALLEL)) == (P_API | P_PARALLEL))
		return "api is one worker, whose calls follow each other: it takes no parallel:K";
	return NULL;
}

/* One part of a strategy name into *seen and st; -EINVAL with why when
 * unknown or repeated, or when it contradicts a part already seen. */
static int part(const char *s, size_t len, unsigned *seen, struct sim_strategy *st, char *why,
		size_t wlen)
{
	char buf[24];
	unsigned bit = 0;
	const char *c;

	if (len == 0)
		return snprintf(why, wlen, "empty part (a '+' with nothing beside it); parts: "
				PARTS), -EINVAL;
	if (len >= sizeof(buf))
		return snprintf(why, wlen, "unknown part '%.*s'; parts: " PARTS, (int)len, s),
		       -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strcmp(buf, parts[i].name))
			bit = parts[i].bit;
	if (!bit) {
		int r = count_part(buf, st, why, wlen);

		if (r < 0)
			return -EINVAL;
		bit = (unsigned)r;
	}
	if (!bit)
		return snprintf(why, wlen, "unknown part '%s'; parts: " PARTS, buf), -EINVAL;
	if (*seen & bit) /* a counted part by its name: parallel:K, not parallel:8 */
		return snprintf(why, wlen, "'%.*s%s' given twice", (int)strcspn(buf, ":") +
				(strchr(buf, ':') ? 1 : 0), buf, strchr(buf, ':') ? "K" : ""),
		       -EINVAL;
	*seen |= bit;
	c = clash(*seen);
	if (c)
		return snprintf(why, wlen, "%s", c), -EINVAL;
	return 0;
}

int sim_strategy_parse_why(const char *s, struct sim_strategy *out, char *why, size_t len)
{
	struct sim_strategy st = { .tid = SIM_TID_DRIVER, .backend = SIM_BACKEND_SPAWN, .k = 1,
				   .runs = 1 };
	unsigned seen = 0;

	if (!s || strlen(s) >= sizeof(st.name))
		return snprintf(why, len, "too long (at most %zu characters)", sizeof(st.name) - 1),
		       -EINVAL;
	for (const char *p = s;;) {
		size_t n = strcspn(p, "+");

		if (part(p, n, &seen, &st, why, len) < 0)
			return -EINVAL;
		if (!p[n])
			break;
		p += n + 1;
	}
	st.tid = seen & P_SCAN ? SIM_TID_SCAN : seen & P_CANARY ? SIM_TID_CANARY : SIM_TID_DRIVER;
	st.backend = seen & P_API ? SIM_BACKEND_API
		   : seen & P_SERVE ? SIM_BACKEND_SERVE
		   : seen & P_PLUGIN ? SIM_BACKEND_PLUGIN : SIM_BACKEND_SPAWN;
	if ((seen & P_QUEUE) && !(seen & (P_SERVE | P_PLUGIN)))
		return snprintf(why, len, "queue is how a daemon schedules: it needs serve or plugin"),
		       -EINVAL;
	/* plugin alone is rtid's plugin as built: K at its default
	 * (RTID_PLUGIN_PARALLEL, src/plugin/plugin.h); plugin+batch:K is the
	 * plugin a changed CRIU would allow (criu PR #3105). */
	if ((seen & P_PLUGIN) && !(seen & (P_PARALLEL | P_BATCH)))
		st.k = SIM_PLUGIN_K;
	st.toggle = seen & P_TOGGLE;
	st.coalesced = seen & P_COALESCED;
	st.queue = seen & P_QUEUE;
	snprintf(st.name, sizeof(st.name), "%s", s);
	*out = st;
	return 0;
}

int sim_strategy_parse(const char *s, struct sim_strategy *out)
{
	char why[160];

	return sim_strategy_parse_why(s, out, why, sizeof(why));
}

/* xorshift64*: small, seeded, the same everywhere. Uniform in (0, 1]. */
static double uniform(uint64_t *rng)
{
	*rng ^= *rng >> 12;
	*rng ^= *rng << 25;
	*rng ^= *rng >> 27;
	return (double)(((*rng * 2685821657736338717ULL) >> 11) + 1) / 9007199254740992.0;
}

double sim_attach_draw(const struct sim_params *p, unsigned visible, uint64_t *rng)
{
	double extra = p->attach_per_gpu_s * (visible > 1 ? visible - 1 : 0), a = p->attach_s;

	if (*rng == 0)
		*rng = 0x9e3779b97f4a7c15ULL; /* xorshift stays at 0 */

	/* A log-normal around the median, cut to the range that was observed
	 * (redrawn outside it, so the shape between stays the fitted one). */
	if (p->attach_sigma > 0)
		for (int tries = 0; tries < 64; tries++) {
			double z = sqrt(-2.0 * log(uniform(rng))) * cos(2.0 * M_PI * uniform(rng));

			a = p->attach_s * exp(p->attach_sigma * z);
			if (a >= p->attach_min_s && a <= p->attach_max_s)
				break;
			a = p->attach_s;
		}
	return a + extra;
}

double sim_rng_uniform(uint64_t *rng)
{
	return uniform(rng);
}

double sim_hook_total(const struct sim_result *r, enum sim_hook h)
{
	double t = 0;

	for (int c = 0; c < SIM_NCALLS; c++)
		t += r->hooks[h][c];
	return t;
}
