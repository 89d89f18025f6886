/* Who may ask the daemon what: the request rule of rules/ (the same one the
 * library and the shim apply), over the facts proc/ reads of the number and
 * the peer's credentials from the kernel (SO_PEERCRED, SO_PEERGROUPS), never
 * the client's word nor the user database. */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proc/proc.h"
#include "rules/rules.h"
#include "serve/serve.h"

#define MAX_GROUPS 1024

bool sa_may_act(const struct serve_cfg *cfg, int fd, uid_t uid, gid_t gid)
{
	gid_t groups[MAX_GROUPS];
	socklen_t len = sizeof(groups);

	if (uid == 0)
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
