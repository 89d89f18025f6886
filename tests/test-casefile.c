/* The case-file parser: what it accepts, and errors that name file and line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "casefile.h"
#include "helpers.h"
#include "rtid.h"


static int load(const char *text, struct casefile **c, char *err, size_t len)
{
	char path[512];

	write_file(test_dir, "x.case", text);
	snprintf(path, sizeof(path), "%s/x.case", test_dir);
	return cf_load(path, c, err, len);
}

#define GOOD_HEAD "title A title\nproves a rule\ntask 10 10 python3\n"

static void parses_a_full_case(void **state)
{
	struct casefile *c = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(load(GOOD_HEAD
			      "driver 580.159.03\nattest clean\ntimeout 0.5\njobs 4\n"
			      "task 10 11 \"cuda\\x30000140000\\x36\" no-newline  # a comment\n"
			      "answer 10 tid 11 noise \"warn\\n\"\n"
			      "answer 20 stdout \"12abc\\n\"\n"
			      "fault rename 10 11 other at-read 2\nfault exit 10 after-readdir\n"
			      "fault eio 10 11 read\nfault delay 10 11 5\n"
			      "expect scan,crosscheck 10 tid=11 source=scan fallback=- calls=0\n"
			      "expect all * error=-\n", &c, err, sizeof(err)), 0);
	assert_string_equal(c->title, "A title");
	assert_int_equal(c->ntasks, 2);
	assert_string_equal(c->tasks[1].comm, "cuda00001400006");
	assert_true(c->tasks[1].no_newline);
	assert_non_null(strstr(c->version_file, "580.159.03"));
	assert_int_equal(c->attest, CF_ATTEST_CLEAN);
	assert_int_equal(c->jobs, 4);
	assert_int_equal(cf_answer_for(c, 10)->value, 11);
	assert_string_equal(cf_answer_for(c, 10)->noise, "warn\n");
	assert_string_equal(cf_answer_for(c, 20)->text, "12abc\n");
	assert_int_equal(c->nfaults, 4);
	assert_int_equal(c->faults[0].trigger, CF_T_AT_READ);
	assert_int_equal(c->faults[0].n, 2);
	assert_int_equal(c->nexpects, 2);
	assert_int_equal(c->expects[0].modes, 0x6);
	assert_int_equal(c->expects[0].line, 15);
	assert_int_equal(c->expects[0].calls, 0);
	assert_int_equal(c->expects[1].pid, 0);
	cf_free(c);
}

/* Each keyword fills its own field. */
static void keywords_fill_their_fields(void **state)
{
	struct casefile *c = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(load(GOOD_HEAD "deadline 2\nattach-delay 0.25\nnone-delay 0.5\n"
			      "given-version 580.1\ndriver-file \"v\\n\"\npattern \"^a$\"\n"
			      "backend both\nlibcuda old\nseed 7\nlibcuda-init crash 11\n"
			      "api-version 12000\nexpect-attaches scan 1\nexpect all * error=-\n",
			      &c, err, sizeof(err)), 0);
	assert_true(c->deadline_s == 2 && c->attach_delay_s == 0.25 && c->none_delay_s == 0.5);
	assert_true(c->timeout_s == 0);
	assert_string_equal(c->given_version, "580.1");
	assert_string_equal(c->version_file, "v\n");
	assert_string_equal(c->pattern, "^a$");
	assert_int_equal(c->backends, 3);
	assert_true(c->old_libcuda);
	assert_int_equal(c->seed, 7);
	assert_int_equal(c->init.kind, CF_ANS_CRASH);
	assert_int_equal(c->init.value, 11);
	assert_int_equal(c->api_version, 12000);
	assert_int_equal(c->attaches[RTID_MODE_SCAN], 1);
	assert_int_equal(c->attaches[RTID_MODE_DRIVER], -1);
	cf_free(c);
}

/* A list of modes is split at commas; empty names between them are skipped. */
static void mode_lists(void **state)
{
	struct casefile *c = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(load(GOOD_HEAD "expect ,scan,,canary, 10 tid=1\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c->expects[0].modes, (1u << RTID_MODE_SCAN) | (1u << RTID_MODE_CANARY));
	cf_free(c);
}

static void errors_name_file_and_line(void **state)
{
	static const struct { const char *text; int line; const char *what; } t[] = {
		{ GOOD_HEAD "bogus 1\n", 4, "unknown keyword" },
		{ GOOD_HEAD "task 10 12abc python3\n", 4, "usage: task" },
		{ GOOD_HEAD "task 10 12 cuda000014000066x\n", 4, "longer than 15" },
		{ GOOD_HEAD "answer 10 tid -5\n", 4, "not a positive number" },
		{ GOOD_HEAD "answer 10 explode\n", 4, "unknown answer" },
		{ GOOD_HEAD "fault rename 10 11\n", 4, "usage: fault rename" },
		{ GOOD_HEAD "fault teleport 10 11\n", 4, "usage: fault" },
		{ GOOD_HEAD "expect scan 10 tid=abc\n", 4, "bad expectation" },
		{ GOOD_HEAD "expect fast 10 tid=1\n", 4, "usage: expect" },
		{ GOOD_HEAD "expect ,, 10 tid=1\n", 4, "usage: expect" },
		{ GOOD_HEAD "expect scan,fast 10 tid=1\n", 4, "usage: expect" },
		{ GOOD_HEAD "expect scan 10 fallback=sideways\n", 4, "bad expectation" },
		{ GOOD_HEAD "driver 580\n", 4, "bad driver version" },
		{ GOOD_HEAD "\n\ntask 10 11 \"unterminated\n", 6, "unterminated" },
		{ GOOD_HEAD "task 10 11 \"bad\\q\"\n", 4, "bad escape" },
		{ GOOD_HEAD "timeout soon\n", 4, "not a number" },
		{ GOOD_HEAD "jobs 99\n", 4, "1..64" },
		{ GOOD_HEAD "fault eio 10 11 read probability 1.5\n", 4, "probability" },
		{ GOOD_HEAD "seed 0\n", 4, "usage: seed" },
		{ GOOD_HEAD "task 10 11 a\ntask 10 11 b\n", 5, "tid 11 given twice" },
		{ GOOD_HEAD "task 12 10 a\n", 4, "tid 10 given twice" },
		{ GOOD_HEAD "workload 1000 2147483000\n", 4, "would pass 2147483647" },
		{ GOOD_HEAD "timeout\n", 4, "'timeout' takes one value" },
		{ GOOD_HEAD "none-delay 1 2\n", 4, "'none-delay' takes one value" },
		{ GOOD_HEAD "task 10 11\n", 4, "usage: task" },
		{ GOOD_HEAD "task 10 11 a no-newline extra\n", 4, "usage: task" },
		{ GOOD_HEAD "answer 10\n", 4, "usage: answer" },
		{ GOOD_HEAD "backend tool api\n", 4, "usage: backend" },
		{ GOOD_HEAD "libcuda-init\n", 4, "usage: libcuda-init" },
		{ GOOD_HEAD "proves \t \n", 4, "'proves' needs text" },
		{ GOOD_HEAD "\"title\" quoted\n", 4, "unknown keyword 'title'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct casefile *c = (void *)0x1;
		char err[256] = "", want[64];

		assert_int_equal(load(t[i].text, &c, err, sizeof(err)), -EINVAL);
		assert_ptr_equal(c, (void *)0x1);
		snprintf(want, sizeof(want), "x.case:%d: ", t[i].line);
		if (!strstr(err, want) || !strstr(err, t[i].what))
			fail_msg("case %zu: got \"%s\", want \"%s\" and \"%s\"", i, err, want,
				 t[i].what);
	}
}

static void whole_case_checks(void **state)
{
	struct casefile *c = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(load("title t\nproves p\ntask 1 1 x\n", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expect"));
	assert_int_equal(load("task 1 1 x\nexpect all 1 tid=1\n", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "title"));
	assert_int_equal(cf_load("/nonexistent.case", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.case"));
}

static void fault_round_trip(void **state)
{
	static const char *const t[] = {
		"fault rename 1 2 \"cuda0000\\x0a\" at-read 3", "fault rename 1 2 \"x\" after-walk",
		"fault vanish 1 2", "fault appear 1 9 \"cuda1\" at-read 1", "fault eacces 1 2 open",
		"fault eio 1 2 read", "fault delay 1 2 40", "fault short-read 1 2",
		"fault exit 1 after-readdir", "fault exit 1 at-read 2", "fault exit 1",
		"fault eio 1 2 read probability 0.25", "fault vanish 1 2 probability 0.5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cf_fault f;
		char err[128], back[128];

		assert_int_equal(cf_parse_fault(t[i] + 6, &f, err, sizeof(err)), 0);
		cf_format_fault(&f, back, sizeof(back));
		assert_string_equal(back, t[i]);
	}
}

static void workload_generates_processes(void **state)
{
	struct casefile *c = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(load("title w\nproves w\nworkload 103 1000\nworkload 2 5000 cpu\n"
			      "expect all * error=-\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c->npids, 105);
	assert_int_equal(c->ntasks, 103 * 3 + 2);
	assert_int_equal(c->pids[102], 1000 + 1020);
	assert_int_equal(cf_answer_for(c, 1010)->value, 1012);
	assert_int_equal(cf_answer_for(c, 5010)->kind, CF_ANS_NONE);
	cf_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_a_full_case), cmocka_unit_test(errors_name_file_and_line),
		cmocka_unit_test(whole_case_checks), cmocka_unit_test(fault_round_trip),
		cmocka_unit_test(workload_generates_processes), cmocka_unit_test(mode_lists),
		cmocka_unit_test(keywords_fill_their_fields),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
