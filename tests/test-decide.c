/* The fallback rules and cross-check verdicts, as a table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "internal.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fallback_table), cmocka_unit_test(crosscheck_table),
		cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
