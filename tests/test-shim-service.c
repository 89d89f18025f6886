/* The shim's question to rtid serve, in process: which argument lists are a
 * call the daemon answers (the rest never reach the socket), and that no
 * socket, or something else at its path, leaves the call to the shim. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "conf/conf.h"
#include "shim/shim.h"
#include "helpers.h"
#include "serve/serve.h"

#define ARGV(...) ((char *[]){ "cuda-checkpoint", __VA_ARGS__, NULL })

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* Occurrences of needle in text. */
static int count_in(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Whether the shim asked the socket: a listener with a backlog tells. */
static bool asked(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* A listener at DIR/s that never answers (its backlog tells who asked):
 * RTID_SOCKET names it and the shim's waits are short, so each call is
 * late. Its path in path; returns the listening fd. */
static int silent_daemon(const char *dir, char *path, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd;

	snprintf(path, len, "%s/s", dir);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 64), 0);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "0.01", 1); /* nobody answers: late */
	setenv("RTID_SERVICE_ACTION_TIMEOUT", "0.01", 1);
	return lfd;
}

static void test_which_calls_are_asked(void **state)
{
	char *dir = tmp_dir(), path[100];
	char **yes[] = {
		ARGV("--get-restore-tid", "--pid", "7"), ARGV("--pid", "7", "--get-restore-tid"),
		ARGV("--get-state", "--pid", "7"), ARGV("--action", "lock", "--pid", "7"),
		ARGV("--pid", "7", "--timeout", "0", "--action", "lock"),
		ARGV("--action", "unlock", "--pid", "7"), ARGV("--action", "restore", "--pid", "7"),
		ARGV("--action", "checkpoint", "--pid", "7"),
	};
	char **no[] = {
		ARGV("-h"), ARGV("--toggle", "--pid", "7"), ARGV("--get-restore-tid"),
		ARGV("--get-restore-tid", "--pid", "0"), ARGV("--get-restore-tid", "--pid"),
		ARGV("--pid", "7"), ARGV("--get-state", "--get-restore-tid", "--pid", "7"),
		ARGV("--get-state", "--pid", "7", "--pid", "7"), ARGV("--action", "freeze", "--pid", "7"),
		ARGV("--action"), ARGV("--get-state", "--pid", "7", "--timeout", "10"),
		ARGV("--action", "lock", "--pid", "7", "--timeout"),
		ARGV("--action", "lock", "--pid", "7", "--timeout", "1", "--timeout", "1"),
		ARGV("--action", "lock", "--pid", "7", "--timeout", "x"),
		ARGV("--action", "lock", "--action", "lock", "--pid", "7"),
	};
	char log[120];
	int lfd, rc = -1;

	(void)state;
	/* pid 7: a process of the caller's in a tree of the test's own (the shim
	 * applies the request rule before it asks). */
	write_file(dir, "proc/7/task/7/comm", "python3\n");
	snprintf(path, sizeof(path), "%s/proc", dir);
	setenv("RTID_PROC", path, 1);
	snprintf(log, sizeof(log), "%s/shim.log", dir);
	setenv("RTID_SHIM_LOG", log, 1);
	lfd = silent_daemon(dir, path, sizeof(path));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_false(shim_try_service(count(no[i]), no[i], &rc, NULL));
		assert_false(asked(lfd));
	}
	assert_int_equal(access(log, F_OK), -1); /* not the daemon's calls: nothing to say */
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_false(shim_try_service(count(yes[i]), yes[i], &rc, NULL)); /* late */
		assert_true(asked(lfd));
	}
	assert_int_equal(rc, -1);
	/* A daemon that does not answer says why in the shim's log, once per call. */
	assert_int_equal(count_lines(log), (int)(sizeof(yes) / sizeof(yes[0])));
	assert_non_null(strstr(slurp(log), ": no answer: "));
	close(lfd);
	/* The socket is there but nobody listens: that is said too. */
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc, NULL));
	assert_int_equal(count_lines(log), (int)(sizeof(yes) / sizeof(yes[0])) + 1);
	assert_non_null(strstr(slurp(log), ": cannot connect: Connection refused"));
	unlink(path);
	/* No socket, or a file at its path: nothing is asked, and the log says
	 * why. A bad wait is the default wait. */
	setenv("RTID_SERVICE_TIMEOUT", "bogus", 1);
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc, NULL));
	write_file(dir, "s", "not a socket\n");
	assert_false(shim_try_service(count(yes[0]), yes[0], &rc, NULL));
	unsetenv("RTID_SHIM_LOG");
	{
		char want[200];

		snprintf(want, sizeof(want), "get-restore-tid --pid 7: rtid serve not asked: no socket "
			 "at %s\n", path);
		assert_int_equal(count_lines(log), (int)(sizeof(yes) / sizeof(yes[0])) + 3);
		assert_int_equal(count_in(slurp(log), want), 2);
	}
	rm_tree(dir);
	free(dir);
}

/* A stand-in daemon at path, run as uid (when not ours): greets, answers one
 * request with ans (NULL: tid 4244; an action is told "started" first), then
 * exits. Returns its pid once it listens. */
static pid_t fake_daemon_says(const char *path, uid_t uid, const struct rtid__svc_ans *ans)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[RTID__SVC_MSG_MAX];
		struct rtid__svc_req q;
		struct rtid__svc_ans a = { .kind = RTID__SVC_TID, .value = 4244 };
		int lfd, fd;

		if (ans)
			a = *ans;
		ssize_t n;

		if (uid != geteuid() && (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0))
			_exit(3);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0)
			_exit(4);
		if (write(ready[1], "r", 1) != 1 || (fd = accept(lfd, NULL, NULL)) < 0)
			_exit(5);
		int v;

		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0 ||
		    rtid__svc_hello_parse(buf, (size_t)n, &v) < 0)
			_exit(0); /* the shim hung up at once */
		n = snprintf(buf, sizeof(buf), "hello %d actions", v); /* in its own version */
		if (send(fd, buf, (size_t)n, 0) != n || (n = recv(fd, buf, sizeof(buf), 0)) <= 0 ||
		    rtid__svc_req_parse(buf, (size_t)n, &q) < 0)
			_exit(0);
		a.op = q.op;
		a.pid = q.pid;
		if (q.op >= RTID__OP_LOCK) {
			struct rtid__svc_ans st = { .kind = RTID__SVC_STARTED, .op = q.op,
						    .pid = q.pid, .value = 1000 };

			n = (ssize_t)rtid__svc_ans_format(&st, buf);
			if (send(fd, buf, (size_t)n, 0) != n)
				_exit(6);
		}
		n = (ssize_t)rtid__svc_ans_format(&a, buf);
		_exit(send(fd, buf, (size_t)n, 0) == n ? 0 : 6);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

static pid_t fake_daemon(const char *path, uid_t uid)
{
	return fake_daemon_says(path, uid, NULL);
}

/* shim_try_service with fd (1 or 2) read into out: what it printed by the
 * time it returned (stdio flushed first, so nothing of the test's own
 * goes with it). */
static bool try_captured(char **argv, int *rc, int fd, char *out, size_t len)
{
	char *dir = tmp_dir(), path[200];
	int saved, f;
	bool r;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/out", dir);
	fflush(NULL);
	saved = dup(fd);
	f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && f >= 0);
	assert_int_equal(dup2(f, fd), fd);
	r = shim_try_service(count(argv), argv, rc, NULL);
	assert_int_equal(dup2(saved, fd), fd); /* before any assertion can print */
	close(saved);
	n = pread(f, out, len - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	close(f);
	rm_tree(dir);
	free(dir);
	return r;
}

/* The driver's error for a query is not final when it is not its "none": the
 * shim goes to the real tool, and says the resolver need not be asked; for
 * an action (started) it is the answer, printed as the tool prints it, also
 * for a code without a string. */
static void test_driver_errors_from_the_daemon(void **state)
{
	struct rtid__svc_ans illegal = { .kind = RTID__SVC_CUERR, .value = 700 },
			     unnamed = { .kind = RTID__SVC_CUERR, .value = 77 },
			     denied = { .kind = RTID__SVC_DENIED };
	char **q = ARGV("--get-restore-tid", "--pid", "7");
	char **lock = ARGV("--action", "lock", "--pid", "7", "--timeout", "100");
	char *dir = tmp_dir(), path[200], out[200];
	bool to_tool = false;
	int rc = -1, st;
	pid_t pid;

	(void)state;
	snprintf(illegal.name, sizeof(illegal.name), "CUDA_ERROR_ILLEGAL_ADDRESS");
	snprintf(illegal.text, sizeof(illegal.text), "an illegal memory access");
	snprintf(unnamed.name, sizeof(unnamed.name), "-");
	snprintf(unnamed.text, sizeof(unnamed.text), "-");
	write_file(dir, "proc/7/task/7/comm", "python3\n");
	snprintf(path, sizeof(path), "%s/proc", dir);
	setenv("RTID_PROC", path, 1);
	snprintf(path, sizeof(path), "%s/s", dir);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "5", 1);
	pid = fake_daemon_says(path, geteuid(), &illegal);
	assert_false(shim_try_service(count(q), q, &rc, &to_tool));
	assert_true(to_tool);
	waitpid(pid, &st, 0);
	unlink(path);
	pid = fake_daemon_says(path, geteuid(), &unnamed);
	assert_true(try_captured(lock, &rc, 2, out, sizeof(out)));
	assert_int_equal(rc, 77);
	assert_string_equal(out, "Could not lock process ID 7: \"error 77\"\n");
	waitpid(pid, &st, 0);
	unlink(path);
	/* Denied after "started" (no daemon of rtid's does so): the action may
	 * have reached the driver all the same, so it fails, never to the tool. */
	pid = fake_daemon_says(path, geteuid(), &denied);
	assert_true(try_captured(lock, &rc, 2, out, sizeof(out)));
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "its outcome is unknown, so it is not run again"));
	waitpid(pid, &st, 0);
	unlink(path);
	/* A tid is on stdout, whole, by the time the call returns. */
	pid = fake_daemon(path, geteuid());
	assert_true(try_captured(q, &rc, 1, out, sizeof(out)));
	assert_int_equal(rc, 0);
	assert_string_equal(out, "4244\n");
	waitpid(pid, &st, 0);
	unlink(path);
	unsetenv("RTID_SOCKET");
	unsetenv("RTID_PROC");
	rm_tree(dir);
	free(dir);
}

/* Without RTID_PROC, or with it empty, the shim's request rule reads the
 * kernel's /proc, as on a node: a query about the caller's own process goes
 * to the daemon, and its answer is the shim's. */
static void test_rule_reads_the_kernels_proc(void **state)
{
	char self[16], *dir = tmp_dir(), path[200];
	char **q = ARGV("--get-restore-tid", "--pid", self);
	int st;

	(void)state;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/s", dir);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "5", 1);
	for (int empty = 0; empty < 2; empty++) {
		int rc = -1;
		pid_t pid;

		if (empty)
			setenv("RTID_PROC", "", 1);
		else
			unsetenv("RTID_PROC");
		pid = fake_daemon(path, geteuid());
		assert_true(shim_try_service(count(q), q, &rc, NULL));
		assert_int_equal(rc, 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		unlink(path);
	}
	unsetenv("RTID_PROC");
	unsetenv("RTID_SOCKET");
	unsetenv("RTID_SERVICE_TIMEOUT");
	rm_tree(dir);
	free(dir);
}

/* A caller other than root: the shim applies the request rule as that
 * caller before it asks, as the daemon will: a query about another user's
 * process is not asked of the daemon; an action on the caller's own process
 * is (the real tool would let it act there). Root only: the caller is
 * nobody. */
static void test_rule_as_a_user(void **state)
{
	char **q = ARGV("--get-restore-tid", "--pid", "7");
	char **lock = ARGV("--action", "lock", "--pid", "8");
	char *dir = tmp_dir(), path[100];
	int lfd, st;
	pid_t kid;

	(void)state;
	if (geteuid() != 0) {
		rm_tree(dir);
		free(dir);
		skip();
	}
	assert_int_equal(chmod(dir, 0755), 0);
	write_file(dir, "proc/7/task/7/comm", "python3\n"); /* root's */
	write_file(dir, "proc/8/task/8/comm", "python3\n");
	snprintf(path, sizeof(path), "%s/proc/8", dir);
	assert_int_equal(chown(path, 65534, 65534), 0); /* nobody's */
	snprintf(path, sizeof(path), "%s/proc", dir);
	setenv("RTID_PROC", path, 1);
	lfd = silent_daemon(dir, path, sizeof(path));
	assert_int_equal(chmod(path, 0777), 0); /* nobody may connect */
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		int rc = -1;

		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(3);
		if (shim_try_service(count(q), q, &rc, NULL) || asked(lfd))
			_exit(4); /* root's process: not asked */
		if (shim_try_service(count(lock), lock, &rc, NULL) || !asked(lfd))
			_exit(5); /* its own: asked (late, so not answered) */
		_exit(0);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(lfd);
	unsetenv("RTID_SOCKET");
	unsetenv("RTID_PROC");
	unsetenv("RTID_SERVICE_TIMEOUT");
	unsetenv("RTID_SERVICE_ACTION_TIMEOUT");
	rm_tree(dir);
	free(dir);
}

/* The daemon's refusal and its error each leave a line in the shim's log
 * with its words (the real tool then answers the call). */
static void test_refusal_and_error_noted(void **state)
{
	struct rtid__svc_ans no = { .kind = RTID__SVC_DENIED }, err = { .kind = RTID__SVC_ERROR };
	char **q = ARGV("--get-restore-tid", "--pid", "7");
	char *dir = tmp_dir(), path[200], log[200], want[400];
	int rc = -1, st;
	pid_t pid;

	(void)state;
	snprintf(no.text, sizeof(no.text), "not a process of yours");
	snprintf(err.name, sizeof(err.name), "worker-failed");
	snprintf(err.text, sizeof(err.text), "cuInit failed");
	write_file(dir, "proc/7/task/7/comm", "python3\n");
	snprintf(path, sizeof(path), "%s/proc", dir);
	setenv("RTID_PROC", path, 1);
	snprintf(log, sizeof(log), "%s/shim.log", dir);
	setenv("RTID_SHIM_LOG", log, 1);
	snprintf(path, sizeof(path), "%s/s", dir);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "5", 1);
	pid = fake_daemon_says(path, geteuid(), &no);
	assert_false(shim_try_service(count(q), q, &rc, NULL));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(path);
	snprintf(want, sizeof(want), "rtid serve at %s: denied: not a process of yours\n", path);
	assert_non_null(strstr(slurp(log), want));
	pid = fake_daemon_says(path, geteuid(), &err);
	assert_false(shim_try_service(count(q), q, &rc, NULL));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(path);
	snprintf(want, sizeof(want), "rtid serve at %s: worker-failed: cuInit failed\n", path);
	assert_non_null(strstr(slurp(log), want));
	assert_int_equal(count_lines(log), 2);
	assert_int_equal(rc, -1);
	unsetenv("RTID_SHIM_LOG");
	unsetenv("RTID_SOCKET");
	unsetenv("RTID_PROC");
	unsetenv("RTID_SERVICE_TIMEOUT");
	rm_tree(dir);
	free(dir);
}

/* The shim reads an answer only from a daemon that runs as root, as itself,
 * or as RTID_SERVE_UID: anyone else who got to listen on the path could
 * name any tid. */
static void test_untrusted_daemon_is_not_read(void **state)
{
	char **q = ARGV("--get-restore-tid", "--pid", "7");
	char *dir = tmp_dir(), path[200], log[200];
	int rc = -1, st, fds;
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		rm_tree(dir);
		free(dir);
		skip(); /* a daemon of another uid needs root to start */
	}
	assert_int_equal(chmod(dir, 0755), 0);
	write_file(dir, "proc/7/task/7/comm", "python3\n");
	write_file(dir, "sock/.keep", "");
	snprintf(path, sizeof(path), "%s/sock", dir);
	assert_int_equal(chmod(path, 0777), 0);
	snprintf(path, sizeof(path), "%s/proc", dir);
	setenv("RTID_PROC", path, 1);
	snprintf(log, sizeof(log), "%s/shim.log", dir);
	setenv("RTID_SHIM_LOG", log, 1);
	snprintf(path, sizeof(path), "%s/sock/s", dir);
	setenv("RTID_SOCKET", path, 1);
	setenv("RTID_SERVICE_TIMEOUT", "5", 1);
	unsetenv("RTID_SERVE_UID");
	/* Another uid's daemon: not asked further, said in the log; the
	 * connection is closed. */
	pid = fake_daemon(path, 65534);
	fds = count_fds();
	assert_false(shim_try_service(count(q), q, &rc, NULL));
	assert_int_equal(count_fds(), fds);
	assert_non_null(strstr(slurp(log), "not trusted: it runs as uid 65534, not root"));
	waitpid(pid, &st, 0);
	unlink(path);
	/* The same daemon, named by RTID_SERVE_UID: its answer is the shim's. */
	setenv("RTID_SERVE_UID", "65534", 1);
	pid = fake_daemon(path, 65534);
	assert_true(shim_try_service(count(q), q, &rc, NULL));
	assert_int_equal(rc, 0);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(path);
	unsetenv("RTID_SERVE_UID");
	/* Root's daemon is trusted as it is; its connection is closed too. */
	pid = fake_daemon(path, 0);
	fds = count_fds();
	assert_true(shim_try_service(count(q), q, &rc, NULL));
	assert_int_equal(count_fds(), fds);
	waitpid(pid, &st, 0);
	unsetenv("RTID_SHIM_LOG");
	unsetenv("RTID_SOCKET");
	rm_tree(dir);
	free(dir);
}

/* The shim's log: each note one line of at most 2047 bytes, its newline
 * included; a note that fits is whole, a longer one cut, never split. The
 * prefix is the time (24 bytes: 2026-12-05T10:00:00.000Z) and the pid. */
static void test_note_is_one_bounded_line(void **state)
{
	char *dir = tmp_dir(), log[200], body[2100], prefix[40];
	size_t head;

	(void)state;
	snprintf(log, sizeof(log), "%s/shim.log", dir);
	head = 24 + (size_t)snprintf(prefix, sizeof(prefix), " %d: ", (int)getpid());
	setenv("RTID_SHIM_LOG", log, 1);
	for (size_t want = 2045; want <= 2049; want++) {
		const char *text;
		size_t n = want - head, got;

		memset(body, 'n', n);
		body[n] = '\0';
		unlink(log);
		shim_note("%s", body); /* a line of want bytes before its newline */
		text = slurp(log);
		got = strlen(text);
		assert_int_equal(got, want < 2047 ? want + 1 : 2047);
		assert_int_equal(text[got - 1], '\n');
		assert_null(memchr(text, '\n', got - 1));
		assert_int_equal(text[23], 'Z');
		assert_memory_equal(text + 24, prefix, strlen(prefix));
	}
	/* Created for its owner alone: a note holds a call's whole argv. */
	{
		struct stat st;
		mode_t old = umask(0);

		unlink(log);
		shim_note("created");
		umask(old);
		assert_int_equal(stat(log, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
	unsetenv("RTID_SHIM_LOG");
	rm_tree(dir);
	free(dir);
}

/* Where the note goes: only a regular file, never a FIFO even with a
 * reader (nor a terminal: what such a path leads to may be what CRIU reads);
 * written on fd 0 too, when the shim was started with stdin closed; and no
 * fd left open behind it. */
static void test_note_only_to_a_file(void **state)
{
	char *dir = tmp_dir(), path[200], buf[64];
	int fd, in, next;

	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); /* a reader is there */
	assert_true(fd >= 0);
	setenv("RTID_SHIM_LOG", path, 1);
	shim_note("to a fifo");
	assert_int_equal(read(fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	close(fd);
	/* A regular file, opened on fd 0 (stdin closed). */
	snprintf(path, sizeof(path), "%s/log", dir);
	setenv("RTID_SHIM_LOG", path, 1);
	in = fcntl(0, F_DUPFD_CLOEXEC, 3);
	assert_true(in >= 0);
	close(0);
	shim_note("with stdin closed");
	next = open("/dev/null", O_RDONLY | O_CLOEXEC); /* 0 again: the note's fd is closed */
	assert_int_equal(dup2(in, 0), 0);
	close(in);
	assert_int_equal(next, 0);
	assert_non_null(strstr(slurp(path), ": with stdin closed\n"));
	unsetenv("RTID_SHIM_LOG");
	rm_tree(dir);
	free(dir);
}

/* The daemon's log: one line per event, cut rather than split when long. */
static void test_log_line_is_bounded(void **state)
{
	char big[1000], got[2048];
	int p[2], saved = dup(2);
	ssize_t n;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(pipe(p), 0);
	dup2(p[1], 2);
	serve_log("denied %s", big);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], got, sizeof(got));
	close(p[0]);
	assert_true(n > 500 && n < 530);
	assert_int_equal(got[n - 1], '\n');
	assert_null(memchr(got, '\n', (size_t)n - 1));
}

/* Each setting judged as the shim and rtid doctor judge it: the values it
 * takes pass, every other names what is accepted; empty is the default. */
static void test_settings_judged(void **state)
{
	static const struct { const char *name, *value; bool ok; } t[] = {
		{ "RTID_MODE", "canary", true },      { "RTID_MODE", "fast", false },
		{ "RTID_BACKEND", "tool", true },     { "RTID_BACKEND", "api", true },
		{ "RTID_BACKEND", "API", false },     { "RTID_TIMEOUT", "0.5", true },
		{ "RTID_TIMEOUT", "0", false },       { "RTID_SERVICE_TIMEOUT", "2", true },
		{ "RTID_SERVICE_ACTION_TIMEOUT", "1e9", false },
		{ "RTID_SERVE_UID", "0", true },      { "RTID_SERVE_UID", "65534", true },
		{ "RTID_SERVE_UID", "nobody", false }, { "RTID_SERVE_UID", "-1", false },
		{ "RTID_UNATTESTED", "0", true },     { "RTID_UNATTESTED", "1", true },
		{ "RTID_UNATTESTED", "2", false },    { "RTID_PATTERN", "^cuda[0-9]+$", true },
		{ "RTID_PATTERN", "(", false },       { "RTID_REAL_TOOL", "anything at all", true },
		{ "RTID_MODE", "", true },            { "RTID_BACKEND", NULL, true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *why = cli_conf_unusable(t[i].name, t[i].value);

		if (t[i].ok != (why == NULL))
			fail_msg("%s=%s: %s", t[i].name, t[i].value ? t[i].value : "(unset)",
				 why ? why : "taken");
	}
	assert_string_equal(cli_conf_unusable("RTID_BACKEND", "x"), "tool or api");
	assert_string_equal(cli_conf_unusable("RTID_UNATTESTED", "yes"), "1 (scan unattested) or 0");
	assert_non_null(strstr(cli_conf_unusable("RTID_SERVE_UID", "root"), "not a name"));
}

static void no_line(void *ctx, unsigned line, const char *name, const char *value)
{
	(void)line, (void)name, (void)value;
	(*(int *)ctx)++;
}

/* A settings file is read only when it can be trusted and is of a sane
 * size; each refusal says why, and no line of it reaches the caller. */
static void test_settings_file_refused(void **state)
{
	char *dir = tmp_dir(), path[200], big[17 * 1024];
	const char *why = NULL;
	int lines = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/shim.conf", dir);
	write_file(dir, "shim.conf", "RTID_MODE=scan\n");
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(rtid__conf_read(path, no_line, &lines, &why), -EPERM);
	assert_string_equal(why, "writable by group or others");
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(rtid__conf_read(path, no_line, &lines, &why), 0);
	assert_int_equal(lines, 1);
	lines = 0;
	/* A directory at the path. */
	assert_int_equal(rtid__conf_read(dir, no_line, &lines, &why), -EPERM);
	assert_string_equal(why, "not a regular file");
	/* A link: never followed. */
	snprintf(big, sizeof(big), "%s/link.conf", dir);
	assert_int_equal(symlink(path, big), 0);
	assert_int_equal(rtid__conf_read(big, no_line, &lines, &why), -ELOOP);
	assert_non_null(why);
	/* Past 16 KiB: refused whole. */
	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(dir, "shim.conf", big);
	assert_int_equal(rtid__conf_read(path, no_line, &lines, &why), -EFBIG);
	assert_string_equal(why, "larger than 16 KiB");
	assert_int_equal(rtid__conf_read("/nonexistent/shim.conf", no_line, &lines, &why), -ENOENT);
	assert_int_equal(lines, 0);
	rm_tree(dir);
	free(dir);
}

/* Where the file is looked for: RTID_SHIM_CONF ("" for none), else
 * PREFIX/etc/rtid/shim.conf where PREFIX is the reader's own file less its
 * last components (rtid: PREFIX/bin/rtid; the plugin:
 * PREFIX/LIBDIR/rtid/criu/cuda_plugin.so), when it exists, else the
 * system's. */
static void test_settings_file_found(void **state)
{
	char *dir = tmp_dir(), self[300], want[300], buf[400];
	const char *got;

	(void)state;
	unsetenv("RTID_SHIM_CONF");
	write_file(dir, "lib/x86_64-linux-gnu/rtid/criu/cuda_plugin.so", "");
	snprintf(self, sizeof(self), "%s/lib/x86_64-linux-gnu/rtid/criu/cuda_plugin.so", dir);
	snprintf(want, sizeof(want), "%s/etc/rtid/shim.conf", dir);
	got = rtid__conf_path(self, 5, buf, sizeof(buf));
	assert_string_not_equal(got, want); /* none there yet: the system's */
	write_file(dir, "etc/rtid/shim.conf", "RTID_MODE=driver\n");
	assert_string_equal(rtid__conf_path(self, 5, buf, sizeof(buf)), want);
	assert_string_not_equal(rtid__conf_path(self, 4, buf, sizeof(buf)), want);
	assert_string_not_equal(rtid__conf_path(NULL, 5, buf, sizeof(buf)), want);
	assert_string_not_equal(rtid__conf_path("cuda_plugin.so", 5, buf, sizeof(buf)), want);
	setenv("RTID_SHIM_CONF", "/elsewhere.conf", 1);
	assert_string_equal(rtid__conf_path(self, 5, buf, sizeof(buf)), "/elsewhere.conf");
	setenv("RTID_SHIM_CONF", "", 1);
	assert_null(rtid__conf_path(self, 5, buf, sizeof(buf)));
	unsetenv("RTID_SHIM_CONF");
	rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_calls_are_asked),
		cmocka_unit_test(test_note_is_one_bounded_line),
		cmocka_unit_test(test_note_only_to_a_file),
		cmocka_unit_test(test_log_line_is_bounded),
		cmocka_unit_test(test_untrusted_daemon_is_not_read),
		cmocka_unit_test(test_driver_errors_from_the_daemon),
		cmocka_unit_test(test_rule_reads_the_kernels_proc),
		cmocka_unit_test(test_refusal_and_error_noted),
		cmocka_unit_test(test_rule_as_a_user),
		cmocka_unit_test(test_settings_judged),
		cmocka_unit_test(test_settings_file_refused),
		cmocka_unit_test(test_settings_file_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
