/* Who may ask rtid serve what, how its socket is made and handed over, and
 * how it stops: the socket's mode and group, SO_PEERCRED per request (a
 * non-root peer in a forked child), systemd's socket and readiness, a clean
 * SIGTERM with a request in flight, and memory and fds flat over 100,000
 * requests. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/parse.h"
#include "helpers.h"
#include "rtid.h"
#include "serve-harness.h"

/* A request without a map (only a restore takes one). */
#define REQ(o, p, t) { .op = (o), .pid = (p), .timeout_ms = (t) }

#define NOBODY 65534
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const int pids[] = { 100, 400, 500, 0 };
static struct daemon d;

static int setup(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-denied-peer", pids);
	return 0;
}

/* As setup, with 500 nobody's, and the socket's directory open to nobody:
 * for the tests that ask as nobody (root only). */
static int setup_root(void **state)
{
	char p500[400];

	setup(state);
	snprintf(p500, sizeof(p500), "%s/500", d.proc);
	assert_int_equal(chown(p500, NOBODY, NOBODY), 0);
	assert_int_equal(chmod(d.dir, 0711), 0); /* nobody may reach the socket, no more */
	return 0;
}

static int setup_hang(void **state)
{
	(void)state;
	hd_prepare(&d, "@serve-worker-hang", pids);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (d.pid > 0)
		kill(d.pid, SIGCONT); /* a test that stopped it and failed */
	hd_cleanup(&d);
	return 0;
}

/* In a child as uid nobody, primary group gid, supplementary groups the ng
 * of groups: the answer kind for each request, one byte each on the pipe
 * (0xff: no answer). */
static void as_user_in(gid_t gid, const gid_t *groups, size_t ng, const struct rtid__svc_req *q,
		       size_t n, unsigned char *kinds)
{
	int p[2], st;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (setgroups(ng, groups) < 0 || setgid(gid) < 0 || setuid(NOBODY) < 0)
			_exit(3);
		for (size_t i = 0; i < n; i++) {
			struct rtid__svc_ans a;
			unsigned char k = hd_ask(&d, q[i].op, q[i].pid, q[i].timeout_ms, &a) == 0
						  ? (unsigned char)a.kind : 0xff;

			if (write(p[1], &k, 1) != 1)
				_exit(4);
		}
		_exit(0);
	}
	close(p[1]);
	for (size_t got = 0; got < n;) {
		ssize_t r = read(p[0], kinds + got, n - got);

		assert_true(r > 0);
		got += (size_t)r;
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The same with supplementary groups bin (2) and then extra (none at all
 * when extra is 0): extra second, so that the daemon must look past the
 * first group. */
static void as_user(gid_t gid, gid_t extra, const struct rtid__svc_req *q, size_t n,
		    unsigned char *kinds)
{
	const gid_t groups[] = { 2, extra };

	as_user_in(gid, groups, extra ? 2 : 0, q, n, kinds);
}

static void as_nobody(const struct rtid__svc_req *q, size_t n, unsigned char *kinds)
{
	as_user(NOBODY, 0, q, n, kinds);
}

/* Membership by a supplementary group counts, as the kernel gives the groups
 * of the connection (SO_PEERGROUPS), never the user database: nobody with
 * primary group daemon (1) and nogroup beside it (after bin) may act on its
 * own process. */
static void test_action_group_supplementary(void **state)
{
	const struct rtid__svc_req q[] = { REQ(RTID__OP_LOCK, 500, 1000), REQ(RTID__OP_UNLOCK, 500, 0) };
	unsigned char k[2];

	(void)state;
	hd_start(&d, ARGS("--group", "65534", "--actions", "--action-group", "nogroup"));
	as_user(1, NOBODY, q, 2, k);
	assert_int_equal(k[0], RTID__SVC_DONE);
	assert_int_equal(k[1], RTID__SVC_DONE);
}

/* The groups are each connection's own, all of them and no more: with sys
 * (3) the action group, nobody in bin and sys may act on its own process,
 * and nobody in bin alone, asking next, may not. */
static void test_action_group_per_connection(void **state)
{
	const struct rtid__svc_req q[] = { REQ(RTID__OP_LOCK, 500, 1000), REQ(RTID__OP_UNLOCK, 500, 0) };
	const gid_t member[] = { 2, 3 }, other[] = { 2 };
	unsigned char k[2];

	(void)state;
	hd_start(&d, ARGS("--group", "65534", "--actions", "--action-group", "3"));
	as_user_in(NOBODY, member, 2, q, 2, k);
	assert_int_equal(k[0], RTID__SVC_DONE);
	assert_int_equal(k[1], RTID__SVC_DONE);
	as_user_in(NOBODY, other, 1, q, 1, k);
	assert_int_equal(k[0], RTID__SVC_DENIED);
}

static void test_socket_mode_and_group(void **state)
{
	struct stat st;

	(void)state;
	hd_start(&d, ARGS("--group", "65534"));
	assert_int_equal(lstat(d.sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, NOBODY);
}

/* In the background, as in as_user (gid (gid_t)-1: as the test itself): one
 * request on its own connection, its answer kind written to *out's pipe
 * (0xff: no answer). Returns the child. */
static pid_t bg_as_user(gid_t gid, gid_t extra, const struct rtid__svc_req *q, int *out)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rtid__svc_ans a;
		unsigned char k;

		close(p[0]);
		if (gid != (gid_t)-1 &&
		    (setgroups(extra ? 1 : 0, &extra) < 0 || setgid(gid) < 0 || setuid(NOBODY) < 0))
			_exit(3);
		k = hd_ask(&d, q->op, q->pid, q->timeout_ms, &a) == 0 ? (unsigned char)a.kind : 0xff;
		_exit(write(p[1], &k, 1) == 1 ? 0 : 4);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

static unsigned char bg_wait(pid_t pid, int fd)
{
	unsigned char k = 0xfe;
	int st;

	assert_int_equal(read(fd, &k, 1), 1);
	close(fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return k;
}

struct want {
	const char *line;
	bool seen;
};

static void stat_seen(void *ctx, const char *stat)
{
	struct want *w = ctx;

	w->seen |= strcmp(stat, w->line) == 0;
}

/* Wait (bounded) until the daemon holds n requests taken at intake and
 * waiting their turn ("stat queued"): the daemon's word, polled. */
static void wait_queued(int n)
{
	struct timespec tick = { 0, 5000000 };
	char line[32];
	struct want w = { line, false };

	snprintf(line, sizeof(line), "queued %d", n);
	for (int i = 0; i < 2000 * time_factor() && !w.seen; i++) {
		struct rtid__svc_conn c;

		if (i)
			nanosleep(&tick, NULL);
		assert_int_equal(rtid__svc_open(d.sock, &c), 0);
		assert_int_equal(rtid__svc_status(&c, rtid__now() + 20 * time_factor(), stat_seen, &w),
				 0);
		rtid__svc_close(&c);
	}
	assert_true(w.seen);
}

static void slow_lock(const char *seconds)
{
	if (seconds) {
		setenv("RTID_MOCK_SLOW_OPS", "lock", 1);
		setenv("RTID_MOCK_SLOW_S", seconds, 1);
	} else {
		unsetenv("RTID_MOCK_SLOW_OPS");
		unsetenv("RTID_MOCK_SLOW_S");
	}
}

/* The same rule again before the driver, on a proc tree: 500 becomes a
 * thread of 400 while a checkpoint of it waits behind a lock (denied, as a
 * new request is), and 100 gains a start time it had none of at intake (the
 * process is not the one asked about: process-changed). Neither checkpoint
 * reaches the driver. No root needed. */
static void test_facts_changed_while_queued(void **state)
{
	const int who[2] = { 500, 100 };
	pid_t lk[2], ck[2];
	int lfd[2], cfd[2];

	(void)state;
	slow_lock("3");
	hd_start(&d, ARGS("--actions"));
	for (int j = 0; j < 2; j++) {
		lk[j] = bg_as_user((gid_t)-1, 0, &(struct rtid__svc_req)REQ(RTID__OP_LOCK, who[j], 1000),
				   &lfd[j]);
		hd_log_wait(&d, "lock", who[j], 0);
	}
	for (int j = 0; j < 2; j++)
		ck[j] = bg_as_user((gid_t)-1, 0,
				   &(struct rtid__svc_req)REQ(RTID__OP_CHECKPOINT, who[j], 0), &cfd[j]);
	wait_queued(2);
	write_file(d.proc, "500/status", "Name:\tpython3\nTgid:\t400\nThreads:\t2\n");
	write_file(d.proc, "100/stat", "100 (python3) S 1 100 100 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 "
		   "1 0 12345 0 0\n");
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock-end\""), 0); /* still inside */
	for (int j = 0; j < 2; j++)
		assert_int_equal(bg_wait(lk[j], lfd[j]), RTID__SVC_DONE);
	assert_int_equal(bg_wait(ck[0], cfd[0]), RTID__SVC_DENIED);
	assert_int_equal(bg_wait(ck[1], cfd[1]), RTID__SVC_ERROR);
	assert_int_equal(hd_log_count(&d, "\"event\":\"checkpoint\""), 0);
	assert_true(hd_said(&d, "a thread, not a process"));
	slow_lock(NULL);
}

/* The request rule is applied again right before the driver is called: a
 * member of the action group queues checkpoint X behind its own slow lock
 * X; X meanwhile becomes root's (same pid, same start time, as a setuid-root
 * exec makes it). The queued checkpoint is denied, as the same request sent
 * now is, and never reaches the driver. Needs root (setresuid); the daemon
 * reads the real /proc. */
static void test_owner_changed_while_queued(void **state)
{
	int ready[2], go[2], lfd, cfd;
	char text[256], c;
	pid_t x, lk, ck;

	(void)state;
	if (geteuid() != 0)
		skip(); /* setresuid needs root */
	/* Close-on-exec: the daemon must not hold X's go pipe open. */
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	x = fork();
	assert_true(x >= 0);
	if (x == 0) {
		/* nobody's, with root kept as the saved uid; dumpable, so that
		 * its /proc directory is nobody's. */
		close(go[1]);
		close(ready[0]);
		if (setresuid(NOBODY, NOBODY, 0) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0 ||
		    write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		if (setresuid(0, 0, 0) < 0 || write(ready[1], "c", 1) != 1)
			_exit(4);
		_exit(read(go[0], &c, 1) == 0 ? 0 : 5); /* until the test closes go */
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	snprintf(text, sizeof(text), "title owner\nproves owner\ndriver 580.159.03\nbackend api\n"
		 "task %d %d sleep\nanswer %d tid %d\nexpect driver %d tid=%d\n", x, x, x, x, x, x);
	write_file(d.dir, "t.case", text);
	slow_lock("3");
	hd_start(&d, ARGS("--group", "65534", "--actions", "--action-group", "nogroup", "--proc",
			  "/proc"));
	lk = bg_as_user(1, NOBODY, &(struct rtid__svc_req)REQ(RTID__OP_LOCK, x, 1000), &lfd);
	hd_log_wait(&d, "lock", x, 0); /* in the driver, for a while */
	ck = bg_as_user(1, NOBODY, &(struct rtid__svc_req)REQ(RTID__OP_CHECKPOINT, x, 0), &cfd);
	wait_queued(1); /* taken at intake (the rule passed: X is nobody's), waiting its turn */
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'c'); /* X is root's now */
	/* Still inside the lock: the checkpoint has not been handed on yet. */
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock-end\""), 0);
	assert_int_equal(bg_wait(lk, lfd), RTID__SVC_DONE);
	assert_int_equal(bg_wait(ck, cfd), RTID__SVC_DENIED);
	assert_int_equal(hd_log_count(&d, "\"event\":\"checkpoint\""), 0);
	assert_true(hd_said(&d, "belongs to another user"));
	/* The same request sent now: denied as well. */
	ck = bg_as_user(1, NOBODY, &(struct rtid__svc_req)REQ(RTID__OP_CHECKPOINT, x, 0), &cfd);
	assert_int_equal(bg_wait(ck, cfd), RTID__SVC_DENIED);
	assert_int_equal(hd_log_count(&d, "\"event\":\"checkpoint\""), 0);
	close(go[1]);
	close(ready[0]);
	assert_int_equal(waitpid(x, NULL, 0), x);
	slow_lock(NULL);
}

/* Queries for one's own processes only; actions for root only. */
static void test_denied_peer(void **state)
{
	const struct rtid__svc_req q[] = {
		REQ(RTID__OP_RESTORE_TID, 100, 0), /* root's process */
		REQ(RTID__OP_RESTORE_TID, 500, 0), /* nobody's own */
		REQ(RTID__OP_GET_STATE, 500, 0),
		REQ(RTID__OP_LOCK, 500, 1000),     /* an action */
		REQ(RTID__OP_RESTORE_TID, 777, 0), /* no such process */
	};
	unsigned char k[5];
	struct rtid__svc_ans a;

	(void)state;
	hd_start(&d, ARGS("--group", "65534", "--actions"));
	as_nobody(q, 5, k);
	assert_int_equal(k[0], RTID__SVC_DENIED);
	assert_int_equal(k[1], RTID__SVC_TID);
	assert_int_equal(k[2], RTID__SVC_STATE);
	assert_int_equal(k[3], RTID__SVC_DENIED);
	assert_int_equal(k[4], RTID__SVC_DENIED);
	assert_true(hd_said(&d, "denied uid 65534"));
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock\""), 0);
	/* root may do all of it */
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, 500, 1000, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
}

/* The ways the daemon can tell which process connected (sa_peer_ns): by
 * default, SO_PEERPIDFD and its namespace by PIDFD_GET_PID_NAMESPACE where
 * the kernel has them; the pidfd with the namespace read from /proc (as
 * 6.5 to 6.10); the peer socket among the fds of the SO_PEERCRED pid (as
 * before 6.5). Each is asked of this kernel through the test switches. */
static const char *const methods[][2] = {
	{ NULL, NULL },
	{ "RTID_SERVE_NO_PIDFD_NS", "1" },
	{ "RTID_SERVE_NO_PEERPIDFD", "1" },
};
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

static void start_with(size_t m, const char *const *extra)
{
	if (methods[m][0])
		setenv(methods[m][0], methods[m][1], 1);
	hd_start(&d, extra);
	if (methods[m][0])
		unsetenv(methods[m][0]);
}

/* A client in another pid namespace names its own pids: pid 1 there is not
 * the daemon's pid 1. The daemon translates a pid of a process whose own
 * namespace is the client's (NSpid), answers with the tid as the client
 * numbers it, and refuses a number it cannot place (the shim then asks the
 * real tool, in the caller's namespace). Needs root for unshare; the daemon
 * reads the real /proc here. */
static void other_ns_once(size_t m, int runs)
{
	int go[2], res[2], hp[2], st, host = 0, got[3] = { 0 };
	char text[256];
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(res), 0);
	assert_int_equal(pipe(hp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID) < 0)
			_exit(77);
		inner = fork(); /* pid 1 of the new namespace */
		if (inner == 0) {
			struct rtid__svc_ans a;
			char c;
			int out[3] = { -1, -1, -1 };

			if (read(go[0], &c, 1) != 1)
				_exit(4);
			if (hd_ask(&d, RTID__OP_RESTORE_TID, 1, 0, &a) == 0)
				out[0] = (int)a.kind, out[1] = a.value;
			if (hd_ask(&d, RTID__OP_RESTORE_TID, 2, 0, &a) == 0)
				out[2] = (int)a.kind;
			_exit(write(res[1], out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 5);
		}
		if (inner < 0 || write(hp[1], &inner, sizeof(inner)) != (ssize_t)sizeof(inner))
			_exit(6);
		_exit(waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st) : 7);
	}
	close(hp[1]);
	close(res[1]);
	close(go[0]);
	if (read(hp[0], &host, sizeof(host)) != (ssize_t)sizeof(host)) {
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(hp[0]);
		close(res[0]);
		close(go[1]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 77);
		skip(); /* no unshare here (not root) */
	}
	/* The driver knows the client's process by the daemon's number for it. */
	snprintf(text, sizeof(text), "title ns\nproves ns\ndriver 580.159.03\nbackend api\n"
		 "task %d %d sh\nanswer %d tid %d\nexpect driver %d tid=%d\n", host, host, host,
		 host, host, host);
	write_file(d.dir, "t.case", text);
	start_with(m, ARGS("--actions", "--proc", "/proc"));
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], got, sizeof(got)), (ssize_t)sizeof(got));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(hp[0]);
	close(res[0]);
	close(go[1]);
	assert_int_equal(got[0], RTID__SVC_TID);
	assert_int_equal(got[1], 1);              /* its own number, as the client sees it */
	assert_int_equal(got[2], RTID__SVC_DENIED); /* no pid 2 in its namespace */
	assert_true(hd_said(&d, "another pid namespace"));
	/* the driver asked once each time */
	assert_int_equal(hd_log_count(&d, "\"event\":\"start\""), runs);
	assert_int_equal(hd_stop(&d), 0);
}

/* ... by each way of telling which process connected (methods). */
static void test_other_pid_namespace(void **state)
{
	int runs = 0;

	(void)state;
	for (size_t m = 0; m < N_METHODS; m++) {
		/* valgrind 3.19 has no pidfd_send_signal (ENOSYS): the proof of
		 * the /proc method cannot be made under it, and the daemon
		 * rightly refuses the client unproven. */
		if (m == 1 && getenv("RTID_UNDER_VALGRIND"))
			continue;
		other_ns_once(m, ++runs);
	}
}

/* The driver names a thread that the fake tree shows in the client's
 * process but that has no number in the client's pid namespace (the test's
 * own pid, a host process): the daemon cannot say the tid as the client
 * numbers it, so it answers not-a-thread with words that say so (they reach
 * the shim's log), never the host's number. Needs root for unshare. */
static void test_tid_without_a_number_in_the_client_namespace(void **state)
{
	int go[2], res[2], hp[2], st, host = 0, me = getpid();
	struct rtid__svc_ans got = { .kind = -1 };
	char text[300], rel[64];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(res), 0);
	assert_int_equal(pipe(hp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID) < 0)
			_exit(77);
		inner = fork(); /* pid 1 of the new namespace */
		if (inner == 0) {
			struct rtid__svc_ans a = { .kind = -1 };
			char c;

			if (read(go[0], &c, 1) != 1 || hd_ask(&d, RTID__OP_RESTORE_TID, 1, 0, &a) != 0)
				_exit(4);
			_exit(write(res[1], &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 5);
		}
		if (inner < 0 || write(hp[1], &inner, sizeof(inner)) != (ssize_t)sizeof(inner))
			_exit(6);
		_exit(waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st) : 7);
	}
	close(hp[1]);
	close(res[1]);
	close(go[0]);
	if (read(hp[0], &host, sizeof(host)) != (ssize_t)sizeof(host)) {
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(hp[0]);
		close(res[0]);
		close(go[1]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 77);
		skip(); /* no unshare here (not root) */
	}
	/* In the fake tree, the test's pid is a thread of the client's process. */
	snprintf(rel, sizeof(rel), "%d/task/%d/comm", host, host);
	write_file(d.proc, rel, "sh\n");
	snprintf(rel, sizeof(rel), "%d/task/%d/comm", host, me);
	write_file(d.proc, rel, "cuda00001400006\n");
	snprintf(rel, sizeof(rel), "%d/status", me);
	snprintf(text, sizeof(text), "Tgid:\t%d\nThreads:\t2\n", host);
	write_file(d.proc, rel, text);
	snprintf(text, sizeof(text), "title ns\nproves ns\ndriver 580.159.03\nbackend api\n"
		 "task %d %d sh\ntask %d %d cuda00001400006\nanswer %d tid %d\n"
		 "expect driver %d tid=%d\n", host, host, host, me, host, me, host, me);
	write_file(d.dir, "t.case", text);
	hd_start(&d, NULL);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(res[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(hp[0]);
	close(res[0]);
	close(go[1]);
	assert_int_equal(got.kind, RTID__SVC_ERROR);
	assert_string_equal(got.name, "not-a-thread");
	assert_string_equal(got.text, "the restore thread has no number in the client's pid "
			   "namespace");
	assert_int_equal(hd_log_count(&d, "\"event\":\"start\""), 1); /* the driver was asked */
}

/* A pid taken on purpose (clone3 with set_tid, root): a process that waits
 * until fd closes, or -1 with errno. */
static pid_t take_pid(pid_t want, int fd)
{
	struct clone_args ca = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&want,
				 .set_tid_size = 1 };
	long r = syscall(SYS_clone3, &ca, sizeof(ca));

	if (r == 0) {
		char c;

		_exit(read(fd, &c, 1) == 0 ? 0 : 1);
	}
	return (pid_t)r;
}

/* A client in its own pid namespace connects while the daemon is stopped
 * (SIGSTOP: between connect and accept), hands its connection to a child and
 * exits; with reuse, its host pid is then taken by a host process. Resumed,
 * the daemon must refuse the connection rather than place it by whatever
 * holds that number: the child's lock of host pid T (the test itself) and,
 * as a control, the same lock on a fresh connection of the child are both
 * denied, and the driver is never asked. *kinds gets the two answers. */
static void connector_gone(size_t m, bool reuse, unsigned char *kinds)
{
	int out[2], hostpid[2], go[2], reaped[2], hold[2], st;
	pid_t p, r = -1, hk = 0, me = getpid();
	char text[300], c;

	snprintf(text, sizeof(text), "title peer\nproves peer\ndriver 580.159.03\nbackend api\n"
		 "task %d %d test\nanswer %d tid %d\nexpect driver %d tid=%d\n", me, me, me, me,
		 me, me);
	write_file(d.dir, "t.case", text);
	start_with(m, ARGS("--actions", "--proc", "/proc"));
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hostpid, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(reaped, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	assert_int_equal(kill(d.pid, SIGSTOP), 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		pid_t init, k, k2;

		/* Only the test's ends open here: go's write end held by none
		 * of these, so that closing it ends K's child. */
		close(go[1]);
		close(out[0]);
		close(hostpid[0]);
		close(reaped[0]);
		close(hold[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWPID) < 0 || (init = fork()) < 0)
			_exit(77);
		if (init > 0)
			_exit(waitpid(init, &st, 0) == init && WIFEXITED(st) ? WEXITSTATUS(st) : 6);
		/* pid 1 of the namespace: its child K connects. */
		if ((k = fork()) == 0) {
			struct rtid__svc_conn conn;
			char self[16] = { 0 };
			int host = 0;

			/* The host's /proc: its "self" is K's host pid. */
			if (readlink("/proc/self", self, sizeof(self) - 1) <= 0 ||
			    rtid__parse_pid(self, &host) < 0 || rtid__svc_open(d.sock, &conn) < 0)
				_exit(2);
			if ((k2 = fork()) == 0) {
				struct rtid__svc_req q = REQ(RTID__OP_LOCK, me, 1000);
				struct rtid__svc_ans a;
				unsigned char kk[2] = { 0xff, 0xff };

				if (read(go[0], &c, 1) != 1)
					_exit(3);
				if (rtid__svc_call(&conn, &q, rtid__now() + 20 * time_factor(), &a) == 0)
					kk[0] = (unsigned char)a.kind;
				if (hd_ask(&d, RTID__OP_LOCK, me, 1000, &a) == 0)
					kk[1] = (unsigned char)a.kind;
				_exit(write(out[1], kk, 2) == 2 ? 0 : 4);
			}
			_exit(k2 > 0 && write(hostpid[1], &host, sizeof(host)) == sizeof(host) ? 0 : 5);
		}
		/* K reaped: its host pid is free. */
		if (k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
		    write(reaped[1], "k", 1) != 1)
			_exit(7);
		while (wait(&st) > 0 && (!WIFEXITED(st) || WEXITSTATUS(st) == 0))
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 8);
	}
	close(out[1]);
	close(hostpid[1]);
	close(go[0]);
	close(reaped[1]);
	close(hold[0]);
	if (read(reaped[0], &c, 1) != 1) {
		kill(d.pid, SIGCONT);
		assert_int_equal(waitpid(p, &st, 0), p);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 77);
		skip(); /* no unshare here */
	}
	assert_int_equal(read(hostpid[0], &hk, sizeof(hk)), (ssize_t)sizeof(hk));
	if (reuse)
		r = take_pid(hk, hold[1]);
	kill(d.pid, SIGCONT);
	if (reuse && r < 0 && (errno == ENOSYS || errno == EPERM)) {
		/* No clone3 with set_tid here (Linux 5.5, root; valgrind has
		 * none). The namespace's processes end first: K's child reads
		 * no go and exits, and with it the rest; left running, they
		 * would hold the test's output open and its runner would wait
		 * for ever. */
		close(go[1]);
		assert_int_equal(waitpid(p, &st, 0), p);
		skip();
	}
	assert_true(!reuse || r == hk);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(out[0], kinds, 2), 2);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(hold[1]);
	if (r > 0)
		assert_int_equal(waitpid(r, &st, 0), r);
	close(out[0]);
	close(hostpid[0]);
	close(go[1]);
	close(reaped[0]);
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock\""), 0);
	assert_int_equal(hd_stop(&d), 0);
}

/* The edge: a host process holds the connecting client's number by accept
 * time. Read by the number, the client passed for a host client and locked
 * a host process it is refused as itself. Needs root (unshare, clone3). */
static void test_peer_pid_reused(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	for (size_t m = 0; m < N_METHODS; m++) {
		unsigned char k[2];

		connector_gone(m, true, k);
		assert_int_equal(k[0], RTID__SVC_DENIED);
		assert_int_equal(k[1], RTID__SVC_DENIED);
		assert_true(hd_said(&d, "not proven"));
	}
}

/* The connecting process is gone and nothing took its number: refused as
 * well, never resolved by whatever /proc says. */
static void test_peer_gone(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	for (size_t m = 0; m < N_METHODS; m++) {
		unsigned char k[2];

		connector_gone(m, false, k);
		assert_int_equal(k[0], RTID__SVC_DENIED);
		assert_int_equal(k[1], RTID__SVC_DENIED);
	}
}

/* A group named for actions lets its members act on their own processes,
 * never on another user's: root's process 100 stays out of reach. */
static void test_action_group(void **state)
{
	const struct rtid__svc_req q[] = { REQ(RTID__OP_LOCK, 500, 1000), REQ(RTID__OP_UNLOCK, 500, 0),
					   REQ(RTID__OP_LOCK, 100, 1000),
					   REQ(RTID__OP_CHECKPOINT, 100, 0) };
	unsigned char k[4];

	(void)state;
	hd_start(&d, ARGS("--group", "65534", "--actions", "--action-group", "nogroup"));
	as_nobody(q, 4, k);
	assert_int_equal(k[0], RTID__SVC_DONE);
	assert_int_equal(k[1], RTID__SVC_DONE);
	assert_int_equal(k[2], RTID__SVC_DENIED);
	assert_int_equal(k[3], RTID__SVC_DENIED);
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock\",\"pid\":100"), 0);
}

/* Membership is the user's groups, not the peer's word: nobody is not in root's. */
static void test_action_group_non_member(void **state)
{
	const struct rtid__svc_req q[] = { REQ(RTID__OP_LOCK, 500, 1000) };
	unsigned char k[1];

	(void)state;
	hd_start(&d, ARGS("--group", "65534", "--actions", "--action-group", "0"));
	as_nobody(q, 1, k);
	assert_int_equal(k[0], RTID__SVC_DENIED);
}

/* Without --group only root reaches the socket at all. */
static void test_default_root_only(void **state)
{
	const struct rtid__svc_req q[] = { REQ(RTID__OP_RESTORE_TID, 500, 0) };
	unsigned char k[1];

	(void)state;
	hd_start(&d, NULL);
	as_nobody(q, 1, k);
	assert_int_equal(k[0], 0xff);
}

static int run_daemon(const struct daemon *dd, const char *const *extra)
{
	const char *argv[20] = { env_path("RTID_BIN"), "serve", "--socket", dd->sock, "--proc",
				 dd->proc, "--libcuda", env_path("MOCK_LIBCUDA") };
	int n = 8, st;
	pid_t pid;

	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What is at the socket path: a stale socket is replaced, a file is not,
 * a live daemon's socket is not taken over. */
static void test_socket_path_rules(void **state)
{
	struct rtid__svc_ans a;
	struct stat st;

	(void)state;
	write_file(d.dir, "s", "not a socket\n");
	assert_int_equal(run_daemon(&d, NULL), 1);
	assert_int_equal(lstat(d.sock, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(d.sock);
	hd_start(&d, NULL);
	assert_int_equal(run_daemon(&d, NULL), 1); /* a second one on a live socket */
	assert_int_equal(kill(d.pid, SIGKILL), 0);  /* leaves a stale socket */
	waitpid(d.pid, NULL, 0);
	d.pid = -1;
	hd_start(&d, NULL);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.value, 101);
	assert_int_equal(run_daemon(&d, ARGS("--max-clients", "0")), 2);
	assert_int_equal(run_daemon(&d, ARGS("--group", "no-such-group-here")), 2);
	assert_int_equal(run_daemon(&d, ARGS("stray")), 2);
	assert_int_equal(run_daemon(&d, ARGS("--timeout", "soon")), 2);
	assert_int_equal(run_daemon(&d, ARGS("--ready-fd", "x")), 2);
	assert_int_equal(run_daemon(&d, ARGS("--ready-fd", "999")), 2); /* not open */
	assert_int_equal(run_daemon(&d, ARGS("--no-such-option")), 2);
	assert_int_equal(run_daemon(&d, ARGS("--help")), 0);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "%s help serve | grep -q -- --action-group",
			 env_path("RTID_BIN"));
		assert_int_equal(system(cmd), 0);
	}
}

/* Paths the daemon cannot use: a clear failure, exit 1, nothing left behind. */
static void test_unusable_paths(void **state)
{
	struct daemon bad = d;
	char longp[200];

	(void)state;
	snprintf(bad.sock, sizeof(bad.sock), "%s/no/such/dir/s", d.dir);
	assert_int_equal(run_daemon(&bad, NULL), 1);
	write_file(d.dir, "plain", "a file\n");
	snprintf(bad.sock, sizeof(bad.sock), "%s/plain/s", d.dir); /* ENOTDIR */
	assert_int_equal(run_daemon(&bad, NULL), 1);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	snprintf(bad.sock, sizeof(bad.sock), "%s", longp);
	assert_int_equal(run_daemon(&bad, NULL), 1);
}

/* What systemd might pass that the daemon cannot serve: refused, exit 1. */
static void test_socket_activation_refused(void **state)
{
	(void)state;
	if (!getenv("RTID_HAVE_SYSTEMD"))
		skip();
	for (int variant = 0; variant < 2; variant++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			char me[16];
			int null = open("/dev/null", O_RDWR);

			dup2(null, 3); /* not a socket */
			dup2(null, 4);
			dup2(null, 2);
			snprintf(me, sizeof(me), "%d", (int)getpid());
			setenv("LISTEN_FDS", variant ? "2" : "1", 1);
			setenv("LISTEN_PID", me, 1);
			execl(env_path("RTID_BIN"), "rtid", "serve", "--socket", d.sock, "--proc",
			      d.proc, (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 1);
	}
	assert_int_equal(access(d.sock, F_OK), -1);
}

static int listener(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

/* systemd's way: the socket passed as fd 3 (LISTEN_FDS), READY=1 on
 * NOTIFY_SOCKET, and the socket file left alone at exit (it is systemd's). */
static void test_socket_activation(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char act[300], note[300], buf[128], other[300];
	struct rtid__svc_ans a;
	struct pollfd p;
	int lfd, nfd, st;
	ssize_t n;

	(void)state;
	if (!getenv("RTID_HAVE_SYSTEMD"))
		skip();
	snprintf(act, sizeof(act), "%s/act.sock", d.dir);
	snprintf(note, sizeof(note), "%s/notify", d.dir);
	snprintf(other, sizeof(other), "%s/unused.sock", d.dir);
	lfd = listener(act);
	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(strlen(note) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, note, strlen(note) + 1);
	assert_int_equal(bind(nfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	d.pid = fork();
	if (d.pid == 0) {
		char pid[16];
		int null = open("/dev/null", O_WRONLY);

		dup2(lfd, 3);
		dup2(null, 2);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("LISTEN_FDS", "1", 1);
		setenv("LISTEN_PID", pid, 1);
		setenv("NOTIFY_SOCKET", note, 1);
		execl(env_path("RTID_BIN"), "rtid", "serve", "--socket", other, "--proc", d.proc,
		      "--libcuda", env_path("MOCK_LIBCUDA"), (char *)NULL);
		_exit(127);
	}
	close(lfd);
	p = (struct pollfd){ .fd = nfd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, (int)(20000 * time_factor())), 1);
	n = recv(nfd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "READY=1"));
	snprintf(d.sock, sizeof(d.sock), "%s", act);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 100, 0, &a), 0);
	assert_int_equal(a.value, 101);
	assert_int_equal(access(other, F_OK), -1); /* it made no socket of its own */
	kill(d.pid, SIGTERM);
	waitpid(d.pid, &st, 0);
	d.pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(access(act, F_OK), 0);
	close(nfd);
}

/* SIGTERM with a request in flight: that request gets an error, never a tid;
 * the worker is killed and reaped; the socket is removed; exit 0. */
static void test_sigterm_in_flight(void **state)
{
	struct timespec tick = { 0, 5000000 };
	struct rtid__svc_ans a;
	int p[2], worker, st;
	unsigned char k = 0;
	pid_t client;

	(void)state;
	hd_start(&d, ARGS("--timeout", "1"));
	worker = hd_log_self(&d, "cuInit");
	assert_int_equal(pipe(p), 0);
	client = fork();
	if (client == 0) {
		k = hd_ask(&d, RTID__OP_RESTORE_TID, 400, 0, &a) == 0 ? (unsigned char)a.kind : 0xff;
		_exit(write(p[1], &k, 1) == 1 && a.kind == RTID__SVC_ERROR ? 0 : 1);
	}
	/* The mock logs the call as it enters the driver: then it is in flight. */
	for (int i = 0; i < 2000 && hd_log_count(&d, "\"event\":\"start\",\"pid\":400") == 0; i++)
		nanosleep(&tick, NULL);
	assert_int_equal(hd_stop(&d), 0);
	assert_int_equal(read(p[0], &k, 1), 1);
	assert_int_equal(k, RTID__SVC_ERROR);
	waitpid(client, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(kill(worker, 0), -1);
	assert_int_equal(access(d.sock, F_OK), -1);
	close(p[0]);
	close(p[1]);
}

/* RSS and fds of the daemon while one client has just been answered: by then
 * the daemon has seen every earlier client's close. */
static void measure(long *rss, int *fds)
{
	struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
	struct rtid__svc_conn c;
	struct rtid__svc_ans a;

	assert_int_equal(rtid__svc_open(d.sock, &c), 0);
	assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 20, &a), 0);
	*rss = hd_rss_kb(d.pid);
	*fds = hd_fd_count(d.pid);
	rtid__svc_close(&c);
}

/* SIGINT (a foreground daemon's ^C) stops it as SIGTERM does. */
static void test_sigint(void **state)
{
	int worker, st;

	(void)state;
	hd_start(&d, NULL);
	worker = hd_log_self(&d, "cuInit");
	assert_int_equal(kill(d.pid, SIGINT), 0);
	waitpid(d.pid, &st, 0);
	d.pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(access(d.sock, F_OK), -1);
	assert_int_equal(kill(worker, 0), -1);
}

/* 100,000 requests: the daemon's RSS and open fds the same before and after. */
static void test_rss_flat(void **state)
{
	long total = getenv("RTID_UNDER_VALGRIND") ? 2000 : 100000, per = 100, rss0 = 0, rss1;
	int fds0 = 0, fds1;

	(void)state;
	hd_start(&d, NULL);
	for (int phase = 0; phase < 2; phase++) {
		long n = phase ? total : 1000;

		for (long i = 0; i < n; i += per) {
			struct rtid__svc_conn c;

			assert_int_equal(rtid__svc_open(d.sock, &c), 0);
			for (long j = 0; j < per; j++) {
				struct rtid__svc_req q = { .op = RTID__OP_RESTORE_TID, .pid = 100 };
				struct rtid__svc_ans a;

				assert_int_equal(rtid__svc_call(&c, &q, rtid__now() + 20, &a), 0);
				assert_int_equal(a.value, 101);
			}
			rtid__svc_close(&c);
		}
		if (phase == 0)
			measure(&rss0, &fds0);
	}
	measure(&rss1, &fds1);
	printf("rtid serve over %ld requests: VmRSS %ld kB before, %ld kB after; fds %d, %d\n",
	       total, rss0, rss1, fds0, fds1);
	assert_true(rss0 > 0);
	/* A sanitizer keeps freed memory in quarantine, and valgrind freed
	 * blocks in its queue (20 MB), so RSS measures them, not the daemon;
	 * the fds still must not grow. */
	if (!getenv("RTID_UNDER_SANITIZER") && !getenv("RTID_UNDER_VALGRIND"))
		assert_true(rss1 <= rss0 + 64);
	assert_int_equal(fds1, fds0);
	assert_int_equal(hd_log_count(&d, "cuInit"), 1);
}

/* A user's own daemon, on a socket of their own, on the real /proc (as
 * doc/serve.md's user runs it): the user's process is answered and acted on;
 * another user's (pid 1's owner is not this user) is refused, query and
 * action alike, with the reason, and the driver never hears of it. As root
 * every process is the caller's: test_denied_peer asks as nobody there. */
static void test_users_own_daemon(void **state)
{
	const int me = (int)getpid();
	struct rtid__svc_ans a;
	struct stat st;
	char text[256];

	(void)state;
	if (geteuid() == 0 || stat("/proc/1", &st) < 0 || st.st_uid == geteuid())
		skip(); /* a user's test: root owns every process the rule looks at */
	snprintf(text, sizeof(text), "title mine\nproves mine\ndriver 580.159.03\nbackend api\n"
		 "task %d %d test\nanswer %d tid %d\nexpect driver %d tid=%d\n", me, me, me, me,
		 me, me);
	write_file(d.dir, "t.case", text);
	hd_start(&d, ARGS("--actions", "--proc", "/proc"));
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, me, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_TID);
	assert_int_equal(a.value, me);
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, me, 1000, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(hd_ask(&d, RTID__OP_UNLOCK, me, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DONE);
	assert_int_equal(hd_ask(&d, RTID__OP_RESTORE_TID, 1, 0, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DENIED);
	assert_string_equal(a.text, "the process belongs to another user");
	assert_int_equal(hd_ask(&d, RTID__OP_LOCK, 1, 1000, &a), 0);
	assert_int_equal(a.kind, RTID__SVC_DENIED);
	assert_string_equal(a.text, "the process belongs to another user");
	assert_int_equal(hd_log_count(&d, "\"pid\":1,"), 0);
	assert_int_equal(hd_log_count(&d, "\"event\":\"lock\""), 1);
}

/* Two runs of one program: "root" for the tests that ask as another uid or
 * from another pid namespace (setuid, chown, unshare), which exits 77 as a
 * user; none for the rest, which a user runs as well as root. */
int main(int argc, char **argv)
{
	const struct CMUnitTest as_root[] = {
		cmocka_unit_test_setup_teardown(test_socket_mode_and_group, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_denied_peer, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_action_group, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_action_group_supplementary, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_action_group_per_connection, setup_root,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_pid_namespace, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_tid_without_a_number_in_the_client_namespace,
						setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_peer_pid_reused, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_peer_gone, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_action_group_non_member, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_owner_changed_while_queued, setup_root, teardown),
		cmocka_unit_test_setup_teardown(test_default_root_only, setup_root, teardown),
	};
	const struct CMUnitTest as_anyone[] = {
		cmocka_unit_test_setup_teardown(test_facts_changed_while_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_users_own_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unusable_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_activation_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_path_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_activation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_in_flight, setup_hang, teardown),
		cmocka_unit_test_setup_teardown(test_sigint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss_flat, setup, teardown),
	};

	if (argc > 1 && strcmp(argv[1], "root") == 0) {
		if (geteuid() != 0) {
			printf("skipped: needs root (asks as uid nobody, chowns, unshares a pid "
			       "namespace)\n");
			return 77;
		}
		return cmocka_run_group_tests_name("serve-security as root", as_root, NULL, NULL);
	}
	return cmocka_run_group_tests(as_anyone, NULL, NULL);
}
