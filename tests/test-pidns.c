/* The readers of one /proc file each (pidns.c, version.c), over trees the
 * test writes: every shape of line the kernel writes and each it does not,
 * answered exactly, and nothing left open. */
#include <errno.h>
#include <fcntl.h>
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

#include "helpers.h"
#include "basic/sys.h"
#include "core/core.h"

/* pid's number in its own namespace (pid:[1]), or the error. */
static int own(const char *tree, int pid, const char *status)
{
	int v = -7, r;

	ns_proc(tree, pid, "pid:[1]", status);
	r = rtid__pid_to_ns(tree, "pid:[1]", pid, &v);
	if (r == 0)
		return v;
	assert_int_equal(v, -7); /* written only on success */
	return r;
}

/* NSpid: as the kernel writes it (tab-separated, one number a namespace,
 * its own last), and every other shape refused, never half read. */
static void nspid_lines(void **state)
{
	char *tree = tmp_dir(), cut[6000];

	(void)state;
	assert_int_equal(own(tree, 10, "Name:\tx\nNSpid:\t10\t3\nNSpgid:\t1\n"), 3);
	assert_int_equal(own(tree, 11, "NSpid:\t11\n"), 11);
	/* The separator is whitespace, however much, wherever. */
	assert_int_equal(own(tree, 12, "NSpid:12 \t 4\t\n"), 4);
	assert_int_equal(own(tree, 13, "NSpid:\t13\t5 \n"), 5);
	assert_int_equal(own(tree, 14, "NSpid:\t14\t6"), 6); /* no newline at the end */
	assert_int_equal(own(tree, 15, "NSpid:15\n"), 15);
	/* No line at all: a kernel that cannot say. */
	assert_int_equal(own(tree, 20, "Name:\tx\nPid:\t20\n"), -ENOTSUP);
	/* The line, with no number in it. */
	assert_int_equal(own(tree, 21, "NSpid:\n"), -EINVAL);
	assert_int_equal(own(tree, 22, "NSpid:\t \t\n"), -EINVAL);
	/* A number that is none: not a digit, zero, a sign, too long (no pid
	 * has 11 digits, whatever they are). */
	assert_int_equal(own(tree, 23, "NSpid:\t23\tx\n"), -EINVAL);
	assert_int_equal(own(tree, 24, "NSpid:\t24\t0\n"), -EINVAL);
	assert_int_equal(own(tree, 25, "NSpid:\t-25\n"), -EINVAL);
	assert_int_equal(own(tree, 26, "NSpid:\t00000000026\n"), -EINVAL);
	assert_int_equal(own(tree, 27, "NSpid:\t0000000027\n"), 27); /* 10 digits */
	assert_int_equal(own(tree, 28, "NSpid:\t28\t7x\n"), -EINVAL);
	/* An earlier number malformed: the line is, whatever comes last. */
	assert_int_equal(own(tree, 29, "NSpid:\tx\t8\n"), -EINVAL);
	/* Two NSpid: lines: not the kernel's, neither is taken. */
	assert_int_equal(own(tree, 30, "NSpid:\t30\t9\nNSpid:\t30\t9\n"), -EINVAL);
	/* A line longer than the reader's piece is cut: refused, not read cut. */
	memset(cut, '\t', sizeof(cut));
	memcpy(cut, "NSpid:", 6);
	memcpy(cut + sizeof(cut) - 4, "31\n", 4);
	assert_int_equal(own(tree, 31, cut), -EINVAL);
	rm_tree(tree);
	free(tree);
}

/* The ns link read whole or not at all: a name cut to the buffer could
 * equal another cut the same way. */
static void ns_link_names(void **state)
{
	char *tree = tmp_dir(), buf[300], longname[200];

	(void)state;
	ns_proc(tree, 10, "pid:[4026531836]", "NSpid:\t10\n"); /* 16 bytes */
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(rtid__pidns_of(tree, 10, buf, 17), 0);
	assert_string_equal(buf, "pid:[4026531836]");
	assert_int_equal(buf[17], 'X'); /* nothing past the NUL */
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(rtid__pidns_of(tree, 10, buf, 16), -ENAMETOOLONG);
	assert_int_equal(buf[0], 'X'); /* nothing written */
	assert_int_equal(rtid__pidns_of(tree, 99, buf, sizeof(buf)), -ENOENT);
	/* A name longer than any pid namespace's: refused, whatever the room. */
	memset(longname, 'p', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ns_proc(tree, 11, longname, "NSpid:\t11\n");
	assert_int_equal(rtid__pidns_of(tree, 11, buf, sizeof(buf)), -ENAMETOOLONG);
	/* Another namespace's process is not translated. */
	ns_proc(tree, 12, "pid:[2]", "NSpid:\t12\t1\n");
	assert_int_equal(rtid__pid_to_ns(tree, "pid:[1]", 12, &(int){ 0 }), -EXDEV);
	rm_tree(tree);
	free(tree);
}

/* From a namespace's number to the host's: exactly one process, or none,
 * or an error; never a guess, and the listing closed on every way out. */
static void from_namespace(void **state)
{
	char *tree = tmp_dir();
	int v = -7, fds = count_fds();

	(void)state;
	ns_proc(tree, 100, "pid:[1]", "NSpid:\t100\t1\n");
	ns_proc(tree, 200, "pid:[1]", "NSpid:\t200\t2\n");
	ns_proc(tree, 300, "pid:[2]", "NSpid:\t300\t2\n");
	ns_proc(tree, 400, "pid:[3]", "NSpid:\t400\t5\n");
	ns_proc(tree, 401, "pid:[3]", "NSpid:\t401\t5\n");
	ns_proc(tree, 402, "pid:[3]", "NSpid:\t402\t5\n");
	write_file(tree, "self/status", "NSpid:\t1\n"); /* not a pid: skipped */
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[1]", 1, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[2]", 2, &v), 0);
	assert_int_equal(v, 300);
	v = -7;
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[1]", 3, &v), -ESRCH);
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[3]", 5, &v), -ENOTUNIQ);
	assert_int_equal(rtid__pid_from_ns(tree, "pid:[9]", 1, &v), -ESRCH);
	assert_int_equal(v, -7);
	assert_int_equal(rtid__pid_from_ns("/nonexistent", "pid:[1]", 1, &v), -ENOENT);
	assert_int_equal(count_fds(), fds);
	rm_tree(tree);
	free(tree);
}

/* Whether a process holds a file: the link read exactly, not a prefix, not
 * one of the same length; its fd listing closed every time. */
static void holds_file(void **state)
{
	char *tree = tmp_dir(), path[600];
	int fds;

	(void)state;
	write_file(tree, "50/fd/.keep", "");
	snprintf(path, sizeof(path), "%s/50/fd/3", tree);
	assert_int_equal(symlink("socket:[1234]", path), 0);
	snprintf(path, sizeof(path), "%s/50/fd/4", tree);
	assert_int_equal(symlink("/dev/null", path), 0);
	fds = count_fds();
	assert_int_equal(rtid__holds_file(tree, 50, "socket:[1234]"), 0);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(rtid__holds_file(tree, 50, "socket:[123]"), -ENOENT);
	assert_int_equal(rtid__holds_file(tree, 50, "socket:[1235]"), -ENOENT);
	assert_int_equal(rtid__holds_file(tree, 50, "socket:[12345]"), -ENOENT);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(rtid__holds_file(tree, 51, "socket:[1234]"), -ENOENT);
	rm_tree(tree);
	free(tree);
}

/* fdinfo's Pid: line as the kernel writes it for a pidfd, and the lines of
 * a process gone or of another namespace. */
static void fdinfo_pid_lines(void **state)
{
	char *tree = tmp_dir(), cut[6000];
	int dfd, v = -7;

	(void)state;
	write_file(tree, "a", "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1054\nPid:\t4242\n"
			      "NSpid:\t4242\n");
	write_file(tree, "b", "Pid:\t-1\nNSpid:\t-1\n");
	write_file(tree, "c", "Pid:\t0\n");
	write_file(tree, "d", "Pid:\n");
	write_file(tree, "e", "Pid:\t12x\n");
	write_file(tree, "f", "Pid:\t7\nPid:\t7\n");
	write_file(tree, "g", "pos:\t0\nNSpid:\t5\n");
	write_file(tree, "h", "Pid:7");
	memset(cut, ' ', sizeof(cut));
	memcpy(cut, "Pid:", 4);
	memcpy(cut + sizeof(cut) - 3, "7\n", 3);
	write_file(tree, "i", cut);
	dfd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(rtid__fdinfo_pid(dfd, "a", &v), 0);
	assert_int_equal(v, 4242);
	v = -7;
	assert_int_equal(rtid__fdinfo_pid(dfd, "b", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "c", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "d", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "e", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "f", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "g", &v), -ENOENT);
	assert_int_equal(rtid__fdinfo_pid(dfd, "i", &v), -ESRCH);
	assert_int_equal(rtid__fdinfo_pid(dfd, "none", &v), -ENOENT);
	assert_int_equal(v, -7);
	assert_int_equal(rtid__fdinfo_pid(dfd, "h", &v), 0);
	assert_int_equal(v, 7);
	close(dfd);
	rm_tree(tree);
	free(tree);
}

/* A pidfd of a child that has exited and been reaped: -ESRCH on the real
 * kernel (Pid: -1), and an fd number that is not open is the read's error. */
static void pidfd_of_gone_child(void **state)
{
	int fd, v = -7;
	pid_t c;

	(void)state;
	c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	fd = rtid__pidfd_open(c);
	if (fd < 0 && errno == ENOSYS)
		skip(); /* valgrind 3.19 has no pidfd_open */
	assert_true(fd >= 0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	assert_int_equal(rtid__pidfd_pid(fd, &v), -ESRCH);
	close(fd);
	assert_int_equal(rtid__pidfd_pid(fd, &v), -ENOENT);
	assert_int_equal(v, -7);
}

/* The driver's version: the first line of the file counts, however long
 * the file; an empty file or one with no version is refused. */
static void driver_version_file(void **state)
{
	char *tree = tmp_dir(), big[2048], out[32] = "unset";

	(void)state;
	snprintf(big, sizeof(big), "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  "
				   "Sun Jul 27 06:54:38 UTC 2025\nGCC version:  %0*d\n", 1500, 0);
	write_file(tree, "driver/nvidia/version", big);
	assert_int_equal(rtid__driver_version_read(tree, out, sizeof(out)), 0);
	assert_string_equal(out, "580.65.06");
	strcpy(out, "unset");
	write_file(tree, "driver/nvidia/version", "");
	assert_int_equal(rtid__driver_version_read(tree, out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "unset");
	assert_int_equal(rtid__driver_version_read("/nonexistent", out, sizeof(out)), -ENOENT);
	rm_tree(tree);
	free(tree);
}

/* A stat longer than the reader's buffer: the start time (field 22) comes
 * early, and is read from the start of the file. */
static void long_stat(void **state)
{
	char *tree = tmp_dir(), line[4096];
	unsigned long long v = 0;
	size_t n;

	(void)state;
	stat_line(60, 123456, line, sizeof(line));
	n = strlen(line) - 1; /* its newline */
	while (n < 1500)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " 18446744073709551615");
	snprintf(line + n, sizeof(line) - n, "\n");
	write_file(tree, "60/stat", line);
	assert_int_equal(rtid_proc_start_time(tree, 60, &v), 0);
	assert_int_equal(v, 123456);
	rm_tree(tree);
	free(tree);
}

/* A library's caller may have closed fd 0: the next file opened is fd 0,
 * and that is a file like any other, not an error. */
static void fd_zero_is_a_file(void **state)
{
	char *tree = tmp_dir(), out[32] = "unset";
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);

	(void)state;
	write_file(tree, "driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  x\n");
	close(0);
	assert_int_equal(rtid__driver_version_read(tree, out, sizeof(out)), 0);
	assert_string_equal(out, "580.65.06");
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	rm_tree(tree);
	free(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nspid_lines),	    cmocka_unit_test(ns_link_names),
		cmocka_unit_test(from_namespace),   cmocka_unit_test(holds_file),
		cmocka_unit_test(fdinfo_pid_lines), cmocka_unit_test(pidfd_of_gone_child),
		cmocka_unit_test(driver_version_file), cmocka_unit_test(fd_zero_is_a_file),
		cmocka_unit_test(long_stat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
