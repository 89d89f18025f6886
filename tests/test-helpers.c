/* The harness's own helpers where a mistake would reach outside a test's
 * temporary directory: rm_tree removes a tree without following a link
 * (a test plants links to /dev/null and to the build's programs) and
 * without entering a mount point. */
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"

static char *outside, *tree;

static int setup(void **state)
{
	(void)state;
	outside = tmp_dir();
	tree = tmp_dir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(tree);
	rm_tree(outside);
	free(tree);
	free(outside);
	return 0;
}

static char *in(const char *root, const char *rel)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", root, rel);
	return p;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Links to a file, a directory and a fifo outside, in directories the test
 * left unreadable (000) and read-only (0500), and the tree's own path given
 * as a link: the tree goes, everything outside keeps its mode and content. */
static void links_are_removed_not_followed(void **state)
{
	char top[600];

	(void)state;
	write_file(outside, "file", "keep\n");
	write_file(outside, "dir/inner", "keep too\n");
	assert_int_equal(mkfifo(in(outside, "fifo"), 0600), 0);
	assert_int_equal(chmod(in(outside, "fifo"), 0620), 0);
	assert_int_equal(chmod(in(outside, "file"), 0640), 0);
	assert_int_equal(chmod(in(outside, "dir/inner"), 0604), 0);
	assert_int_equal(chmod(in(outside, "dir"), 0751), 0);

	write_file(tree, "a/b/plain", "x\n");
	write_file(tree, "locked/x", "x\n");
	write_file(tree, "ro/x", "x\n");
	assert_int_equal(symlink(in(outside, "file"), in(tree, "a/b/to-file")), 0);
	assert_int_equal(symlink(in(outside, "dir"), in(tree, "a/to-dir")), 0);
	assert_int_equal(symlink(in(outside, "fifo"), in(tree, "to-fifo")), 0);
	assert_int_equal(symlink(in(outside, "file"), in(tree, "locked/to-file")), 0);
	assert_int_equal(symlink(in(outside, "dir"), in(tree, "ro/to-dir")), 0);
	assert_int_equal(symlink("missing", in(tree, "dangling")), 0);
	assert_int_equal(chmod(in(tree, "locked"), 0), 0);
	assert_int_equal(chmod(in(tree, "ro"), 0500), 0);

	rm_tree(tree);
	assert_int_equal(access(tree, F_OK), -1);
	assert_int_equal(mode_of(in(outside, "file")), 0640);
	assert_int_equal(mode_of(in(outside, "dir")), 0751);
	assert_int_equal(mode_of(in(outside, "dir/inner")), 0604);
	assert_int_equal(mode_of(in(outside, "fifo")), 0620);
	assert_string_equal(slurp(in(outside, "file")), "keep\n");
	assert_string_equal(slurp(in(outside, "dir/inner")), "keep too\n");

	/* A link given as the tree: the link goes, not what it names. */
	assert_int_equal(mkdir(tree, 0700), 0);
	snprintf(top, sizeof(top), "%s/top", tree);
	assert_int_equal(symlink(in(outside, "dir"), top), 0);
	rm_tree(top);
	assert_int_equal(access(top, F_OK), -1);
	assert_int_equal(mode_of(in(outside, "dir")), 0751);
	assert_string_equal(slurp(in(outside, "dir/inner")), "keep too\n");
}

/* A filesystem mounted in the tree (a test that died before unmounting) is
 * not emptied: its files stay, the rest of the tree goes. Needs a mount
 * namespace of its own (root). */
static void a_mount_point_is_not_entered(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	write_file(tree, "m/.keep", "");
	write_file(tree, "other/x", "x\n");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("rtid-test", in(tree, "m"), "tmpfs", 0, "size=64k") < 0)
			_exit(77);
		write_file(tree, "m/kept", "kept\n");
		rm_tree(tree);
		if (access(in(tree, "m/kept"), F_OK) < 0 || access(in(tree, "other"), F_OK) == 0)
			_exit(1);
		_exit(umount(in(tree, "m")) < 0 ? 2 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		skip(); /* no mount namespace here (not root) */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(links_are_removed_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(a_mount_point_is_not_entered, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
