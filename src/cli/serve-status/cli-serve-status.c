/* rtid serve status: the daemon's counters in words, as JSON, or in the
 * Prometheus text exposition format (cli-serve-prom.c; node_exporter's
 * textfile collector: rtid serve status --prometheus --output DIR/rtid.prom). */
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
#include "cli/serve-status/cli-serve-status.h"
#include "proto/service-client.h"

enum fmt { F_WORDS, F_JSON, F_PROM };

#define STATS_MAX 512 /* stat messages kept for the Prometheus blocks */
/* The exit status when this user may not connect to the socket: apart from
 * 1 (no daemon), since it says nothing of whether one runs. */
#define EXIT_PERMISSION 3

struct status {
	enum fmt fmt;
	FILE *out;
	json_t *o;
	char *stat[STATS_MAX];
	size_t n;
	bool version; /* the daemon said its version */
};

static const char status_help[] =
	"Usage: rtid serve status [--json | --prometheus] [--output FILE] [--socket PATH]\n"
	"The counters of the running rtid serve: its version and start, the driver\n"
	"version, attaches (failed ones apart) and the latest one's time, worker\n"
	"failures, requests with a worker and waiting, requests by operation and outcome\n"
	"(errors by reason), latency percentiles (p50 p90 p99) with the sum and count of\n"
	"all latencies, and (--prometheus) a latency histogram.\n\n"
	"  --json         one JSON object\n"
	"  --prometheus   the Prometheus text format (every family typed, seconds, every\n"
	"                 known series from 0; rtid_up 1, or rtid_up 0 when the daemon\n"
	"                 does not answer; no rtid_up but rtid_scrape_error{reason=\n"
	"                 \"permission\"} 1 when this user may not connect)\n"
	"  --output FILE  write FILE whole (a temporary file beside it, renamed over it)\n"
	"                 instead of stdout\n"
	"  --socket PATH  the daemon's socket (default " RTID__SVC_SOCKET_DEFAULT ")  [RTID_SOCKET]\n"
	"Exit status: 0; 1 when the daemon cannot be asked (with --prometheus the\n"
	"output still says rtid_up 0; otherwise nothing is written) or FILE cannot be\n"
	"written; 2 for a usage error; 3 when this user may not connect to the socket\n"
	"(EACCES, EPERM: its mode, owner and group; with --prometheus the output says\n"
	"so, without rtid_up).\n";

static void json_stat(json_t *o, char **w, size_t n)
{
	double v = 0;

	if (n == 2) {
		json_object_set_new(o, w[0], !sstat_number(w[1], &v) ? json_string(w[1])
				    : v == (double)(json_int_t)v ? json_integer((json_int_t)v)
				    : json_real(v));
	} else if (n == 4 && (!strcmp(w[0], "requests") || !strcmp(w[0], "errors")) &&
		   sstat_number(w[3], &v)) {
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
					    sstat_number(w[2 + k], &p[k]) ? json_real(p[k]) : json_null());
		json_object_set_new(by, w[1], q);
	}
}

/* One stat in words, each number after its label: "NAME VALUE", a
 * request's count after its operation and outcome, a latency's sum and
 * count and its percentiles each named. The lists and the histogram are for
 * --prometheus; words of a newer daemon are shown as it said them. */
static void words_stat(struct status *st, const char *line, char **w, size_t n)
{
	static const char *const pct[3] = { "p50", "p90", "p99" };

	if (!strcmp(w[0], "ops") || !strcmp(w[0], "outcomes") || !strcmp(w[0], "reasons") ||
	    !strcmp(w[0], "duration_le") || !strcmp(w[0], "duration_buckets"))
		return;
	st->version |= n == 2 && !strcmp(w[0], "version");
	if (n == 4 && !strcmp(w[0], "duration_seconds") && !strcmp(w[3], "0")) {
		return; /* an operation not yet asked for */
	} else if (n == 4 && !strcmp(w[0], "duration_seconds")) {
		fprintf(st->out, "duration_seconds %s sum %s count %s\n", w[1], w[2], w[3]);
	} else if (n == 5 && !strcmp(w[0], "latency_ms")) {
		fprintf(st->out, "latency_ms %s", w[1]);
		for (int k = 0; k < 3; k++)
			fprintf(st->out, " %s %s", pct[k], w[2 + k]);
		fputc('\n', st->out);
	} else {
		fprintf(st->out, "%s\n", line);
	}
}

static void one(void *ctx, const char *line)
{
	struct status *st = ctx;
	char copy[256], *w[SSTAT_WORDS];
	size_t n;

	snprintf(copy, sizeof(copy), "%s", line);
	n = sstat_split(copy, w, SSTAT_WORDS);
	if (n < 2)
		return;
	if (st->fmt == F_WORDS)
		words_stat(st, line, w, n);
	else if (st->fmt == F_JSON)
		json_stat(st->o, w, n);
	else if (st->n < STATS_MAX)
		st->stat[st->n++] = strdup(line);
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
	bool denied;
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
	r = ask(path, &st);
	/* Connect refused for want of permission: the daemon may well be up. */
	denied = r == -EACCES || r == -EPERM;
	if (denied)
		fprintf(stderr, "rtid serve status: %s: %s: this user may not connect to the "
			"daemon's socket (its owner, group and mode: --group, SocketGroup=)\n",
			path, strerror(-r));
	else if (r < 0)
		fprintf(stderr, "rtid serve status: %s: %s\n", path, strerror(-r));
	if (st.fmt == F_PROM) {
		fprintf(st.out, "# rtid serve at %s\n", path);
		sstat_prom(st.out, st.stat, r < 0 ? 0 : st.n,
			   !r ? SSTAT_UP : denied ? SSTAT_NO_PERMISSION : SSTAT_DOWN);
	} else if (st.fmt == F_JSON && r == 0) {
		/* 15 digits: a start time in seconds since the epoch keeps its
		 * milliseconds, and 0.4 is still written 0.4. */
		json_dumpf(st.o, st.out, JSON_INDENT(1) | JSON_SORT_KEYS |
			   JSON_REAL_PRECISION(15));
		fputc('\n', st.out);
	} else if (r == 0 && !st.version) {
		fputs("version - (a daemon older than this rtid: it does not say)\n", st.out);
	}
	json_decref(st.o);
	for (size_t k = 0; k < st.n; k++)
		free(st.stat[k]);
	fclose(st.out);
	/* Words and JSON say nothing of a daemon that did not answer; Prometheus
	 * says rtid_up 0 (or why it could not ask), so that the collector's file
	 * is never left stale. */
	if (r == 0 || st.fmt == F_PROM) {
		if (!file) {
			fwrite(buf, 1, len, stdout);
		} else if ((o = write_whole(file, buf, len)) < 0) {
			fprintf(stderr, "rtid serve status: %s: %s\n", file, strerror(-o));
			r = r ? r : o;
		}
	}
	free(buf);
	return denied ? EXIT_PERMISSION : r < 0 ? 1 : 0;
}
