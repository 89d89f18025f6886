/* Failure enumeration of the attestation: fail the 1st, 2nd, 3rd ... fallible
 * call (libfiu's POSIX preload and rtid's own points) of each operation until
 * one runs clean. Every run must end in the right result or an error; an
 * update that fails leaves the old file or the new one, whole, and no temp
 * file; a file that is not safe is never called safe; no fd is left open.
 *
 * Run with LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so (meson does).
 *
 * jansson's own allocations are not failed: its parser double-frees when a
 * malloc inside it fails (seen with jansson 2.14), so jansson gets glibc's
 * allocator directly, out of libfiu's reach. */
#include <dirent.h>
#include <errno.h>
#include <fiu-control.h>
#include <fiu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest/attest.h"
#include "fiu-nth.h"
#include "helpers.h"

static const char *const points[] = {
	"posix/io/oc/open", "posix/io/rw/read", "posix/io/rw/write", "posix/io/dir/opendir",
	"posix/io/dir/fdopendir", "posix/io/dir/readdir", "posix/io/sync/fsync",
	"libc/mm/*", "libc/str/*", "rtid/*",
};

void *__libc_malloc(size_t n);
void __libc_free(void *p);

static char *root, path[512], work[512], report[512], unsafe[512];
static char *ref_old, *ref_new, *ref_merged;

/* Allocation fails as ENOMEM, a write as ENOSPC, anything else as EIO. */
static int errno_for(const char *name)
{
	return !strncmp(name, "libc/", 5) ? ENOMEM : strstr(name, "write") ? ENOSPC : EIO;
}

static void arm(unsigned long n)
{
	fiu_nth_arm(points, sizeof(points) / sizeof(points[0]), n, errno_for);
}

static void disarm(void)
{
	fiu_nth_disarm(points, sizeof(points) / sizeof(points[0]));
}

static char *canonical(const struct rtid_attestation *a)
{
	json_t *j = rtid__att_to_json(a);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);

	json_decref(j);
	return s;
}

/* The canonical text of the file at p, or NULL when it does not load. */
static char *file_text(const char *p)
{
	struct rtid_attestation *a = NULL;
	char *s;

	if (rtid_attest_load(p, &a, NULL, 0) < 0)
		return NULL;
	s = canonical(a);
	rtid_attest_free(a);
	return s;
}

static int temps_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	return n;
}

static int add_fn(struct rtid_attestation *a, void *arg)
{
	struct rtid_attest_proc p[3] = {
		{ .pid = 50, .start_known = true, .start = 1, .boot_id = "b", .verdict = RTID_XC_AGREE },
		{ .pid = 51, .start_known = true, .start = 1, .boot_id = "b",
		  .verdict = RTID_XC_MISMATCH },
		{ .pid = 52, .start_known = false, .boot_id = "b", .verdict = RTID_XC_AGREE_NONE },
	};

	(void)arg;
	return rtid_attest_add_report(a, &(struct rtid_attest_report){ "new", "580.1", "h", "m",
								"b", "t" }, p, 3);
}

enum op { OP_LOAD, OP_EVIDENCE, OP_UPDATE, OP_MERGE, OP_LIFT, OP_SAFE, OP_REPLACE, OP_IDENT,
	  OP_COUNT };
static const char *const names[] = { "load", "load-evidence", "update", "merge", "lift",
				     "path-safe", "file-replace", "identities" };

/* The operation itself; returns its result. */
static int act(enum op op, struct rtid_attestation **out)
{
	struct rtid_attestation *a = NULL, *b = NULL;
	char buf[128];
	unsigned long long st;
	int r = -1;

	switch (op) {
	case OP_LOAD: return rtid_attest_load(path, out, NULL, 0);
	case OP_EVIDENCE: return rtid_attest_load_evidence(report, out, NULL, 0);
	case OP_UPDATE: return rtid_attest_update(work, add_fn, NULL, buf, sizeof(buf));
	case OP_MERGE:
	case OP_LIFT:
		/* merge: the report first, so that reports, legacy and lifts are copied. */
		if ((r = rtid__att_load(op == OP_MERGE ? report : path, op == OP_MERGE, &a, NULL,
					0)) == 0 &&
		    (r = rtid__att_load(op == OP_MERGE ? path : report, op != OP_MERGE, &b, NULL,
					0)) == 0)
			r = op == OP_MERGE ? rtid_attest_merge(a, b)
					   : rtid_attest_lift(a, "580.1", "checked", "lift-9", "t");
		rtid_attest_free(b);
		if (r == 0)
			*out = a;
		else
			rtid_attest_free(a);
		return r;
	case OP_SAFE: return rtid_attest_path_safe(unsafe, buf, sizeof(buf)) == 0 ? 1 : 0;
	case OP_REPLACE: return rtid__file_replace(work, "{}\n", 3);
	case OP_IDENT:
		if ((r = rtid_boot_id(NULL, buf, sizeof(buf))) == 0 &&
		    (r = rtid_proc_start_time(NULL, getpid(), &st)) == 0)
			r = rtid_report_id("m", buf, buf, sizeof(buf));
		return r;
	case OP_COUNT: break;
	}
	return r;
}

/* Whether what op left is right; prints what is not. */
static int check(enum op op, int r, struct rtid_attestation *a, unsigned long n)
{
	char *s = a ? canonical(a) : NULL, *f;
	int bad = 0;

	if (op == OP_LOAD || op == OP_MERGE || op == OP_LIFT)
		bad = r == 0 && (!s || !strcmp(s, op == OP_MERGE ? ref_merged : ref_old) == (op == OP_LIFT));
	if (op == OP_UPDATE) {
		f = file_text(work);
		bad = !f || (r == 0 && strcmp(f, ref_new)) ||
		      (strcmp(f, ref_old) && strcmp(f, ref_new)) || temps_in(root);
		free(f);
	}
	if (op == OP_REPLACE)
		bad = temps_in(root) != 0;
	bad |= op == OP_SAFE && r == 1; /* never "safe" for a group-writable file */
	if (bad)
		printf("WRONG %s fail #%lu: result %d\n", names[op], n, r);
	free(s);
	return bad;
}

static int run(enum op op, unsigned long n, bool *done)
{
	struct rtid_attestation *a = NULL;
	int fds, r, bad;

	if (op == OP_UPDATE || op == OP_REPLACE) { /* the old file in place */
		struct rtid_attestation *o = NULL;

		rtid_attest_load(path, &o, NULL, 0);
		unlink(work);
		rtid_attest_save(o, work);
		rtid_attest_free(o);
	}
	fds = count_fds();
	arm(n);
	r = act(op, &a);
	disarm();
	*done = fiu_nth_calls() < n;
	bad = check(op, r, a, n);
	rtid_attest_free(a);
	if (count_fds() != fds) {
		printf("FD LEAK %s fail #%lu: %d -> %d\n", names[op], n, fds, count_fds());
		bad++;
	}
	return bad;
}

static void lay_out(void)
{
	struct rtid_attestation *a = NULL, *b = NULL;

	root = tmp_dir();
	write_file(root, "att.json", "{\"format\": 2, \"reports\": [{\"id\": \"r1\", \"driver_version\": "
		   "\"580.1\", \"host\": \"h\", \"machine_id\": \"m\", \"boot_id\": \"b\", \"time\": \"t\", "
		   "\"pids\": [{\"pid\": 3, \"start\": 9, \"boot_id\": \"b\", \"verdict\": \"mismatch\"}, "
		   "{\"pid\": 4, \"start\": 9, \"boot_id\": \"b\", \"verdict\": \"agree\"}]}], "
		   "\"legacy\": {\"570.1\": {\"agree\": 12}}, \"lifts\": [{\"id\": \"l0\", "
		   "\"driver_version\": \"570.1\", \"reason\": \"x\", \"time\": \"t\", "
		   "\"reports\": [\"q\", \"p\"], \"legacy_mismatch\": 0}]}\n");
	write_file(root, "report.json", "{\"format\": 2, \"kind\": \"report\", \"id\": \"r2\", "
		   "\"driver_version\": \"580.1\", \"host\": \"g\", \"machine_id\": \"n\", \"boot_id\": "
		   "\"c\", \"time\": \"t\", \"pids\": [{\"pid\": 5, \"start\": 1, \"verdict\": \"agree\"}, "
		   "{\"pid\": 6, \"start\": null, \"verdict\": \"error\"}]}\n");
	write_file(root, "unsafe.json", "{}");
	snprintf(path, sizeof(path), "%s/att.json", root);
	snprintf(work, sizeof(work), "%s/work.json", root);
	snprintf(report, sizeof(report), "%s/report.json", root);
	snprintf(unsafe, sizeof(unsafe), "%s/unsafe.json", root);
	chmod(unsafe, 0664);
	if (rtid_attest_load(path, &a, NULL, 0) < 0 ||
	    rtid_attest_load_evidence(report, &b, NULL, 0) < 0) {
		fprintf(stderr, "fiu-attest: the fixtures do not load\n");
		exit(1);
	}
	ref_old = canonical(a);
	rtid_attest_merge(a, b);
	ref_merged = canonical(a);
	rtid_attest_free(a);
	rtid_attest_load(path, &a, NULL, 0);
	add_fn(a, NULL);
	ref_new = canonical(a);
	rtid_attest_free(a);
	rtid_attest_free(b);
}

/* A file that cannot be read is named with the reason, not as a parse error
 * at line -1. Returns the number of problems. */
static int read_error_is_named(void)
{
	struct rtid_attestation *a = NULL;
	char err[600] = "";
	int r;

	fiu_enable("posix/io/rw/read", 1, (void *)(intptr_t)EIO, FIU_ONETIME);
	r = rtid_attest_load(path, &a, err, sizeof(err));
	fiu_disable("posix/io/rw/read");
	if (r == -EIO && a == NULL && strstr(err, path) && strstr(err, strerror(EIO)) &&
	    !strstr(err, ":-1:"))
		return 0;
	fprintf(stderr, "fiu-attest: a read error gave %d, \"%s\"\n", r, err);
	rtid_attest_free(a);
	return 1;
}

int main(void)
{
	unsigned long total = 0;
	int problems = 0;

	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "fiu_posix_preload")) {
		fprintf(stderr, "fiu-attest: needs LD_PRELOAD=/usr/lib/fiu/fiu_posix_preload.so\n");
		return 77;
	}
	fiu_init(0);
	json_set_alloc_funcs(__libc_malloc, __libc_free);
	lay_out();
	for (int op = 0; op < OP_COUNT; op++) {
		bool done = false;
		unsigned long n;

		for (n = 1; !done && n < 100000; n++)
			problems += run((enum op)op, n, &done);
		printf("%-14s: %lu failure points\n", names[op], n - 2);
		total += n - 2;
	}
	problems += read_error_is_named();
	rm_tree(root);
	free(root);
	free(ref_old);
	free(ref_new);
	free(ref_merged);
	printf("%lu failure points enumerated, %d problems\n", total, problems);
	return problems ? 1 : 0;
}
