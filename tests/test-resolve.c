/* The modes end to end through the library: proc-like trees and the fake tool. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "basic/parse.h"
#include "core/core.h"

#define VERSION "580.159.03"
#define P_ONE 100   /* one candidate: 102 */
#define P_TWO 200   /* two candidates */
#define P_ZERO 300  /* none */
#define P_BAD 500   /* an unreadable task */
#define P_GONE 999  /* no such process */

static char *root;
static char log_path[512];
static struct rtid_attestation *clean, *revoked;

static int setup(void **state)
{
	const struct fake_thread one[] = { { 100, "python3" }, { 101, "cuda-EvtHandlr" },
					   { 102, "cuda00001400006" } };
	const struct fake_thread two[] = { { 200, "python3" }, { 201, "cuda00001400006" },
					   { 202, "cuda00002000009" } };
	const struct fake_thread zero[] = { { 300, "python3" }, { 301, "cuda-EvtHandlr" } };
	char p[512];

	(void)state;
	root = tmp_dir();
	fake_process(root, P_ONE, one, 3);
	fake_process(root, P_TWO, two, 3);
	fake_process(root, P_ZERO, zero, 2);
	fake_process(root, P_BAD, one, 3);
	write_file(root, "500/task/503/x", "");
	snprintf(p, sizeof(p), "%s/500/task/503/comm", root);
	write_file(root, "500/task/503/comm/x", "");
	write_file(root, "driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " VERSION "  Thu\n");
	snprintf(log_path, sizeof(log_path), "%s/log", root);
	setenv("FAKE_LOG", log_path, 1);
	rtid_attest_new(&clean);
	rtid_attest_add(clean, VERSION, 10, 0, 0, false);
	rtid_attest_new(&revoked);
	rtid_attest_add(revoked, VERSION, 100, 0, 1, false);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(root);
	free(root);
	rtid_attest_free(clean);
	rtid_attest_free(revoked);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	unlink(log_path);
	unsetenv("FAKE_STDOUT");
	unsetenv("FAKE_EXIT");
	return 0;
}

static struct rtid_config config(enum rtid_mode mode, const struct rtid_attestation *a)
{
	return (struct rtid_config){ RTID_CONFIG_INIT, .mode = mode, .proc_root = root, .attestation = a,
				     .tool = env_path("FAKE_TOOL"), .timeout_s = 10 };
}

static struct rtid_result run(const struct rtid_config *cfg, int pid)
{
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;

	assert_int_equal(rtid_ctx_new(cfg, &ctx), 0);
	assert_int_equal(rtid_resolve(ctx, pid, &r), 0);
	rtid_ctx_free(ctx);
	return r;
}

static void driver_mode_never_scans(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_DRIVER, clean);
	struct rtid_result r;

	(void)state;
	setenv("FAKE_STDOUT", "101\n", 1); /* the driver's word, though the scan would differ */
	r = run(&cfg, P_ONE);
	assert_int_equal(r.tid, 101);
	assert_int_equal(r.source, RTID_SRC_TOOL);
	assert_int_equal(r.scan_candidates, -1);
	assert_int_equal(count_lines(log_path), 1);
}

static void attested_scan_spawns_nothing(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_SCAN, clean);
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;

	(void)state;
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_string_equal(rtid_ctx_driver_version(ctx), VERSION);
	assert_true(rtid_ctx_attested(ctx));
	rtid_ctx_free(ctx);
	r = run(&cfg, P_ONE);
	assert_int_equal(r.error, RTID_OK);
	assert_int_equal(r.tid, 102);
	assert_int_equal(r.source, RTID_SRC_SCAN);
	assert_int_equal(r.fallback, RTID_FB_NONE);
	assert_int_equal(count_lines(log_path), 0);
}

static void scan_fallbacks(void **state)
{
	static const struct { int pid; enum rtid_fallback fb; const char *out; int tid; } t[] = {
		{ P_TWO, RTID_FB_MULTIPLE_MATCHES, "201\n", 201 },
		{ P_ZERO, RTID_FB_ZERO_MATCHES, "301\n", 301 },
		{ P_BAD, RTID_FB_SCAN_ERROR, "102\n", 102 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_config cfg = config(RTID_MODE_SCAN, clean);
		struct rtid_result r;

		setenv("FAKE_STDOUT", t[i].out, 1);
		r = run(&cfg, t[i].pid);
		assert_int_equal(r.fallback, t[i].fb);
		assert_int_equal(r.source, RTID_SRC_TOOL);
		assert_int_equal(r.tid, t[i].tid);
		assert_int_equal(count_lines(log_path), (int)i + 1);
	}
}

static void unattested_asks_driver(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_SCAN, NULL);
	struct rtid_result r;

	(void)state;
	setenv("FAKE_STDOUT", "102\n", 1);
	r = run(&cfg, P_ONE);
	assert_int_equal(r.fallback, RTID_FB_UNATTESTED);
	assert_int_equal(r.source, RTID_SRC_TOOL);
	assert_int_equal(count_lines(log_path), 1);
	/* A given version that is not the running one is never scanned, and the
	 * running one is reported. */
	cfg = config(RTID_MODE_SCAN, clean);
	cfg.driver_version = "580.159.04";
	cfg.allow_unattested = true;
	assert_int_equal(run(&cfg, P_ONE).fallback, RTID_FB_VERSION_MISMATCH);
	cfg.mode = RTID_MODE_CANARY;
	assert_int_equal(run(&cfg, P_ONE).fallback, RTID_FB_VERSION_MISMATCH);
	{
		struct rtid_ctx *ctx = NULL;

		assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
		assert_true(rtid_ctx_version_mismatch(ctx));
		assert_string_equal(rtid_ctx_driver_version(ctx), VERSION);
		rtid_ctx_free(ctx);
	}
	assert_false(rtid_ctx_version_mismatch(NULL));
	/* A revoked version stays unscanned even with --unattested. */
	cfg = config(RTID_MODE_SCAN, revoked);
	cfg.allow_unattested = true;
	assert_int_equal(run(&cfg, P_ONE).fallback, RTID_FB_UNATTESTED);
	/* --unattested scans an unknown version. */
	cfg = config(RTID_MODE_SCAN, NULL);
	cfg.allow_unattested = true;
	r = run(&cfg, P_ONE);
	assert_int_equal(r.source, RTID_SRC_SCAN);
	assert_int_equal(r.tid, 102);
}

static void missing_process_asks_nobody(void **state)
{
	static const enum rtid_mode modes[] = { RTID_MODE_SCAN, RTID_MODE_CROSSCHECK,
						RTID_MODE_CANARY };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct rtid_config cfg = config(modes[i], clean);
		struct rtid_result r = run(&cfg, P_GONE);

		assert_int_equal(r.error, RTID_ERR_NO_SUCH_PROCESS);
		assert_int_equal(r.tid, 0);
	}
	assert_int_equal(count_lines(log_path), 0);
}

static void crosscheck_verdicts(void **state)
{
	static const struct { int pid; const char *out; const char *code; enum rtid_xcheck x; } t[] = {
		{ P_ONE, "102\n", NULL, RTID_XC_AGREE },
		{ P_ONE, "101\n", NULL, RTID_XC_MISMATCH },
		{ P_ONE, NULL, "1", RTID_XC_MISMATCH },   /* NVML-only */
		{ P_ZERO, NULL, "3", RTID_XC_AGREE_NONE },
		{ P_ZERO, "301\n", NULL, RTID_XC_MISMATCH }, /* renamed */
		{ P_TWO, "201\n", NULL, RTID_XC_NONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_config cfg = config(RTID_MODE_CROSSCHECK, NULL);
		struct rtid_result r;

		reset(NULL);
		if (t[i].out)
			setenv("FAKE_STDOUT", t[i].out, 1);
		if (t[i].code)
			setenv("FAKE_EXIT", t[i].code, 1);
		r = run(&cfg, t[i].pid);
		assert_int_equal(r.error, RTID_OK);
		assert_int_equal(r.crosscheck, t[i].x);
		assert_int_equal(r.source, RTID_SRC_TOOL); /* the driver's answer returns */
	}
}

static void batch_keeps_order_and_errors_apart(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_CROSSCHECK, NULL);
	const int pids[] = { P_GONE, P_ONE, P_ZERO, P_GONE, P_TWO };
	struct rtid_result r[5];
	struct rtid_ctx *ctx = NULL;

	(void)state;
	setenv("FAKE_TID_100", "102", 1);
	setenv("FAKE_EXIT_300", "1", 1);
	setenv("FAKE_EXIT_200", "2", 1);
	cfg.jobs = 3;
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 5, r), 0);
	rtid_ctx_free(ctx);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].pid, pids[i]);
	assert_int_equal(r[0].error, RTID_ERR_NO_SUCH_PROCESS);
	assert_int_equal(r[1].tid, 102);
	assert_int_equal(r[1].crosscheck, RTID_XC_AGREE);
	assert_int_equal(r[2].crosscheck, RTID_XC_AGREE_NONE);
	assert_int_equal(r[3].error, RTID_ERR_NO_SUCH_PROCESS);
	assert_int_equal(r[4].error, RTID_ERR_TOOL_FAILED);
	assert_int_equal(count_lines(log_path), 3);
	/* More jobs than one wait can handle is that many: the same answers. */
	cfg.jobs = 100000;
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 5, r), 0);
	rtid_ctx_free(ctx);
	assert_int_equal(r[0].error, RTID_ERR_NO_SUCH_PROCESS);
	assert_int_equal(r[1].tid, 102);
	assert_int_equal(r[4].error, RTID_ERR_TOOL_FAILED);
	unsetenv("FAKE_TID_100");
	unsetenv("FAKE_EXIT_300");
	unsetenv("FAKE_EXIT_200");
}

static void bad_arguments(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_DRIVER, NULL);
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r = { .pid = 77 };

	(void)state;
	cfg.pattern = "cuda[";
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	assert_null(ctx);
	cfg = config(RTID_MODE_DRIVER, NULL);
	cfg.driver_version = "580";
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	cfg = config(RTID_MODE_DRIVER, NULL);
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve(ctx, 0, &r), -EINVAL);
	assert_int_equal(r.pid, 77); /* untouched */
	assert_int_equal(rtid_resolve_many(ctx, NULL, 0, NULL), 0);
	assert_int_equal(rtid_resolve_many(ctx, NULL, 1, &r), -EINVAL);
	assert_int_equal(rtid_resolve_many(NULL, (int[]){ 1 }, 1, &r), -EINVAL);
	rtid_ctx_free(ctx);
	rtid_ctx_free(NULL);
	assert_int_equal(rtid_ctx_new(NULL, &ctx), -EINVAL);
	cfg = config((enum rtid_mode)99, NULL);
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	cfg = config(RTID_MODE_DRIVER, NULL);
	cfg.backend = (enum rtid_backend)7;
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	assert_null(rtid_ctx_driver_version(NULL));
	assert_false(rtid_ctx_attested(NULL));
	/* A proc tree without a version file: unknown, never attested. */
	cfg = config(RTID_MODE_SCAN, clean);
	cfg.proc_root = "/nonexistent";
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_null(rtid_ctx_driver_version(ctx));
	assert_false(rtid_ctx_attested(ctx));
	rtid_ctx_free(ctx);
}

/* A caller built with another header: a config without its sizes is refused
 * (the fields after them could be anything), a larger one only when what this
 * library cannot read is zero, and results go out at the caller's stride, each
 * slot whole, with nothing past the end of the array. */
struct bigger_config {
	struct rtid_config c;
	int later_field;
};
struct bigger_result {
	struct rtid_result r;
	unsigned char later[24];
};

static void sizes_from_other_headers(void **state)
{
	struct bigger_config big = { .c = config(RTID_MODE_SCAN, clean) };
	struct bigger_result out[3];
	const int pids[] = { P_ONE, P_GONE };
	struct rtid_config cfg = config(RTID_MODE_DRIVER, NULL);
	struct rtid_ctx *ctx = NULL;

	(void)state;
	cfg.size = 0; /* a config made without RTID_CONFIG_INIT */
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	cfg = config(RTID_MODE_DRIVER, NULL);
	cfg.result_size = offsetof(struct rtid_result, detail); /* no room for the detail */
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), -EINVAL);
	assert_null(ctx);

	big.c.size = sizeof(big);
	big.later_field = 1;
	assert_int_equal(rtid_ctx_new(&big.c, &ctx), -E2BIG);
	big.later_field = 0;
	big.c.result_size = sizeof(out[0]);
	assert_int_equal(rtid_ctx_new(&big.c, &ctx), 0);
	memset(out, 0xaa, sizeof(out));
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, &out[0].r), 0);
	rtid_ctx_free(ctx);
	assert_int_equal(out[0].r.pid, P_ONE);
	assert_int_equal(out[0].r.tid, 102);
	assert_int_equal(out[0].r.source, RTID_SRC_SCAN);
	assert_int_equal(out[1].r.pid, P_GONE);
	assert_int_equal(out[1].r.error, RTID_ERR_NO_SUCH_PROCESS);
	for (size_t i = 0; i < sizeof(out[0].later); i++) {
		assert_int_equal(out[0].later[i], 0);
		assert_int_equal(out[1].later[i], 0);
	}
	assert_int_equal(out[2].r.pid, (int)0xaaaaaaaa); /* past n: untouched */
}

/* The process asked about exits and its pid is reused while the driver is
 * asked (the stand-in tool rewrites its stat: a new start time). The answer
 * was about another process: process-changed, never the tid. Without the
 * change, the same query answers. */
static void pid_reused_during_the_query(void **state)
{
	struct rtid_config cfg = config(RTID_MODE_DRIVER, NULL);
	char rel[64], text[512], path[600];
	struct rtid_result r;

	(void)state;
	snprintf(rel, sizeof(rel), "%d/stat", P_ONE);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	stat_line(P_ONE, 1000, text, sizeof(text));
	write_file(root, rel, text);
	setenv("FAKE_STDOUT", "102\n", 1);
	r = run(&cfg, P_ONE);
	assert_int_equal(r.error, RTID_OK);
	assert_int_equal(r.tid, 102);
	stat_line(P_ONE, 2000, text, sizeof(text));
	setenv("FAKE_REPLACE_FILE", path, 1);
	setenv("FAKE_REPLACE_TEXT", text, 1);
	stat_line(P_ONE, 1000, text, sizeof(text));
	write_file(root, rel, text);
	r = run(&cfg, P_ONE);
	unsetenv("FAKE_REPLACE_FILE");
	unsetenv("FAKE_REPLACE_TEXT");
	unlink(path);
	assert_int_equal(r.error, RTID_ERR_PROCESS_CHANGED);
	assert_int_equal(r.tid, 0);
	assert_non_null(strstr(r.detail, "start time changed"));
}

/* Right before the driver is asked, the pid is checked again: in canary
 * mode the first pid's query (a mismatch) sends the rest to the driver, and
 * the second pid, reused during that first query, is never asked about. */
static void pid_reused_before_the_query(void **state)
{
	const int pids[] = { P_ONE, P_ZERO };
	struct rtid_config cfg = config(RTID_MODE_CANARY, clean);
	char rel[64], text[512], path[600];
	struct rtid_result r[2];
	struct rtid_ctx *ctx = NULL;

	(void)state;
	snprintf(rel, sizeof(rel), "%d/stat", P_ZERO);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	stat_line(P_ZERO, 1000, text, sizeof(text));
	write_file(root, rel, text);
	stat_line(P_ZERO, 2000, text, sizeof(text));
	setenv("FAKE_REPLACE_FILE", path, 1);
	setenv("FAKE_REPLACE_TEXT", text, 1);
	setenv("FAKE_STDOUT", "101\n", 1); /* not the scan's 102: a mismatch */
	assert_int_equal(rtid_ctx_new(&cfg, &ctx), 0);
	assert_int_equal(rtid_resolve_many(ctx, pids, 2, r), 0);
	rtid_ctx_free(ctx);
	unsetenv("FAKE_REPLACE_FILE");
	unsetenv("FAKE_REPLACE_TEXT");
	unlink(path);
	assert_int_equal(r[0].crosscheck, RTID_XC_MISMATCH);
	assert_int_equal(r[0].tid, 101);
	assert_int_equal(r[1].error, RTID_ERR_PROCESS_CHANGED);
	assert_int_equal(count_lines(log_path), 1); /* the second pid was never asked */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(pid_reused_during_the_query, reset),
		cmocka_unit_test_setup(pid_reused_before_the_query, reset),
		cmocka_unit_test_setup(driver_mode_never_scans, reset),
		cmocka_unit_test_setup(attested_scan_spawns_nothing, reset),
		cmocka_unit_test_setup(scan_fallbacks, reset),
		cmocka_unit_test_setup(unattested_asks_driver, reset),
		cmocka_unit_test_setup(missing_process_asks_nobody, reset),
		cmocka_unit_test_setup(crosscheck_verdicts, reset),
		cmocka_unit_test_setup(batch_keeps_order_and_errors_apart, reset),
		cmocka_unit_test_setup(bad_arguments, reset),
		cmocka_unit_test_setup(sizes_from_other_headers, reset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
