/* Which pid namespace a client connected from (sa_peer_ns), asked in this
 * process of a socket pair's end, with the kernel's answers under the test's
 * hand where no process can be made to give them on cue: this program
 * defines getsockopt, fstat, ioctl, recv, socket and syscall, which the daemon's
 * code linked here reaches (the real ones through dlsym), to hand over the
 * pidfd of a process already gone, to fail the stat of the namespace's fd or
 * of the connection, to refuse a netlink socket, to play a kernel before
 * 6.11, and to have the process end between the read of its namespace and
 * the proof. A client proven wrongly is placed in a namespace not its own,
 * and its pids are read as another's: every way the proof fails is an
 * error, with nothing written. */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/unix_diag.h>
#include <cmocka.h>

#include "helpers.h"
#include "serve/serve.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* as serve-auth.c: Linux 6.5, not in glibc 2.36 */
#endif
#ifndef PIDFD_GET_PID_NAMESPACE
#define PIDFD_GET_PID_NAMESPACE _IO(0xFF, 5) /* Linux 6.11 */
#endif

static int peer_pidfd = -1; /* >= 0: what SO_PEERPIDFD answers (a dup) */
static int pidfd_errno;     /* != 0: SO_PEERPIDFD fails with it */
static int groups_errno;    /* != 0: SO_PEERGROUPS fails with it */
static int peer_groups = -1; /* >= 0: SO_PEERGROUPS answers that many, from 100 up */
static bool fail_fstat;     /* the next fstat fails (EIO) */
static int fstat_failed;    /* fstat calls failed so */
static bool fail_netlink;   /* a netlink socket cannot be had (EMFILE) */
static bool empty_netlink;  /* sock_diag's answer is a datagram of no bytes */
static bool error_netlink;  /* sock_diag answers an error: a kernel without unix_diag */
static bool extra_attr;     /* sock_diag's answer ends with an attribute not asked for */
static bool trailing_peer;  /* a peer attribute lies in the buffer past the answer's end */
static bool no_ns_ioctl;    /* PIDFD_GET_PID_NAMESPACE unknown (before 6.11) */
static int ns_ioctls;       /* PIDFD_GET_PID_NAMESPACE calls */
static bool fail_proof;     /* pidfd_send_signal fails: the process is gone */
static int proofs;          /* pidfd_send_signal calls */
static long proof_flags;    /* the last one's flags */
static long proof_sig;      /* and its signal */
static bool has_pidfd;      /* SO_PEERPIDFD (6.5) */
static bool has_ns_ioctl;   /* PIDFD_GET_PID_NAMESPACE (6.11) */

static void *next_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

int getsockopt(int fd, int level, int opt, void *val, socklen_t *len)
{
	int (*next)(int, int, int, void *, socklen_t *) =
		(int (*)(int, int, int, void *, socklen_t *))next_fn("getsockopt");

	if (level == SOL_SOCKET && opt == SO_PEERGROUPS && (groups_errno || peer_groups >= 0)) {
		if (groups_errno) {
			errno = groups_errno;
			return -1;
		}
		for (int i = 0; i < peer_groups; i++)
			((gid_t *)val)[i] = (gid_t)(100 + i);
		*len = (socklen_t)(peer_groups * sizeof(gid_t));
		return 0;
	}
	if (level == SOL_SOCKET && opt == SO_PEERPIDFD && pidfd_errno) {
		errno = pidfd_errno;
		return -1;
	}
	if (level == SOL_SOCKET && opt == SO_PEERPIDFD && peer_pidfd >= 0 && *len >= sizeof(int)) {
		int copy = dup(peer_pidfd);

		memcpy(val, &copy, sizeof(copy));
		*len = sizeof(copy);
		return copy < 0 ? -1 : 0;
	}
	return next(fd, level, opt, val, len);
}

int fstat(int fd, struct stat *st)
{
	int (*next)(int, struct stat *) = (int (*)(int, struct stat *))next_fn("fstat");

	if (fail_fstat) {
		fail_fstat = false;
		fstat_failed++;
		errno = EIO;
		return -1;
	}
	return next(fd, st);
}

int socket(int domain, int type, int protocol)
{
	int (*next)(int, int, int) = (int (*)(int, int, int))next_fn("socket");

	if (domain == AF_NETLINK && fail_netlink) {
		errno = EMFILE;
		return -1;
	}
	return next(domain, type, protocol);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t (*next)(int, void *, size_t, int) =
		(ssize_t (*)(int, void *, size_t, int))next_fn("recv");
	int domain = -1;
	socklen_t l = sizeof(domain);

	/* Only sock_diag's answers are played with: every other recv is real. */
	if (!(empty_netlink || error_netlink || extra_attr || trailing_peer) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0 || domain != AF_NETLINK)
		return next(fd, buf, len, flags);
	if (empty_netlink) {
		errno = 0; /* no error to read: an answer of no bytes is no error */
		return 0;
	}
	if (error_netlink) {
		/* As the kernel answers a family it has no handler for. */
		struct {
			struct nlmsghdr h;
			struct nlmsgerr e;
		} m = { .h = { .nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_ERROR },
			.e = { .error = -ENOENT } };

		if (len < sizeof(m))
			return next(fd, buf, len, flags);
		memcpy(buf, &m, sizeof(m));
		return (ssize_t)sizeof(m);
	}
	{
		/* extra_attr or trailing_peer: a 4-byte attribute naming no socket of this process: inside the
		 * answer as UNIX_DIAG_UID (what UDIAG_SHOW_UID would add), or as a
		 * UNIX_DIAG_PEER past its end (what the buffer held before). */
		struct rtattr at = { .rta_len = RTA_LENGTH(4),
				     .rta_type = extra_attr ? UNIX_DIAG_UID : UNIX_DIAG_PEER };
		unsigned bogus = 4242;
		ssize_t n = next(fd, buf, len, flags);

		if (n < 0 || (size_t)n + RTA_SPACE(4) > len)
			return n;
		memcpy((char *)buf + n, &at, sizeof(at));
		memcpy((char *)buf + n + sizeof(at), &bogus, sizeof(bogus));
		if (trailing_peer)
			return n;
		((struct nlmsghdr *)buf)->nlmsg_len += RTA_SPACE(4);
		return n + (ssize_t)RTA_SPACE(4);
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*next)(int, unsigned long, ...) = (int (*)(int, unsigned long, ...))next_fn("ioctl");
	void *arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == PIDFD_GET_PID_NAMESPACE) {
		ns_ioctls++;
		if (no_ns_ioctl) {
			errno = ENOTTY; /* a pidfd had no ioctl at all before 6.11 */
			return -1;
		}
	}
	return next(fd, req, arg);
}

long syscall(long n, ...)
{
	long (*next)(long, ...) = (long (*)(long, ...))next_fn("syscall");
	/* The calls of the code linked here (src: syscall(SYS_...)), each
	 * read with the arguments it is passed. */
	int nargs = n == SYS_pidfd_send_signal ? 4 : n == SYS_pidfd_open ? 2 : -1;
	long a[4] = { 0 };
	va_list ap;

	if (nargs < 0)
		abort(); /* a call this stand-in does not know: add it */
	va_start(ap, n);
	for (int i = 0; i < nargs; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_pidfd_send_signal) {
		proofs++;
		proof_flags = a[3];
		proof_sig = a[1];
		if (fail_proof) {
			errno = ESRCH;
			return -1;
		}
	}
	return nargs == 2 ? next(n, a[0], a[1]) : next(n, a[0], a[1], a[2], a[3]);
}

/* The ways of telling (serve-auth.c), by their test switches. */
enum method { BY_IOCTL, BY_PROC, BY_SOCKET };

static void use(enum method m)
{
	unsetenv("RTID_SERVE_NO_PIDFD_NS");
	unsetenv("RTID_SERVE_NO_PEERPIDFD");
	if (m == BY_PROC)
		setenv("RTID_SERVE_NO_PIDFD_NS", "1", 1);
	if (m == BY_SOCKET)
		setenv("RTID_SERVE_NO_PEERPIDFD", "1", 1);
}

static int sp[2] = { -1, -1 };
static char own[64];

static int setup(void **state)
{
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	n = readlink("/proc/self/ns/pid", own, sizeof(own) - 1);
	assert_true(n > 0);
	own[n] = '\0';
	peer_pidfd = -1;
	pidfd_errno = groups_errno = 0;
	peer_groups = -1;
	fail_fstat = fail_proof = no_ns_ioctl = fail_netlink = empty_netlink = error_netlink = false;
	extra_attr = trailing_peer = false;
	fstat_failed = proofs = ns_ioctls = 0;
	proof_flags = proof_sig = -1;
	/* What this kernel has: the tests expect the methods it can use. */
	{
		int pidfd = -1, nsfd;
		socklen_t l = sizeof(pidfd);

		has_pidfd = getsockopt(sp[0], SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) == 0;
		has_ns_ioctl = false;
		if (has_pidfd) {
			nsfd = ioctl(pidfd, PIDFD_GET_PID_NAMESPACE, 0);
			has_ns_ioctl = nsfd >= 0;
			if (nsfd >= 0)
				close(nsfd);
			close(pidfd);
		}
		ns_ioctls = 0;
	}
	return 0;
}

static void needs(bool have, const char *what)
{
	if (!have) {
		print_message("skipped: this kernel has no %s\n", what);
		skip();
	}
}

static int teardown(void **state)
{
	(void)state;
	close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (peer_pidfd >= 0)
		close(peer_pidfd);
	peer_pidfd = -1;
	use(BY_IOCTL);
	return 0;
}

/* valgrind 3.19 knows no pidfd_send_signal (ENOSYS): the /proc method's
 * proof cannot be made under it. */
static void needs_proof_call(enum method m)
{
	if (m == BY_PROC && getenv("RTID_UNDER_VALGRIND")) {
		print_message("skipped: no pidfd_send_signal under valgrind 3.19\n");
		skip();
	}
}

/* Asked with ns filled with a mark, all of it (a text copied without its
 * end shows): on failure the mark stays. */
static int peer_ns(pid_t pid, char *ns, size_t len)
{
	memset(ns, '#', len);
	snprintf(ns, len, "unwritten");
	return sa_peer_ns(sp[0], pid, ns, len);
}

/* Asked of this process: proven, and its namespace is the one its own ns
 * link names. */
static void proven_own(void)
{
	char ns[64];

	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), 0);
	assert_string_equal(ns, own);
}

/* The peer is this process: each way tells its namespace, the one its own
 * ns link names. */
static void test_own_namespace_each_way(void **state)
{
	char ns[64];
	int fds = count_fds();

	(void)state;
	for (enum method m = BY_IOCTL; m <= BY_SOCKET; m++) {
		/* Where this kernel lacks a method, the next one answers. */
		bool by_proc = has_pidfd && (m == BY_PROC || (m == BY_IOCTL && !has_ns_ioctl));

		if (by_proc && getenv("RTID_UNDER_VALGRIND"))
			continue; /* needs_proof_call */
		use(m);
		proofs = 0;
		assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), 0);
		assert_string_equal(ns, own);
		/* The /proc method proves the process alive after the read: by
		 * signal 0 to the process (a check that sends nothing: any other
		 * would hit the client), no flags (a thread's signal before 6.9
		 * is EINVAL). */
		assert_int_equal(proofs, by_proc);
		if (by_proc) {
			assert_int_equal(proof_sig, 0);
			assert_int_equal(proof_flags, 0);
		}
		/* Room for the text and its end, or nothing written. */
		assert_int_equal(peer_ns(getpid(), ns, strlen(own) + 1), 0);
		assert_string_equal(ns, own);
		assert_int_equal(peer_ns(getpid(), ns, strlen(own)), -ENAMETOOLONG);
		assert_string_equal(ns, "unwritten");
	}
	/* Each way closes what it opened (the netlink socket, the pidfd, the
	 * namespace's fd): a daemon proves every client. */
	assert_int_equal(count_fds(), fds);
}

/* A pidfd of a process gone (exited and reaped) before the daemon asks:
 * by the kernel's word (6.11) and by /proc alike, not proven. */
static void test_gone_before_the_read(void **state)
{
	char ns[64];
	pid_t child;

	(void)state;
	needs(has_pidfd, "SO_PEERPIDFD (before 6.5)");
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	peer_pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	if (peer_pidfd < 0 && errno == ENOSYS && getenv("RTID_UNDER_VALGRIND")) {
		print_message("skipped: no pidfd_open under valgrind 3.19\n");
		skip();
	}
	assert_true(peer_pidfd >= 0);
	for (enum method m = BY_IOCTL; m <= BY_PROC; m++) {
		use(m);
		assert_int_equal(peer_ns(child, ns, sizeof(ns)), -ESRCH);
		assert_string_equal(ns, "unwritten");
	}
}

/* The namespace's fd cannot be looked at (its stat fails): not proven,
 * rather than a namespace made up. Only where the kernel has
 * PIDFD_GET_PID_NAMESPACE (6.11). */
static void test_namespace_fd_unreadable(void **state)
{
	char ns[64];
	int r;

	(void)state;
	needs(has_ns_ioctl, "PIDFD_GET_PID_NAMESPACE (before 6.11)");
	use(BY_IOCTL);
	fail_fstat = true;
	r = peer_ns(getpid(), ns, sizeof(ns));
	fail_fstat = false;
	assert_int_equal(fstat_failed, 1);
	assert_int_equal(r, -ESRCH);
	assert_string_equal(ns, "unwritten");
}

/* A kernel of 6.5 to 6.10: SO_PEERPIDFD but no PIDFD_GET_PID_NAMESPACE
 * (ENOTTY): the namespace read by /proc and proven by the pidfd, not the
 * client refused. */
static void test_before_the_namespace_ioctl(void **state)
{
	(void)state;
	needs(has_pidfd, "SO_PEERPIDFD (before 6.5)");
	needs_proof_call(BY_PROC);
	use(BY_IOCTL);
	no_ns_ioctl = true;
	proven_own();
	assert_int_equal(ns_ioctls, 1);
	assert_int_equal(proofs, 1);
}

/* Without a pidfd, the connection cannot be looked at (its stat fails, or
 * no netlink socket can be had), or the client's end is closed already: not
 * proven, the error said, nothing written. */
static void test_socket_unprovable(void **state)
{
	char ns[64];

	(void)state;
	use(BY_SOCKET);
	fail_fstat = true;
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -EIO);
	assert_int_equal(fstat_failed, 1);
	assert_string_equal(ns, "unwritten");
	fail_netlink = true; /* no socket to ask sock_diag with */
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -EMFILE);
	assert_string_equal(ns, "unwritten");
	fail_netlink = false;
	empty_netlink = true; /* sock_diag answers nothing: no peer read */
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -EPROTO);
	assert_string_equal(ns, "unwritten");
	empty_netlink = false;
	error_netlink = true; /* no unix_diag in this kernel: nothing to prove with */
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -EPROTONOSUPPORT);
	assert_string_equal(ns, "unwritten");
	error_netlink = false;
	close(sp[1]);
	sp[1] = -1;
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -ESRCH);
	assert_string_equal(ns, "unwritten");
}

/* By /proc: the process ends after its namespace was read (its number may
 * be another's by then, and the namespace read that one's): not proven, and
 * nothing written. */
static void test_gone_before_the_proof(void **state)
{
	char ns[64];

	(void)state;
	needs(has_pidfd, "SO_PEERPIDFD (before 6.5)");
	needs_proof_call(BY_PROC);
	use(BY_PROC);
	fail_proof = true;
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -ESRCH);
	assert_int_equal(proofs, 1);
	assert_string_equal(ns, "unwritten");
}

/* Without a pidfd: the number names a process that does not hold the
 * connection (it took the number meanwhile, or was never the peer), or no
 * process: not proven, nothing written. */
static void test_number_not_the_peer(void **state)
{
	char ns[64], c;
	int go[2], ready[2];
	pid_t other;

	(void)state;
	use(BY_SOCKET);
	assert_int_equal(peer_ns(0, ns, sizeof(ns)), -ESRCH);
	assert_string_equal(ns, "unwritten");
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	other = fork();
	assert_true(other >= 0);
	if (other == 0) {
		close(go[1]);
		close(ready[0]);
		close(sp[0]);
		close(sp[1]);
		close(ready[1]); /* its fds are as asked from now on */
		_exit(read(go[0], &c, 1) == 0 ? 0 : 1);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 0);
	close(ready[0]);
	assert_int_equal(peer_ns(other, ns, sizeof(ns)), -ESRCH);
	assert_string_equal(ns, "unwritten");
	close(go[1]);
	assert_int_equal(waitpid(other, NULL, 0), other);
}

/* A kernel before 6.5 has no SO_PEERPIDFD (ENOPROTOOPT): the namespace is
 * proven by the peer socket instead, not the client refused. Any other
 * failure of the option (ENODATA: no peer pid known) proves nothing, and
 * the socket's way is not tried in its stead. */
static void test_before_the_peer_pidfd(void **state)
{
	char ns[64];

	(void)state;
	use(BY_IOCTL);
	pidfd_errno = ENOPROTOOPT;
	proven_own();
	assert_int_equal(ns_ioctls, 0);
	pidfd_errno = ENODATA;
	assert_int_equal(peer_ns(getpid(), ns, sizeof(ns)), -ESRCH);
	assert_string_equal(ns, "unwritten");
}

/* sock_diag's answer is read for the peer attribute alone and no further
 * than its length: another attribute of 4 bytes (a uid), or a peer
 * attribute left in the buffer past the answer, names no peer. */
static void test_socket_answer_read_as_sent(void **state)
{
	(void)state;
	use(BY_SOCKET);
	extra_attr = true;
	proven_own();
	extra_attr = false;
	trailing_peer = true;
	proven_own();
}

/* A request binds to the process it names or, for get-state of a thread,
 * to the thread's process (its Tgid): pid 1's threads too. */
static void test_process_of_a_request(void **state)
{
	struct serve_cfg cfg = { 0 };
	struct rtid__svc_req q = { .op = RTID__OP_GET_STATE, .pid = 7 };
	const char *root = test_dir; /* removed by its teardown, also after a failed assertion */
	int process = -1;

	(void)state;
	cfg.proc_root = root;
	write_file(root, "1/status", "Tgid:\t1\nThreads:\t2\n");
	write_file(root, "7/status", "Tgid:\t1\nThreads:\t2\n");
	write_file(root, "30/status", "Tgid:\t30\nThreads:\t2\n");
	write_file(root, "31/status", "Tgid:\t30\nThreads:\t2\n");
	assert_null(sa_check(&cfg, 0, false, &q, &process));
	assert_int_equal(process, 1);
	q.pid = 31;
	assert_null(sa_check(&cfg, 0, false, &q, &process));
	assert_int_equal(process, 30);
	q.pid = 30;
	process = -1;
	assert_null(sa_check(&cfg, 0, false, &q, &process));
	assert_int_equal(process, 30);
	/* Only get-state takes a thread: nothing written for a refusal. */
	q = (struct rtid__svc_req){ .op = RTID__OP_RESTORE_TID, .pid = 7 };
	process = -1;
	assert_non_null(sa_check(&cfg, 0, false, &q, &process));
	assert_int_equal(process, -1);
}

/* The action group: the peer's primary group, or one of the groups the
 * kernel gives for the connection; when the kernel cannot give them all
 * (ERANGE: more than the daemon looks at), not proven, so no actions. */
static void test_action_group_by_the_kernel(void **state)
{
	struct serve_cfg cfg = { .have_action_group = true, .action_group = 102 };
	uid_t other = geteuid() + 1;

	(void)state;
	assert_true(sa_may_act(&cfg, sp[0], other, 102));
	peer_groups = 3; /* 100, 101, 102 */
	assert_true(sa_may_act(&cfg, sp[0], other, 5));
	peer_groups = 2; /* 100, 101 */
	assert_false(sa_may_act(&cfg, sp[0], other, 5));
	peer_groups = 3;
	groups_errno = ERANGE;
	assert_false(sa_may_act(&cfg, sp[0], other, 5));
	groups_errno = 0;
	cfg.have_action_group = false;
	assert_false(sa_may_act(&cfg, sp[0], other, 102));
}

/* The daemon's own user may act with no group at all: it could call the
 * driver with the daemon's rights itself. Another uid may not, whatever its
 * groups say once the daemon has no action group. */
static void test_daemon_user_may_act(void **state)
{
	struct serve_cfg cfg = { .have_action_group = false };

	(void)state;
	assert_true(sa_may_act(&cfg, sp[0], geteuid(), 5));
	assert_false(sa_may_act(&cfg, sp[0], geteuid() + 1, 5));
	cfg = (struct serve_cfg){ .have_action_group = true, .action_group = 102 };
	peer_groups = 2; /* 100, 101 */
	assert_true(sa_may_act(&cfg, sp[0], geteuid(), 5));
	assert_false(sa_may_act(&cfg, sp[0], geteuid() + 1, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_namespace_each_way, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_before_the_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_namespace_fd_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_before_the_proof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_the_namespace_ioctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_unprovable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_number_not_the_peer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_the_peer_pidfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_answer_read_as_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_of_a_request, test_dir_setup, test_dir_teardown),
		cmocka_unit_test_setup_teardown(test_action_group_by_the_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_user_may_act, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
