/* rtid serve status --prometheus: the daemon's stat messages in the
 * Prometheus text exposition format, as node_exporter's textfile collector
 * reads it. One block per family, each with its HELP and TYPE; seconds, not
 * milliseconds; counters end in _total. The series a daemon says it counts
 * (its ops, outcomes and reasons messages) are written at 0 before their
 * first event, so that rate() over them sees that event. Latency is a
 * histogram, which sums across nodes (a summary's quantiles do not). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/serve-status/cli-serve-status.h"

bool sstat_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return s[0] && !*end && !errno;
}

size_t sstat_split(char *s, char **w, size_t max)
{
	size_t n = 0;

	for (char *p = s; *p && n < max;) {
		w[n++] = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = '\0';
	}
	return n;
}

struct fam {
	const char *stat, *name, *type, *help;
};

static const struct fam scalars[] = {
	{ "start_time_seconds", "rtid_start_time_seconds", "gauge",
	  "When rtid serve started, in seconds since the epoch." },
	{ "uptime_seconds", "rtid_uptime_seconds", "gauge", "Seconds since rtid serve started." },
	{ "attach_seconds", "rtid_attach_seconds", "gauge",
	  "Seconds the latest driver attach (a worker's start) took." },
	{ "attaches", "rtid_attaches_total", "counter",
	  "Driver attaches started (a worker each)." },
	{ "attach_failures", "rtid_attach_failures_total", "counter",
	  "Driver attaches that failed: a worker that could not be started, or one "
	  "whose driver did not initialise (in time)." },
	{ "worker_failures", "rtid_worker_failures_total", "counter",
	  "Workers that died, timed out or broke the protocol (failed attaches too)." },
	{ "workers_max", "rtid_workers_max", "gauge", "The most workers (driver attaches) at once." },
	{ "inflight", "rtid_inflight", "gauge", "Requests with a worker now." },
	{ "queued", "rtid_queued", "gauge", "Requests waiting for a worker now." },
};

/* The words of one stat, split into its own copy. */
struct words {
	char copy[256];
	char *w[SSTAT_WORDS];
	size_t n;
};

static size_t words(char *const *stat, size_t k, struct words *o)
{
	snprintf(o->copy, sizeof(o->copy), "%s", stat[k]);
	return o->n = sstat_split(o->copy, o->w, SSTAT_WORDS);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label's value, escaped as the format asks (backslash, quote, newline). */
static void label(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s=\"", key);
	for (; *v; v++)
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else
			fputc(*v, f);
	fputc('"', f);
}

/* A stat name fit for a metric's, and none of the names given here. */
static bool unknown_name(const char *s)
{
	if (!strcmp(s, "driver") || !strcmp(s, "up") || !strcmp(s, "version") ||
	    !strcmp(s, "build_info") || !strcmp(s, "scrape_error"))
		return false;
	for (size_t k = 0; k < sizeof(scalars) / sizeof(*scalars); k++)
		if (!strcmp(s, scalars[k].stat))
			return false;
	return s[strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_")] == '\0';
}

/* The first stat "NAME VALUE"'s value, or NULL. */
static const char *value_of(char *const *stat, size_t n, const char *name, struct words *o)
{
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, o) == 2 && !strcmp(o->w[0], name))
			return o->w[1];
	return NULL;
}

static void info(FILE *f, const char *name, const char *help, const char *version)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s{", name);
	label(f, "version", version);
	fputs("} 1\n", f);
}

static void prom_scalars(FILE *f, char *const *stat, size_t n)
{
	struct words o;
	const char *v;
	double x;

	if ((v = value_of(stat, n, "version", &o)))
		info(f, "rtid_build_info", "The running rtid serve's version.", v);
	for (size_t s = 0; s < sizeof(scalars) / sizeof(*scalars); s++)
		if ((v = value_of(stat, n, scalars[s].stat, &o)) && sstat_number(v, &x)) {
			head(f, scalars[s].name, scalars[s].type, scalars[s].help);
			fprintf(f, "%s %s\n", scalars[s].name, v);
		}
	if ((v = value_of(stat, n, "driver", &o)))
		info(f, "rtid_driver_info", "The driver's version (- if unknown).", v);
	/* A figure of a newer daemon: shown, typed untyped, rather than lost. */
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, &o) == 2 && unknown_name(o.w[0]) && sstat_number(o.w[1], &x)) {
			fprintf(f, "# HELP rtid_%s The daemon's %s (a figure this rtid does not know).\n",
				o.w[0], o.w[0]);
			fprintf(f, "# TYPE rtid_%s untyped\nrtid_%s %s\n", o.w[0], o.w[0], o.w[1]);
		}
}

/* --- rtid_requests_total: one series per operation, outcome and (for an
 * error) reason, in the order first named --- */
struct series {
	char op[64], outcome[64], reason[64], value[32];
};

struct table {
	struct series *s;
	size_t n, max;
};

static void put(struct table *t, const char *op, const char *outcome, const char *reason,
		const char *value)
{
	size_t k = 0;

	while (k < t->n && (strcmp(t->s[k].op, op) || strcmp(t->s[k].outcome, outcome) ||
			    strcmp(t->s[k].reason, reason)))
		k++;
	if (k == t->n && t->n == t->max)
		return;
	/* Names the format cannot hold whole are the daemon's fault; cut, not lost. */
	if (k == t->n) {
		snprintf(t->s[k].op, sizeof(t->s[k].op), "%s", op);
		snprintf(t->s[k].outcome, sizeof(t->s[k].outcome), "%s", outcome);
		snprintf(t->s[k].reason, sizeof(t->s[k].reason), "%s", reason);
		t->n++;
	}
	snprintf(t->s[k].value, sizeof(t->s[k].value), "%s", value);
}

/* The words of the list stat NAME ("ops", ...), or 0 when not said. */
static size_t list(char *const *stat, size_t n, const char *name, struct words *o)
{
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, o) > 1 && !strcmp(o->w[0], name))
			return o->n;
	return 0;
}

/* Whether the daemon tells op's errors by reason: its counted reasons, or
 * (a daemon that sends no list) an errors message about op. */
static bool has_reasons(char *const *stat, size_t n, const char *op)
{
	struct words o;

	if (list(stat, n, "reasons", &o))
		return true;
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, &o) == 4 && !strcmp(o.w[0], "errors") && !strcmp(o.w[1], op))
			return true;
	return false;
}

/* Every op x outcome the daemon counts at 0, an error by each reason. */
static void zeros(struct table *t, char *const *stat, size_t n)
{
	struct words ops, outs, why;
	size_t nops = list(stat, n, "ops", &ops), nouts = list(stat, n, "outcomes", &outs);
	size_t nwhy = list(stat, n, "reasons", &why);

	for (size_t a = 1; a < nops; a++)
		for (size_t b = 1; b < nouts; b++) {
			if (strcmp(outs.w[b], "error") || nwhy < 2)
				put(t, ops.w[a], outs.w[b], "", "0");
			else
				for (size_t c = 1; c < nwhy; c++)
					put(t, ops.w[a], "error", why.w[c], "0");
		}
}

static void prom_requests(FILE *f, char *const *stat, size_t n)
{
	struct table t = { .s = calloc(1024, sizeof(struct series)), .max = 1024 };
	struct words o;
	double v;

	if (!t.s)
		return;
	zeros(&t, stat, n);
	for (size_t k = 0; k < n; k++) {
		bool err = words(stat, k, &o) == 4 && !strcmp(o.w[0], "errors");

		if (o.n != 4 || !sstat_number(o.w[3], &v) || (!err && strcmp(o.w[0], "requests")))
			continue;
		/* An error total beside its reasons would count each error twice. */
		if (!err && !strcmp(o.w[2], "error") && has_reasons(stat, n, o.w[1]))
			continue;
		put(&t, o.w[1], err ? "error" : o.w[2], err ? o.w[2] : "", o.w[3]);
	}
	if (t.n)
		head(f, "rtid_requests_total", "counter",
		     "Requests answered, by operation and outcome (error by reason; not-served: "
		     "an action asked of a queries-only daemon; no-such-process and "
		     "not-a-process: refused, but no matter of permission).");
	for (size_t k = 0; k < t.n; k++) {
		fputs("rtid_requests_total{", f);
		label(f, "op", t.s[k].op);
		fputc(',', f);
		label(f, "outcome", t.s[k].outcome);
		if (t.s[k].reason[0]) {
			fputc(',', f);
			label(f, "reason", t.s[k].reason);
		}
		fprintf(f, "} %s\n", t.s[k].value);
	}
	free(t.s);
}

/* --- rtid_request_duration_seconds: a histogram per operation --- */

/* op's cumulative counts, one per bound (nle of them), when the daemon sent
 * them whole, rising and within count: true. */
static bool buckets(char *const *stat, size_t n, const char *op, size_t nle, double count,
		    struct words *o)
{
	double v, last = 0;

	for (size_t k = 0; k < n; k++) {
		if (words(stat, k, o) < 2 || strcmp(o->w[0], "duration_buckets") ||
		    strcmp(o->w[1], op))
			continue;
		if (o->n != nle + 2)
			return false;
		for (size_t i = 2; i < o->n; i++) {
			if (!sstat_number(o->w[i], &v) || v < last || v > count)
				return false;
			last = v;
		}
		return true;
	}
	return false;
}

/* Whether op's histogram came before stat k (a second sum of one op). */
static bool seen_before(char *const *stat, size_t k, const char *op)
{
	struct words o;
	double v;

	for (size_t j = 0; j < k; j++)
		if (words(stat, j, &o) == 4 && !strcmp(o.w[0], "duration_seconds") &&
		    !strcmp(o.w[1], op) && sstat_number(o.w[2], &v) && sstat_number(o.w[3], &v))
			return true;
	return false;
}

static void bucket(FILE *f, const char *op, const char *le, const char *count)
{
	fputs("rtid_request_duration_seconds_bucket{", f);
	label(f, "op", op);
	fputc(',', f);
	label(f, "le", le);
	fprintf(f, "} %s\n", count);
}

static void prom_latency(FILE *f, char *const *stat, size_t n)
{
	struct words o, le, b;
	size_t nle = list(stat, n, "duration_le", &le);
	bool said = false;
	double sum, count, v;

	for (size_t i = 1; i < nle; i++)
		if (!sstat_number(le.w[i], &v))
			nle = 0; /* bounds that are none: only +Inf */
	for (size_t k = 0; k < n; k++) {
		if (words(stat, k, &o) != 4 || strcmp(o.w[0], "duration_seconds") ||
		    !sstat_number(o.w[2], &sum) || !sstat_number(o.w[3], &count) ||
		    seen_before(stat, k, o.w[1]))
			continue;
		if (!said)
			head(f, "rtid_request_duration_seconds", "histogram",
			     "Seconds from a request to its answer, by operation.");
		said = true;
		/* A daemon without bounds (an older one) still gives +Inf: its count. */
		if (nle > 1 && buckets(stat, n, o.w[1], nle - 1, count, &b))
			for (size_t i = 1; i < nle; i++)
				bucket(f, o.w[1], le.w[i], b.w[i + 1]);
		bucket(f, o.w[1], "+Inf", o.w[3]);
		fputs("rtid_request_duration_seconds_sum{", f);
		label(f, "op", o.w[1]);
		fprintf(f, "} %s\nrtid_request_duration_seconds_count{", o.w[2]);
		label(f, "op", o.w[1]);
		fprintf(f, "} %s\n", o.w[3]);
	}
}

void sstat_prom(FILE *f, char *const *stat, size_t n, enum sstat_up up)
{
	/* No rtid_up when this user may not connect: that says nothing of the
	 * daemon, and rtid_up 0 would fire an alert on a daemon that is up. */
	if (up != SSTAT_NO_PERMISSION) {
		head(f, "rtid_up", "gauge", "Whether rtid serve answered (1) or not (0).");
		fprintf(f, "rtid_up %d\n", up == SSTAT_UP);
	}
	head(f, "rtid_scrape_error", "gauge",
	     "Whether rtid serve status could not ask the daemon for a reason of its own "
	     "(1; permission: this user may not connect to the socket), rtid_up then absent.");
	fprintf(f, "rtid_scrape_error{reason=\"permission\"} %d\n", up == SSTAT_NO_PERMISSION);
	prom_scalars(f, stat, n);
	prom_requests(f, stat, n);
	prom_latency(f, stat, n);
}
