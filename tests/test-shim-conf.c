/* The shim's settings from a file, for engines that pass CRIU no environment:
 * the file fills what the environment lacks (the environment wins), it is
 * found beside a relocated install, a bad line is named by its number and
 * skipped, a file others could write is ignored; and every call the shim does
 * not answer reaches the real tool with its arguments unchanged. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "plugin-call.h"

static char dir[256], conf[320], tool_a[320], tool_b[320], log_path[320];

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
	char *t = tmp_dir();

	(void)state;
	snprintf(dir, sizeof(dir), "%s", t);
	free(t);
	snprintf(conf, sizeof(conf), "%s/shim.conf", dir);
	snprintf(tool_a, sizeof(tool_a), "%s/tool-a", dir);
	snprintf(tool_b, sizeof(tool_b), "%s/tool-b", dir);
	snprintf(log_path, sizeof(log_path), "%s/shim.log", dir);
	/* Two real tools that say who they are and what they were given. */
	put(tool_a, "#!/bin/sh\necho A \"$@\"\n", 0755);
	put(tool_b, "#!/bin/sh\necho B \"$@\"\n", 0755);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(dir);
	return 0;
}

/* The shim (rtid under the name cuda-checkpoint) with env added; its output. */
static int shim(const char *prog, const char *const *args, const char *const *env, char *out,
		size_t len)
{
	char link[400], *argv[12] = { "cuda-checkpoint" };
	int n = 1;

	if (!prog) {
		snprintf(link, sizeof(link), "%s/cuda-checkpoint", dir);
		if (access(link, F_OK) < 0)
			assert_int_equal(symlink(env_path("RTID_BIN"), link), 0);
		prog = link;
	}
	for (; *args; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	return plugin_call(prog, argv, env, out, len);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_file_fills_what_the_environment_lacks(void **state)
{
	char out[256], e_conf[400], e_tool[400], text[800];

	(void)state;
	snprintf(text, sizeof(text), "# the real tool\nRTID_REAL_TOOL=%s\n", tool_a);
	put(conf, text, 0644);
	snprintf(e_conf, sizeof(e_conf), "RTID_SHIM_CONF=%s", conf);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "7"), ARGS(e_conf), out, sizeof(out)), 0);
	assert_string_equal(out, "A --toggle --pid 7\n");
	/* The environment wins. */
	snprintf(e_tool, sizeof(e_tool), "RTID_REAL_TOOL=%s", tool_b);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "7"), ARGS(e_conf, e_tool), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "B --toggle --pid 7\n");
}

/* A copy of the file from at to, mode 0755. */
static void copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	assert_int_equal(close(out), 0);
}

/* PREFIX/bin/rtid finds PREFIX/etc/rtid/shim.conf, with no /etc and no
 * environment: an unpacked or relocated install. */
static void test_relocated_prefix(void **state)
{
	static const char *const sub[] = { "prefix", "prefix/bin", "prefix/etc", "prefix/etc/rtid" };
	char path[400], text[800], out[256], link[400];

	(void)state;
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	snprintf(path, sizeof(path), "%s/prefix/etc/rtid/shim.conf", dir);
	snprintf(text, sizeof(text), "RTID_REAL_TOOL=%s\n", tool_a);
	put(path, text, 0644);
	snprintf(path, sizeof(path), "%s/prefix/bin/rtid", dir);
	copy(env_path("RTID_BIN"), path); /* a copy: /proc/self/exe names it */
	snprintf(link, sizeof(link), "%s/prefix/bin/cuda-checkpoint", dir);
	assert_int_equal(symlink("rtid", link), 0);
	unsetenv("RTID_SHIM_CONF");
	assert_int_equal(shim(link, ARGS("--launch-job"), NULL, out, sizeof(out)), 0);
	setenv("RTID_SHIM_CONF", "", 1);
	assert_string_equal(out, "A --launch-job\n");
}

/* A bad line is named by file and number and skipped; the others apply. */
static void test_bad_line_named(void **state)
{
	char out[256], e_conf[400], e_log[400], text[800];

	(void)state;
	snprintf(text, sizeof(text), "RTID_NOT_A_SETTING=1\nno equals sign\nRTID_REAL_TOOL=%s\n",
		 tool_a);
	put(conf, text, 0644);
	snprintf(e_conf, sizeof(e_conf), "RTID_SHIM_CONF=%s", conf);
	snprintf(e_log, sizeof(e_log), "RTID_SHIM_LOG=%s", log_path);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "7"), ARGS(e_conf, e_log), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "A --toggle --pid 7\n"); /* nothing on stderr either */
	assert_non_null(strstr(slurp(log_path), "shim.conf:1: not a setting"));
	assert_non_null(strstr(slurp(log_path), "shim.conf:2: not a setting"));
}

/* A file group or others may write is not trusted: ignored, and said. */
static void test_untrusted_file_ignored(void **state)
{
	char out[256], e_conf[400], e_log[400], e_tool[400], text[800];

	(void)state;
	snprintf(text, sizeof(text), "RTID_REAL_TOOL=%s\n", tool_a);
	put(conf, text, 0666);
	snprintf(e_conf, sizeof(e_conf), "RTID_SHIM_CONF=%s", conf);
	snprintf(e_log, sizeof(e_log), "RTID_SHIM_LOG=%s", log_path);
	snprintf(e_tool, sizeof(e_tool), "RTID_REAL_TOOL=%s", tool_b);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "7"), ARGS(e_conf, e_log, e_tool), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "B --toggle --pid 7\n");
	assert_non_null(strstr(slurp(log_path), "writable by group or others: ignored"));
}

/* A file too large, one that is no regular file (a directory), and a last line
 * without its newline: the first two ignored and said, the last read. */
static void test_large_unreadable_and_unterminated(void **state)
{
	char out[256], e_conf[400], e_log[400], e_tool[400], *text = malloc(20000);

	(void)state;
	snprintf(e_conf, sizeof(e_conf), "RTID_SHIM_CONF=%s", conf);
	snprintf(e_log, sizeof(e_log), "RTID_SHIM_LOG=%s", log_path);
	snprintf(e_tool, sizeof(e_tool), "RTID_REAL_TOOL=%s", tool_b);
	memset(text, '#', 19999);
	text[19999] = '\0';
	/* A setting line first, then a comment to 20 KB. */
	snprintf(text, 400, "RTID_REAL_TOOL=%s\n#", tool_a);
	text[strlen(text)] = '#';
	put(conf, text, 0644);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "7"), ARGS(e_conf, e_log, e_tool), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "B --toggle --pid 7\n");
	assert_non_null(strstr(slurp(log_path), "larger than 16 KiB"));
	unlink(conf);
	assert_int_equal(mkdir(conf, 0755), 0);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "8"), ARGS(e_conf, e_log, e_tool), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "B --toggle --pid 8\n");
	assert_non_null(strstr(slurp(log_path), "not a regular file: ignored"));
	rmdir(conf);
	snprintf(text, 400, "RTID_REAL_TOOL=%s", tool_a); /* no newline at its end */
	put(conf, text, 0644);
	assert_int_equal(shim(NULL, ARGS("--toggle", "--pid", "9"), ARGS(e_conf, e_log), out,
			      sizeof(out)), 0);
	assert_string_equal(out, "A --toggle --pid 9\n");
	free(text);
}

/* What the shim does not answer itself reaches the real tool unchanged. */
static void test_options_passed_through(void **state)
{
	const char *const *calls[] = {
		ARGS("--device-map", "0=1,1=0", "--pid", "7"), ARGS("--launch-job"),
		ARGS("--toggle", "--pid", "7"), ARGS("--frobnicate", "x y", "--pid", "7"),
		ARGS("-h"), ARGS("--get-restore-tid", "--pid", "7", "--device-map", "0=1"),
	};
	char out[256], want[256], e_tool[400];

	(void)state;
	snprintf(e_tool, sizeof(e_tool), "RTID_REAL_TOOL=%s", tool_a);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		size_t n = (size_t)snprintf(want, sizeof(want), "A");

		for (const char *const *a = calls[i]; *a; a++)
			n += (size_t)snprintf(want + n, sizeof(want) - n, " %s", *a);
		snprintf(want + n, sizeof(want) - n, "\n");
		assert_int_equal(shim(NULL, calls[i], ARGS(e_tool), out, sizeof(out)), 0);
		assert_string_equal(out, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file_fills_what_the_environment_lacks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_relocated_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_line_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_file_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_unreadable_and_unterminated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_options_passed_through, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
