/* Helpers shared by the unit tests: temporary proc-like trees and the like. */
#ifndef RTID_TEST_HELPERS_H
#define RTID_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

/* A fresh temporary directory (mkdtemp) under $TMPDIR if set and at most 40
 * bytes, else /tmp; the caller removes it with rm_tree. */
char *tmp_dir(void);
/* path and everything below it removed, links unlinked and never followed,
 * no mount point entered (harness/helpers.c). */
void rm_tree(const char *path);

/* A temporary directory for a whole cmocka group: test_dir_setup makes it,
 * test_dir_teardown removes it. */
extern char *test_dir;
int test_dir_setup(void **state);
int test_dir_teardown(void **state);

/* Write text to root/rel, creating parent directories. A comm written at
 * <pid>/task/<tid>/comm also (re)writes <pid>/status, with Tgid: and Threads:
 * counting the task directories, as the scan proves its walk by them. */
void write_file(const char *root, const char *rel, const char *text);

/* A process of a proc-like tree for pidns.c: root/<pid>/status holding
 * status, and root/<pid>/ns/pid a link reading ns. */
void ns_proc(const char *root, int pid, const char *ns, const char *status);

/* Lay out root/<pid>/task/<tid>/comm for each thread, comm + "\n". */
struct fake_thread {
	int tid;
	const char *comm;
};
void fake_process(const char *root, int pid, const struct fake_thread *t, size_t n);

/* A copy of the running program at to (mode 0755), its first byte changed
 * when flip (a program of the same size that is not this one). 0 or -errno. */
int copy_self(const char *to, bool flip);

/* Count open fds of this process (to prove nothing leaks). */
int count_fds(void);

/* Number of lines in a file, 0 if it does not exist. */
int count_lines(const char *path);

/* A file's first 64 KiB as a string ("" if it cannot be read), in a buffer
 * that the next call reuses. */
const char *slurp(const char *path);

/* Path of a built helper given through the environment (meson sets it). */
const char *env_path(const char *name);
/* /proc/PID/stat as the kernel writes it, with start time start (field 22),
 * into buf (len >= 256). */
void stat_line(int pid, unsigned long long start, char *buf, size_t len);
/* The median of v[0..n) (n > 0); sorts v. */
double median(double *v, size_t n);

/* Why FUSE cannot be used here, or NULL when it can. */
const char *fuse_unusable(void);

/* Report why a FUSE test cannot run: 77 (skip), or 1 when RTID_REQUIRE_FUSE=1. */
int skip_or_fail(const char *what, const char *why);

/* Whether path is a mount point now (from /proc/self/mountinfo). */
bool mounted(const char *path);

/* --- fuse-mount.c: a test's FUSE mount taken down, as root or as a user --- */
/* Detach the FUSE mount at mnt: umount2 as root, fusermount3 -u -z as a user
 * (only the setuid helper may). Quiet when nothing is mounted there.
 * Async-signal-safe. */
void fuse_detach(const char *mnt);
/* For a FUSE server about to mount mnt as a user: a watcher process that
 * detaches mnt once the server dies without fuse_watch_done (SIGKILL), as
 * libfuse's auto_unmount does for root only. Returns the fd to hand to
 * fuse_watch_done, or -1 (root: auto_unmount suffices; or no watcher). */
int fuse_watch_start(const char *mnt);
/* The server is done with its mount (it unmounted): the watcher leaves it. */
void fuse_watch_done(int fd);

/* Whether the tests run under a checker that slows every process down:
 * valgrind (RTID_UNDER_VALGRIND, set by the meson setup) or the sanitizers
 * (RTID_UNDER_SANITIZER, set by make check-sanitize). Long enumerations
 * sample under it so that the run stays within the suite's time budget. */
bool instrumented(void);

/* How much slower time bounds may be here: 10 under valgrind, 4 under the
 * sanitizers, else 1. */
double time_factor(void);

#endif
