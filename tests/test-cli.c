/* The rtid command as a user runs it: exit codes, JSON lines, help, errors. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"

static char *root;
static char out_path[512], err_path[512];

/* Field col (0: PID, 1: TID, ...) of the table row of pid, in a static buffer;
 * "" when there is no such row. A field, not a substring: the CROSSCHECK
 * column's "agree-none" must not pass for a TID of "none". */
static const char *table_field(const char *table, int pid, int col)
{
	static char field[64];
	char key[24];
	const char *row = table;
	int n = snprintf(key, sizeof(key), "%d ", pid);

	field[0] = '\0';
	while (row && strncmp(row, key, (size_t)n) != 0)
		row = (row = strchr(row, '\n')) ? row + 1 : NULL;
	for (int c = 0; row && c <= col; c++) {
		size_t len;

		row += strspn(row, " ");
		len = strcspn(row, " \n");
		if (c == col && len < sizeof(field))
			memcpy(field, row, len), field[len] = '\0';
		row += len;
	}
	return field;
}

static int setup(void **state)
{
	const struct fake_thread one[] = { { 100, "python3" }, { 101, "cuda-EvtHandlr" },
					   { 102, "cuda00001400006" } };

	(void)state;
	root = tmp_dir();
	fake_process(root, 100, one, 3);
	write_file(root, "200/task/200/comm", "python3\n");
	snprintf(out_path, sizeof(out_path), "%s/out", root);
	snprintf(err_path, sizeof(err_path), "%s/err", root);
	setenv("RTID_CUDA_CHECKPOINT", env_path("FAKE_TOOL"), 1);
	setenv("RTID_PROC", root, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(root);
	free(root);
	return 0;
}

static int remove_version(void)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/driver/nvidia/version", root);
	return unlink(p);
}

/* Run "rtid ARGS" through the shell; returns the exit status. */
static int rtid(const char *args)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", env_path("RTID_BIN"), args, out_path,
		 err_path);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}


static void help_documents_everything(void **state)
{
	static const char *const words[] = {
		"--mode", "--backend", "--tool", "--libcuda", "--proc", "--pattern",
		"--driver-version", "--attestation", "--unattested", "--timeout", "--deadline",
		"--jobs", "--json", "RTID_MODE", "RTID_REAL_TOOL", "RTID_LIBCUDA",
		"RTID_PROC", "RTID_DRIVER_VERSION", "RTID_ATTESTATION", "RTID_WORKER", "crosscheck",
		"canary",
	};

	(void)state;
	assert_int_equal(rtid("--help"), 0);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		assert_non_null(strstr(slurp(out_path), words[i]));
	assert_int_equal(rtid("resolve --help"), 0);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) - 2; i++)
		assert_non_null(strstr(slurp(out_path), words[i]));
	assert_non_null(strstr(slurp(out_path), "Exit status"));
}

/* rtid help X is rtid X --help; help of help, -h or --version is the
 * overview; --version names the version. */
static void help_command_and_version(void **state)
{
	static const char *const overview[] = { "help", "help help", "help -h", "help --help",
						"help --version", "-h" };
	char want[65536];

	(void)state;
	assert_int_equal(rtid("resolve --help"), 0);
	snprintf(want, sizeof(want), "%s", slurp(out_path));
	assert_int_equal(rtid("help resolve"), 0);
	assert_string_equal(slurp(out_path), want);
	assert_int_equal(rtid("--help"), 0);
	snprintf(want, sizeof(want), "%s", slurp(out_path));
	for (size_t i = 0; i < sizeof(overview) / sizeof(overview[0]); i++) {
		assert_int_equal(rtid(overview[i]), 0);
		assert_string_equal(slurp(out_path), want);
	}
	assert_int_equal(rtid("help frobnicate"), 2);
	assert_int_equal(rtid("--version"), 0);
	assert_non_null(strstr(slurp(out_path), "rtid 0."));
}

static void usage_errors_exit_2(void **state)
{
	static const char *const bad[] = {
		"", "resolve", "resolve 12abc", "resolve -- -5", "resolve 0", "resolve --mode fast 1",
		"resolve --jobs 0 1", "resolve --jobs 65 1", "resolve --timeout -1 1",
		"resolve --timeout 1x 1", "resolve --driver-version 580 1", "resolve --bogus 1",
		"resolve --pattern 'cuda[' 1", "frobnicate",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rtid(bad[i]), 2);
		assert_true(strlen(slurp(err_path)) > 0);
		assert_int_equal(strlen(slurp(out_path)), 0);
	}
}

static void malformed_attestation_names_file_and_line(void **state)
{
	char args[1024];

	(void)state;
	write_file(root, "att.json", "{\n  \"format\": 1,\n  \"drivers\": {,}\n}\n");
	snprintf(args, sizeof(args), "resolve --mode scan --attestation '%s/att.json' 100", root);
	assert_int_equal(rtid(args), 2);
	assert_non_null(strstr(slurp(err_path), "att.json:3:"));
}

static json_t *line_json(const char *text, int n)
{
	const char *p = text;

	for (int i = 0; i < n && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	assert_non_null(p);
	return json_loadb(p, strcspn(p, "\n"), 0, NULL);
}

static void json_lines_in_order(void **state)
{
	static const char *const fields[] = { "pid", "tid", "source", "fallback", "crosscheck",
					      "error", "ms" };
	const char *out;
	json_t *o;

	(void)state;
	setenv("FAKE_TID_100", "102", 1);
	setenv("FAKE_EXIT_200", "1", 1);
	assert_int_equal(rtid("resolve --json --mode crosscheck 100 999 200"), 1);
	out = slurp(out_path);
	o = line_json(out, 0);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		assert_non_null(json_object_get(o, fields[i]));
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 100);
	assert_int_equal(json_integer_value(json_object_get(o, "tid")), 102);
	assert_string_equal(json_string_value(json_object_get(o, "crosscheck")), "agree");
	json_decref(o);
	o = line_json(out, 1);
	assert_string_equal(json_string_value(json_object_get(o, "error")), "no-such-process");
	assert_true(json_is_null(json_object_get(o, "tid")));
	json_decref(o);
	o = line_json(out, 2);
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 200);
	assert_string_equal(json_string_value(json_object_get(o, "crosscheck")), "agree-none");
	assert_true(json_is_null(json_object_get(o, "error")));
	json_decref(o);
	/* Definite answers only: exit 0. */
	assert_int_equal(rtid("resolve --mode crosscheck 100 200"), 0);
	assert_string_equal(table_field(slurp(out_path), 200, 1), "none");
	assert_string_equal(table_field(slurp(out_path), 100, 1), "102");
	unsetenv("FAKE_TID_100");
	unsetenv("FAKE_EXIT_200");
}

static void hanging_tool_reported_as_timeout(void **state)
{
	struct timespec a, b;
	double base, took;
	json_t *o;

	(void)state;
	/* The bound: the 1 s timeout and 2 s for the kill, beyond what the same
	 * command costs now with a tool that answers (a baseline of this run:
	 * load slows both alike). */
	clock_gettime(CLOCK_MONOTONIC, &a);
	rtid("resolve --json --timeout 1 100");
	clock_gettime(CLOCK_MONOTONIC, &b);
	base = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	setenv("FAKE_HANG", "1", 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(rtid("resolve --json --timeout 1 100"), 1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unsetenv("FAKE_HANG");
	took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(took - base < 3 * time_factor());
	o = line_json(slurp(out_path), 0);
	assert_string_equal(json_string_value(json_object_get(o, "error")), "timeout");
	json_decref(o);
}

static void unattested_flag_warns(void **state)
{
	json_t *o;

	(void)state;
	assert_int_equal(rtid("resolve --json --mode scan --unattested --driver-version 1.2 100"), 0);
	assert_non_null(strstr(slurp(err_path), "warning"));
	o = line_json(slurp(out_path), 0);
	assert_string_equal(json_string_value(json_object_get(o, "source")), "scan");
	json_decref(o);
}

static void table_and_environment(void **state)
{
	const char *out;

	(void)state;
	setenv("FAKE_TID_100", "102", 1);
	setenv("FAKE_EXIT_200", "1", 1);
	assert_int_equal(rtid("resolve --mode crosscheck 100 200 999"), 1);
	out = slurp(out_path);
	assert_non_null(strstr(out, "PID"));
	assert_string_equal(table_field(out, 100, 4), "agree");
	assert_string_equal(table_field(out, 200, 1), "none");
	assert_string_equal(table_field(out, 200, 4), "agree-none");
	assert_non_null(strstr(out, "no-such-process: no process 999"));
	setenv("RTID_MODE", "sideways", 1);
	assert_int_equal(rtid("resolve 100"), 2);
	setenv("RTID_MODE", "scan", 1);
	assert_int_equal(rtid("resolve --json --driver-version 1.2 100"), 0);
	assert_non_null(strstr(slurp(out_path), "\"fallback\":\"unattested\""));
	unsetenv("RTID_MODE");
	assert_int_equal(rtid("resolve --backend gpu 100"), 2);
	/* An attestation path that cannot be read as a file. */
	assert_int_equal(rtid("resolve --mode scan --attestation /proc/self 100"), 2);
	assert_non_null(strstr(slurp(err_path), "attestation"));
	assert_int_equal(rtid("resolve --timeout '' 100"), 2);
	assert_int_equal(rtid("resolve --timeout inf 100"), 2);
	assert_int_equal(rtid("resolve --timeout 1e7 100"), 2);
	setenv("RTID_MODE", "", 1); /* empty: the default */
	assert_int_equal(rtid("resolve --backend tool --json 100"), 0);
	unsetenv("RTID_MODE");
	assert_int_equal(rtid("resolve --deadline 0 100"), 2);
	assert_int_equal(rtid("resolve --deadline 5 --jobs 2 --tool /nonexistent/tool 100"), 1);
	assert_non_null(strstr(slurp(out_path), "tool-not-found"));
	unsetenv("FAKE_TID_100");
	unsetenv("FAKE_EXIT_200");
}

static void driver_version_from_the_environment(void **state)
{
	(void)state;
	setenv("FAKE_TID_100", "102", 1);
	/* Malformed: an error that names the variable, not the pattern. */
	setenv("RTID_DRIVER_VERSION", "580.x", 1);
	assert_int_equal(rtid("resolve 100"), 2);
	assert_non_null(strstr(slurp(err_path), "invalid RTID_DRIVER_VERSION: '580.x'"));
	assert_null(strstr(slurp(err_path), "pattern"));
	/* --driver-version overrides it. */
	assert_int_equal(rtid("resolve --driver-version 580.159.03 100"), 0);
	/* Differing from the running driver: reported, and nothing scanned. */
	write_file(root, "driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01  Thu\n");
	setenv("RTID_DRIVER_VERSION", "580.159.03", 1);
	assert_int_equal(rtid("resolve --mode scan --unattested --json 100"), 0);
	assert_non_null(strstr(slurp(out_path), "\"fallback\":\"version-mismatch\""));
	assert_non_null(strstr(slurp(err_path), "580.159.03 was given, but 590.48.01 is running"));
	unsetenv("RTID_DRIVER_VERSION");
	unsetenv("FAKE_TID_100");
	assert_int_equal(remove_version(), 0);
}

/* A setting set and empty is no setting: RTID_DRIVER_VERSION="" is the
 * running driver's, RTID_CUDA_CHECKPOINT="" the cuda-checkpoint on PATH. */
static void empty_settings_are_unset(void **state)
{
	char bin[600], link[700], path[4200];
	const char *old_path = getenv("PATH");

	(void)state;
	setenv("FAKE_TID_100", "102", 1);
	setenv("RTID_DRIVER_VERSION", "", 1);
	assert_int_equal(rtid("resolve 100"), 0);
	assert_string_equal(table_field(slurp(out_path), 100, 1), "102");
	assert_null(strstr(slurp(err_path), "RTID_DRIVER_VERSION"));
	unsetenv("RTID_DRIVER_VERSION");
	snprintf(bin, sizeof(bin), "%s/bin", root);
	assert_int_equal(mkdir(bin, 0755), 0);
	snprintf(link, sizeof(link), "%s/cuda-checkpoint", bin);
	assert_int_equal(symlink(env_path("FAKE_TOOL"), link), 0);
	snprintf(path, sizeof(path), "%s:%s", bin, old_path ? old_path : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	setenv("RTID_CUDA_CHECKPOINT", "", 1);
	assert_int_equal(rtid("resolve 100"), 0);
	assert_string_equal(table_field(slurp(out_path), 100, 1), "102");
	setenv("PATH", path + strlen(bin) + 1, 1);
	setenv("RTID_CUDA_CHECKPOINT", env_path("FAKE_TOOL"), 1);
	unsetenv("FAKE_TID_100");
	/* A pattern that is no regex is refused by name. */
	assert_int_equal(rtid("resolve --mode scan --unattested --pattern '(' 100"), 2);
	assert_non_null(strstr(slurp(err_path), "invalid --pattern"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_documents_everything),
		cmocka_unit_test(help_command_and_version),
		cmocka_unit_test(usage_errors_exit_2),
		cmocka_unit_test(malformed_attestation_names_file_and_line),
		cmocka_unit_test(json_lines_in_order),
		cmocka_unit_test(hanging_tool_reported_as_timeout),
		cmocka_unit_test(unattested_flag_warns),
		cmocka_unit_test(table_and_environment),
		cmocka_unit_test(driver_version_from_the_environment),
		cmocka_unit_test(empty_settings_are_unset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
