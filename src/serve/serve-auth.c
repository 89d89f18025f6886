/* Who may ask the daemon what: the request rule of rules/ (the same one the
 * library and the shim apply), over the facts proc/ reads of the number and
 * the peer's credentials from the kernel (SO_PEERCRED, SO_PEERGROUPS), never
 * the client's word nor the user database; and the peer's pid namespace,
 * from the kernel's word about the connection rather than from its number
 * (which another process may hold by the time it is read). */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc.h"
#include "rules/rules.h"
#include "serve/serve.h"

/* Linux 6.5; glibc 2.36 lacks it. 77 where the socket options are the
 * generic ones; elsewhere (alpha, mips, parisc, sparc) the fallback. */
#if !defined(SO_PEERPIDFD) && (defined(__x86_64__) || defined(__i386__) || \
			       defined(__aarch64__) || defined(__arm__) || defined(__riscv) || \
			       defined(__powerpc__) || defined(__loongarch__))
#define SO_PEERPIDFD 77
#endif
/* Linux 6.11: the pid namespace a pidfd's process is in, as an nsfs fd. */
#ifndef PIDFD_GET_PID_NAMESPACE
#define PIDFD_GET_PID_NAMESPACE _IO(0xFF, 5)
#endif

#define MAX_GROUPS 1024

bool sa_may_act(const struct serve_cfg *cfg, int fd, uid_t uid, gid_t gid)
{
	gid_t groups[MAX_GROUPS];
	socklen_t len = sizeof(groups);

	/* The daemon's own user could call the driver with the daemon's rights
	 * without it (a user's daemon on a socket of their own): acting through
	 * it gives that peer nothing new. Whose process it may act on is still
	 * the rule's: its own only, unless it is root. */
	if (uid == geteuid())
		return true;
	if (!cfg->have_action_group)
		return false;
	if (gid == cfg->action_group)
		return true;
	/* The groups the peer held when it connected: what the kernel says. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false; /* more groups than we look at, or none known: not proven */
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == cfg->action_group)
			return true;
	return false;
}

const char *sa_check(const struct serve_cfg *cfg, uid_t uid, bool may_act,
		     const struct rtid__svc_req *q, int *process)
{
	struct rtid__req_facts f = { .kind = rtid__svc_op_kind(q->op), .check_caller = true, .caller = uid,
				     .may_act = may_act };
	enum rtid__req_verdict v;

	rtid__request_facts(cfg->proc_root, q->pid, &f);
	v = rtid__request_rule(&f);
	if (v != RTID__REQ_OK)
		return rtid__request_why(v);
	*process = f.tgid > 0 ? f.tgid : q->pid;
	return NULL;
}

/* A test switch's value: set and not "0". */
static bool switched(const char *v)
{
	return v && *v && strcmp(v, "0") != 0;
}

/* A namespace read and not yet proven: given to the caller's ns only once
 * it is (an unproven one is never seen). The ns link's text is at most
 * "pid:[" 20 digits "]". */
#define NS_MAX 64

static int proven(const char *got, char *ns, size_t len)
{
	if (strlen(got) >= len)
		return -ENAMETOOLONG;
	memcpy(ns, got, strlen(got) + 1);
	return 0;
}

/* The namespace of a pidfd's process by the kernel's word (6.11): 0,
 * -ESRCH when the process is gone, or -ENOTTY when the call is not to be
 * had (before 6.11; refused): /proc then, proven by the pidfd. */
static int ns_by_ioctl(int pidfd, char *ns, size_t len)
{
	int nsfd = ioctl(pidfd, PIDFD_GET_PID_NAMESPACE, 0), e = errno;
	char got[NS_MAX];
	struct stat st;
	bool ok;

	if (nsfd < 0)
		return e == ESRCH ? -ESRCH : -ENOTTY;
	ok = fstat(nsfd, &st) == 0;
	close(nsfd);
	if (!ok)
		return -ESRCH;
	/* As the ns link reads: the namespace's inode number. */
	snprintf(got, sizeof(got), "pid:[%llu]", (unsigned long long)st.st_ino);
	return proven(got, ns, len);
}

/* The namespace of a pidfd's process from /proc (6.5 to 6.10): read by its
 * number, then proven the process's own: still alive after the read, so
 * that its number was not another's meanwhile. */
static int ns_by_proc(int pidfd, char *ns, size_t len)
{
	char got[NS_MAX];
	int pid;

	if (rtid__pidfd_pid(pidfd, &pid) < 0 || rtid__pidns_of("/proc", pid, got, sizeof(got)) < 0)
		return -ESRCH;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return -ESRCH;
	return proven(got, ns, len);
}

#ifdef SO_PEERPIDFD
/* By SO_PEERPIDFD: the process that connected, whatever holds its number
 * now. -ENOPROTOOPT where the kernel has no such option. */
static int ns_by_pidfd(int fd, char *ns, size_t len)
{
	int pidfd = -1, r;
	socklen_t l = sizeof(pidfd);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) < 0)
		return errno == ENOPROTOOPT ? -ENOPROTOOPT : -ESRCH;
	r = switched(getenv("RTID_SERVE_NO_PIDFD_NS")) ? -ENOTTY : ns_by_ioctl(pidfd, ns, len);
	if (r == -ENOTTY)
		r = ns_by_proc(pidfd, ns, len);
	close(pidfd);
	return r;
}
#endif

/* The inode of the socket at the other end of fd (sock_diag, UNIX_DIAG_PEER):
 * 0 and *ino, or a negative errno (no unix_diag in this kernel; no peer). */
static int peer_inode(int fd, unsigned long *ino)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q = { .h = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } };
	union {
		struct nlmsghdr h;
		char buf[1024];
	} a;
	struct stat st;
	ssize_t n;
	int nl, r = -ESRCH;

	if (fstat(fd, &st) < 0)
		return -errno;
	q.r.udiag_ino = (unsigned)st.st_ino;
	if ((nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		return -errno;
	if (send(nl, &q, sizeof(q), 0) != (ssize_t)sizeof(q) || (n = recv(nl, &a, sizeof(a), 0)) < 0) {
		r = -errno;
	} else if (!NLMSG_OK(&a.h, (size_t)n)) {
		r = -EPROTO;
	} else if (a.h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		   a.h.nlmsg_len >= NLMSG_LENGTH(sizeof(struct unix_diag_msg))) {
		struct rtattr *at = (struct rtattr *)((char *)NLMSG_DATA(&a.h) +
						      NLMSG_ALIGN(sizeof(struct unix_diag_msg)));
		int left = (int)(a.h.nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct unix_diag_msg))));
		unsigned v;

		for (; RTA_OK(at, left); at = RTA_NEXT(at, left))
			if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) == sizeof(v)) {
				memcpy(&v, RTA_DATA(at), sizeof(v));
				r = v ? 0 : -ESRCH; /* 0: the client's end is closed */
				if (v)
					*ino = v;
			}
	} else if (a.h.nlmsg_type == NLMSG_ERROR) {
		r = -EPROTONOSUPPORT; /* no unix_diag: nothing to prove it with */
	}
	close(nl);
	return r;
}

/* Without a pidfd: the namespace read by the number the kernel gave, proven
 * to be the connecting process's by the peer socket among its fds after the
 * read. A process that took the number meanwhile does not hold it; a
 * connecting process that handed the socket on and closed its own is not
 * proven either. */
static int ns_by_socket(int fd, pid_t pid, char *ns, size_t len)
{
	unsigned long ino;
	char target[48], got[NS_MAX];
	int r;

	/* No number (0: the peer's namespace has none here) names no entry. */
	if (rtid__pidns_of("/proc", pid, got, sizeof(got)) < 0)
		return -ESRCH;
	if ((r = peer_inode(fd, &ino)) < 0)
		return r;
	snprintf(target, sizeof(target), "socket:[%lu]", ino);
	if (rtid__holds_file("/proc", pid, target) < 0)
		return -ESRCH;
	return proven(got, ns, len);
}

int sa_peer_ns(int fd, pid_t pid, char *ns, size_t len)
{
#ifdef SO_PEERPIDFD
	if (!switched(getenv("RTID_SERVE_NO_PEERPIDFD"))) {
		int r = ns_by_pidfd(fd, ns, len);

		if (r != -ENOPROTOOPT)
			return r;
	}
#endif
	return ns_by_socket(fd, pid, ns, len);
}
