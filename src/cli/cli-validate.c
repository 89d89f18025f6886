/* rtid validate: cross-check pids (scan against the driver), write a report,
 * and add the verdicts to the attestation of the driver version. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attest/attest.h"
#include "basic/basic.h"
#include "cli/cli.h"
#include "config.h"

static const char validate_help[] =
	"Usage: rtid validate [OPTIONS] --report FILE (--all | PID...)\n"
	"Cross-check the scan against the driver for each pid, write a JSON report and\n"
	"record the verdicts in the attestation of the driver version (under a lock,\n"
	"before the report is written): agreements count once per distinct process\n"
	"(pid, start time, boot), any mismatch revokes the version so that scan mode\n"
	"asks the driver for it until 'rtid attest lift'.\n\n"
	"  --all                 every process holding /dev/nvidia* open or with a\n"
	"                        thread matching the pattern\n"
	"  --report FILE         where the JSON report goes (required)\n"
	"  --no-attest           write the report only\n";

static const char validate_tail[] =
	"\nExit status: 0 no mismatch and no error; 1 a mismatch (the version is revoked)\n"
	"or an error on some pid; 2 usage error.\n";

struct vopts {
	struct cli_opts o;
	const char *report, *proc; /* proc: the proc tree, default /proc */
	bool all, no_attest;
	int *pids;
	size_t n;
};

struct tally {
	unsigned long agree, agree_none, mismatch, errors, undecided;
};

static int parse_pids(int argc, char **argv, struct vopts *v)
{
	v->n = (size_t)(argc - optind);
	if ((v->n == 0) == !v->all) {
		fprintf(stderr, "rtid validate: give --all or PIDs, not both or neither\n");
		return -1;
	}
	v->proc = v->o.cfg.proc_root ? v->o.cfg.proc_root : "/proc";
	if (v->all)
		return rtid_find_candidates(v->proc, v->o.cfg.pattern, &v->pids, &v->n) < 0 ? -1 : 0;
	v->pids = calloc(v->n, sizeof(*v->pids));
	for (size_t i = 0; v->pids && i < v->n; i++)
		if (rtid__parse_pid(argv[optind + (int)i], &v->pids[i]) < 0) {
			fprintf(stderr, "rtid validate: invalid PID: '%s'\n", argv[optind + (int)i]);
			return -1;
		}
	return v->pids ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct vopts *v)
{
	enum { OPT_ALL = 0x200, OPT_REPORT, OPT_NO_ATTEST };
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS, { "all", 0, NULL, OPT_ALL }, { "report", 1, NULL, OPT_REPORT },
		{ "no-attest", 0, NULL, OPT_NO_ATTEST }, { "help", 0, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int r = cli_opt_common(&v->o, c, optarg, "rtid validate");

		if (c == 'h') {
			printf("%sCommon options:\n%s  -h, --help            this help\n%s",
			       validate_help, cli_common_help, validate_tail);
			exit(0);
		} else if (c == OPT_ALL) {
			v->all = true;
		} else if (c == OPT_REPORT) {
			v->report = optarg;
		} else if (c == OPT_NO_ATTEST) {
			v->no_attest = true;
		} else if (r <= 0) {
			if (r == 0)
				fprintf(stderr, "rtid validate: see --help\n");
			return -1;
		}
	}
	if (!v->report) {
		fprintf(stderr, "rtid validate: --report FILE is required\n");
		return -1;
	}
	return parse_pids(argc, argv, v);
}

/* Who made a report, and who each cross-checked process was. */
struct ident {
	char id[128], host[256], machine[40], boot[40], when[32];
	bool have_boot;
	unsigned long long *start;
	bool *start_ok;
};

static int ident_init(struct ident *d, const struct vopts *v)
{
	time_t now = time(NULL);

	gethostname(d->host, sizeof(d->host) - 1);
	strftime(d->when, sizeof(d->when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (rtid_machine_id(d->machine, sizeof(d->machine)) < 0)
		d->machine[0] = '\0';
	d->have_boot = rtid_boot_id(v->proc, d->boot, sizeof(d->boot)) == 0;
	if (!d->have_boot)
		strcpy(d->boot, "unknown");
	d->start = calloc(v->n + 1, sizeof(*d->start));
	d->start_ok = calloc(v->n + 1, sizeof(*d->start_ok));
	if (!d->start || !d->start_ok)
		return -1;
	for (size_t i = 0; i < v->n; i++)
		d->start_ok[i] = d->have_boot &&
				 rtid_proc_start_time(v->proc, v->pids[i], &d->start[i]) == 0;
	return rtid_report_id(d->machine, d->boot, d->id, sizeof(d->id)) == 0 ? 0 : -1;
}

/* A process whose start time changed during the check was replaced: its
 * agreement proves nothing about either. */
static void ident_recheck(struct ident *d, const struct vopts *v)
{
	for (size_t i = 0; i < v->n; i++) {
		unsigned long long s;

		if (d->start_ok[i] && (rtid_proc_start_time(v->proc, v->pids[i], &s) < 0 ||
				       s != d->start[i]))
			d->start_ok[i] = false;
	}
}

static json_t *pid_json(const struct rtid_result *r, const struct ident *d, size_t i)
{
	const char *verdict = r->error ? "error" : rtid_xcheck_name(r->crosscheck);

	return json_pack("{s:i,s:o,s:s,s:i,s:o,s:o,s:s,s:o,s:o,s:f}", "pid", r->pid,
			 "start", d->start_ok[i] ? json_integer((json_int_t)d->start[i]) : json_null(),
			 "boot_id", d->boot, "scan_candidates", r->scan_candidates,
			 "scan_tid", r->scan_tid > 0 ? json_integer(r->scan_tid) : json_null(),
			 "driver_tid", !r->error && r->tid > 0 ? json_integer(r->tid) : json_null(),
			 "verdict", verdict ? verdict : "undecided",
			 "fallback", r->fallback ? json_string(rtid_fallback_name(r->fallback))
						 : json_null(),
			 "error", r->error ? json_string(r->detail) : json_null(), "ms", r->ms);
}

static void count(const struct rtid_result *r, struct tally *t)
{
	if (r->error)
		t->errors++;
	else if (r->crosscheck == RTID_XC_AGREE)
		t->agree++;
	else if (r->crosscheck == RTID_XC_AGREE_NONE)
		t->agree_none++;
	else if (r->crosscheck == RTID_XC_MISMATCH)
		t->mismatch++;
	else
		t->undecided++;
}

/* The report goes in place atomically: never a part of one, never an empty file. */
static int write_report(const char *path, const char *version, const struct rtid_result *res,
			size_t n, const struct tally *t, const struct ident *d)
{
	json_t *pids = json_array(), *o;
	char *text;
	int r;

	for (size_t i = 0; pids && i < n; i++)
		json_array_append_new(pids, pid_json(&res[i], d, i));
	o = json_pack("{s:i,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "format", 2,
		      "kind", "report", "id", d->id, "driver_version",
		      version ? json_string(version) : json_null(), "host", d->host,
		      "machine_id", d->machine, "boot_id", d->boot, "time", d->when,
		      "agree", (json_int_t)t->agree, "agree_none", (json_int_t)t->agree_none,
		      "mismatch", (json_int_t)t->mismatch, "errors", (json_int_t)t->errors,
		      "undecided", (json_int_t)t->undecided, "pids", pids);
	text = o ? json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
	json_decref(o);
	if (!text)
		return -ENOMEM;
	r = rtid__file_replace(path, text, strlen(text));
	free(text);
	return r;
}

/* Resolve in slices so that a terminal sees progress. */
static int cross_check(struct rtid_ctx *ctx, const struct vopts *v, struct rtid_result *res)
{
	bool tty = isatty(2);
	size_t step = tty ? 8 : v->n;

	for (size_t i = 0; i < v->n; i += step) {
		size_t k = v->n - i < step ? v->n - i : step;

		if (rtid_resolve_many(ctx, v->pids + i, k, res + i) < 0)
			return -1;
		if (tty)
			fprintf(stderr, "\rrtid validate: %zu/%zu pids", i + k, v->n);
	}
	if (tty && v->n)
		fputc('\n', stderr);
	return 0;
}

struct add_arg {
	const struct rtid_attest_report *rep;
	const struct rtid_attest_proc *p;
	size_t n;
	struct rtid_attest_entry after; /* the version's entry once added */
	bool clean;
};

static int add_fn(struct rtid_attestation *a, void *arg)
{
	struct add_arg *x = arg;
	int r = rtid_attest_add_report(a, x->rep, x->p, x->n);

	if (r == 0) {
		x->after = *rtid_attest_find(a, x->rep->version);
		x->clean = rtid_attest_clean(a, x->rep->version);
	}
	return r;
}

/* The attestation's directory (one level: its parent must be there), made
 * 0755 when missing and never through a link. 0 or -errno. */
static int attest_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int r;

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return 0; /* the working directory or /: there */
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	r = rtid__mkdir_safe(dir, 0755);
	return r < 0 ? r : 0;
}

/* The verdicts go into the attestation before anything else can fail, so that
 * a mismatch is never lost to a report that cannot be written. */
static int attest(const struct vopts *v, const char *version, const struct rtid_result *res,
		  const struct ident *d)
{
	const char *path = v->o.attestation_path ? v->o.attestation_path : RTID_DEFAULT_ATTESTATION;
	struct rtid_attest_report rep = { d->id, version, d->host, d->machine, d->boot, d->when };
	struct rtid_attest_proc *p = calloc(v->n + 1, sizeof(*p));
	struct add_arg x = { .rep = &rep, .p = p, .n = v->n };
	char err[600] = "";
	int r;

	if (!version || !p) {
		free(p);
		fprintf(stderr, "rtid validate: %s: nothing attested\n", version ? strerror(ENOMEM) :
			"driver version unknown (no --driver-version and no driver/nvidia/version)");
		return -1;
	}
	for (size_t i = 0; i < v->n; i++) {
		p[i] = (struct rtid_attest_proc){ .pid = res[i].pid, .start = d->start[i],
			.start_known = d->start_ok[i],
			.verdict = res[i].error ? RTID_XC_NONE : res[i].crosscheck };
		strcpy(p[i].boot_id, d->boot);
	}
	/* Its directory, /var/lib/rtid by default, which nothing else makes
	 * (the package and meson install do, a build run in place does not). */
	r = attest_dir(path);
	if (r < 0)
		snprintf(err, sizeof(err), "cannot make its directory: %s%s", strerror(-r),
			 r == -ELOOP || r == -ENOTDIR ? " (a link or no directory: not followed)" : "");
	else
		r = rtid_attest_update(path, add_fn, &x, err, sizeof(err));
	free(p);
	if (r < 0)
		fprintf(stderr, "rtid validate: cannot record the verdicts in %s: %s\n", path, err);
	else /* what counts: processes, not pids named */
		printf("attestation %s: driver %s: %lu agreements from distinct processes, %s\n",
		       path, version, x.after.agree, x.clean ? "attested" : x.after.revoked ?
		       "revoked" : "not attested yet");
	return r < 0 ? -1 : 0;
}

static int summarize(const char *version, const struct tally *t, size_t n)
{
	printf("driver %s: %zu pids: agree %lu, agree-none %lu, mismatch %lu, undecided %lu, "
	       "errors %lu\n", version ? version : "(unknown)", n, t->agree, t->agree_none,
	       t->mismatch, t->undecided, t->errors);
	if (t->mismatch)
		printf("MISMATCH: the scan and the driver disagree; driver %s is revoked for the "
		       "scan\n", version ? version : "(unknown)");
	return t->mismatch || t->errors ? 1 : 0;
}

int cmd_validate(int argc, char **argv)
{
	struct vopts v = { 0 };
	struct rtid_result *res = NULL;
	struct rtid_ctx *ctx = NULL;
	struct tally t = { 0 };
	struct ident d = { 0 };
	const char *version;
	int rc = 2, r;

	/* A malformed RTID_DRIVER_VERSION is refused, as by resolve: verdicts
	 * recorded for the version read from proc instead would attest a driver
	 * the caller did not name. */
	if (cli_opts_init(&v.o, "rtid validate") < 0 || parse_args(argc, argv, &v) < 0 ||
	    cli_check_env(&v.o, "rtid validate") < 0)
		goto out;
	v.o.cfg.mode = RTID_MODE_CROSSCHECK;
	res = calloc(v.n + 1, sizeof(*res));
	rc = 1;
	if (ident_init(&d, &v) < 0) {
		fprintf(stderr, "rtid validate: cannot make a report id: %s\n", strerror(errno));
		goto out;
	}
	if (!res || rtid_ctx_new(&v.o.cfg, &ctx) < 0 || cross_check(ctx, &v, res) < 0) {
		fprintf(stderr, "rtid validate: cannot set up the resolver (bad --pattern?)\n");
		rc = 2;
		goto out;
	}
	ident_recheck(&d, &v);
	version = rtid_ctx_driver_version(ctx);
	for (size_t i = 0; i < v.n; i++)
		count(&res[i], &t);
	rc = summarize(version, &t, v.n);
	if (!v.no_attest && attest(&v, version, res, &d) < 0)
		rc = 1;
	if ((r = write_report(v.report, version, res, v.n, &t, &d)) < 0) {
		fprintf(stderr, "rtid validate: cannot write the report %s: %s%s\n", v.report,
			strerror(-r), v.no_attest || !version ? "" : " (the verdicts are recorded in "
			"the attestation)");
		rc = 1;
	}
out:
	rtid_ctx_free(ctx);
	rtid_attest_free(v.o.attestation);
	free(d.start);
	free(d.start_ok);
	free(res);
	free(v.pids);
	return rc;
}
