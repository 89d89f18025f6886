/* Storing attestations: planted links are never followed, a killed save
 * leaves the old file or the new one and no temp file after the next run, a
 * full disk is reported as such and loses nothing, and only safe files are
 * trusted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "attest/attest.h"
#include "helpers.h"

static char *path_in(const char *rel)
{
	static char p[4][600];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", test_dir, rel);
	return p[k];
}

/* Entries of dir whose name holds part (temp files, say). */
static int count_named(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strstr(de->d_name, part) != NULL;
	closedir(d);
	return n;
}

static struct rtid_attest_report rep(const char *id)
{
	return (struct rtid_attest_report){ id, "580.1", "node", "", "boot-a", "t" };
}

/* Add a report of n processes (arg, default 1); one of 4 ids, so that a file
 * saved again and again stays the same size. */
static int add_fn(struct rtid_attestation *a, void *arg)
{
	struct rtid_attest_proc p[200];
	int n = arg ? *(int *)arg : 1;

	for (int i = 0; i < n; i++)
		p[i] = (struct rtid_attest_proc){ .pid = 1 + i, .start_known = true, .start = 7,
						  .boot_id = "boot-a", .verdict = RTID_XC_AGREE };
	{
		char id[64];

		snprintf(id, sizeof(id), "r%d-%d", n, rand() % 4);
		struct rtid_attest_report r = rep(id);

		return rtid_attest_add_report(a, &r, p, (size_t)n);
	}
}

static uint64_t counter(void *arg)
{
	return (*(uint64_t *)arg)++;
}

/* Names 0, 1, 2 ... of the counter, as rtid__tmp_create spells them. */
static void name_of(uint64_t v, char *out)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char s[13];

	for (int i = 0; i < 12; i++, v /= 36)
		s[i] = abc[v % 36];
	s[12] = '\0';
	sprintf(out, ".att.json.tmp-%s", s);
}

static void planted_links_at_temp_names_are_not_followed(void **state)
{
	char name[64], got[64], link[700];
	uint64_t c = 0;
	int dirfd, fd;

	(void)state;
	write_file(test_dir, "victim", "precious\n");
	dirfd = open(test_dir, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	for (uint64_t i = 0; i < 5; i++) { /* the first five names are planted links */
		name_of(i, name);
		snprintf(link, sizeof(link), "%s/%s", test_dir, name);
		assert_int_equal(symlink(path_in("victim"), link), 0);
	}
	fd = rtid__tmp_create(dirfd, ".att.json.tmp-", counter, &c, got, sizeof(got));
	assert_true(fd >= 0);
	name_of(5, name);
	assert_string_equal(got, name); /* the sixth, a new file */
	close(fd);
	unlinkat(dirfd, got, 0);
	/* Every name planted: refused, nothing written anywhere. */
	for (uint64_t i = 5; i < 100; i++) {
		name_of(i, name);
		snprintf(link, sizeof(link), "%s/%s", test_dir, name);
		assert_int_equal(symlink(path_in("victim"), link), 0);
	}
	c = 0;
	assert_int_equal(rtid__tmp_create(dirfd, ".att.json.tmp-", counter, &c, got, sizeof(got)),
			 -EEXIST);
	assert_int_equal(count_lines(path_in("victim")), 1);
	/* The next locked update removes every one of them (as stale), and the
	 * victim is untouched. */
	assert_int_equal(rtid_attest_update(path_in("att.json"), add_fn, NULL, NULL, 0), 0);
	assert_int_equal(count_named(test_dir, ".tmp-"), 0);
	{
		FILE *f = fopen(path_in("victim"), "r");
		char buf[32] = "";

		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_string_equal(buf, "precious\n");
	}
	close(dirfd);
	/* A planted lock file link: refused with the reason, the target untouched. */
	assert_int_equal(symlink(path_in("victim"), path_in("b.json.lock")), 0);
	{
		char err[512] = "";

		assert_int_equal(rtid_attest_update(path_in("b.json"), add_fn, NULL, err,
						    sizeof(err)), -ELOOP);
		assert_non_null(strstr(err, "symlink (not followed)"));
	}
	assert_int_equal(count_lines(path_in("victim")), 1);
}

static void symlink_is_written_through(void **state)
{
	struct rtid_attestation *a = NULL;
	struct stat st;
	char err[512] = "";

	(void)state;
	write_file(test_dir, "real/.keep", "");
	assert_int_equal(rtid_attest_update(path_in("real/att.json"), add_fn, NULL, NULL, 0), 0);
	assert_int_equal(symlink(path_in("real/att.json"), path_in("link.json")), 0);
	assert_int_equal(rtid_attest_update(path_in("link.json"), add_fn, NULL, NULL, 0), 0);
	assert_int_equal(lstat(path_in("link.json"), &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* still the link */
	assert_int_equal(rtid_attest_load(path_in("real/att.json"), &a, NULL, 0), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->reports, 2); /* the target has both */
	rtid_attest_free(a);
	/* A link to nowhere is refused, with the reason. */
	assert_int_equal(symlink(path_in("nowhere/x.json"), path_in("dangling.json")), 0);
	assert_int_equal(rtid_attest_update(path_in("dangling.json"), add_fn, NULL, err,
					    sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "symlink to a missing file"));
	assert_int_equal(rtid__file_replace(path_in("dangling.json"), "x", 1), -ENOENT);
	/* Something else than a file in the way; a directory that is not there. */
	write_file(test_dir, "adir/x", "");
	assert_int_equal(rtid_attest_update(path_in("adir"), add_fn, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rtid_attest_update("/nonexistent/d/att.json", add_fn, NULL, err,
					    sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "directory /nonexistent/d"));
	assert_int_equal(rtid_attest_update(NULL, add_fn, NULL, err, sizeof(err)), -EINVAL);
}

static void mode_0644_whatever_the_umask(void **state)
{
	struct stat st;
	mode_t old = umask(0);

	(void)state;
	assert_int_equal(rtid_attest_update(path_in("u.json"), add_fn, NULL, NULL, 0), 0);
	assert_int_equal(rtid__file_replace(path_in("r.json"), "{}", 2), 0);
	umask(old);
	assert_int_equal(stat(path_in("u.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(stat(path_in("u.json.lock"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(stat(path_in("r.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(rtid_attest_path_safe(path_in("u.json"), NULL, 0), 0);
}

static int fail_fn(struct rtid_attestation *a, void *arg)
{
	(void)a;
	(void)arg;
	return -ECANCELED;
}

/* Kill savers at random moments: the file always loads (old or new), and the
 * next update leaves no temp file. */
static void killed_saves_leave_old_or_new(void **state)
{
	int kills = 0, temps_seen = 0;
	int n = 200;

	(void)state;
	srand((unsigned)time(NULL));
	assert_int_equal(rtid_attest_update(path_in("k.json"), add_fn, &n, NULL, 0), 0);
	for (int i = 0; i < 60; i++) {
		struct rtid_attestation *a = NULL;
		int ready[2], st;
		char c;
		pid_t pid;

		assert_int_equal(pipe(ready), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(ready[0]);
			for (int k = 0;; k++) {
				rtid_attest_update(path_in("k.json"), add_fn, &n, NULL, 0);
				if (k == 0 && write(ready[1], "x", 1) != 1)
					_exit(1);
			}
		}
		close(ready[1]);
		assert_int_equal(read(ready[0], &c, 1), 1); /* one save done: now at random */
		close(ready[0]);
		{
			struct timespec ts = { 0, (long)(rand() % 4000) * 1000 };

			nanosleep(&ts, NULL);
		}
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		kills += WIFSIGNALED(st);
		assert_int_equal(rtid_attest_load(path_in("k.json"), &a, NULL, 0), 0);
		assert_non_null(rtid_attest_find(a, "580.1"));
		rtid_attest_free(a);
		temps_seen += count_named(test_dir, "k.json.tmp-") > 0;
		/* The next run, even one that saves nothing, removes the stale ones. */
		assert_int_equal(rtid_attest_update(path_in("k.json"), fail_fn, NULL, NULL, 0),
				 -ECANCELED);
		assert_int_equal(count_named(test_dir, "k.json.tmp-"), 0);
	}
	printf("killed %d savers; %d left a temp file, removed by the next run\n", kills,
	       temps_seen);
	/* A report writer killed: its temp file goes with the next write. */
	write_file(test_dir, ".rep.json.tmp-abcdefghijkl", "half");
	assert_int_equal(rtid__file_replace(path_in("rep.json"), "{}\n", 3), 0);
	assert_int_equal(count_named(test_dir, "rep.json.tmp-"), 0);
	assert_int_equal(kills, 60);
}

/* In a private mount namespace (so that nothing stays mounted if we die). */
static void full_disk_is_enospc_and_loses_nothing(void **state)
{
	char dir[600];
	int st;
	pid_t pid;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/small", test_dir);
	mkdir(dir, 0755);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rtid_attestation *a = NULL;
		char err[512] = "", fill[4096];
		int fd, n = 200, r;

		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0755") < 0)
			_exit(77);
		if (rtid_attest_update(path_in("small/att.json"), add_fn, NULL, NULL, 0) < 0)
			_exit(2);
		memset(fill, 'x', sizeof(fill));
		fd = open(path_in("small/fill"), O_WRONLY | O_CREAT, 0600);
		while (write(fd, fill, sizeof(fill)) > 0)
			;
		close(fd);
		r = rtid_attest_update(path_in("small/att.json"), add_fn, &n, err, sizeof(err));
		if (r != -ENOSPC || !strstr(err, "No space left on device"))
			_exit(3);
		if (rtid_attest_load(path_in("small/att.json"), &a, NULL, 0) < 0 ||
		    rtid_attest_find(a, "580.1")->reports != 1) /* the old file, whole */
			_exit(4);
		rtid_attest_free(a);
		if (count_named(dir, ".tmp-") != 0)
			_exit(5);
		if (rtid__file_replace(path_in("small/report.json"), fill, sizeof(fill)) != -ENOSPC ||
		    access(path_in("small/report.json"), F_OK) == 0) /* no empty report left */
			_exit(6);
		_exit(count_named(dir, ".tmp-") != 0 ? 7 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WEXITSTATUS(st) == 77)
		skip(); /* no mount namespace here (not root) */
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void only_safe_files_are_trusted(void **state)
{
	struct rtid_attestation *a = NULL;
	char why[512] = "";
	bool trusted = true;

	(void)state;
	write_file(test_dir, "t/att.json", "{\"format\": 1, \"drivers\": {\"580.1\": "
					   "{\"agree\": 12}}}");
	chmod(path_in("t"), 0755);
	chmod(path_in("t/att.json"), 0644);
	assert_int_equal(rtid_attest_path_safe(path_in("t/att.json"), why, sizeof(why)), 0);
	assert_int_equal(rtid_attest_load_trusted(path_in("t/att.json"), &a, &trusted, why,
						  sizeof(why)), 0);
	assert_true(trusted);
	assert_true(rtid_attest_clean(a, "580.1"));
	rtid_attest_free(a);
	/* Group-writable file. */
	chmod(path_in("t/att.json"), 0664);
	assert_int_equal(rtid_attest_path_safe(path_in("t/att.json"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "att.json is writable by group or others"));
	assert_int_equal(rtid_attest_load_trusted(path_in("t/att.json"), &a, &trusted, why,
						  sizeof(why)), 0);
	assert_false(trusted);
	assert_false(rtid_attest_clean(a, "580.1")); /* loaded, but nothing attested */
	assert_non_null(strstr(why, "writable by group or others"));
	rtid_attest_free(a);
	chmod(path_in("t/att.json"), 0644);
	/* Under a world-writable directory (not sticky). */
	chmod(path_in("t"), 0777);
	assert_int_equal(rtid_attest_path_safe(path_in("t/att.json"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "directory"));
	assert_non_null(strstr(why, "/t is writable by group or others"));
	/* ... and no update makes one there. */
	assert_int_equal(rtid_attest_update(path_in("t/new.json"), add_fn, NULL, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "not trusted, not created"));
	assert_int_equal(access(path_in("t/new.json"), F_OK), -1);
	assert_int_equal(access(path_in("t/new.json.lock"), F_OK), -1);
	/* Sticky (as /tmp): acceptable above a file of ours. */
	chmod(path_in("t"), 01777);
	assert_int_equal(rtid_attest_path_safe(path_in("t/att.json"), why, sizeof(why)), 0);
	assert_int_equal(rtid_attest_update(path_in("t/new.json"), add_fn, NULL, why, sizeof(why)),
			 0);
	assert_int_equal(rtid__att_dir_safe("/nonexistent/d", why, sizeof(why)), -ENOENT);
	chmod(path_in("t"), 0755);
	/* Missing and odd. */
	assert_int_equal(rtid_attest_path_safe(path_in("t/none.json"), why, sizeof(why)), -ENOENT);
	assert_int_equal(rtid_attest_load_trusted(path_in("t/none.json"), &a, &trusted, NULL, 0), 0);
	assert_true(trusted);
	rtid_attest_free(a);
	assert_int_equal(rtid_attest_path_safe(path_in("t"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "not a regular file"));
	assert_int_equal(rtid_attest_path_safe(NULL, NULL, 0), -EINVAL);
}

static void files_of_another_user_are_not_trusted(void **state)
{
	char why[512] = "";

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can give a file away */
	write_file(test_dir, "o/att.json", "{\"format\": 1, \"drivers\": {}}");
	chmod(path_in("o"), 0755);
	chmod(path_in("o/att.json"), 0644);
	assert_int_equal(chown(path_in("o/att.json"), 65534, 65534), 0);
	assert_int_equal(rtid_attest_path_safe(path_in("o/att.json"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "owned by another user"));
	assert_non_null(strstr(why, "uid 65534"));
	assert_int_equal(chown(path_in("o/att.json"), 0, 0), 0);
	/* A directory of another user above it. */
	assert_int_equal(chown(path_in("o"), 65534, 65534), 0);
	assert_int_equal(rtid_attest_path_safe(path_in("o/att.json"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "directory"));
	assert_int_equal(chown(path_in("o"), 0, 0), 0);
	/* A symlink of another user naming a safe file. */
	assert_int_equal(symlink(path_in("o/att.json"), path_in("o/l.json")), 0);
	assert_int_equal(lchown(path_in("o/l.json"), 65534, 65534), 0);
	assert_int_equal(rtid_attest_path_safe(path_in("o/l.json"), why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "symlink"));
	/* Sticky, world-writable, above an entry of another user: not acceptable. */
	chmod(path_in("o"), 01777);
	assert_int_equal(chown(path_in("o/att.json"), 65534, 65534), 0);
	assert_int_equal(rtid_attest_path_safe(path_in("o/att.json"), why, sizeof(why)), -EPERM);
	chmod(path_in("o"), 0755);
}

static void odd_paths(void **state)
{
	char cwd[4096], longname[300], err[512] = "";
	struct stat st;

	(void)state;
	/* A bare file name: the current directory. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(test_dir), 0);
	assert_int_equal(rtid_attest_update("bare.json", add_fn, NULL, NULL, 0), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(access(path_in("bare.json"), F_OK), 0);
	/* A name longer than a directory entry can be. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rtid_attest_update(path_in(longname), add_fn, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a file name"));
	/* One that fits, with no room left for its temporary name: refused,
	 * nothing written. */
	{
		char name[241];

		memset(name, 'm', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		assert_int_equal(rtid_attest_update(path_in(name), add_fn, NULL, err, sizeof(err)),
				 -ENAMETOOLONG);
		assert_int_equal(access(path_in(name), F_OK), -1);
	}
	assert_int_equal(rtid_attest_save(NULL, path_in("x.json")), -EINVAL);
	assert_int_equal(rtid__file_replace(NULL, "x", 1), -EINVAL);
	assert_int_equal(rtid__file_replace(path_in("x.json"), NULL, 1), -EINVAL);
	assert_int_equal(rtid_attest_update(path_in("x.json"), NULL, NULL, NULL, 0), -EINVAL);
	/* A lock file of ours with another mode gets 0644; one that is a directory
	 * (or a fifo) is refused. */
	write_file(test_dir, "m.json.lock", "");
	chmod(path_in("m.json.lock"), 0600);
	assert_int_equal(rtid_attest_update(path_in("m.json"), add_fn, NULL, NULL, 0), 0);
	assert_int_equal(stat(path_in("m.json.lock"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	write_file(test_dir, "d.json.lock/x", "");
	assert_int_equal(rtid_attest_update(path_in("d.json"), add_fn, NULL, err, sizeof(err)),
			 -EISDIR);
	assert_non_null(strstr(err, "d.json.lock: Is a directory"));
	assert_int_equal(mkfifo(path_in("f.json.lock"), 0644), 0);
	assert_int_equal(rtid_attest_update(path_in("f.json"), add_fn, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	/* A malformed file is not overwritten. */
	write_file(test_dir, "bad.json", "{oops\n");
	assert_int_equal(rtid_attest_update(path_in("bad.json"), add_fn, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "bad.json:1:"));
	assert_int_equal(count_lines(path_in("bad.json")), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(planted_links_at_temp_names_are_not_followed),
		cmocka_unit_test(symlink_is_written_through),
		cmocka_unit_test(mode_0644_whatever_the_umask),
		cmocka_unit_test(killed_saves_leave_old_or_new),
		cmocka_unit_test(full_disk_is_enospc_and_loses_nothing),
		cmocka_unit_test(only_safe_files_are_trusted),
		cmocka_unit_test(files_of_another_user_are_not_trusted),
		cmocka_unit_test(odd_paths),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
