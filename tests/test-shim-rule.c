/* The shim's rule, never worse than the real tool alone, as CRIU sees it:
 * rtid's own failures end in the real tool's answer, no timeout unless set,
 * a second copy of rtid on PATH passed over, a chatty tool's tid intact, and
 * every setting the shim reads documented. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "shim-harness.h"

static void own_failures_end_in_the_real_tool(void **state)
{
	static const char *const bad[][2] = {
		{ "RTID_MODE", "fast" }, { "RTID_BACKEND", "gpu" }, { "RTID_TIMEOUT", "-1" },
		{ "RTID_DRIVER_VERSION", "x.y" },
	};
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char note_path[600];
	struct criu_call c;

	(void)state;
	snprintf(note_path, sizeof(note_path), "%s/shim.log", test_dir);
	setenv("RTID_SHIM_LOG", note_path, 1);
	setenv("FAKE_STDOUT", "4244\n", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i][0], bad[i][1], 1);
		unlink(log_path);
		c = criu(query);
		unsetenv(bad[i][0]);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "4244\n");
		assert_int_equal(count_lines(log_path), 1); /* only the fallback ran the tool */
	}
	/* The api worker missing: the real tool answers, and the reason is noted. */
	setenv("RTID_BACKEND", "api", 1);
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	unlink(log_path);
	c = criu(query);
	unsetenv("RTID_BACKEND");
	unsetenv("RTID_WORKER");
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
	/* Each call is in the shim's log: its reason, then the path it took; and
	 * for the two whose settings let it look for rtid serve (the driver
	 * version, the worker), that there was no socket. */
	assert_int_equal(count_lines(note_path), 12);
	{
		const char *t = slurp(note_path);
		int n = 0;

		for (const char *p = t; (p = strstr(p, ": rtid serve not asked: no socket at ")); p++)
			n++;
		assert_int_equal(n, 2);
	}
	{
		const char *t = slurp(note_path);
		int n = 0;

		for (const char *p = t; (p = strstr(p, ": to the real tool ")); p++)
			n++;
		assert_int_equal(n, 5);
	}
	unsetenv("RTID_SHIM_LOG");
}

/* RTID_TIMEOUT bounds rtid's own query; the real tool then answers. */
static void timeout_only_when_set(void **state)
{
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char once[600];
	struct criu_call c;

	(void)state;
	snprintf(once, sizeof(once), "%s/slow-once", test_dir);
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_SLOW_ONCE", once, 1);
	setenv("FAKE_SLOW_S", "2", 1);
	/* Unset: a slow tool is waited for, one call. */
	unlink(once);
	c = criu(query);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
	/* Set: rtid gives up on the slow call; the real tool's second call answers. */
	setenv("RTID_TIMEOUT", "0.2", 1);
	unlink(once);
	unlink(log_path);
	c = criu(query);
	unsetenv("RTID_TIMEOUT");
	unsetenv("FAKE_SLOW_ONCE");
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 2);
}

/* A byte copy of rtid on PATH between the shim and the real tool is skipped:
 * queries and pass-through calls both reach the real tool. */
static void second_copy_on_path(void **state)
{
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char *lock[] = { "cuda-checkpoint", "--action", "lock", "--pid", "4242", NULL };
	char saved[sizeof(path_env)], cmd[1400];
	struct criu_call c;

	(void)state;
	write_file(test_dir, "copy/.keep", "");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/copy/cuda-checkpoint'", env_path("RTID_BIN"),
		 test_dir);
	assert_int_equal(system(cmd), 0);
	memcpy(saved, path_env, sizeof(saved));
	snprintf(path_env, sizeof(path_env), "%s/shim:%s/copy:%s/real:/usr/bin:/bin", test_dir,
		 test_dir, test_dir);
	setenv("FAKE_STDOUT", "4244\n", 1);
	c = criu(query);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n");
	unsetenv("FAKE_STDOUT");
	setenv("FAKE_EXIT", "0", 1);
	c = criu(lock);
	memcpy(path_env, saved, sizeof(saved));
	assert_int_equal(c.status, 0);
	assert_int_equal(count_lines(log_path), 2); /* both reached the real tool */
}

/* Another rtid build (another version, the static build: other bytes, the
 * same note) between the shim and the real tool is no real tool either: the
 * shim passes over it, where it used to exec it and every call exited 231
 * (-h included, which turns CRIU's CUDA plugin off). Built here as a copy of
 * rtid with bytes appended, and one stripped. */
static void another_build_on_path(void **state)
{
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	char *lock[] = { "cuda-checkpoint", "--action", "lock", "--pid", "4242", NULL };
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char saved[sizeof(path_env)], cmd[2000], other[600];
	struct criu_call c;

	(void)state;
	write_file(test_dir, "other/.keep", "");
	snprintf(other, sizeof(other), "%s/other/cuda-checkpoint", test_dir);
	memcpy(saved, path_env, sizeof(saved));
	snprintf(path_env, sizeof(path_env), "%s/shim:%s/other:%s/real:/usr/bin:/bin", test_dir,
		 test_dir, test_dir);
	for (int i = 0; i < 2; i++) {
		unlink(other);
		if (i == 0)
			snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && printf 'another build' >> '%s'",
				 env_path("RTID_BIN"), other, other);
		else
			snprintf(cmd, sizeof(cmd), "strip -o '%s' '%s'", other, env_path("RTID_BIN"));
		if (system(cmd) != 0) {
			print_message("cannot build another rtid with: %s\n", cmd);
			continue;
		}
		unlink(log_path);
		setenv("FAKE_STDOUT", "real help: --action lock|checkpoint|restore|unlock\n", 1);
		c = criu(help);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "real help: --action lock|checkpoint|restore|unlock\n");
		setenv("FAKE_STDOUT", "4244\n", 1);
		c = criu(query);
		assert_int_equal(c.status, 0);
		assert_string_equal(c.out, "4244\n");
		unsetenv("FAKE_STDOUT");
		c = criu(lock);
		assert_int_equal(c.status, 0);
		assert_int_equal(count_lines(log_path), 3); /* each reached the real tool */
	}
	memcpy(path_env, saved, sizeof(saved));
	/* Named as the real tool, it is refused as such, and said. */
	setenv("RTID_REAL_TOOL", other, 1);
	c = criu(help);
	unsetenv("RTID_REAL_TOOL");
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "another rtid"));
}

/* A tool that writes 1 MB to stderr before its tid: the tid is right every
 * time, and nothing of the chatter reaches CRIU. */
static void megabyte_of_stderr(void **state)
{
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	int right = 0, runs = 20;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR_BYTES", "1048576", 1);
	for (int i = 0; i < runs; i++) {
		struct criu_call c = criu(query);

		right += c.status == 0 && !strcmp(c.out, "4244\n");
	}
	unsetenv("FAKE_STDERR_BYTES");
	print_message("1 MB of stderr before the tid: %d of %d runs right\n", right, runs);
	assert_int_equal(right, runs);
	assert_int_equal(count_lines(log_path), runs); /* never a fallback */
}

/* The settings rtid resolve takes reach the shim's resolver. */
static void settings_reach_the_resolver(void **state)
{
	char *query[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char path[600];
	struct criu_call c;

	(void)state;
	snprintf(path, sizeof(path), "%s/proc", test_dir);
	setenv("RTID_PROC", path, 1);
	write_file(test_dir, "proc/4343/task/4343/comm", "python3\n");
	write_file(test_dir, "proc/4343/task/4345/comm", "gpu-restore\n");
	/* Scan without attestation, with another name: no tool call. */
	setenv("RTID_MODE", "scan", 1);
	setenv("RTID_UNATTESTED", "1", 1);
	setenv("RTID_PATTERN", "^gpu-restore$", 1);
	setenv("FAKE_STDOUT", "9999\n", 1);
	query[3] = "4343";
	c = criu(query);
	assert_string_equal(c.out, "4345\n");
	assert_int_equal(count_lines(log_path), 0);
	unsetenv("RTID_UNATTESTED");
	unsetenv("RTID_PATTERN");
	/* Crosscheck and canary return the driver's answer. */
	setenv("FAKE_STDOUT", "4244\n", 1);
	query[3] = "4242";
	setenv("RTID_MODE", "crosscheck", 1);
	assert_string_equal(criu(query).out, "4244\n");
	setenv("RTID_MODE", "canary", 1);
	assert_string_equal(criu(query).out, "4244\n");
	assert_int_equal(count_lines(log_path), 2);
	/* A pattern that does not compile: the real tool answers. */
	setenv("RTID_MODE", "scan", 1);
	setenv("RTID_PATTERN", "cuda[", 1);
	unlink(log_path);
	assert_string_equal(criu(query).out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
	unsetenv("RTID_PATTERN");
	/* A log the shim cannot write changes nothing. */
	setenv("RTID_SHIM_LOG", test_dir, 1);
	setenv("RTID_BACKEND", "gpu", 1);
	assert_string_equal(criu(query).out, "4244\n");
	unsetenv("RTID_BACKEND");
	unsetenv("RTID_SHIM_LOG");
}

/* Calls that only look like the query go to the real tool unchanged. */
static void lookalikes_pass_through(void **state)
{
	char *calls[][5] = {
		{ "cuda-checkpoint", "--get-restore-tid", "--pid", "12x", NULL },
		{ "cuda-checkpoint", "--get-state", "--pid", "4242", NULL },
		{ "cuda-checkpoint", "--pid", "4242", "--get-state", NULL },
		{ "cuda-checkpoint", "--pid", "4242", NULL },
	};

	(void)state;
	setenv("FAKE_STDOUT", "real\n", 1);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		assert_string_equal(criu(calls[i]).out, "real\n");
	assert_int_equal(count_lines(log_path), 4);
}

static bool file_mentions(const char *rel, const char *word)
{
	static char buf[1 << 16];
	char path[1024];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", env_path("RTID_SOURCE_ROOT"), rel);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, word) != NULL;
}

/* Every setting the shim reads is in the man page and in doc/shim.md. */
static void settings_are_documented(void **state)
{
	static const char *const vars[] = {
		"RTID_MODE", "RTID_BACKEND", "RTID_TIMEOUT", "RTID_REAL_TOOL", "RTID_ATTESTATION",
		"RTID_DRIVER_VERSION", "RTID_PROC", "RTID_PATTERN", "RTID_UNATTESTED",
		"RTID_LIBCUDA", "RTID_WORKER", "RTID_SHIM_LOG",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (!file_mentions("man/rtid.1", vars[i]) || !file_mentions("doc/shim.md", vars[i]))
			fail_msg("%s is not documented in man/rtid.1 and doc/shim.md", vars[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(own_failures_end_in_the_real_tool, shim_reset),
		cmocka_unit_test_setup(timeout_only_when_set, shim_reset),
		cmocka_unit_test_setup(second_copy_on_path, shim_reset),
		cmocka_unit_test_setup(another_build_on_path, shim_reset),
		cmocka_unit_test_setup(megabyte_of_stderr, shim_reset),
		cmocka_unit_test_setup(settings_reach_the_resolver, shim_reset),
		cmocka_unit_test_setup(lookalikes_pass_through, shim_reset),
		cmocka_unit_test_setup(settings_are_documented, shim_reset),
	};
	return cmocka_run_group_tests(tests, shim_setup, test_dir_teardown);
}
