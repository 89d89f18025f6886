/* rtid attest show|merge: read and combine attestations and validate reports
 * from many nodes. A revocation anywhere wins. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char attest_help[] =
	"Usage: rtid attest show [FILE]\n"
	"       rtid attest merge OUT FILE...\n"
	"show: print an attestation (default " RTID_ATTESTATION_DEFAULT ") as a table.\n"
	"merge: add up attestations and 'rtid validate' reports into OUT; a mismatch or\n"
	"a revocation anywhere revokes that driver version.\n";

static int show(const char *path)
{
	struct rtid_attestation *a = NULL;
	char err[512];

	if (rtid_attest_load(path, &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "rtid attest: %s\n", err[0] ? err : path);
		return 2;
	}
	printf("%-16s %8s %10s %8s %8s  %s\n", "DRIVER", "AGREE", "AGREE-NONE", "MISMATCH",
	       "REVOKED", "SCAN");
	for (size_t i = 0; i < rtid_attest_count(a); i++) {
		const struct rtid_attest_entry *e = rtid_attest_entry_at(a, i);

		printf("%-16s %8lu %10lu %8lu %8s  %s\n", e->version, e->agree, e->agree_none,
		       e->mismatch, e->revoked ? "yes" : "no",
		       rtid_attest_clean(a, e->version) ? "attested" : "driver only");
	}
	rtid_attest_free(a);
	return 0;
}

/* A validate report: {"driver_version": V, "agree": N, ...}. */
static int add_report(struct rtid_attestation *a, json_t *o, const char *path)
{
	const char *v = json_string_value(json_object_get(o, "driver_version"));
	json_int_t n[3];
	static const char *const keys[] = { "agree", "agree_none", "mismatch" };

	for (int i = 0; i < 3; i++) {
		json_t *x = json_object_get(o, keys[i]);

		if (!json_is_integer(x) || json_integer_value(x) < 0) {
			fprintf(stderr, "rtid attest: %s: report without a valid '%s'\n", path, keys[i]);
			return -EINVAL;
		}
		n[i] = json_integer_value(x);
	}
	if (!v || rtid_attest_add(a, v, (unsigned long)n[0], (unsigned long)n[1],
				  (unsigned long)n[2], false) < 0) {
		fprintf(stderr, "rtid attest: %s: report without a valid driver_version\n", path);
		return -EINVAL;
	}
	return 0;
}

static int merge_one(struct rtid_attestation *out, const char *path)
{
	struct rtid_attestation *a = NULL;
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	char err[512];
	int r;

	if (!o) {
		fprintf(stderr, "rtid attest: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
		return -EINVAL;
	}
	if (json_object_get(o, "driver_version")) {
		r = add_report(out, o, path);
		json_decref(o);
		return r;
	}
	json_decref(o);
	r = rtid_attest_load(path, &a, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "rtid attest: %s\n", err);
		return r;
	}
	r = rtid_attest_merge(out, a);
	rtid_attest_free(a);
	return r;
}

static int merge(int argc, char **argv)
{
	struct rtid_attestation *out = NULL;
	int r = 0;

	if (argc < 3) {
		fputs(attest_help, stderr);
		return 2;
	}
	if (rtid_attest_new(&out) < 0)
		return 1;
	for (int i = 2; r == 0 && i < argc; i++)
		r = merge_one(out, argv[i]);
	if (r == 0 && (r = rtid_attest_save(out, argv[1])) < 0)
		fprintf(stderr, "rtid attest: cannot write %s: %s\n", argv[1], strerror(-r));
	rtid_attest_free(out);
	return r == 0 ? 0 : r == -EINVAL ? 2 : 1;
}

int cmd_attest(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "show") && argc <= 3) {
		const char *env = getenv("RTID_ATTESTATION");

		return show(argc == 3 ? argv[2] : env && *env ? env : RTID_ATTESTATION_DEFAULT);
	}
	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return merge(argc - 1, argv + 1);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(attest_help, stdout);
		return 0;
	}
	fputs(attest_help, stderr);
	return 2;
}
