/* The OS vocabulary every layer of rtid shares: children with captured
 * output, timeouts and their own process group; the monotonic clock; a small
 * file read at a directory fd; the search for an executable. Depends on
 * nothing of rtid's (see basic/README.md). Names carry a double underscore. */
#ifndef RTID_BASIC_H
#define RTID_BASIC_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RTID__OUT_MAX 256  /* kept stdout bytes; a tid needs 11 */
#define RTID__STDERR_KEEP 512 /* kept stderr bytes, for the error detail */
#define RTID__MAX_CHILDREN 64 /* most children one wait handles */
#define RTID__NOPIDFD_POLL_MS 5 /* how often an exit is asked for without pidfds */
#define RTID__EXIT_GRACE_S 0.2 /* output still awaited after a child's exit */

/* --- clock.c --- */
/* CLOCK_MONOTONIC seconds: the clock of every timeout and deadline in rtid. */
double rtid__now(void);

/* --- fileio.c --- */
#define RTID__READ_WHOLE 1u    /* more than cap bytes is -EOVERFLOW, not a cut */
#define RTID__READ_NOFOLLOW 2u /* a symbolic link as the last part is refused */
/* Read dirfd/path (AT_FDCWD: relative to the working directory) into buf, at
 * most cap bytes, looping to EOF or cap (a read may return less than is
 * there; EINTR is retried). Returns the length read, or a negative errno:
 * the open's or the read's, -EOVERFLOW with RTID__READ_WHOLE when the file
 * has more than cap bytes. buf is not terminated. The open is a failure
 * point of the RTID_FIU build (sys.h). */
ssize_t rtid__read_at(int dirfd, const char *path, char *buf, size_t cap, unsigned flags);
/* One line of a file (without its newline; not terminated), whole or cut:
 * a line longer than RTID__LINE_PIECE is given once, cut to its start.
 * Returns 0 to go on, > 0 to stop (found), < 0 to stop with that error. */
#define RTID__LINE_PIECE 4096
typedef int (*rtid__line_fn)(const char *line, size_t len, bool whole, void *arg);
/* Call fn for each line of dirfd/path in order, reading it in pieces, so
 * that a file of any length (a status file whose Groups: line holds
 * thousands of groups) is read to its end with a fixed buffer. Returns 0
 * at the end or when fn stopped it with > 0; fn's negative value; or the
 * open's or a read's -errno. */
int rtid__read_lines(int dirfd, const char *path, rtid__line_fn fn, void *arg);
/* pid's start time, field 22 of <proc_root>/<pid>/stat (NULL: /proc): 0 and
 * *out, or a negative errno (-EINVAL for pid <= 0 or a line not of the
 * kernel's shape). The one reader of it: rtid_proc_start_time (the library,
 * the daemon) and rtid's CRIU plugin, which may not use proc/. */
int rtid__start_time_read(const char *proc_root, int pid, unsigned long long *out);
/* Whether the file at path holds s as a string of its own (a NUL on each
 * side, as a program's version string stands in its binary): 1 or 0, or the
 * -errno of the open, fstat or mmap. Maps the file; keeps no descriptor. */
int rtid__file_has_cstring(const char *path, const char *s);
/* Make the directory path (its parent must exist) with mode, the umask
 * not applied, never through a link: a link at that name is -ELOOP (or
 * -ENOTDIR), whatever it points to. 0 when made, 1 when a directory was
 * there, else -errno. */
int rtid__mkdir_safe(const char *path, mode_t mode);

/* --- exec.c: what can be run --- */
/* 0 when execve could run path: a regular file we may execute (a directory
 * passes access(X_OK), and execvp passes over it); else -errno, -EACCES for
 * anything but a regular file. Every lookup of a program takes only what this
 * accepts. */
int rtid__executable(const char *path);
/* Whether path is the running program or a byte-identical copy of it. */
bool rtid__is_self(const char *path);
/* rtid's ELF note: every rtid program (any version, the static build)
 * carries a note of this name and type whose text is its version (main.c
 * writes it), so that an rtid is known by what it is, not by its bytes. */
#define RTID__NOTE_NAME "rtid"
#define RTID__NOTE_TYPE 1
/* Whether path is an ELF program of ours (our class and byte order) with
 * rtid's note: 1 and its version in ver (when ver is not NULL; cut to vlen),
 * 0 for anything else (not ELF, no such note, a note segment that does not
 * hold together), or the open's -errno. Reads the headers and note segments
 * only, never the whole file. */
int rtid__rtid_note(const char *path, char *ver, size_t vlen);
/* Whether path is an rtid: the running program, a copy of it, or another
 * build that carries rtid's note. Never the real tool. */
bool rtid__is_rtid(const char *path);
/* Find the program name (NULL: "cuda-checkpoint"): a path with '/' as it is,
 * else the first executable of that name on PATH that is no rtid: not the
 * running program (by inode or identical content) nor another rtid build
 * (its note), so that a shim never finds itself or another shim. Returns 0
 * and a malloc'd *out, -ENOENT, or -ENOMEM. */
int rtid__tool_find(const char *name, char **out);

/* --- spawn.c and children.c: a child with captured output, a timeout, its
 * own group, killed if we die --- */
struct rtid__child {
	pid_t pid;
	int pidfd;
	int fd[2]; /* stdout, stderr read ends; -1 once at EOF */
	bool reaped, timed_out;
	int status;      /* waitpid status once reaped */
	double deadline; /* monotonic seconds */
	char out[RTID__OUT_MAX];
	size_t out_len;
	bool out_overflow;
	char err[RTID__STDERR_KEEP];
	size_t err_len;
};
/* Start path with argv (stdin /dev/null, fresh process group, default signal
 * dispositions and mask, PR_SET_PDEATHSIG SIGKILL; only our read ends of the
 * pipes are non-blocking). Registered for rtid__kill_children until reaped.
 * Returns 0 or a negative errno (-ENOENT: no such program; -EMFILE, -ENFILE,
 * -EAGAIN: out of fds or processes for now). */
int rtid__child_start(struct rtid__child *c, const char *path, char *const argv[],
		      double timeout_s);
/* The same, with extra_fd (when >= 0) as the child's fd 3. */
int rtid__child_start_fd(struct rtid__child *c, const char *path, char *const argv[],
			 double timeout_s, int extra_fd);
bool rtid__child_done(const struct rtid__child *c);
/* waitpid(pid, status, 0), again after EINTR; a child reaped by someone else
 * reads as killed by SIGKILL. */
void rtid__wait(pid_t pid, int *status);
/* Take pid out of the registry of running children (it is being reaped). */
void rtid__live_remove(pid_t pid);
/* Kill every registered child's group and reap it (async-signal-safe). The
 * library's rtid_kill_children is this. */
void rtid__kill_children(void);
/* Fill up to 3 pollfds for c; returns how many. */
int rtid__child_pollfds(const struct rtid__child *c, struct pollfd *p);
/* Without a pidfd: reap the child if it has exited (no-op otherwise). */
void rtid__child_check_exit(struct rtid__child *c);
/* Consume the events of the pollfds that rtid__child_pollfds gave. */
void rtid__child_handle(struct rtid__child *c, const struct pollfd *p, int np);
/* Kill the group, reap the child, close everything; marks timed_out when asked. */
void rtid__child_abort(struct rtid__child *c, bool timed_out);
/* Run children until each is done (any: until one is), a child past its own
 * deadline being aborted as timed out, or until batch_deadline (monotonic
 * seconds, <= 0: none) passes. Returns true if the batch deadline stopped it;
 * undone children are then left for the caller to abort. */
bool rtid__children_wait(struct rtid__child **v, size_t n, double batch_deadline, bool any);

#endif
