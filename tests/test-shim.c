/* The cuda-checkpoint shim, called exactly as CRIU's CUDA plugin calls the
 * tool: execvp("cuda-checkpoint") from PATH, stdout and stderr into one pipe,
 * a 128-byte buffer, atoi, the exit status. */
#include <errno.h>
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

static char log_path[512], path_env[2048];

struct criu_call {
	int status; /* exit status, or 128 + signal */
	int tid;    /* atoi of what was read, as the plugin does */
	char out[129];
};

/* CRIU's way: pipe + fork + execvp, both streams in the pipe, 128 bytes. */
static struct criu_call criu(char *const argv[])
{
	struct criu_call c = { 0 };
	int p[2], st;
	ssize_t n, total = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		setenv("PATH", path_env, 1);
		execvp("cuda-checkpoint", argv);
		_exit(127);
	}
	close(p[1]);
	while (total < 128 && (n = read(p[0], c.out + total, (size_t)(128 - total))) > 0)
		total += n;
	close(p[0]);
	waitpid(pid, &st, 0);
	c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	c.tid = atoi(c.out); /* the plugin's parsing, on purpose */
	return c;
}

static int setup(void **state)
{
	char shim[600], real[600];

	(void)state;
	test_dir_setup(state);
	snprintf(shim, sizeof(shim), "%s/shim/cuda-checkpoint", test_dir);
	snprintf(real, sizeof(real), "%s/real/cuda-checkpoint", test_dir);
	write_file(test_dir, "shim/.keep", "");
	write_file(test_dir, "real/.keep", "");
	if (symlink(env_path("RTID_BIN"), shim) < 0 || symlink(env_path("FAKE_TOOL"), real) < 0)
		return -1;
	snprintf(path_env, sizeof(path_env), "%s/shim:%s/real:/usr/bin:/bin", test_dir, test_dir);
	snprintf(log_path, sizeof(log_path), "%s/log", test_dir);
	setenv("FAKE_LOG", log_path, 1);
	/* A proc tree with one restore thread, an attestation for its driver. */
	write_file(test_dir, "proc/4242/task/4242/comm", "python3\n");
	write_file(test_dir, "proc/4242/task/4244/comm", "cuda00001400006\n");
	write_file(test_dir, "proc/driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu\n");
	write_file(test_dir, "att.json", "{\"format\": 1, \"drivers\": {\"580.159.03\": "
				    "{\"agree\": 12, \"mismatch\": 0}}}");
	return 0;
}

static int reset(void **state)
{
	static const char *const vars[] = { "FAKE_STDOUT", "FAKE_STDERR", "FAKE_EXIT", "RTID_MODE",
					    "FAKE_SIGNAL",
					    "RTID_PROC", "RTID_ATTESTATION", "RTID_REAL_TOOL",
					    "FAKE_SLOW_ONCE", "FAKE_SLOW_S", "RTID_PATTERN",
					    "RTID_UNATTESTED" };

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	unlink(log_path);
	return 0;
}

static void driver_mode_gives_the_tools_tid(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "4244\n", 1);
	setenv("FAKE_STDERR", "", 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.tid, 4244);
	assert_string_equal(c.out, "4244\n");
	assert_int_equal(count_lines(log_path), 1);
}

static void attested_scan_spawns_no_tool(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };
	char path[600];
	struct criu_call c;

	(void)state;
	setenv("FAKE_STDOUT", "9999\n", 1); /* a tool that would lie, if asked */
	setenv("RTID_MODE", "scan", 1);
	snprintf(path, sizeof(path), "%s/proc", test_dir);
	setenv("RTID_PROC", path, 1);
	snprintf(path, sizeof(path), "%s/att.json", test_dir);
	setenv("RTID_ATTESTATION", path, 1);
	c = criu(argv);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "4244\n"); /* nothing else, not even a warning */
	assert_int_equal(count_lines(log_path), 0);
}

static void none_exits_like_the_tool(void **state)
{
	char *argv[] = { "cuda-checkpoint", "--get-restore-tid", "--pid", "4242", NULL };

	(void)state;
	setenv("FAKE_EXIT", "1", 1);
	assert_int_equal(criu(argv).status, 1);
	setenv("FAKE_EXIT", "3", 1);
	assert_int_equal(criu(argv).status, 3);
	setenv("FAKE_EXIT", "2", 1);
	assert_int_equal(criu(argv).status, 2);
	unsetenv("FAKE_EXIT");
	/* Garbage is never rtid's tid: the real tool runs again and its own
	 * output is what CRIU reads, exactly as without the shim. */
	setenv("FAKE_STDOUT", "12abc\n", 1);
	unlink(log_path);
	assert_string_equal(criu(argv).out, "12abc\n");
	assert_int_equal(count_lines(log_path), 2);
}

static void other_calls_reach_the_real_tool(void **state)
{
	char *lock[] = { "cuda-checkpoint", "--action", "lock", "--pid", "4242", "--timeout",
			 "10000", NULL };
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	char line[256] = "";
	struct criu_call c;
	FILE *f;

	(void)state;
	setenv("FAKE_EXIT", "7", 1);
	c = criu(lock);
	assert_int_equal(c.status, 7);
	f = fopen(log_path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "--action lock --pid 4242 --timeout 10000\n");
	unsetenv("FAKE_EXIT");
	setenv("FAKE_STDOUT", "real help: --action lock|checkpoint|restore|unlock\n", 1);
	c = criu(help);
	assert_int_equal(c.status, 0);
	assert_string_equal(c.out, "real help: --action lock|checkpoint|restore|unlock\n");
}

static void no_real_tool_is_a_clear_error(void **state)
{
	char *argv[] = { "cuda-checkpoint", "-h", NULL };
	char saved[sizeof(path_env)];
	struct criu_call c;

	(void)state;
	memcpy(saved, path_env, sizeof(saved));
	snprintf(path_env, sizeof(path_env), "%s/shim:/usr/bin:/bin", test_dir);
	c = criu(argv);
	memcpy(path_env, saved, sizeof(saved));
	assert_true(c.status != 0 && c.status != 1 && c.status != 3);
	assert_non_null(strstr(c.out, "no real cuda-checkpoint"));
}

static void never_recurses(void **state)
{
	char *argv[] = { "cuda-checkpoint", "-h", NULL };
	char shim[600];
	struct criu_call c;

	(void)state;
	snprintf(shim, sizeof(shim), "%s/shim/cuda-checkpoint", test_dir);
	setenv("RTID_REAL_TOOL", shim, 1);
	c = criu(argv);
	assert_true(c.status != 0);
	assert_non_null(strstr(c.out, "shim itself"));
}

static void other_failures(void **state)
{
	char *query[] = { "cuda-checkpoint", "--pid", "4242", "--get-restore-tid", NULL };
	char *help[] = { "cuda-checkpoint", "-h", NULL };
	struct criu_call c;

	(void)state;
	/* The other order of the two options is the same query. */
	setenv("FAKE_STDOUT", "4244\n", 1);
	assert_string_equal(criu(query).out, "4244\n");
	/* A tool that crashes: the shim dies by the same signal. */
	setenv("FAKE_SIGNAL", "11", 1);
	assert_int_equal(criu(query).status, 128 + 11);
	unsetenv("FAKE_SIGNAL");
	/* A real tool that cannot be run. */
	setenv("RTID_REAL_TOOL", "/nonexistent/cuda-checkpoint", 1);
	c = criu(help);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "no such executable"));
	c = criu(query);
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "no such executable"));
	unsetenv("RTID_REAL_TOOL");
	/* Called from something the shim started: no recursion. */
	setenv("RTID_SHIM_ACTIVE", "1", 1);
	c = criu(query);
	unsetenv("RTID_SHIM_ACTIVE");
	assert_int_equal(c.status, 231);
	assert_non_null(strstr(c.out, "refusing to recurse"));
}

/* rtid's own failures end in the real tool's answer, never in an exit of
 * rtid's (which CRIU would read as "no CUDA here"). */
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
	assert_int_equal(count_lines(note_path), 5);
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
		if (!file_mentions("src/rtid.1", vars[i]) || !file_mentions("doc/shim.md", vars[i]))
			fail_msg("%s is not documented in src/rtid.1 and doc/shim.md", vars[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(driver_mode_gives_the_tools_tid, reset),
		cmocka_unit_test_setup(attested_scan_spawns_no_tool, reset),
		cmocka_unit_test_setup(none_exits_like_the_tool, reset),
		cmocka_unit_test_setup(other_calls_reach_the_real_tool, reset),
		cmocka_unit_test_setup(no_real_tool_is_a_clear_error, reset),
		cmocka_unit_test_setup(never_recurses, reset),
		cmocka_unit_test_setup(other_failures, reset),
		cmocka_unit_test_setup(own_failures_end_in_the_real_tool, reset),
		cmocka_unit_test_setup(timeout_only_when_set, reset),
		cmocka_unit_test_setup(second_copy_on_path, reset),
		cmocka_unit_test_setup(megabyte_of_stderr, reset),
		cmocka_unit_test_setup(settings_reach_the_resolver, reset),
		cmocka_unit_test_setup(lookalikes_pass_through, reset),
		cmocka_unit_test_setup(settings_are_documented, reset),
	};
	return cmocka_run_group_tests(tests, setup, test_dir_teardown);
}
