/* rtid attest show|merge|lift: read attestations, unite the evidence of many
 * nodes, and lift a revocation by an explicit, recorded decision. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config.h"

static const char attest_help[] =
	"Usage: rtid attest show [--json] [FILE]\n"
	"       rtid attest merge [--allow-unsafe] OUT FILE...\n"
	"       rtid attest lift FILE VERSION REASON\n"
	"show: per driver version, agreements from distinct processes, agree-none,\n"
	"  mismatches, reports, hosts, whether revoked (and why), whether attested (and\n"
	"  what is missing). FILE defaults to $RTID_ATTESTATION or\n"
	"  " RTID_DEFAULT_ATTESTATION "; a FILE named that does not exist is an error.\n"
	"  --json: the same as one JSON object (file, trusted, exists, min_agree, and\n"
	"  per driver: version, agree, agree_none, mismatch, reports, hosts, revoked,\n"
	"  why, lifts, attested, missing_agree, legacy).\n"
	"merge: unite attestations and 'rtid validate' reports into OUT (created when\n"
	"  missing), under OUT's lock. Evidence counts once however often it is merged;\n"
	"  a mismatch anywhere revokes that version. A file that cannot be read, or\n"
	"  that others could have written (--allow-unsafe takes it anyway), is skipped\n"
	"  with a warning and the others are applied; the exit status is then 1.\n"
	"lift: record in FILE that the revocation of VERSION is lifted, and why; a\n"
	"  mismatch found later revokes it again.\n";

static void print_entry(const struct rtid_attestation *a, const struct rtid_attest_entry *e)
{
	bool clean = rtid_attest_clean(a, e->version);

	printf("%-16s %8lu %10lu %8lu %7lu %5lu %7s %8s\n", e->version, e->agree, e->agree_none,
	       e->mismatch, e->reports, e->hosts, e->revoked ? "yes" : "no", clean ? "yes" : "no");
	if (e->legacy)
		printf("  legacy record (format 1, processes unknown): agree %lu, agree-none %lu, "
		       "mismatch %lu\n", e->legacy_agree, e->legacy_agree_none, e->legacy_mismatch);
	if (e->revoked)
		printf("  revoked: %s; lift with 'rtid attest lift FILE %s REASON'\n", e->why,
		       e->version);
	else if (e->lifts)
		printf("  %s\n", e->why);
	if (!clean && !e->revoked && e->agree < RTID_ATTEST_MIN_AGREE)
		printf("  missing: %lu more agreements from distinct processes (%d needed)\n",
		       RTID_ATTEST_MIN_AGREE - e->agree, RTID_ATTEST_MIN_AGREE);
}

/* One driver version as JSON: the fields of the table, and what is missing. */
static json_t *entry_json(const struct rtid_attestation *a, const struct rtid_attest_entry *e)
{
	bool clean = rtid_attest_clean(a, e->version);
	unsigned long missing = !clean && !e->revoked && e->agree < RTID_ATTEST_MIN_AGREE
					? RTID_ATTEST_MIN_AGREE - e->agree : 0;
	json_t *legacy = e->legacy ? json_pack("{s:I,s:I,s:I}", "agree", (json_int_t)e->legacy_agree,
					       "agree_none", (json_int_t)e->legacy_agree_none,
					       "mismatch", (json_int_t)e->legacy_mismatch)
				   : json_null();

	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:b,s:s?,s:I,s:b,s:I,s:o}", "version", e->version,
			 "agree", (json_int_t)e->agree, "agree_none", (json_int_t)e->agree_none,
			 "mismatch", (json_int_t)e->mismatch, "reports", (json_int_t)e->reports,
			 "hosts", (json_int_t)e->hosts, "revoked", e->revoked,
			 "why", e->why[0] ? e->why : NULL, "lifts", (json_int_t)e->lifts,
			 "attested", clean, "missing_agree", (json_int_t)missing, "legacy", legacy);
}

/* What show prints, as one JSON object on stdout. Returns 0, or 2 when it
 * cannot be written (a full disk, a closed pipe) or built. */
static int show_json(const struct rtid_attestation *a, const char *path, bool trusted)
{
	json_t *drivers = json_array();
	json_t *o = json_pack("{s:s,s:b,s:b,s:i,s:o}", "file", path, "trusted", trusted, "exists",
			      access(path, F_OK) == 0, "min_agree", RTID_ATTEST_MIN_AGREE, "drivers",
			      drivers);
	const char *why = NULL;

	for (size_t i = 0; o && i < rtid_attest_count(a); i++)
		json_array_append_new(drivers, entry_json(a, rtid_attest_entry_at(a, i)));
	/* An entry that could not be made (no memory) is missing: not shown. */
	if (!o || json_array_size(drivers) != rtid_attest_count(a))
		why = "out of memory";
	else if (json_dumpf(o, stdout, JSON_INDENT(2)) < 0 || putchar('\n') == EOF ||
		 fflush(stdout))
		why = strerror(errno);
	json_decref(o);
	if (why)
		fprintf(stderr, "rtid attest: cannot write the JSON: %s\n", why);
	return why ? 2 : 0;
}

static int show(const char *path, bool named, bool json)
{
	struct rtid_attestation *a = NULL;
	char err[600] = "";
	bool trusted = true;

	if (named && access(path, F_OK) < 0) {
		fprintf(stderr, "rtid attest: %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (rtid_attest_load_trusted(path, &a, &trusted, err, sizeof(err)) < 0) {
		fprintf(stderr, "rtid attest: %s\n", err[0] ? err : path);
		return 2;
	}
	if (!trusted)
		fprintf(stderr, "rtid attest: warning: %s: not trusted, nothing in it is attested: "
			"%s\n", path, err);
	if (json) {
		int r = show_json(a, path, trusted);

		rtid_attest_free(a);
		return r;
	}
	if (!named && access(path, F_OK) < 0)
		printf("(no attestation at %s yet)\n", path);
	printf("%-16s %8s %10s %8s %7s %5s %7s %8s\n", "DRIVER", "AGREE", "AGREE-NONE",
	       "MISMATCH", "REPORTS", "HOSTS", "REVOKED", "ATTESTED");
	for (size_t i = 0; i < rtid_attest_count(a); i++)
		print_entry(a, rtid_attest_entry_at(a, i));
	rtid_attest_free(a);
	return 0;
}

struct merge_arg {
	struct rtid_attestation *in;
};

static int merge_fn(struct rtid_attestation *a, void *arg)
{
	return rtid_attest_merge(a, ((struct merge_arg *)arg)->in);
}

/* Add one input to in; a bad one is skipped with a warning naming it. */
static bool merge_one(struct rtid_attestation *in, const char *path, bool allow_unsafe)
{
	struct rtid_attestation *a = NULL;
	char err[600] = "", why[512] = "";
	int r = rtid_attest_path_safe(path, why, sizeof(why));

	if (r == -EPERM && !allow_unsafe) {
		fprintf(stderr, "rtid attest: skipping %s: not trusted: %s (--allow-unsafe takes "
			"it)\n", path, why);
		return false;
	}
	if ((r = rtid_attest_load_evidence(path, &a, err, sizeof(err))) < 0) {
		fprintf(stderr, "rtid attest: skipping %s: %s\n", path, err[0] ? err : strerror(-r));
		return false;
	}
	r = rtid_attest_merge(in, a);
	rtid_attest_free(a);
	if (r < 0)
		fprintf(stderr, "rtid attest: skipping %s: %s\n", path, strerror(-r));
	return r == 0;
}

static int merge(int argc, char **argv)
{
	struct merge_arg m = { NULL };
	bool allow_unsafe = argc > 1 && !strcmp(argv[1], "--allow-unsafe"), ok = true;
	char err[600] = "";
	int r;

	argc -= allow_unsafe;
	argv += allow_unsafe;
	if (argc < 3) {
		fputs(attest_help, stderr);
		return 2;
	}
	if (rtid_attest_new(&m.in) < 0)
		return 1;
	/* Inputs are read before OUT is locked, so that the lock is held briefly. */
	for (int i = 2; i < argc; i++) /* OUT itself is read under the lock anyway */
		if (strcmp(argv[i], argv[1]))
			ok = merge_one(m.in, argv[i], allow_unsafe) && ok;
	r = rtid_attest_update(argv[1], merge_fn, &m, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "rtid attest: cannot update %s: %s\n", argv[1], err);
	rtid_attest_free(m.in);
	return r == 0 && ok ? 0 : 1;
}

struct lift_arg {
	const char *version, *reason;
	char id[128], when[32];
	bool not_revoked;
};

static int lift_fn(struct rtid_attestation *a, void *arg)
{
	struct lift_arg *l = arg;
	int r = rtid_attest_lift(a, l->version, l->reason, l->id, l->when);

	l->not_revoked = r == -ENOENT;
	return r;
}

static int lift(int argc, char **argv)
{
	struct lift_arg l = { .version = argc == 4 ? argv[2] : NULL,
			      .reason = argc == 4 ? argv[3] : NULL };
	char machine[40] = "", err[600] = "";
	time_t now = time(NULL);
	int r;

	if (argc != 4 || !rtid__version_valid(argv[2]) || !argv[3][0]) {
		fprintf(stderr, "rtid attest: usage: rtid attest lift FILE VERSION REASON (a "
			"version N.N[.N] and a reason that is not empty)\n");
		return 2;
	}
	strftime(l.when, sizeof(l.when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	rtid_machine_id(machine, sizeof(machine));
	if (rtid_report_id(machine, NULL, l.id, sizeof(l.id)) < 0)
		return 1;
	r = rtid_attest_update(argv[1], lift_fn, &l, err, sizeof(err));
	if (l.not_revoked)
		fprintf(stderr, "rtid attest: %s: driver %s is not revoked: nothing to lift\n",
			argv[1], argv[2]);
	else if (r < 0)
		fprintf(stderr, "rtid attest: cannot lift in %s: %s\n", argv[1], err);
	else
		printf("driver %s: revocation lifted (%s), recorded in %s\n", argv[2], argv[3],
		       argv[1]);
	return r < 0 ? 1 : 0;
}

int cmd_attest(int argc, char **argv)
{
	/* rtid attest SUB --help: the help, as for every other command. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(attest_help, stdout);
			return 0;
		}
	if (argc >= 2 && !strcmp(argv[1], "show")) {
		const char *env = getenv("RTID_ATTESTATION");
		bool json = argc >= 3 && !strcmp(argv[2], "--json");
		int file = json ? 3 : 2;

		if (argc <= file + 1 && (argc == file || argv[file][0] != '-'))
			return show(argc == file + 1 ? argv[file]
				    : env && *env ? env : RTID_DEFAULT_ATTESTATION,
				    argc == file + 1, json);
	}
	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return merge(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "lift"))
		return lift(argc - 1, argv + 1);
	if (argc < 2)
		fprintf(stderr, "rtid attest: show, merge or lift? (see rtid attest --help)\n");
	else
		fprintf(stderr, "rtid attest: '%s' is no subcommand or option here (see rtid attest "
			"--help)\n", argv[!strcmp(argv[1], "show") ? argc - 1 : 1]);
	return 2;
}

/* Whether the scan is attested for the running driver: needed only when the
 * shim's mode scans (scan, canary); driver mode never scans. */
void cli_doctor_attested(struct cli_doctor *d, const char *version)
{
	const char *env = cli_doctor_env(d, "RTID_ATTESTATION"), *mode = cli_doctor_env(d, "RTID_MODE");
	struct rtid_attestation *a = NULL;
	const struct rtid_attest_entry *e;
	char path[1100], err[600] = "";
	bool trusted = false, clean, scans;
	enum rtid_mode m = RTID_MODE_DRIVER;

	if (env && *env)
		snprintf(path, sizeof(path), "%s", env);
	else if (d->attestation[0] || !d->root[0])
		cli_doctor_under(d, d->attestation[0] ? d->attestation : RTID_DEFAULT_ATTESTATION,
				 path, sizeof(path));
	else
		snprintf(path, sizeof(path), "%s/%s", d->root, RTID_NODE_ATTESTATION);
	mode = mode && *mode ? mode : d->mode;
	scans = *mode && rtid_mode_parse(mode, &m) == 0 && m != RTID_MODE_DRIVER;
	if (rtid_attest_load_trusted(path, &a, &trusted, err, sizeof(err)) < 0) {
		cli_doctor_add(d, "scan-attested", !scans, "fix or remove the file (rtid attest show)",
			       "%s: %s", path, err);
		return;
	}
	clean = rtid_attest_clean(a, version);
	e = rtid_attest_find(a, version);
	cli_doctor_add(d, "scan-attested", clean || !scans, "run 'rtid validate --all --report "
		       "r.json' on this node's GPU processes (doc/fleet.md), or set RTID_MODE=driver",
		       "driver %s: %s (%lu of %d agreements%s%s)%s", version,
		       clean ? "attested" : trusted ? "not attested" : "not trusted", e ? e->agree : 0,
		       RTID_ATTEST_MIN_AGREE, e && e->revoked ? "; revoked: " : "",
		       e && e->revoked ? e->why : "", !scans ? "; the shim's driver mode does not scan"
		       : clean ? "; the shim may scan" : "; the shim's mode scans: every call falls "
		       "back to the driver");
	rtid_attest_free(a);
}
