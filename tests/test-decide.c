/* The fallback rules and cross-check verdicts, as a table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "basic/parse.h"
#include "core/core.h"

static void fallback_table(void **state)
{
	static const struct { enum rtid__scan_status s; enum rtid_fallback want; } t[] = {
		{ RTID__SCAN_FOUND, RTID_FB_NONE },
		{ RTID__SCAN_ZERO, RTID_FB_ZERO_MATCHES },
		{ RTID__SCAN_MULTIPLE, RTID_FB_MULTIPLE_MATCHES },
		{ RTID__SCAN_UNSTABLE, RTID_FB_UNSTABLE },
		{ RTID__SCAN_ERROR, RTID_FB_SCAN_ERROR },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid__scan s = { .status = t[i].s, .tid = 7 };

		assert_int_equal(rtid__scan_fallback(&s), t[i].want);
	}
}

static void crosscheck_table(void **state)
{
	static const struct {
		enum rtid__scan_status s;
		int scan_tid, driver_tid;
		enum rtid_xcheck want;
	} t[] = {
		{ RTID__SCAN_FOUND, 7, 7, RTID_XC_AGREE },
		{ RTID__SCAN_FOUND, 7, 8, RTID_XC_MISMATCH },  /* the wrong single match */
		{ RTID__SCAN_FOUND, 7, 0, RTID_XC_MISMATCH },  /* NVML-only: driver says none */
		{ RTID__SCAN_ZERO, 0, 0, RTID_XC_AGREE_NONE },
		{ RTID__SCAN_ZERO, 0, 9, RTID_XC_MISMATCH },   /* a renamed restore thread */
		{ RTID__SCAN_MULTIPLE, 0, 9, RTID_XC_NONE },
		{ RTID__SCAN_UNSTABLE, 0, 9, RTID_XC_NONE },
		{ RTID__SCAN_ERROR, 0, 9, RTID_XC_NONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid__scan s = { .status = t[i].s, .tid = t[i].scan_tid };

		assert_int_equal(rtid__crosscheck(&s, t[i].driver_tid), t[i].want);
	}
}

/* Exactly one and stable: only a present process, wholly read and provably
 * wholly listed, with one match that still matches, names a thread. */
static void scan_rule_table(void **state)
{
	const enum rtid__reread N = RTID__REREAD_NOT_DONE, S = RTID__REREAD_SAME,
				C = RTID__REREAD_CHANGED, E = RTID__REREAD_ERROR;
	const struct {
		bool gone;
		int err;
		bool incomplete;
		int candidates;
		enum rtid__reread reread;
		bool reread_needed;
		enum rtid__scan_status want;
	} t[] = {
		/* gone  err      partial  matches reread  needed  status */
		{ false, 0, false, 1, S, true, RTID__SCAN_FOUND },
		{ false, 0, false, 1, C, true, RTID__SCAN_UNSTABLE },  /* renamed after the walk */
		{ false, 0, false, 1, E, true, RTID__SCAN_ERROR },
		{ false, 0, false, 1, N, true, RTID__SCAN_UNSTABLE },  /* never found unread */
		{ false, 0, false, 0, N, false, RTID__SCAN_ZERO },
		{ false, 0, false, 2, N, false, RTID__SCAN_MULTIPLE },
		{ false, 0, true, 1, S, false, RTID__SCAN_UNSTABLE },  /* a live thread skipped */
		{ false, 0, true, 0, N, false, RTID__SCAN_UNSTABLE },
		{ false, -EIO, false, 1, S, false, RTID__SCAN_ERROR }, /* one task unreadable */
		{ false, -EIO, true, 1, S, false, RTID__SCAN_ERROR },
		{ true, 0, false, 1, S, false, RTID__SCAN_NOPROC },
		{ true, -ENOENT, false, 0, N, false, RTID__SCAN_NOPROC },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid__scan_seen seen = { t[i].gone, t[i].err, t[i].incomplete,
						t[i].candidates, t[i].reread };

		assert_int_equal(rtid__scan_needs_reread(&seen), t[i].reread_needed);
		assert_int_equal(rtid__scan_rule(&seen), t[i].want);
	}
}

/* When the scan is used, as the README's mode table says: with a clean
 * attestation, or unattested by permission when nothing is on record
 * against the version; never on a version other than the running one. The
 * canary needs no attestation, only no mismatch on record. */
static void trust_table(void **state)
{
	const struct {
		bool attested, revoked, allow, mismatch;
		bool scan, canary;
		enum rtid_fallback why;
	} t[] = {
		/* attested revoked allow  mismatch  scan   canary why-not */
		{ true, false, false, false, true, true, RTID_FB_UNATTESTED },
		{ true, false, true, false, true, true, RTID_FB_UNATTESTED },
		{ false, false, false, false, false, true, RTID_FB_UNATTESTED },
		{ false, false, true, false, true, true, RTID_FB_UNATTESTED },
		{ false, true, true, false, false, false, RTID_FB_UNATTESTED },
		{ false, true, false, false, false, false, RTID_FB_UNATTESTED },
		{ true, false, false, true, false, false, RTID_FB_VERSION_MISMATCH },
		{ false, false, true, true, false, false, RTID_FB_VERSION_MISMATCH },
		{ false, true, true, true, false, false, RTID_FB_VERSION_MISMATCH },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid__trust tr = { t[i].attested, t[i].revoked, t[i].allow, t[i].mismatch };

		assert_int_equal(rtid__scan_trusted(&tr), t[i].scan);
		assert_int_equal(rtid__canary_may_try(&tr), t[i].canary);
		assert_int_equal(rtid__untrusted_why(&tr), t[i].why);
	}
}

/* The README's mode table, per pid: driver never scans; scan scans when
 * trusted and else says why not; cross-check (and the canary's first pid)
 * always does both, trusted or not. */
static void plan_table(void **state)
{
	const struct {
		enum rtid_mode mode;
		bool trusted;
		enum rtid__plan want;
	} t[] = {
		{ RTID_MODE_DRIVER, true, RTID__PLAN_DRIVER },
		{ RTID_MODE_DRIVER, false, RTID__PLAN_DRIVER },
		{ RTID_MODE_SCAN, true, RTID__PLAN_SCAN_FIRST },
		{ RTID_MODE_SCAN, false, RTID__PLAN_UNTRUSTED },
		{ RTID_MODE_CROSSCHECK, true, RTID__PLAN_BOTH },
		{ RTID_MODE_CROSSCHECK, false, RTID__PLAN_BOTH },
		{ RTID_MODE_CANARY, false, RTID__PLAN_BOTH },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(rtid__plan_for(t[i].mode, t[i].trusted), t[i].want);
}

/* The canary goes on until a pid gives a verdict on the naming. */
static void canary_table(void **state)
{
	(void)state;
	assert_int_equal(rtid__canary_next(RTID_XC_AGREE), RTID__CANARY_SCAN_REST);
	assert_int_equal(rtid__canary_next(RTID_XC_MISMATCH), RTID__CANARY_DRIVER_REST);
	assert_int_equal(rtid__canary_next(RTID_XC_AGREE_NONE), RTID__CANARY_NEXT_PID);
	assert_int_equal(rtid__canary_next(RTID_XC_NONE), RTID__CANARY_NEXT_PID);
}

/* A driver status, the tool's exit or a CUresult: only 1 and 3 say "no CUDA";
 * 2 (out of memory), 101 (invalid device) or a truncated 999 are errors. */
static void driver_status_table(void **state)
{
	const struct {
		int status;
		enum rtid__said said;
	} t[] = {
		{ 0, RTID__SAID_TID },    { 1, RTID__SAID_NONE },     { 3, RTID__SAID_NONE },
		{ 2, RTID__SAID_FAILED }, { 4, RTID__SAID_FAILED },   { 101, RTID__SAID_FAILED },
		{ 231, RTID__SAID_FAILED }, { 999, RTID__SAID_FAILED }, { -1, RTID__SAID_FAILED },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(rtid__driver_said(t[i].status), t[i].said);
}

static const char *mode_n(int i) { return rtid_mode_name((enum rtid_mode)i); }
static const char *src_n(int i) { return rtid_source_name((enum rtid_source)i); }
static const char *fb_n(int i) { return rtid_fallback_name((enum rtid_fallback)i); }
static const char *xc_n(int i) { return rtid_xcheck_name((enum rtid_xcheck)i); }
static const char *err_n(int i) { return rtid_error_name((enum rtid_error)i); }

static void names(void **state)
{
	enum rtid_mode m;

	(void)state;
	assert_null(rtid_source_name(RTID_SRC_NONE));
	assert_string_equal(rtid_source_name(RTID_SRC_SCAN), "scan");
	assert_string_equal(rtid_fallback_name(RTID_FB_CANARY_MISMATCH), "canary-mismatch");
	assert_string_equal(rtid_xcheck_name(RTID_XC_AGREE_NONE), "agree-none");
	assert_string_equal(rtid_error_name(RTID_ERR_NO_SUCH_PROCESS), "no-such-process");
	assert_null(rtid_error_name(RTID_OK));
	assert_int_equal(rtid_mode_parse("crosscheck", &m), 0);
	assert_int_equal(m, RTID_MODE_CROSSCHECK);
	assert_int_equal(rtid_mode_parse("Scan", &m), -EINVAL);
	assert_string_equal(rtid_mode_name(RTID_MODE_CANARY), "canary");
	/* Out-of-range values never index past the tables. */
	assert_string_equal(rtid_mode_name((enum rtid_mode)99), "?");
	assert_string_equal(rtid_source_name((enum rtid_source)99), "?");
	assert_string_equal(rtid_fallback_name((enum rtid_fallback)99), "?");
	assert_string_equal(rtid_xcheck_name((enum rtid_xcheck)99), "?");
	assert_string_equal(rtid_error_name((enum rtid_error)99), "?");
	assert_int_equal(rtid_mode_parse(NULL, &m), -EINVAL);
}

/* Every value of every public enum has its own name (only the "nothing" value
 * of each has none), and every mode's name parses back to it: a value added
 * to an enum without a name, or two values sharing one, fail here. */
static void every_value_named(void **state)
{
	const char *(*const fn[])(int) = { mode_n, src_n, fb_n, xc_n, err_n };
	const int max[] = { RTID__MODE_MAX, RTID__SRC_MAX, RTID__FB_MAX, RTID__XC_MAX,
			    RTID__ERR_MAX };

	(void)state;
	for (size_t t = 0; t < sizeof(fn) / sizeof(fn[0]); t++) {
		for (int i = t == 0 ? 0 : 1; i < max[t]; i++) {
			assert_non_null(fn[t](i));
			assert_string_not_equal(fn[t](i), "?");
			for (int j = 0; j < i; j++)
				if (fn[t](j))
					assert_string_not_equal(fn[t](i), fn[t](j));
		}
		assert_string_equal(fn[t](max[t]), "?");
	}
	for (int i = 0; i < RTID__MODE_MAX; i++) {
		enum rtid_mode m;

		assert_int_equal(rtid_mode_parse(rtid_mode_name((enum rtid_mode)i), &m), 0);
		assert_int_equal(m, i);
	}
	assert_non_null(rtid_version());
	assert_string_equal(rtid_version(), RTID_VERSION);
}

/* The request rule, row by row, and README's table of it: each row of the
 * table is a request the function must decide as the table says. */
static enum rtid__req_verdict ask(enum rtid__req_kind kind, bool present, int tgid, uid_t owner,
				  uid_t caller, bool may_act)
{
	struct rtid__req_facts f = { .kind = kind, .pid = 100, .present = present, .tgid = tgid,
				     .owner_known = true, .owner = owner, .check_caller = true,
				     .caller = caller, .may_act = may_act };

	return rtid__request_rule(&f);
}

static void request_rule_table(void **state)
{
	struct rtid__req_facts lib = { .kind = RTID__REQ_QUERY, .pid = 100, .present = true,
				       .tgid = 100, .owner = 7 };

	(void)state;
	/* Actions: root always; others only with may_act, and then only their own. */
	assert_int_equal(ask(RTID__REQ_ACTION, true, 100, 7, 0, false), RTID__REQ_OK);
	assert_int_equal(ask(RTID__REQ_ACTION, true, 100, 7, 7, false), RTID__REQ_NO_ACTIONS);
	assert_int_equal(ask(RTID__REQ_ACTION, false, 0, 7, 7, false), RTID__REQ_NO_ACTIONS);
	assert_int_equal(ask(RTID__REQ_ACTION, true, 100, 7, 7, true), RTID__REQ_OK);
	assert_int_equal(ask(RTID__REQ_ACTION, true, 100, 0, 7, true), RTID__REQ_NOT_YOURS);
	assert_int_equal(ask(RTID__REQ_ACTION, true, 1, 0, 7, true), RTID__REQ_A_THREAD);
	assert_int_equal(ask(RTID__REQ_ACTION, true, 1, 7, 0, false), RTID__REQ_A_THREAD);
	/* Queries: a process of the caller's, or anything for root. */
	assert_int_equal(ask(RTID__REQ_QUERY, true, 100, 7, 7, false), RTID__REQ_OK);
	assert_int_equal(ask(RTID__REQ_QUERY, true, 100, 8, 7, false), RTID__REQ_NOT_YOURS);
	assert_int_equal(ask(RTID__REQ_QUERY, true, 100, 8, 0, false), RTID__REQ_OK);
	assert_int_equal(ask(RTID__REQ_QUERY, false, 0, 8, 0, false), RTID__REQ_NO_PROCESS);
	assert_int_equal(ask(RTID__REQ_QUERY, true, 99, 7, 7, false), RTID__REQ_A_THREAD);
	/* get-state takes a thread (CRIU asks with the restore tid), still the caller's. */
	assert_int_equal(ask(RTID__REQ_STATE, true, 99, 7, 7, false), RTID__REQ_OK);
	assert_int_equal(ask(RTID__REQ_STATE, true, 99, 8, 7, false), RTID__REQ_NOT_YOURS);
	/* A status that could not be read (tgid 0) leaves the thread question open. */
	assert_int_equal(ask(RTID__REQ_QUERY, true, 0, 7, 7, false), RTID__REQ_OK);
	/* An owner not known is not the caller's. */
	lib.check_caller = true;
	lib.caller = 7;
	lib.owner_known = false;
	assert_int_equal(rtid__request_rule(&lib), RTID__REQ_NOT_YOURS);
	/* The library asks as its caller: no caller rows. */
	lib.check_caller = false;
	assert_int_equal(rtid__request_rule(&lib), RTID__REQ_OK);
	lib.kind = RTID__REQ_ACTION;
	assert_int_equal(rtid__request_rule(&lib), RTID__REQ_OK);
	for (int v = 0; v < RTID__REQ_VERDICT_MAX; v++)
		assert_true(v == RTID__REQ_OK ? !*rtid__request_why(v) : !!*rtid__request_why(v));
}

/* One row of a documented table of the rule (README's, rtid(1)'s): its four
 * cells (request, caller, the number, verdict) judged by the function as
 * the row says. */
static void check_row(const char *where, char *const cell[4])
{
	enum rtid__req_kind kind = strstr(cell[0], "get-state") ? RTID__REQ_STATE :
				   strstr(cell[0], "action") ? RTID__REQ_ACTION : RTID__REQ_QUERY;
	bool thread = strstr(cell[2], "a thread") != NULL;
	bool nothing = strstr(cell[2], "names nothing") != NULL;
	bool other = strstr(cell[2], "another uid") != NULL;
	bool may_act = !strstr(cell[1], "may not act");
	uid_t caller = strncmp(cell[1], "root", 4) == 0 ? 0 : 7;
	enum rtid__req_verdict want = strstr(cell[3], "allowed") ? RTID__REQ_OK :
				      strstr(cell[3], "denied") ? RTID__REQ_NO_ACTIONS :
				      strstr(cell[3], "no such process") ? RTID__REQ_NO_PROCESS :
				      strstr(cell[3], "a thread, not a process") ? RTID__REQ_A_THREAD :
				      strstr(cell[3], "another user") ? RTID__REQ_NOT_YOURS :
				      RTID__REQ_VERDICT_MAX;

	if (want == RTID__REQ_VERDICT_MAX)
		fail_msg("%s: no verdict in the row of %s", where, cell[0]);
	if (ask(kind, !nothing, thread ? 99 : 100, other ? 8 : 7, caller, may_act) != want)
		fail_msg("%s and rtid__request_rule differ at the row %s | %s | %s | %s", where,
			 cell[0], cell[1], cell[2], cell[3]);
}

/* The rows of the table in file between the lines holding begin and end,
 * cells split at sep, the header row skipped. Returns how many. */
static int check_table(const char *file, const char *begin, const char *end, char sep)
{
	char path[4096], line[1024];
	int rows = 0;
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", getenv("RTID_SOURCE_ROOT"), file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *cell[5] = { 0 }, *p = line + (sep == '|'), *q;
		int n = 0;

		if (!in) {
			in = strstr(line, begin) != NULL;
			continue;
		}
		if (strstr(line, end))
			break;
		if (!strchr(line, sep) || strstr(line, "---") || strncmp(p, sep == '|' ? " request" :
									"request", 7 + (sep == '|')) == 0)
			continue;
		for (; n < 5 && p; n++) {
			q = strchr(p, sep);
			if (q)
				*q++ = '\0';
			cell[n] = p + strspn(p, " ");
			p = q;
		}
		assert_true(n >= 4);
		check_row(file, cell);
		rows++;
	}
	fclose(f);
	return rows;
}

static void documented_request_tables(void **state)
{
	(void)state;
	assert_non_null(getenv("RTID_SOURCE_ROOT"));
	assert_int_equal(check_table("README.md", "<!-- request-rule -->", "<!-- /request-rule -->",
				     '|'), 6);
	assert_int_equal(check_table("man/rtid.1", ".SH WHO MAY ASK WHAT", ".TE", '\t'), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fallback_table), cmocka_unit_test(crosscheck_table),
		cmocka_unit_test(plan_table), cmocka_unit_test(scan_rule_table), cmocka_unit_test(trust_table), cmocka_unit_test(canary_table),
		cmocka_unit_test(driver_status_table), cmocka_unit_test(every_value_named),
		cmocka_unit_test(names), cmocka_unit_test(request_rule_table),
		cmocka_unit_test(documented_request_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
