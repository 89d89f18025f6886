/* rtid validate and rtid attest: reports, attestation updates, revocation,
 * and the effect on scan mode. */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "rtid.h"

#define V "580.159.03"

#define BOOT "0b6e8f4e-9d2c-4c1a-8f3e-2a1b3c4d5e6f"

static char out_path[512], att[512], report[512], pids[512];

/* /proc/PID/stat as the kernel writes it, with start time start (field 22). */
static void write_stat(int pid, unsigned long long start)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	stat_line(pid, start, text, sizeof(text));
	write_file(test_dir, rel, text);
}

/* The attestation's entry for version (a copy; zeroed when there is none). */
static struct rtid_attest_entry entry_of(const char *path, const char *version)
{
	struct rtid_attest_entry e = { 0 };
	struct rtid_attestation *a = NULL;

	assert_int_equal(rtid_attest_load(path, &a, NULL, 0), 0);
	if (rtid_attest_find(a, version))
		e = *rtid_attest_find(a, version);
	rtid_attest_free(a);
	return e;
}

static int setup(void **state)
{
	char rel[64], env[64];
	size_t o = 0;

	(void)state;
	test_dir_setup(state);
	/* 12 processes whose restore thread the scan finds and the driver names. */
	for (int i = 0; i < 12; i++) {
		int pid = 1000 + 10 * i;

		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", pid, pid);
		write_file(test_dir, rel, "python3\n");
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", pid, pid + 2);
		write_file(test_dir, rel, "cuda00001400006\n");
		/* The thread a lying driver names (FAKE_TID_1050=1051): a real one. */
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/comm", pid, pid + 1);
		write_file(test_dir, rel, "cuda-EvtHandlr\n");
		write_stat(pid, 5000 + (unsigned long long)i);
		snprintf(env, sizeof(env), "FAKE_TID_%d", pid);
		snprintf(rel, sizeof(rel), "%d", pid + 2);
		setenv(env, rel, 1);
		o += (size_t)snprintf(pids + o, sizeof(pids) - o, " %d", pid);
	}
	write_file(test_dir, "proc/5000/task/5000/comm", "bash\n"); /* not a candidate */
	write_file(test_dir, "proc/sys/kernel/random/boot_id", BOOT "\n");
	snprintf(out_path, sizeof(out_path), "%s/out", test_dir);
	setenv("OUT_FILE", out_path, 1);
	snprintf(att, sizeof(att), "%s/att.json", test_dir);
	snprintf(report, sizeof(report), "%s/report.json", test_dir);
	snprintf(rel, sizeof(rel), "%s/proc", test_dir);
	setenv("RTID_PROC", rel, 1);
	setenv("RTID_CUDA_CHECKPOINT", env_path("FAKE_TOOL"), 1);
	setenv("RTID_ATTESTATION", att, 1);
	return 0;
}

static char *slurp_out(void)
{
	static char buf[4096];
	FILE *f = fopen(out_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static __attribute__((format(printf, 1, 2))) int rtid(const char *fmt, ...)
{
	char args[2048], cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>&1", env_path("RTID_BIN"), args, out_path);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *scan_source(const char *version)
{
	static char src[32];
	json_t *o;

	rtid("resolve --json --mode scan --driver-version %s 1000", version);
	o = json_load_file(out_path, 0, NULL);
	assert_non_null(o);
	snprintf(src, sizeof(src), "%s", json_string_value(json_object_get(o, "source")));
	json_decref(o);
	return src;
}

/* rtid attest show --json FILE: the entry of version V (a new reference the
 * caller frees), after checking the object's own fields. */
static json_t *shown(const char *file)
{
	json_t *o, *e = NULL;
	size_t i;

	if (rtid("attest show --json '%s'", file) != 0)
		return NULL;
	o = json_load_file(getenv("OUT_FILE"), 0, NULL);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "file")), file);
	assert_true(json_is_true(json_object_get(o, "trusted")));
	assert_int_equal(json_integer_value(json_object_get(o, "min_agree")), RTID_ATTEST_MIN_AGREE);
	json_t *found = NULL;

	json_array_foreach(json_object_get(o, "drivers"), i, e)
		if (!found && !strcmp(json_string_value(json_object_get(e, "version")), V))
			found = json_incref(e);
	json_decref(o);
	return found;
}

static void twelve_agree_then_scan_is_used(void **state)
{
	json_t *r;

	(void)state;
	assert_string_equal(scan_source(V), "tool"); /* nothing attested yet */
	assert_int_equal(rtid("validate --driver-version " V " --report '%s' %s", report, pids), 0);
	r = json_load_file(report, 0, NULL);
	assert_non_null(r);
	assert_int_equal(jint(r, "agree"), 12);
	assert_int_equal(jint(r, "mismatch"), 0);
	assert_string_equal(json_string_value(json_object_get(r, "driver_version")), V);
	assert_int_equal(json_array_size(json_object_get(r, "pids")), 12);
	assert_non_null(json_object_get(r, "host"));
	assert_non_null(json_object_get(r, "time"));
	json_decref(r);
	assert_string_equal(scan_source(V), "scan");
	assert_string_equal(scan_source("580.159.04"), "tool"); /* that version only */
	assert_int_equal(rtid("attest show '%s'", att), 0);
	assert_int_equal(system("grep -q '^580.159.03 .* 12 .* no  *yes$' \"$OUT_FILE\""), 0);
	r = shown(att);
	assert_non_null(r);
	assert_int_equal(jint(r, "agree"), 12);
	assert_true(json_is_true(json_object_get(r, "attested")));
	assert_true(json_is_false(json_object_get(r, "revoked")));
	assert_int_equal(jint(r, "missing_agree"), 0);
	json_decref(r);
	/* The same processes again, and each named ten times: still 12 processes. */
	assert_int_equal(rtid("validate --driver-version " V " --report '%s' %s %s 1000 1000 1000 "
			      "1000 1000 1000 1000 1000 1000", report, pids, pids), 0);
	assert_int_equal(entry_of(att, V).agree, 12);
	assert_int_equal(entry_of(att, V).reports, 2);
	assert_non_null(strstr(slurp_out(), "12 agreements from distinct processes, attested"));
}

/* One process validated ten times is one agreement: nothing attested. */
static void one_process_ten_times_is_one(void **state)
{
	char a1[600];

	(void)state;
	snprintf(a1, sizeof(a1), "%s/one.json", test_dir);
	for (int i = 0; i < 10; i++)
		assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report "
				      "'%s' 1000 1000", a1, report), 0);
	assert_int_equal(entry_of(a1, V).agree, 1);
	assert_int_equal(entry_of(a1, V).reports, 10);
	assert_non_null(strstr(slurp_out(), "1 agreements from distinct processes, not attested"));
	assert_false(rtid("attest show '%s'", a1));
	assert_int_equal(system("grep -q 'missing: 9 more agreements from distinct processes' "
				"\"$OUT_FILE\""), 0);
	{
		json_t *e = shown(a1);

		assert_non_null(e);
		assert_true(json_is_false(json_object_get(e, "attested")));
		assert_int_equal(json_integer_value(json_object_get(e, "missing_agree")), 9);
		json_decref(e);
	}
	/* A reused pid (another start time) is another process. */
	write_stat(1000, 99999);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' "
			      "1000", a1, report), 0);
	write_stat(1000, 5000);
	assert_int_equal(entry_of(a1, V).agree, 2);
}

/* An attestation named without a folder is in the working directory. */
static void attestation_in_the_working_directory(void **state)
{
	char cmd[4096], path[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' validate --driver-version " V " --attestation "
		 "here.json --report '%s' 1000 >'%s' 2>&1", test_dir, env_path("RTID_BIN"), report,
		 out_path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/here.json", test_dir);
	assert_int_equal(entry_of(path, V).agree, 1);
}

static void one_mismatch_fails_and_revokes(void **state)
{
	json_t *r;

	(void)state;
	setenv("FAKE_TID_1050", "1051", 1); /* the driver names another thread */
	assert_int_equal(rtid("validate --driver-version " V " --report '%s' %s", report, pids), 1);
	unsetenv("FAKE_TID_1050");
	setenv("FAKE_TID_1050", "1052", 1);
	r = json_load_file(report, 0, NULL);
	assert_int_equal(jint(r, "mismatch"), 1);
	assert_int_equal(jint(r, "agree"), 11);
	json_decref(r);
	assert_string_equal(scan_source(V), "tool");
	assert_true(entry_of(att, V).revoked);
	assert_int_equal(entry_of(att, V).mismatch, 1);
	/* No merge of agreements undoes it; a lift names version and reason. */
	assert_int_equal(rtid("validate --driver-version " V " --report '%s' %s", report, pids), 0);
	assert_true(entry_of(att, V).revoked);
	assert_int_equal(rtid("attest show '%s'", att), 0);
	assert_int_equal(system("grep -q 'revoked: mismatch on pid 1050' \"$OUT_FILE\""), 0);
	r = shown(att);
	assert_true(json_is_true(json_object_get(r, "revoked")));
	assert_true(json_is_false(json_object_get(r, "attested")));
	assert_non_null(strstr(json_string_value(json_object_get(r, "why")), "mismatch on pid 1050"));
	json_decref(r);
	assert_int_equal(rtid("attest lift '%s' " V " ''", att), 2); /* a reason is required */
	assert_int_equal(rtid("attest lift '%s' 590.77 'no such'", att), 1);
	assert_int_equal(rtid("attest lift '%s' " V " 'driver bug fixed in the fake'", att), 0);
	assert_false(entry_of(att, V).revoked);
	assert_string_equal(scan_source(V), "scan");
	assert_int_equal(rtid("attest show '%s'", att), 0);
	assert_int_equal(system("grep -q 'lifted .*: driver bug fixed in the fake' \"$OUT_FILE\""),
			 0);
	/* A new mismatch revokes again. */
	setenv("FAKE_TID_1050", "1051", 1);
	assert_int_equal(rtid("validate --driver-version " V " --report '%s' 1050", report), 1);
	setenv("FAKE_TID_1050", "1052", 1);
	assert_true(entry_of(att, V).revoked);
}

static void all_finds_candidates(void **state)
{
	json_t *r;

	(void)state;
	assert_int_equal(rtid("validate --all --no-attest --driver-version 590.1 --report '%s'",
			      report), 0);
	r = json_load_file(report, 0, NULL);
	/* the 12, and 7000 with two named threads; not 5000, 7010 or 7020 */
	assert_int_equal(json_array_size(json_object_get(r, "pids")), 13);
	json_decref(r);
}

static void merge_reports_revocation_wins(void **state)
{
	char a[512], b[512], m[512];
	json_t *r;

	(void)state;
	snprintf(a, sizeof(a), "%s/a.json", test_dir);
	snprintf(b, sizeof(b), "%s/b.json", test_dir);
	snprintf(m, sizeof(m), "%s/m.json", test_dir);
	write_file(test_dir, "a.json", "{\"driver_version\": \"590.1\", \"agree\": 8, \"agree_none\": 1,"
				  " \"mismatch\": 0, \"errors\": 0}");
	write_file(test_dir, "b.json", "{\"format\": 1, \"drivers\": {\"590.1\": {\"agree\": 5},"
				  " \"570.2\": {\"agree\": 20, \"revoked\": true}}}");
	/* OUT missing is empty; merging again (OUT among the inputs too) adds nothing. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rtid("attest merge '%s' '%s' '%s' '%s'", m, m, a, b), 0);
	/* Legacy records (no process identities) combine by maximum, never by adding. */
	assert_int_equal(entry_of(m, "590.1").agree, 8);
	assert_true(entry_of(m, "590.1").legacy);
	assert_true(entry_of(m, "570.2").revoked);
	/* A bad report is skipped, named, and the others still count. */
	write_file(test_dir, "bad.json", "{\"driver_version\": \"590.1\"}");
	snprintf(b, sizeof(b), "%s/bad.json", test_dir);
	assert_int_equal(rtid("validate --driver-version 591.1 --report '%s' --no-attest 1050",
			      report), 0);
	assert_int_equal(rtid("attest merge '%s' '%s' '%s' /nonexistent.json", m, b, report), 1);
	assert_int_equal(system("grep -q 'skipping .*bad.json' \"$OUT_FILE\""), 0);
	assert_int_equal(system("grep -q 'skipping /nonexistent.json' \"$OUT_FILE\""), 0);
	assert_int_equal(entry_of(m, "591.1").agree, 1);
	r = json_load_file(m, 0, NULL);
	assert_int_equal(jint(r, "format"), 2);
	json_decref(r);
	/* show --json: the legacy counts as an object, a revoked version's why */
	assert_int_equal(rtid("attest show --json '%s'", m), 0);
	r = json_load_file(getenv("OUT_FILE"), 0, NULL);
	assert_non_null(r);
	{
		json_t *d = json_object_get(r, "drivers"), *e;
		size_t i;
		int seen = 0;

		json_array_foreach(d, i, e) {
			const char *v = json_string_value(json_object_get(e, "version"));

			if (!strcmp(v, "590.1")) {
				assert_int_equal(jint(json_object_get(e, "legacy"), "agree"), 8);
				seen++;
			} else if (!strcmp(v, "570.2")) {
				assert_true(json_is_true(json_object_get(e, "revoked")));
				assert_non_null(json_string_value(json_object_get(e, "why")));
				assert_int_equal(jint(e, "missing_agree"), 0);
				seen++;
			} else if (!strcmp(v, "591.1")) {
				assert_true(json_is_null(json_object_get(e, "legacy")));
				assert_true(json_is_null(json_object_get(e, "why")));
				seen++;
			}
		}
		assert_int_equal(seen, 3);
	}
	json_decref(r);
	/* Output that cannot be written is an error that says so. */
	{
		char cmd[2048];

		snprintf(cmd, sizeof(cmd), "'%s' attest show --json '%s' > /dev/full 2> '%s'",
			 env_path("RTID_BIN"), m, out_path);
		assert_int_equal(WEXITSTATUS(system(cmd)), 2);
		assert_non_null(strstr(slurp_out(), "cannot write the JSON"));
	}
	/* A file others may write is shown, and said to be untrusted. */
	assert_int_equal(chmod(m, 0666), 0);
	assert_int_equal(rtid("attest show --json '%s'", m), 0);
	{
		const char *out = slurp_out(), *brace = strchr(out, '{');

		/* the warning (on stderr, here in the same file) comes first */
		assert_non_null(strstr(out, "not trusted"));
		assert_non_null(brace);
		r = json_loads(brace, 0, NULL);
		assert_true(json_is_false(json_object_get(r, "trusted")));
		json_decref(r);
	}
	assert_int_equal(chmod(m, 0644), 0);
}

static void every_verdict_in_the_report(void **state)
{
	json_t *r, *p;
	const char *verdicts[4];

	(void)state;
	write_file(test_dir, "proc/7000/task/7001/comm", "cuda00001400006\n"); /* two candidates */
	write_file(test_dir, "proc/7000/task/7002/comm", "cuda00001400007\n");
	write_file(test_dir, "proc/7010/task/7010/comm", "python3\n");         /* none, none */
	write_file(test_dir, "proc/7020/task/7020/comm", "python3\n");         /* a tool failure */
	setenv("FAKE_TID_7000", "7002", 1);
	setenv("FAKE_EXIT_7010", "1", 1);
	setenv("FAKE_EXIT_7020", "2", 1);
	assert_int_equal(rtid("validate --no-attest --driver-version 590.9 --report '%s' 7000 7010 "
			      "7020 1000", report), 1); /* an error fails validation */
	r = json_load_file(report, 0, NULL);
	assert_non_null(r);
	assert_int_equal(jint(r, "undecided"), 1);
	assert_int_equal(jint(r, "agree_none"), 1);
	assert_int_equal(jint(r, "errors"), 1);
	assert_int_equal(jint(r, "agree"), 1);
	for (int i = 0; i < 4; i++) {
		p = json_array_get(json_object_get(r, "pids"), (size_t)i);
		verdicts[i] = json_string_value(json_object_get(p, "verdict"));
	}
	assert_string_equal(verdicts[0], "undecided");
	assert_string_equal(verdicts[1], "agree-none");
	assert_string_equal(verdicts[2], "error");
	assert_string_equal(verdicts[3], "agree");
	json_decref(r);
}

/* On a terminal, validate shows progress on stderr. */
static void progress_on_a_terminal(void **state)
{
	char cmd[4096], *slave;
	int m, st;

	(void)state;
	m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	slave = ptsname(m);
	assert_non_null(slave);
	snprintf(cmd, sizeof(cmd), "'%s' validate --no-attest --driver-version " V " --report '%s' "
		 "%s 2>'%s' >/dev/null", env_path("RTID_BIN"), report, pids, slave);
	st = system(cmd);
	assert_int_equal(WEXITSTATUS(st), 0);
	{
		char buf[4096];
		ssize_t n = read(m, buf, sizeof(buf) - 1);

		assert_true(n > 0);
		buf[n] = '\0';
		assert_non_null(strstr(buf, "12/12 pids"));
	}
	close(m);
}

static void usage_and_errors(void **state)
{
	char bad[600];

	(void)state;
	assert_int_equal(rtid("validate %s", pids), 2);                         /* no --report */
	assert_int_equal(rtid("validate --report '%s'", report), 2);            /* no pids */
	assert_int_equal(rtid("validate --report '%s' --all 1000", report), 2); /* both */
	assert_int_equal(rtid("validate --report '%s' 12abc", report), 2);
	assert_int_equal(rtid("validate --bogus"), 2);
	assert_int_equal(rtid("validate --jobs 0 --report '%s' 1000", report), 2);
	assert_int_equal(rtid("validate --pattern '(' --driver-version " V " --report '%s' 1000",
			      report), 2);
	assert_non_null(strstr(slurp_out(), "cannot set up the resolver"));
	/* --no-attest: the error says nothing of an attestation. */
	assert_int_equal(rtid("validate --no-attest --driver-version " V " --report "
			      "/nonexistent/r.json 1000"), 1);
	assert_null(strstr(slurp_out(), "recorded in the attestation"));
	/* A malformed RTID_DRIVER_VERSION: refused by name, nothing written;
	 * --driver-version overrides it. */
	remove(report);
	setenv("RTID_DRIVER_VERSION", "580.x", 1);
	assert_int_equal(rtid("validate --report '%s' 1000", report), 2);
	assert_non_null(strstr(slurp_out(), "invalid RTID_DRIVER_VERSION: '580.x'"));
	assert_int_equal(access(report, F_OK), -1);
	assert_int_equal(rtid("validate --no-attest --driver-version " V " --report '%s' 1000",
			      report), 0);
	unsetenv("RTID_DRIVER_VERSION");
	assert_int_equal(rtid("validate --help"), 0);
	assert_int_equal(system("grep -q -- '--report FILE' \"$OUT_FILE\""), 0);
	/* A report that cannot be written is an error. */
	assert_int_equal(rtid("validate --driver-version " V " --report /nonexistent/r.json 1000"), 1);
	/* No driver version: the report is written, nothing is attested. */
	assert_int_equal(rtid("validate --report '%s' 1000", report), 1);
	assert_int_equal(system("grep -q 'nothing attested' \"$OUT_FILE\""), 0);
	/* A malformed attestation is not overwritten. */
	write_file(test_dir, "bad-att.json", "{oops");
	snprintf(bad, sizeof(bad), "%s/bad-att.json", test_dir);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' "
			      "1000", bad, report), 1);
	assert_int_equal(rtid("attest show '%s'", bad), 2);
}

static void attest_usage(void **state)
{
	(void)state;
	assert_int_equal(rtid("attest"), 2);
	assert_int_equal(rtid("attest frob"), 2);
	assert_int_equal(rtid("attest merge only-out.json"), 2);
	assert_int_equal(rtid("attest --help"), 0);
	assert_int_equal(rtid("attest merge '%s/m2.json' /nonexistent.json", test_dir), 1);
	assert_int_equal(rtid("attest merge /nonexistent/test_dir/m.json '%s'", att), 1);
	assert_int_equal(system("grep -q 'cannot update /nonexistent/test_dir/m.json' "
				"\"$OUT_FILE\""), 0);
	assert_int_equal(rtid("attest show a b"), 2);
	assert_int_equal(rtid("attest show --json a b"), 2);
	assert_int_equal(rtid("attest show --bogus"), 2);
	assert_int_equal(rtid("attest -h"), 0);
	assert_int_equal(rtid("attest merge --allow-unsafe only-out.json"), 2);
	assert_int_equal(rtid("attest lift '%s' " V, att), 2);
	assert_int_equal(rtid("attest lift '%s' 580 'why'", att), 2);
	assert_int_equal(rtid("attest lift /nonexistent/d/a.json " V " 'why'"), 1);
	assert_non_null(strstr(slurp_out(), "cannot lift in /nonexistent/d/a.json"));
	/* The default file, not named: missing is an empty table. */
	{
		char cmd[4096];

		snprintf(cmd, sizeof(cmd), "RTID_ATTESTATION='%s/not-yet.json' '%s' attest show >'%s' "
			 "2>&1", test_dir, env_path("RTID_BIN"), out_path);
		assert_int_equal(system(cmd), 0);
		assert_non_null(strstr(slurp_out(), "(no attestation at"));
	}
	/* A file named explicitly that does not exist is an error, not an empty table. */
	assert_int_equal(rtid("attest show /nonexistent/typo.json"), 2);
	assert_int_equal(system("grep -q 'typo.json: No such file' \"$OUT_FILE\""), 0);
	/* show with RTID_ATTESTATION as the default file */
	assert_int_equal(rtid("attest show"), 0);
	assert_int_equal(system("grep -q '" V "' \"$OUT_FILE\""), 0);
}

/* Start argv (rtid's arguments) once go[0] reads EOF, with FAKE_TID_1050
 * set to tid when not NULL; output to /dev/null. */
static pid_t start_rtid(const int go[2], const char *tid, char **args)
{
	pid_t pid = fork();
	char c, *argv[32] = { (char *)env_path("RTID_BIN") };

	assert_true(pid >= 0);
	if (pid > 0)
		return pid;
	for (int i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	if (tid)
		setenv("FAKE_TID_1050", tid, 1);
	close(go[1]);
	if (read(go[0], &c, 1) != 0) /* all start together */
		_exit(99);
	int null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	dup2(null, 2);
	execv(argv[0], argv);
	_exit(98);
}

static int wait_status(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Concurrent validate (one mismatch), validate (agreements) and merge on one
 * file: every round ends revoked, with every distinct agreeing process. */
static void concurrent_updates_lose_nothing(void **state)
{
	/* Under valgrind every rtid starts a second late, under ASan a tenth:
	 * fewer rounds. */
	const int ROUNDS = instrumented() ? 6 : 40;
	char pre[600], ra[600], rb[600], a[600];
	char *others[] = { "1000", "1010", "1020", "1030", "1040", "1060", "1070", "1080", "1090",
			   "1100", "1110" };
	int revoked = 0, full = 0;

	(void)state;
	snprintf(pre, sizeof(pre), "%s/pre.json", test_dir);
	snprintf(ra, sizeof(ra), "%s/ra.json", test_dir);
	snprintf(rb, sizeof(rb), "%s/rb.json", test_dir);
	/* Evidence from before: 1050 agreed then (and 1000, also in B's run). */
	assert_int_equal(rtid("validate --driver-version " V " --no-attest --report '%s' 1050 1000",
			      pre), 0);
	for (int round = 0; round < ROUNDS; round++) {
		char *va[] = { "validate", "--driver-version", V, "--attestation", a, "--report", ra,
			       "1050", NULL };
		char *vb[24] = { "validate", "--driver-version", V, "--attestation", a, "--report",
				 rb };
		char *m[] = { "attest", "merge", a, pre, NULL };
		struct rtid_attest_entry e;
		int go[2];
		pid_t p[3];

		for (int i = 0; i < 11; i++)
			vb[7 + i] = others[i];
		snprintf(a, sizeof(a), "%s/stress-%d.json", test_dir, round);
		assert_int_equal(pipe(go), 0);
		p[0] = start_rtid(go, "1051", va);
		p[1] = start_rtid(go, NULL, vb);
		p[2] = start_rtid(go, NULL, m);
		close(go[0]);
		close(go[1]);
		assert_int_equal(wait_status(p[0]), 1); /* the mismatch */
		assert_int_equal(wait_status(p[1]), 0);
		assert_int_equal(wait_status(p[2]), 0);
		e = entry_of(a, V);
		revoked += e.revoked;
		full += e.agree == 12 && e.reports == 3;
		if (!e.revoked || e.agree != 12 || e.mismatch != 1 || e.reports != 3)
			fprintf(stderr, "round %d: revoked %d agree %lu mismatch %lu reports %lu\n",
				round, e.revoked, e.agree, e.mismatch, e.reports);
	}
	printf("%d rounds of validate+validate+merge: revocation kept in %d, all 12 distinct "
	       "agreements and 3 reports in %d\n", ROUNDS, revoked, full);
	assert_int_equal(revoked, ROUNDS);
	assert_int_equal(full, ROUNDS);
}

/* A report that cannot be written loses no verdict, and leaves no file. */
static void unwritable_report_keeps_the_verdicts(void **state)
{
	char a[600];

	(void)state;
	snprintf(a, sizeof(a), "%s/unwritable.json", test_dir);
	setenv("FAKE_TID_1050", "1051", 1);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report "
			      "/nonexistent/r.json 1050 1000", a), 1);
	setenv("FAKE_TID_1050", "1052", 1);
	assert_non_null(strstr(slurp_out(), "cannot write the report /nonexistent/r.json: No such "
				"file or directory (the verdicts are recorded in the attestation)"));
	assert_true(entry_of(a, V).revoked);
	assert_int_equal(entry_of(a, V).agree, 1);
	assert_int_equal(access("/nonexistent/r.json", F_OK), -1);
}

/* A full disk under the report, then under the attestation (in a private
 * mount namespace, so that nothing stays mounted). */
static void full_disk_keeps_the_verdicts(void **state)
{
	char dir[600], a[600], cmd[4096];
	pid_t pid;
	int st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/full", test_dir);
	snprintf(a, sizeof(a), "%s/full-att.json", test_dir);
	mkdir(dir, 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=16k,mode=0755") < 0)
			_exit(77);
		snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of='%s/fill' bs=4k 2>/dev/null", dir);
		if (system(cmd) == -1)
			_exit(2);
		setenv("FAKE_TID_1050", "1051", 1);
		if (rtid("validate --driver-version " V " --attestation '%s' --report '%s/r.json' %s",
			 a, dir, pids) != 1 ||
		    !strstr(slurp_out(), "cannot write the report") ||
		    !strstr(slurp_out(), "No space left on device"))
			_exit(3);
		if (!entry_of(a, V).revoked || entry_of(a, V).agree != 11)
			_exit(4);
		snprintf(cmd, sizeof(cmd), "%s/r.json", dir);
		if (access(cmd, F_OK) == 0) /* no empty report */
			_exit(5);
		/* The attestation on the full disk: the report keeps the verdicts. */
		snprintf(cmd, sizeof(cmd), "%s/att.json", dir);
		if (rtid("validate --driver-version " V " --attestation '%s' --report '%s' 1050",
			 cmd, report) != 1 || !strstr(slurp_out(), "cannot record the verdicts") ||
		    !strstr(slurp_out(), "No space left on device"))
			_exit(6);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WEXITSTATUS(st) == 77)
		skip(); /* no mount namespace here (not root) */
	assert_int_equal(WEXITSTATUS(st), 0);
	{
		json_t *r = json_load_file(report, 0, NULL);

		assert_int_equal(jint(r, "mismatch"), 1);
		json_decref(r);
	}
}

/* An attestation others could have written: not trusted, with the reason;
 * the shim says nothing and simply does not scan. */
static void unsafe_attestation_is_not_trusted(void **state)
{
	char a[600], shim[600], log[600], cmd[4096];

	(void)state;
	write_file(test_dir, "unsafe/att.json", "{\"format\": 1, \"drivers\": {\"" V "\": "
						"{\"agree\": 12}}}");
	snprintf(a, sizeof(a), "%s/unsafe/att.json", test_dir);
	chmod(a, 0664);
	assert_int_equal(rtid("resolve --json --mode scan --driver-version " V " --attestation "
			      "'%s' 1000", a), 0);
	assert_non_null(strstr(slurp_out(), "not trusted, the scan is unattested"));
	assert_non_null(strstr(slurp_out(), "att.json is writable by group or others"));
	assert_non_null(strstr(slurp_out(), "\"source\":\"tool\""));
	assert_int_equal(rtid("attest show '%s'", a), 0);
	assert_non_null(strstr(slurp_out(), "not trusted"));
	/* The shim: one line, the tid, and the tool was asked. */
	snprintf(shim, sizeof(shim), "%s/shim/cuda-checkpoint", test_dir);
	snprintf(log, sizeof(log), "%s/shim.log", test_dir);
	write_file(test_dir, "shim/.keep", "");
	assert_int_equal(symlink(env_path("RTID_BIN"), shim), 0);
	snprintf(cmd, sizeof(cmd), "RTID_MODE=scan RTID_ATTESTATION='%s' RTID_DRIVER_VERSION=" V
		 " RTID_REAL_TOOL='%s' FAKE_LOG='%s' '%s' --get-restore-tid --pid 1000 >'%s' 2>&1",
		 a, env_path("FAKE_TOOL"), log, shim, out_path);
	assert_int_equal(system(cmd), 0);
	assert_string_equal(slurp_out(), "1002\n");
	assert_int_equal(count_lines(log), 1);
	chmod(a, 0644); /* now safe: the scan answers, the tool is not asked */
	assert_int_equal(system(cmd), 0);
	assert_string_equal(slurp_out(), "1002\n");
	assert_int_equal(count_lines(log), 1);
	/* validate does not make an unsafe file its own: refused, the report kept. */
	chmod(a, 0664);
	unlink(report);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' 1000",
			      a, report), 1);
	assert_non_null(strstr(slurp_out(), "not trusted, not updated"));
	assert_int_equal(access(report, F_OK), 0);
	assert_int_equal(entry_of(a, V).reports, 0);
	/* merge refuses an unsafe report unless told. */
	chmod(a, 0666);
	snprintf(cmd, sizeof(cmd), "%s/merged.json", test_dir);
	assert_int_equal(rtid("attest merge '%s' '%s'", cmd, a), 1);
	assert_non_null(strstr(slurp_out(), "not trusted"));
	assert_int_equal(entry_of(cmd, V).agree, 0);
	assert_int_equal(rtid("attest merge --allow-unsafe '%s' '%s'", cmd, a), 0);
	assert_int_equal(entry_of(cmd, V).agree, 12);
}

/* Where a process cannot be told from another (no start time, no boot id),
 * its agreement does not count; its mismatch still revokes. */
static void unknown_identity_never_attests(void **state)
{
	char a[600], rel[128], moved[600];

	(void)state;
	snprintf(a, sizeof(a), "%s/noident.json", test_dir);
	snprintf(rel, sizeof(rel), "%s/proc/1000/stat", test_dir);
	snprintf(moved, sizeof(moved), "%s/stat-moved", test_dir);
	rename(rel, moved); /* no stat: start time unknown */
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' "
			      "1000 1010", a, report), 0);
	rename(moved, rel);
	assert_int_equal(entry_of(a, V).agree, 1);
	{
		json_t *r = json_load_file(report, 0, NULL);

		assert_true(json_is_null(json_object_get(json_array_get(json_object_get(r, "pids"), 0),
							 "start")));
		json_decref(r);
	}
	/* A proc tree without a boot id: nothing counts, a mismatch revokes. */
	snprintf(rel, sizeof(rel), "%s/proc/sys/kernel/random/boot_id", test_dir);
	unlink(rel);
	snprintf(a, sizeof(a), "%s/noboot.json", test_dir);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' %s",
			      a, report, pids), 0);
	assert_int_equal(entry_of(a, V).agree, 0);
	setenv("FAKE_TID_1050", "1051", 1);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' 1050",
			      a, report), 1);
	setenv("FAKE_TID_1050", "1052", 1);
	assert_true(entry_of(a, V).revoked);
	write_file(test_dir, "proc/sys/kernel/random/boot_id", BOOT "\n");
	/* A pid whose driver query failed is no verdict; the others count. */
	snprintf(a, sizeof(a), "%s/witherror.json", test_dir);
	setenv("FAKE_EXIT_1010", "2", 1);
	assert_int_equal(rtid("validate --driver-version " V " --attestation '%s' --report '%s' "
			      "1010 1000", a, report), 1);
	unsetenv("FAKE_EXIT_1010");
	assert_int_equal(entry_of(a, V).agree, 1);
	assert_int_equal(entry_of(a, V).mismatch, 0);
	/* No driver version and a mismatch: said so, nothing attested. */
	setenv("FAKE_TID_1050", "1051", 1);
	assert_int_equal(rtid("validate --report '%s' 1050", report), 1);
	setenv("FAKE_TID_1050", "1052", 1);
	assert_non_null(strstr(slurp_out(), "driver (unknown) is revoked"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {

		cmocka_unit_test(twelve_agree_then_scan_is_used),
		cmocka_unit_test(attestation_in_the_working_directory),
		cmocka_unit_test(one_mismatch_fails_and_revokes),
		cmocka_unit_test(one_process_ten_times_is_one),
		cmocka_unit_test(progress_on_a_terminal),
		cmocka_unit_test(every_verdict_in_the_report),
		cmocka_unit_test(all_finds_candidates),
		cmocka_unit_test(merge_reports_revocation_wins),
		cmocka_unit_test(concurrent_updates_lose_nothing),
		cmocka_unit_test(unwritable_report_keeps_the_verdicts),
		cmocka_unit_test(full_disk_keeps_the_verdicts),
		cmocka_unit_test(unsafe_attestation_is_not_trusted),
		cmocka_unit_test(unknown_identity_never_attests),
		/* after the others: they need the attestation written above */
		cmocka_unit_test(usage_and_errors),
		cmocka_unit_test(attest_usage),
	};
	return cmocka_run_group_tests(tests, setup, test_dir_teardown);
}
