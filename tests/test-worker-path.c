/* Where the api backend and rtid serve find the driver-API worker: the
 * variable when set (and only there), else beside the program, else the
 * libexecdir relative to the program, else the configured one; an error that
 * says what was tried. The places relative to the program are proved by
 * running a copy of this test from a directory of its own. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "helpers.h"
#include "basic/parse.h"
#include "core/core.h"

/* Run in the copy: print "rc path" or "rc why" on stdout. */
static int probe(void)
{
	char buf[PATH_MAX], why[512];
	int r = rtid__worker_path(buf, sizeof(buf), why, sizeof(why));

	printf("%d %s\n", r, r == 0 ? buf : why);
	return 0;
}

/* The copy's answer, RTID_WORKER unset. */
static const char *probe_copy(void)
{
	static char out[1024];
	char exe[600], cmd[1400];
	FILE *p;
	size_t n;

	snprintf(exe, sizeof(exe), "%s/bin/probe", test_dir);
	snprintf(cmd, sizeof(cmd), "env -u RTID_WORKER '%s' --probe", exe);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	return out;
}

static void executable(const char *rel)
{
	char path[600];

	write_file(test_dir, rel, "#!/bin/sh\nexit 0\n");
	snprintf(path, sizeof(path), "%s/%s", test_dir, rel);
	assert_int_equal(chmod(path, 0755), 0);
}

static void variable_is_the_only_place(void **state)
{
	char buf[PATH_MAX], why[512], path[600];

	(void)state;
	executable("w/rtid-cuda-worker");
	snprintf(path, sizeof(path), "%s/w/rtid-cuda-worker", test_dir);
	setenv("RTID_WORKER", path, 1);
	assert_int_equal(rtid__worker_path(buf, sizeof(buf), why, sizeof(why)), 0);
	assert_string_equal(buf, path);
	/* A path that does not fit: an error, never a cut one. */
	strcpy(buf, "untouched");
	assert_int_equal(rtid__worker_path(buf, 10, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, strerror(ENAMETOOLONG)));
	assert_string_equal(buf, "untouched");
	/* Not executable: the variable is not passed over for another place. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(rtid__worker_path(buf, sizeof(buf), why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "RTID_WORKER="));
	assert_non_null(strstr(why, strerror(EACCES)));
	/* A directory is no program, though access(X_OK) passes on it. */
	snprintf(path, sizeof(path), "%s/w", test_dir);
	setenv("RTID_WORKER", path, 1);
	assert_int_equal(rtid__worker_path(buf, sizeof(buf), why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, strerror(EACCES)));
	setenv("RTID_WORKER", "/nonexistent/rtid-cuda-worker", 1);
	assert_int_equal(rtid__worker_path(buf, sizeof(buf), why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/rtid-cuda-worker: "));
	unsetenv("RTID_WORKER");
}

static void beside_then_libexec_then_installed(void **state)
{
	char self[600], want[700];
	const char *got;

	(void)state;
	write_file(test_dir, "bin/.keep", "");
	snprintf(self, sizeof(self), "%s/bin/probe", test_dir);
	assert_int_equal(copy_self(self, false), 0);
	/* Beside the program first, as in a build tree. */
	executable("bin/rtid-cuda-worker");
#ifdef RTID_WORKER_FROM_BINDIR
	executable("bin/" RTID_WORKER_FROM_BINDIR);
#endif
	snprintf(want, sizeof(want), "0 %s/bin/rtid-cuda-worker\n", test_dir);
	assert_string_equal(probe_copy(), want);
	snprintf(want, sizeof(want), "%s/bin/rtid-cuda-worker", test_dir);
	assert_int_equal(unlink(want), 0);
	/* A directory of the name beside the program is passed over. */
	assert_int_equal(mkdir(want, 0755), 0);
#ifdef RTID_WORKER_FROM_BINDIR
	/* Then the libexecdir relative to the program: an install moved whole
	 * (only when the configured bindir and libexecdir are relative). */
	snprintf(want, sizeof(want), "0 %s/bin/%s\n", test_dir, RTID_WORKER_FROM_BINDIR);
	assert_string_equal(probe_copy(), want);
	snprintf(want, sizeof(want), "%s/bin/%s", test_dir, RTID_WORKER_FROM_BINDIR);
	assert_int_equal(unlink(want), 0);
#endif
	/* Then the configured path; when that is not there either, the error
	 * names what was tried and the variable. */
	got = probe_copy();
	if (access(RTID_WORKER_PATH, X_OK) == 0) {
		snprintf(want, sizeof(want), "0 %s\n", RTID_WORKER_PATH);
		assert_string_equal(got, want);
		return;
	}
	snprintf(want, sizeof(want), "%d driver API worker not found: tried %s/bin/rtid-cuda-worker "
		 "and %s (set RTID_WORKER)\n", -ENOENT, test_dir, RTID_WORKER_PATH);
	assert_string_equal(got, want);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(variable_is_the_only_place),
		cmocka_unit_test(beside_then_libexec_then_installed),
	};

	if (argc == 2 && !strcmp(argv[1], "--probe"))
		return probe();
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
