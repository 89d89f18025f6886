/* rtid serve status: the daemon's counters in words, as JSON, or in the
 * Prometheus text exposition format (node_exporter's textfile collector:
 * rtid serve status --prometheus --output DIR/rtid.prom). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "cli/cli.h"
#include "proto/service-client.h"

enum fmt { F_WORDS, F_JSON, F_PROM };

#define STATS_MAX 512 /* stat messages kept for the Prometheus blocks */

struct status {
	enum fmt fmt;
	FILE *out;
	json_t *o;
	char *stat[STATS_MAX];
	size_t n;
};

static const char status_help[] =
	"Usage: rtid serve status [--json | --prometheus] [--output FILE] [--socket PATH]\n"
	"The counters of the running rtid serve: uptime, the driver version, the latest\n"
	"attach's time, attaches and worker failures, requests with a worker and waiting,\n"
	"requests by operation and outcome (errors by reason), latency percentiles\n"
	"(p50 p90 p99) with the sum and count of all latencies.\n\n"
	"  --json         one JSON object\n"
	"  --prometheus   the Prometheus text format (every family typed, seconds,\n"
	"                 rtid_up 1, or rtid_up 0 when the daemon does not answer)\n"
	"  --output FILE  write FILE whole (a temporary file beside it, renamed over it)\n"
	"                 instead of stdout\n"
	"  --socket PATH  the daemon's socket (default " RTID__SVC_SOCKET_DEFAULT ")  [RTID_SOCKET]\n"
	"Exit status: 0, or 1 when the daemon cannot be asked (with --prometheus the\n"
	"output still says rtid_up 0; otherwise nothing is written).\n";

/* A number of the daemon's, checked whole. */
static bool number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return s[0] && !*end && !errno;
}

/* The words of one stat message (at most max). */
static size_t split(char *s, char **w, size_t max)
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

static void json_stat(json_t *o, char **w, size_t n)
{
	double v = 0;

	if (n == 2) {
		json_object_set_new(o, w[0], !number(w[1], &v) ? json_string(w[1])
				    : v == (double)(json_int_t)v ? json_integer((json_int_t)v)
				    : json_real(v));
	} else if (n == 4 && (!strcmp(w[0], "requests") || !strcmp(w[0], "errors")) &&
		   number(w[3], &v)) {
		json_t *by = json_object_get(o, w[0]), *op;

		if (!by)
			json_object_set_new(o, w[0], by = json_object());
		if (!(op = json_object_get(by, w[1])))
			json_object_set_new(by, w[1], op = json_object());
		json_object_set_new(op, w[2], json_integer((json_int_t)v));
	} else if (n == 5 && !strcmp(w[0], "latency_ms")) {
		json_t *by = json_object_get(o, "latency_ms"), *q = json_object();
		double p[3];

		if (!by)
			json_object_set_new(o, "latency_ms", by = json_object());
		for (int k = 0; k < 3; k++)
			json_object_set_new(q, (const char *[]){ "p50", "p90", "p99" }[k],
					    number(w[2 + k], &p[k]) ? json_real(p[k]) : json_null());
		json_object_set_new(by, w[1], q);
	}
}

static void one(void *ctx, const char *line)
{
	struct status *st = ctx;
	char copy[256], *w[6];
	size_t n;

	snprintf(copy, sizeof(copy), "%s", line);
	n = split(copy, w, 6);
	if (n < 2)
		return;
	if (st->fmt == F_WORDS)
		fprintf(st->out, "%s\n", line);
	else if (st->fmt == F_JSON)
		json_stat(st->o, w, n);
	else if (st->n < STATS_MAX)
		st->stat[st->n++] = strdup(line);
}

/* --- the Prometheus text format: one block per family, each with its HELP
 * and TYPE, in base units, counters ending in _total --- */
struct fam {
	const char *stat, *name, *type, *help;
};

static const struct fam scalars[] = {
	{ "uptime_seconds", "rtid_uptime_seconds", "gauge", "Seconds since rtid serve started." },
	{ "attach_seconds", "rtid_attach_seconds", "gauge",
	  "Seconds the latest driver attach (a worker's start) took." },
	{ "attaches", "rtid_attaches_total", "counter", "Driver attaches since rtid serve started." },
	{ "worker_failures", "rtid_worker_failures_total", "counter",
	  "Workers that died, timed out or broke the protocol." },
	{ "workers_max", "rtid_workers_max", "gauge", "The most workers (driver attaches) at once." },
	{ "inflight", "rtid_inflight", "gauge", "Requests with a worker now." },
	{ "queued", "rtid_queued", "gauge", "Requests waiting for a worker now." },
};

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

/* The words of stat k into copy (256 bytes); how many. */
static size_t words(char *const *stat, size_t k, char *copy, char **w)
{
	snprintf(copy, 256, "%s", stat[k]);
	return split(copy, w, 6);
}

/* A stat name fit for a metric's, and none of the names given above. */
static bool unknown_name(const char *s)
{
	if (!strcmp(s, "driver") || !strcmp(s, "up"))
		return false;
	for (size_t k = 0; k < sizeof(scalars) / sizeof(*scalars); k++)
		if (!strcmp(s, scalars[k].stat))
			return false;
	return s[strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_")] == '\0';
}

static void prom_scalars(FILE *f, char *const *stat, size_t n)
{
	char copy[256], *w[6];
	double v;

	for (size_t s = 0; s < sizeof(scalars) / sizeof(*scalars); s++)
		for (size_t k = 0; k < n; k++)
			if (words(stat, k, copy, w) == 2 && !strcmp(w[0], scalars[s].stat) &&
			    number(w[1], &v)) {
				head(f, scalars[s].name, scalars[s].type, scalars[s].help);
				fprintf(f, "%s %s\n", scalars[s].name, w[1]);
				break;
			}
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, copy, w) == 2 && !strcmp(w[0], "driver")) {
			head(f, "rtid_driver_info", "gauge", "The driver's version (- if unknown).");
			fputs("rtid_driver_info{", f);
			label(f, "version", w[1]);
			fputs("} 1\n", f);
			break;
		}
	/* A figure of a newer daemon: shown, typed untyped, rather than lost. */
	for (size_t k = 0; k < n; k++)
		if (words(stat, k, copy, w) == 2 && unknown_name(w[0]) && number(w[1], &v)) {
			fprintf(f, "# HELP rtid_%s The daemon's %s (a figure this rtid does not know).\n",
				w[0], w[0]);
			fprintf(f, "# TYPE rtid_%s untyped\nrtid_%s %s\n", w[0], w[0], w[1]);
		}
}

/* Whether the daemon told op's errors by reason. */
static bool has_reasons(char *const *stat, size_t n, const char *op)
{
	char copy[256], *w[6];

	for (size_t k = 0; k < n; k++)
		if (words(stat, k, copy, w) == 4 && !strcmp(w[0], "errors") && !strcmp(w[1], op))
			return true;
	return false;
}

static void prom_requests(FILE *f, char *const *stat, size_t n)
{
	char copy[256], *w[6];
	bool said = false;
	double v;

	for (size_t k = 0; k < n; k++) {
		size_t m = words(stat, k, copy, w);
		bool err = m == 4 && !strcmp(w[0], "errors");

		if (m != 4 || !number(w[3], &v) || (!err && strcmp(w[0], "requests")) ||
		    (!err && !strcmp(w[2], "error") && has_reasons(stat, n, w[1])))
			continue;
		if (!said)
			head(f, "rtid_requests_total", "counter",
			     "Requests answered, by operation and outcome (error by reason; "
			     "not-served: an action asked of a queries-only daemon).");
		said = true;
		fputs("rtid_requests_total{", f);
		label(f, "op", w[1]);
		fputc(',', f);
		label(f, "outcome", err ? "error" : w[2]);
		if (err) {
			fputc(',', f);
			label(f, "reason", w[2]);
		}
		fprintf(f, "} %s\n", w[3]);
	}
}

static void prom_latency(FILE *f, char *const *stat, size_t n)
{
	static const char *const q[3] = { "0.5", "0.9", "0.99" };
	char copy[256], *w[6], c2[256], *w2[6];
	bool said = false;
	double v;

	for (size_t k = 0; k < n; k++) {
		if (words(stat, k, copy, w) != 5 || strcmp(w[0], "latency_ms"))
			continue;
		if (!said)
			head(f, "rtid_request_duration_seconds", "summary",
			     "Seconds from a request to its answer: quantiles of the latest 1024 "
			     "per operation, sum and count of all.");
		said = true;
		for (int i = 0; i < 3; i++)
			if (number(w[2 + i], &v)) {
				fputs("rtid_request_duration_seconds{", f);
				label(f, "op", w[1]);
				fprintf(f, ",quantile=\"%s\"} %.9g\n", q[i], v / 1e3);
			}
		for (size_t j = 0; j < n; j++)
			if (words(stat, j, c2, w2) == 4 && !strcmp(w2[0], "duration_seconds") &&
			    !strcmp(w2[1], w[1]) && number(w2[2], &v) && number(w2[3], &v)) {
				fputs("rtid_request_duration_seconds_sum{", f);
				label(f, "op", w[1]);
				fprintf(f, "} %s\nrtid_request_duration_seconds_count{", w2[2]);
				label(f, "op", w[1]);
				fprintf(f, "} %s\n", w2[3]);
			}
	}
}

/* Every family of the daemon's stats (none when it did not answer) and
 * rtid_up, into f. */
static void prom(FILE *f, char *const *stat, size_t n, bool up)
{
	head(f, "rtid_up", "gauge", "Whether rtid serve answered (1) or not (0).");
	fprintf(f, "rtid_up %d\n", up);
	prom_scalars(f, stat, n);
	prom_requests(f, stat, n);
	prom_latency(f, stat, n);
}

/* Write buf to path whole: a temporary file in the same directory, renamed
 * over path, so that a reader (node_exporter) sees the old file or the new
 * one, never a part. 0, or -errno. */
static int write_whole(const char *path, const char *buf, size_t len)
{
	char tmp[4096];
	const char *slash = strrchr(path, '/');
	int fd, e = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0,
			     path, slash ? slash + 1 : path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return -errno;
	/* Readable by the collector, as a file written with '>' would be. */
	if (fchmod(fd, 0644) < 0)
		e = -errno;
	for (size_t off = 0; !e && off < len;) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno != EINTR)
			e = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (!e && fsync(fd) < 0)
		e = -errno;
	if (close(fd) < 0 && !e)
		e = -errno;
	if (!e && rename(tmp, path) < 0)
		e = -errno;
	if (e)
		unlink(tmp);
	return e;
}

/* Ask the daemon at path; 0, or -errno with nothing kept of a partial answer. */
static int ask(const char *path, struct status *st)
{
	struct rtid__svc_conn c;
	int r;

	if ((r = rtid__svc_open(path, &c)) < 0)
		return r;
	r = rtid__svc_status(&c, rtid__now() + 10, one, st);
	rtid__svc_close(&c);
	return r;
}

int cmd_serve_status(int argc, char **argv)
{
	static const struct option opts[] = { { "json", 0, NULL, 'j' }, { "prometheus", 0, NULL, 'p' },
					      { "socket", 1, NULL, 's' }, { "output", 1, NULL, 'o' },
					      { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct status st = { .fmt = F_WORDS };
	const char *path = NULL, *file = NULL;
	char *buf = NULL;
	size_t len = 0;
	int o, r;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (o == 'h') {
			fputs(status_help, stdout);
			return 0;
		} else if (o == 'j' || o == 'p') {
			st.fmt = o == 'j' ? F_JSON : F_PROM;
		} else if (o == 's') {
			path = optarg;
		} else if (o == 'o') {
			file = optarg;
		} else {
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rtid serve status: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	path = rtid__svc_path(path);
	if (!(st.out = open_memstream(&buf, &len)))
		return 1;
	st.o = json_object();
	if ((r = ask(path, &st)) < 0)
		fprintf(stderr, "rtid serve status: %s: %s\n", path, strerror(-r));
	if (st.fmt == F_PROM) {
		fprintf(st.out, "# rtid serve at %s\n", path);
		prom(st.out, st.stat, r < 0 ? 0 : st.n, r == 0);
	} else if (st.fmt == F_JSON && r == 0) {
		json_dumpf(st.o, st.out, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
		fputc('\n', st.out);
	}
	json_decref(st.o);
	for (size_t k = 0; k < st.n; k++)
		free(st.stat[k]);
	fclose(st.out);
	/* Words and JSON say nothing of a daemon that did not answer; Prometheus
	 * says rtid_up 0, so that the collector's file is never left stale. */
	if (r == 0 || st.fmt == F_PROM) {
		if (!file) {
			fwrite(buf, 1, len, stdout);
		} else if ((o = write_whole(file, buf, len)) < 0) {
			fprintf(stderr, "rtid serve status: %s: %s\n", file, strerror(-o));
			r = r ? r : o;
		}
	}
	free(buf);
	return r < 0 ? 1 : 0;
}
