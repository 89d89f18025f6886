/* Who may ask the daemon what. The peer's credentials come from SO_PEERCRED
 * (the kernel's, not the client's word); the request names only a pid, and
 * the only path built from it is <proc>/<pid>, stat'ed, never opened. */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve.h"

#define MAX_GROUPS 256

/* Whether uid (primary group gid) is a member of g. */
static bool member(uid_t uid, gid_t gid, gid_t g)
{
	struct passwd pw, *res = NULL;
	gid_t groups[MAX_GROUPS];
	int n = MAX_GROUPS;
	char buf[4096];

	if (gid == g)
		return true;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return false;
	if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
		return false; /* more groups than we look at: not proven */
	for (int i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

/* The owner of the process, or -1 when there is no such process. */
static int owner(const struct serve_cfg *cfg, int pid, uid_t *uid)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d", cfg->proc_root, pid);
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return -1;
	*uid = st.st_uid;
	return 0;
}

const char *sa_check(const struct serve_cfg *cfg, uid_t uid, gid_t gid,
		     const struct rtid__svc_req *q)
{
	uid_t own;

	if (q->op >= RTID__OP_LOCK) {
		if (uid == 0 || (cfg->have_action_group && member(uid, gid, cfg->action_group)))
			return NULL;
		return "actions are for root and the action group only";
	}
	if (uid == 0)
		return NULL;
	if (owner(cfg, q->pid, &own) < 0)
		return "no such process";
	return own == uid ? NULL : "the process belongs to another user";
}
