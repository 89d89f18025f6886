/* rtid resolve: answer for each pid given, in order, as JSON lines or a
 * table. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

void cli_print_json(FILE *f, const struct rtid_result *r)
{
	json_t *o = json_pack("{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:f}",
			      "pid", r->pid,
			      "tid", r->tid > 0 ? json_integer(r->tid) : json_null(),
			      "source", str_or_null(rtid_source_name(r->source)),
			      "fallback", str_or_null(rtid_fallback_name(r->fallback)),
			      "crosscheck", str_or_null(rtid_xcheck_name(r->crosscheck)),
			      "error", str_or_null(rtid_error_name(r->error)),
			      "detail", r->error ? json_string(r->detail) : json_null(),
			      "scan_candidates", r->scan_candidates >= 0
						 ? json_integer(r->scan_candidates) : json_null(),
			      "ms", (double)(long long)(r->ms * 1000.0) / 1000.0);

	if (!o)
		return;
	json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(9));
	fputc('\n', f);
	json_decref(o);
}

void cli_print_table_head(FILE *f)
{
	fprintf(f, "%-8s %-8s %-6s %-16s %-10s %9s  %s\n", "PID", "TID", "SOURCE", "FALLBACK",
		"CROSSCHECK", "MS", "ERROR");
}

static const char *dash(const char *s) { return s ? s : "-"; }

void cli_print_row(FILE *f, const struct rtid_result *r)
{
	char tid[16];

	if (r->tid > 0)
		snprintf(tid, sizeof(tid), "%d", r->tid);
	else
		snprintf(tid, sizeof(tid), "%s", r->error ? "-" : "none");
	fprintf(f, "%-8d %-8s %-6s %-16s %-10s %9.1f  %s%s%s\n", r->pid, tid,
		dash(rtid_source_name(r->source)), dash(rtid_fallback_name(r->fallback)),
		dash(rtid_xcheck_name(r->crosscheck)), r->ms, dash(rtid_error_name(r->error)),
		r->error ? ": " : "", r->error ? r->detail : "");
}

static const char resolve_help[] =
	"Usage: rtid resolve [OPTIONS] PID...\n"
	"Find the CUDA driver's restore thread of each PID.\n\n"
	"Options:\n";

static const char resolve_tail[] =
	"\nExit status: 0 every pid got a tid or a definite none; 1 some pid ended in an\n"
	"error (the others' answers are still printed); 2 usage error.\n";

static void usage(FILE *f)
{
	fprintf(f, "%s%s  -h, --help            this help\n%s", resolve_help, cli_common_help,
		resolve_tail);
}

static int parse_args(int argc, char **argv, struct cli_opts *o, int **pids, size_t *n)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS,
						   { "help", 0, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int r = cli_opt_common(o, c, optarg, "rtid resolve");

		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (r <= 0) {
			if (r == 0)
				usage(stderr);
			return -1;
		}
	}
	*n = (size_t)(argc - optind);
	if (*n == 0) {
		fprintf(stderr, "rtid resolve: no PID given (see --help)\n");
		return -1;
	}
	*pids = calloc(*n, sizeof(**pids));
	if (!*pids)
		return -1;
	for (size_t i = 0; i < *n; i++)
		if (rtid__parse_pid(argv[optind + (int)i], &(*pids)[i]) < 0) {
			fprintf(stderr, "rtid resolve: invalid PID: '%s'\n", argv[optind + (int)i]);
			return -1;
		}
	return 0;
}

static int print_all(const struct cli_opts *o, const struct rtid_result *res, size_t n)
{
	int rc = 0;

	if (!o->json)
		cli_print_table_head(stdout);
	for (size_t i = 0; i < n; i++) {
		if (o->json)
			cli_print_json(stdout, &res[i]);
		else
			cli_print_row(stdout, &res[i]);
		if (res[i].error)
			rc = 1;
	}
	return rc;
}

static bool needs_attestation(const struct rtid_config *cfg)
{
	return cfg->mode == RTID_MODE_SCAN || cfg->mode == RTID_MODE_CANARY;
}

int cmd_resolve(int argc, char **argv)
{
	struct rtid_result *res = NULL;
	struct rtid_ctx *ctx = NULL;
	struct cli_opts o;
	int *pids = NULL, rc = 2, r;
	size_t n = 0;

	if (cli_opts_init(&o, "rtid resolve") < 0 || parse_args(argc, argv, &o, &pids, &n) < 0 ||
	    cli_check_env(&o, "rtid resolve") < 0 ||
	    (needs_attestation(&o.cfg) && cli_load_attestation(&o, "rtid resolve") < 0))
		goto out;
	r = rtid_ctx_new(&o.cfg, &ctx);
	if (r < 0) {
		fprintf(stderr, "rtid resolve: %s\n",
			r == -EINVAL ? "invalid --pattern (not a POSIX extended regex)" : strerror(-r));
		goto out;
	}
	if (rtid_ctx_version_mismatch(ctx))
		fprintf(stderr, "rtid resolve: warning: driver version %s was given, but %s is "
			"running: not scanning\n", o.cfg.driver_version, rtid_ctx_driver_version(ctx));
	else if (o.cfg.mode == RTID_MODE_SCAN && o.cfg.allow_unattested && !rtid_ctx_attested(ctx))
		fprintf(stderr, "rtid resolve: warning: scanning for driver %s without a clean "
			"attestation (--unattested)\n", rtid_ctx_driver_version(ctx) ?: "(unknown)");
	res = calloc(n, sizeof(*res));
	if (!res || rtid_resolve_many(ctx, pids, n, res) < 0) {
		fprintf(stderr, "rtid resolve: out of memory\n");
		goto out;
	}
	rc = print_all(&o, res, n);
out:
	rtid_ctx_free(ctx);
	rtid_attest_free(o.attestation);
	free(res);
	free(pids);
	return rc;
}
