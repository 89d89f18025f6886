/* The thread-name matcher: which comms are candidates. */
#include <dlfcn.h>
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "basic/parse.h"
#include "core/core.h"

/* regcomp as the library calls it, counted: the default pattern must never
 * reach it (glibc's regcomp double-frees when malloc fails inside it). */
static int regcomps;

int regcomp(regex_t *re, const char *pattern, int flags)
{
	int (*real)(regex_t *, const char *, int) =
		(int (*)(regex_t *, const char *, int))dlsym(RTLD_NEXT, "regcomp");

	regcomps++;
	return real(re, pattern, flags);
}

static bool match(const char *pattern, const char *comm, size_t len)
{
	struct rtid__matcher m;
	bool r;

	assert_int_equal(rtid__matcher_init(&m, pattern), 0);
	r = rtid__matcher_match(&m, comm, len);
	rtid__matcher_fini(&m);
	return r;
}

static void default_pattern(void **state)
{
	static const struct { const char *comm; bool want; } t[] = {
		{ "cuda00001400006", true }, { "cuda00002000009", true },
		{ "cuda0000a40002a", true }, { "cuda0000240000a", true },
		{ "cuda-EvtHandlr", false }, { "cudaface", false },
		{ "CUDA00001400006", false }, { "cuda0000140000", false }, /* 10 digits */
		{ "cuda000014000066", false },                              /* 12 digits */
		{ "cuda0000A40002A", false }, { "xcuda0000140000", false },
		{ "python3", false }, { "", false }, { "cuda00001400006 ", false },
		{ "cuda0000140000\xe9", false },
		/* one byte wrong at each end of the 11 digits */
		{ "cudag0001400006", false }, { "cuda0000140000g", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(match(NULL, t[i].comm, strlen(t[i].comm)), t[i].want);
}

static void nul_never_matches(void **state)
{
	(void)state;
	assert_false(match(NULL, "cuda00001400006\0junk", 20));
	assert_false(match("^cuda", "cu\0da", 5));
	/* What comes before the NUL would match: the NUL still refuses it. */
	assert_true(match("^cuda", "cuda", 4));
	assert_false(match("^cuda", "cuda\0junk", 9));
}

/* A name of 64 bytes or more is no comm (the kernel's hold 15): refused
 * under any pattern, one byte less is still matched. */
static void overlong_never_matches(void **state)
{
	char comm[80];

	(void)state;
	memset(comm, 'a', sizeof(comm));
	assert_true(match("^a+$", comm, 63));
	assert_false(match("^a+$", comm, 64));
	assert_false(match("^a+$", comm, 80));
}

static void custom_pattern(void **state)
{
	(void)state;
	/* The default spelled out goes the regex way and agrees with the built-in. */
	assert_true(match("^cuda[0-9a-f]{11}", "cuda00001400006", 15));
	assert_false(match("^cuda[0-9a-f]{11}$", "cuda0000140000G", 15));
	assert_true(match("^cuda[0-9a-f]{11}$", "cuda0000a40002a", 15));
	assert_true(match("^cudaRestore[0-9]+$", "cudaRestore12", 13));
	assert_false(match("^cudaRestore[0-9]+$", "cuda00001400006", 15));
}

static void bad_pattern(void **state)
{
	struct rtid__matcher m;

	(void)state;
	assert_int_equal(rtid__matcher_init(&m, "cuda[0-9"), -EINVAL);
}

/* The default pattern, named or not, is matched by hand: regcomp is never
 * called for it; any other pattern is compiled. */
static void default_never_compiled(void **state)
{
	(void)state;
	regcomps = 0;
	assert_true(match(NULL, "cuda00001400006", 15));
	assert_true(match(RTID_PATTERN_DEFAULT, "cuda00001400006", 15));
	assert_int_equal(regcomps, 0);
	assert_true(match("^cuda", "cuda00001400006", 15));
	assert_int_equal(regcomps, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_pattern), cmocka_unit_test(nul_never_matches),
		cmocka_unit_test(overlong_never_matches),
		cmocka_unit_test(custom_pattern), cmocka_unit_test(bad_pattern),
		cmocka_unit_test(default_never_compiled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
