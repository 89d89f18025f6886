/* The attestation reader and writer: the clean rule, revocation, merging. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "rtid.h"


static int load_text(const char *text, struct rtid_attestation **a, char *err, size_t len)
{
	char path[512];

	write_file(test_dir, "a.json", text);
	snprintf(path, sizeof(path), "%s/a.json", test_dir);
	return rtid_attest_load(path, a, err, len);
}

static void missing_file_is_empty(void **state)
{
	struct rtid_attestation *a = NULL;
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/none.json", test_dir);
	assert_int_equal(rtid_attest_load(path, &a, NULL, 0), 0);
	assert_int_equal(rtid_attest_count(a), 0);
	assert_false(rtid_attest_clean(a, "580.159.03"));
	rtid_attest_free(a);
}

static void clean_rule(void **state)
{
	static const struct { const char *entry; bool clean; } t[] = {
		{ "{\"agree\": 10}", true },
		{ "{\"agree\": 9, \"agree_none\": 5}", false },
		{ "{\"agree\": 50, \"mismatch\": 1}", false },
		{ "{\"agree\": 50, \"revoked\": true}", false },
		{ "{\"agree\": 12, \"agree_none\": 3, \"mismatch\": 0, \"revoked\": false}", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_attestation *a = NULL;
		char text[256];

		snprintf(text, sizeof(text),
			 "{\"format\": 1, \"drivers\": {\"580.159.03\": %s}}", t[i].entry);
		assert_int_equal(load_text(text, &a, NULL, 0), 0);
		assert_int_equal(rtid_attest_clean(a, "580.159.03"), t[i].clean);
		/* Only that exact version. */
		assert_false(rtid_attest_clean(a, "580.159.04"));
		assert_false(rtid_attest_clean(a, NULL));
		rtid_attest_free(a);
	}
}

static void malformed_names_place(void **state)
{
	static const char *bad[] = {
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"agree\": 1,}}}",
		"{\"format\": 2, \"drivers\": {}}",
		"{\"format\": 1, \"drivers\": []}",
		"{\"format\": 1, \"drivers\": {\"580\": {\"agree\": 1}}}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"agree\": -1}}}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"agree\": \"12\"}}}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"revoked\": 0}}}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {}, \"580.1\": {}}}",
		"[]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rtid_attestation *a = (void *)0x1;
		char err[512] = "";

		assert_int_equal(load_text(bad[i], &a, err, sizeof(err)), -EINVAL);
		assert_ptr_equal(a, (void *)0x1); /* untouched */
		assert_non_null(strstr(err, "a.json"));
	}
}

static void syntax_error_has_line(void **state)
{
	struct rtid_attestation *a = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(load_text("{\n\"format\": 1,\n oops\n}", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a.json:3:"));
}

static void add_revokes_and_saves(void **state)
{
	struct rtid_attestation *a = NULL, *b = NULL;
	char path[512];

	(void)state;
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_add(a, "580.159.03", 12, 1, 0, false), 0);
	assert_int_equal(rtid_attest_add(a, "570.86.15", 20, 0, 0, false), 0);
	assert_true(rtid_attest_clean(a, "580.159.03"));
	assert_int_equal(rtid_attest_add(a, "580.159.03", 0, 0, 1, false), 0);
	assert_false(rtid_attest_clean(a, "580.159.03"));
	assert_true(rtid_attest_find(a, "580.159.03")->revoked);
	assert_int_equal(rtid_attest_add(a, "bogus", 1, 0, 0, false), -EINVAL);

	snprintf(path, sizeof(path), "%s/saved.json", test_dir);
	assert_int_equal(rtid_attest_save(a, path), 0);
	assert_int_equal(rtid_attest_load(path, &b, NULL, 0), 0);
	assert_int_equal(rtid_attest_count(b), 2);
	assert_int_equal(rtid_attest_find(b, "580.159.03")->agree, 12);
	assert_true(rtid_attest_find(b, "580.159.03")->revoked);
	assert_true(rtid_attest_clean(b, "570.86.15"));
	rtid_attest_free(a);
	rtid_attest_free(b);
}

static void merge_revocation_wins(void **state)
{
	struct rtid_attestation *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_new(&b), 0);
	assert_int_equal(rtid_attest_add(a, "580.1", 30, 0, 0, false), 0);
	assert_int_equal(rtid_attest_add(b, "580.1", 5, 2, 0, true), 0);
	assert_int_equal(rtid_attest_add(b, "590.2", 11, 0, 0, false), 0);
	assert_int_equal(rtid_attest_merge(a, b), 0);
	/* Legacy records cannot be told apart: the larger, never the sum. */
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 30);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree_none, 2);
	assert_false(rtid_attest_clean(a, "580.1"));
	assert_true(rtid_attest_clean(a, "590.2"));
	assert_int_equal(rtid_attest_count(a), 2);
	assert_string_equal(rtid_attest_entry_at(a, 1)->version, "590.2");
	assert_null(rtid_attest_entry_at(a, 2));
	rtid_attest_free(a);
	rtid_attest_free(b);
}

static void growth_and_odd_arguments(void **state)
{
	struct rtid_attestation *a = NULL;
	char v[32], path[600];

	(void)state;
	assert_int_equal(rtid_attest_new(&a), 0);
	for (int i = 0; i < 9; i++) { /* past the first allocations */
		snprintf(v, sizeof(v), "580.%d.1", i);
		assert_int_equal(rtid_attest_add(a, v, 10 + (unsigned long)i, 0, 0, false), 0);
	}
	assert_int_equal(rtid_attest_count(a), 9);
	assert_int_equal(rtid_attest_find(a, "580.8.1")->agree, 18);
	assert_int_equal(rtid_attest_count(NULL), 0);
	assert_null(rtid_attest_entry_at(NULL, 0));
	assert_null(rtid_attest_find(NULL, "580.1.1"));
	assert_false(rtid_attest_clean(NULL, "580.1.1"));
	assert_int_equal(rtid_attest_add(NULL, "580.1.1", 1, 0, 0, false), -EINVAL);
	/* Saving where no file can go fails and leaves nothing behind. */
	assert_int_not_equal(rtid_attest_save(a, "/nonexistent/test_dir/a.json"), 0);
	snprintf(path, sizeof(path), "%s/sub", test_dir);
	write_file(test_dir, "sub/x", "");
	assert_int_not_equal(rtid_attest_save(a, path), 0); /* a directory is in the way */
	rtid_attest_free(a);
	rtid_attest_free(NULL);
}

static void unreadable_file(void **state)
{
	struct rtid_attestation *a = (void *)0x1;
	char err[256] = "";

	(void)state;
	/* A directory where the file should be. */
	assert_true(rtid_attest_load(test_dir, &a, err, sizeof(err)) < 0);
	assert_ptr_equal(a, (void *)0x1);
	assert_true(strlen(err) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_file_is_empty), cmocka_unit_test(clean_rule),
		cmocka_unit_test(malformed_names_place), cmocka_unit_test(syntax_error_has_line),
		cmocka_unit_test(add_revokes_and_saves), cmocka_unit_test(merge_revocation_wins),
		cmocka_unit_test(growth_and_odd_arguments), cmocka_unit_test(unreadable_file),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
