/* Strict parsing of foreign text: tool output, pids, the driver version file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "basic/parse.h"
#include "core/core.h"

static void tid_table(void **state)
{
	static const struct { const char *in; int want; } t[] = {
		{ "1234\n", 1234 }, { "1234", 1234 }, { "  77 \r\n", 77 },
		{ "\t2147483647\n", 2147483647 },
		{ "12abc\n", -1 }, { "abc", -1 }, { "", -1 }, { "\n", -1 }, { "0\n", -1 },
		{ "-5\n", -1 }, { "+5\n", -1 }, { "2147483648\n", -1 },
		{ "99999999999999999999\n", -1 }, { "12 34\n", -1 }, { "12\n34\n", -1 },
		{ "0x10\n", -1 }, { "1e3\n", -1 }, { "٣\n", -1 }, { "\v\f9\t", 9 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int tid = -42;
		int r = rtid__parse_tid(t[i].in, strlen(t[i].in), &tid);

		if (t[i].want > 0) {
			assert_int_equal(r, 0);
			assert_int_equal(tid, t[i].want);
		} else {
			assert_int_equal(r, -EINVAL);
			assert_int_equal(tid, -42); /* untouched on failure */
		}
	}
}

static void tid_embedded_nul(void **state)
{
	int tid = -42;

	(void)state;
	assert_int_equal(rtid__parse_tid("12\0 34", 6, &tid), -EINVAL);
	assert_int_equal(tid, -42);
	assert_int_equal(rtid__parse_tid(NULL, 0, &tid), -EINVAL);
}

static void pid_table(void **state)
{
	int pid = -1;

	(void)state;
	assert_int_equal(rtid__parse_pid("4242", &pid), 0);
	assert_int_equal(pid, 4242);
	pid = -1;
	assert_int_equal(rtid__parse_pid(" 4242", &pid), -EINVAL);
	assert_int_equal(rtid__parse_pid("4242 ", &pid), -EINVAL);
	assert_int_equal(rtid__parse_pid(".", &pid), -EINVAL);
	assert_int_equal(rtid__parse_pid("", &pid), -EINVAL);
	assert_int_equal(rtid__parse_pid("0", &pid), -EINVAL);
	assert_int_equal(rtid__parse_pid("-1", &pid), -EINVAL);
	assert_int_equal(pid, -1);
}

/* Seconds, one syntax for every option and setting (the shim, the plugin,
 * the commands): a positive finite number up to 1e6, nothing after it. */
static void seconds_table(void **state)
{
	static const char *const bad[] = { "", "0", "-1", "2s", " 2", "nan", "inf", "1000001",
					   "1e7", "0x", "1e999", ".", "0x10", "1p4", NULL };
	double v = -1;

	(void)state;
	assert_int_equal(rtid__parse_seconds("2", &v), 0);
	assert_true(v == 2.0);
	assert_int_equal(rtid__parse_seconds("0.5", &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(rtid__parse_seconds(".25", &v), 0);
	assert_true(v == 0.25);
	assert_int_equal(rtid__parse_seconds("86400", &v), 0);
	assert_int_equal(rtid__parse_seconds("1e6", &v), 0);
	assert_true(v == 1e6);
	v = -1;
	for (int i = 0; bad[i]; i++)
		if (rtid__parse_seconds(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" taken for seconds", bad[i]);
	assert_true(v == -1); /* untouched */
	assert_int_equal(rtid__parse_seconds(NULL, &v), -EINVAL);
	/* From the environment: its value, or the default for none or a bad one. */
	setenv("RTID_TEST_SECONDS", "1.5", 1);
	assert_true(rtid__env_seconds("RTID_TEST_SECONDS", 9) == 1.5);
	setenv("RTID_TEST_SECONDS", "2s", 1);
	assert_true(rtid__env_seconds("RTID_TEST_SECONDS", 9) == 9);
	unsetenv("RTID_TEST_SECONDS");
	assert_true(rtid__env_seconds("RTID_TEST_SECONDS", 9) == 9);
}

static void version_table(void **state)
{
	static const struct { const char *in; const char *want; } t[] = {
		{ "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Jul 31 2025\n"
		  "GCC version:  gcc version 12.2.0\n", "580.159.03" },
		{ "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release "
		  "Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jul 15 2025\n", "580.65.06" },
		{ "NVRM version: NVIDIA UNIX aarch64 Kernel Module  570.86.15\n", "570.86.15" },
		{ "NVRM version: NVIDIA UNIX x86_64 Kernel Module\n580.1\n", NULL },
		{ "GCC version: 12.2\n", NULL },
		{ "", NULL },
		{ "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580..03\n", NULL },
		{ "NVRM version: NVIDIA  580.159.03.1.2\n", NULL },
		{ "NVRM version: 580\n", NULL },
		{ "NVRM version: 1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16 580.1\n", "580.1" },
		{ "NVRM version", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char out[32] = "untouched";
		int r = rtid__parse_driver_version(t[i].in, strlen(t[i].in), out, sizeof(out));

		if (t[i].want) {
			assert_int_equal(r, 0);
			assert_string_equal(out, t[i].want);
		} else {
			assert_int_equal(r, -EINVAL);
			assert_string_equal(out, "untouched");
		}
	}
}

static void version_small_buffer(void **state)
{
	static const char in[] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  x\n";
	char out[6];

	(void)state;
	assert_int_equal(rtid__parse_driver_version(in, sizeof(in) - 1, out, sizeof(out)), -ENOSPC);
}

static void version_valid(void **state)
{
	(void)state;
	assert_true(rtid__version_valid("580.159.03"));
	assert_true(rtid__version_valid("13.0"));
	assert_false(rtid__version_valid("580"));
	assert_false(rtid__version_valid("580."));
	assert_false(rtid__version_valid(".580.1"));
	assert_false(rtid__version_valid("580.1a"));
	assert_false(rtid__version_valid("1.2.3.4.5"));
	assert_false(rtid__version_valid("11111111111111111111.2222222222222"));
	assert_false(rtid__version_valid(NULL));
}

/* /proc/<pid>/status lines: the value of exactly the named key. */
static void status_fields(void **state)
{
	static const char st[] = "Name:\tThreads: 9\nTgid:\t4242\nPid:\t4243\n"
				 "ThreadsX:\t7\nThreads:\t12  \nZero:\t0\nBad:\t1x\nEmpty:\t\nLast:  5";
	int v = -1;

	(void)state;
	assert_int_equal(rtid__status_field(st, strlen(st), "Tgid", &v), 0);
	assert_int_equal(v, 4242);
	assert_int_equal(rtid__status_field(st, strlen(st), "Threads", &v), 0);
	assert_int_equal(v, 12); /* not the Name: text, not ThreadsX: */
	assert_int_equal(rtid__status_field(st, strlen(st), "Zero", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(rtid__status_field(st, strlen(st), "Last", &v), 0);
	assert_int_equal(v, 5); /* no newline at the end */
	v = -1;
	assert_int_equal(rtid__status_field(st, strlen(st), "Bad", &v), -EINVAL);
	assert_int_equal(rtid__status_field(st, strlen(st), "Empty", &v), -EINVAL);
	assert_int_equal(rtid__status_field(st, strlen(st), "Missing", &v), -EINVAL);
	assert_int_equal(rtid__status_field(st, 3, "Tgid", &v), -EINVAL);
	assert_int_equal(v, -1); /* written only on success */
}

/* basic's small-file reader: whole or cut, exactly full, a link refused
 * with NOFOLLOW, a missing file's errno; buf untouched past what was read. */
static void read_at_table(void **state)
{
	char dir[] = "/tmp/rtid-read-XXXXXX", path[64], link_path[64], buf[16];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(link_path, sizeof(link_path), "%s/l", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abcdef", 6), 6);
	close(fd);
	assert_int_equal(symlink(path, link_path), 0);
	assert_int_equal(rtid__read_at(AT_FDCWD, path, buf, 3, RTID__READ_WHOLE), -EOVERFLOW);
	assert_int_equal(rtid__read_at(AT_FDCWD, path, buf, 3, 0), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(rtid__read_at(AT_FDCWD, path, buf, 6, RTID__READ_WHOLE), 6);
	assert_int_equal(rtid__read_at(AT_FDCWD, path, buf, sizeof(buf), RTID__READ_WHOLE), 6);
	assert_memory_equal(buf, "abcdef", 6);
	assert_int_equal(rtid__read_at(AT_FDCWD, link_path, buf, sizeof(buf), 0), 6);
	assert_int_equal(rtid__read_at(AT_FDCWD, link_path, buf, sizeof(buf), RTID__READ_NOFOLLOW),
			 -ELOOP);
	assert_int_equal(rtid__read_at(AT_FDCWD, dir, buf, sizeof(buf), 0), -EISDIR);
	unlink(link_path);
	unlink(path);
	assert_int_equal(rtid__read_at(AT_FDCWD, path, buf, sizeof(buf), 0), -ENOENT);
	rmdir(dir);
}

/* What rtid__read_lines gave: each line as "[len]text" or "cut[len]". */
struct seen_lines {
	char text[512];
	int stop_at, calls;
};

static int note_line(const char *line, size_t len, bool whole, void *arg)
{
	struct seen_lines *s = arg;
	size_t n = strlen(s->text);

	if (whole)
		snprintf(s->text + n, sizeof(s->text) - n, "[%zu]%.*s", len, (int)(len < 20 ? len : 20),
			 line);
	else
		snprintf(s->text + n, sizeof(s->text) - n, "cut[%zu]", len);
	/* stop_at N > 0: found at the Nth line; -N: an error at the Nth. */
	if (++s->calls != abs(s->stop_at))
		return 0;
	return s->stop_at > 0 ? 1 : -EBADMSG;
}

static void lines_of(const char *dir, const char *content, size_t len, int stop_at, int want_rc,
		     const char *want)
{
	char path[64];
	struct seen_lines s = { .stop_at = stop_at };
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	assert_int_equal(rtid__read_lines(AT_FDCWD, path, note_line, &s), want_rc);
	assert_string_equal(s.text, want);
}

/* A file read line by line in pieces: lines across piece boundaries whole,
 * a line longer than a piece once and cut, the last line without its
 * newline, a stop and an error from the caller. */
static void read_lines_table(void **state)
{
	char dir[] = "/tmp/rtid-lines-XXXXXX", path[64], *big = malloc(3 * RTID__LINE_PIECE + 8);
	size_t n = 0;
	struct seen_lines s = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	lines_of(dir, "", 0, 0, 0, "");
	lines_of(dir, "a\nbc\n", 5, 0, 0, "[1]a[2]bc");
	lines_of(dir, "a\n\nlast", 7, 0, 0, "[1]a[0][4]last");
	lines_of(dir, "a\nb\nc\n", 6, 2, 0, "[1]a[1]b");        /* stopped: found */
	lines_of(dir, "a\nb\nc\n", 6, -2, -EBADMSG, "[1]a[1]b"); /* stopped: its error */
	/* A line of 4000 then one across the first piece's end: both whole. */
	memset(big, 'x', 4000);
	big[4000] = '\n';
	memset(big + 4001, 'y', 200);
	big[4201] = '\n';
	lines_of(dir, big, 4202, 0, 0, "[4000]xxxxxxxxxxxxxxxxxxxx[200]yyyyyyyyyyyyyyyyyyyy");
	/* A line of three pieces: once, cut; then the next. */
	memset(big, 'g', 3 * RTID__LINE_PIECE);
	n = 3 * RTID__LINE_PIECE;
	memcpy(big + n, "\nend\n", 5);
	lines_of(dir, big, n + 5, 0, 0, "cut[4096][3]end");
	/* The same at the end of the file, without its newline: once, cut. */
	lines_of(dir, big, n, 0, 0, "cut[4096]");
	/* Its cut start stops the read when the caller says so. */
	lines_of(dir, big, n + 5, -1, -EBADMSG, "cut[4096]");
	snprintf(path, sizeof(path), "%s/f", dir);
	unlink(path);
	assert_int_equal(rtid__read_lines(AT_FDCWD, path, note_line, &s), -ENOENT);
	assert_int_equal(rtid__read_lines(AT_FDCWD, dir, note_line, &s), -EISDIR);
	assert_int_equal(s.calls, 0);
	rmdir(dir);
	free(big);
}

/* What a bad input gets: no pid from NULL, no version from a line that is
 * no NVRM line or whose only token of the shape is past a token too long to
 * be one; a start time only from the kernel's own shape of stat. */
static void parse_edges(void **state)
{
	static const char long_tok[] = "NVRM version: 1.2.3456789012345678901234567890123456 580.95.05\n";
	char out[32] = "";
	static const char negs[] = "4 (x) S -1 -2 -3 -4 -5 -6 -7 -8 -9 -10 -11 -12 -13 -14 -15 -16 -17 "
				   "-18 99";
	unsigned long long v = 5;
	int pid = 7;

	(void)state;
	assert_int_equal(rtid__parse_pid(NULL, &pid), -EINVAL);
	assert_int_equal(pid, 7);
	assert_int_equal(rtid__parse_driver_version(NULL, 40, out, sizeof(out)), -EINVAL);
	assert_int_equal(rtid__parse_driver_version("NVRM", 4, out, sizeof(out)), -EINVAL);
	assert_int_equal(rtid__parse_driver_version("NVRX version: 580.95.05", 23, out, sizeof(out)),
			 -EINVAL);
	/* A token of 33 characters or more is passed over, never cut into a version. */
	assert_int_equal(rtid__parse_driver_version(long_tok, strlen(long_tok), out, sizeof(out)), 0);
	assert_string_equal(out, "580.95.05");
	/* Only blanks after the prefix, no newline: nothing found. */
	assert_int_equal(rtid__parse_driver_version("NVRM version:   \t ", 18, out, sizeof(out)),
			 -EINVAL);
	/* The version on the second line only: the first line is the one read. */
	assert_int_equal(rtid__parse_driver_version("NVRM version: none\n580.95.05\n", 29, out,
						    sizeof(out)), -EINVAL);
	/* stat: a lone 0 as the pid, a leading zero, a negative start time, a
	 * field that is only '-', and a comm that closes before it opens. */
	assert_int_equal(rtid__parse_stat_start("0", 1, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("00 (x) S 1", 10, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("4 (x) S -", 9, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("4 (x) S - 2", 11, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("4 )", 3, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("4 (x) ", 6, &v), -EINVAL);
	assert_int_equal(rtid__parse_stat_start("4 (x)) S", 8, &v), -EINVAL);
	assert_int_equal(v, 5);
	assert_int_equal(rtid__parse_stat_start(negs, strlen(negs), &v), 0);
	assert_int_equal(v, 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tid_table),       cmocka_unit_test(tid_embedded_nul),
		cmocka_unit_test(read_at_table),   cmocka_unit_test(read_lines_table),
		cmocka_unit_test(pid_table),       cmocka_unit_test(version_table),
		cmocka_unit_test(seconds_table),
		cmocka_unit_test(version_small_buffer), cmocka_unit_test(version_valid),
		cmocka_unit_test(status_fields), cmocka_unit_test(parse_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
