/* rtid's rules, as pure functions over facts gathered elsewhere: the
 * exactly-one-and-stable rule over what a scan saw, trust in the scan, the
 * mode's plan for a pid, the canary's next step, what a driver status means,
 * the fallback and cross-check verdicts. Depends on nothing of rtid's but the
 * public header (see rules/README.md); tested row by row in test-decide. */
#ifndef RTID_RULES_H
#define RTID_RULES_H

#include <stdbool.h>
#include <sys/types.h>

#include "rtid.h"

/* What a scan concluded about a process. */
enum rtid__scan_status {
	RTID__SCAN_FOUND,    /* exactly one candidate, stable on re-read */
	RTID__SCAN_ZERO,
	RTID__SCAN_MULTIPLE,
	RTID__SCAN_UNSTABLE, /* the single candidate changed or vanished, or the walk
			     * could not be proven complete */
	RTID__SCAN_ERROR,    /* a task could not be read: uniqueness unproven */
	RTID__SCAN_NOPROC,   /* the process is not there */
};
struct rtid__scan {
	enum rtid__scan_status status;
	int tid;        /* the candidate when FOUND */
	int candidates; /* matches seen in the walk */
	int err;        /* negative errno behind SCAN_ERROR, else 0 */
};
/* What one scan saw of a process: the facts the rule reads. */
enum rtid__reread {
	RTID__REREAD_NOT_DONE, /* the single candidate was not read again */
	RTID__REREAD_SAME,     /* it still matches */
	RTID__REREAD_CHANGED,  /* renamed or exited since the walk */
	RTID__REREAD_ERROR,    /* it could not be read */
};
struct rtid__scan_seen {
	bool gone;       /* the process was not there after the walk */
	int err;         /* negative errno of a task that could not be read, or 0 */
	bool incomplete; /* no listing of its tasks was provably complete */
	int candidates;  /* matching threads in the walk */
	enum rtid__reread reread;
};

/* Whether the walk left exactly one candidate to read again. */
bool rtid__scan_needs_reread(const struct rtid__scan_seen *s);
/* Exactly one and stable: the status of a scan that saw s. */
enum rtid__scan_status rtid__scan_rule(const struct rtid__scan_seen *s);
/* Why a scan that did not find gives way to the driver. */
enum rtid_fallback rtid__scan_fallback(const struct rtid__scan *s);
/* The scan's verdict against the driver's tid (0: none). */
enum rtid_xcheck rtid__crosscheck(const struct rtid__scan *s, int driver_tid);

/* What the scan's trust rests on, for the running driver version. */
struct rtid__trust {
	bool attested;         /* a clean attestation */
	bool revoked;          /* a mismatch on record */
	bool allow_unattested; /* the caller's permission */
	bool version_mismatch; /* the configured version is not the running one */
};
bool rtid__scan_trusted(const struct rtid__trust *t);
enum rtid_fallback rtid__untrusted_why(const struct rtid__trust *t);
bool rtid__canary_may_try(const struct rtid__trust *t);

enum rtid__plan {
	RTID__PLAN_DRIVER,     /* the driver only */
	RTID__PLAN_UNTRUSTED,  /* the driver, saying why the scan may not be used */
	RTID__PLAN_SCAN_FIRST, /* the scan; the driver only when it names no thread */
	RTID__PLAN_BOTH,       /* the scan and the driver; the driver's answer is used */
};
/* The mode's plan for one pid, given whether the scan is trusted. */
enum rtid__plan rtid__plan_for(enum rtid_mode mode, bool trusted);

enum rtid__canary_step {
	RTID__CANARY_NEXT_PID,   /* no verdict: cross-check the next pid */
	RTID__CANARY_SCAN_REST,  /* agreement: scan the rest */
	RTID__CANARY_DRIVER_REST /* mismatch: the driver for the rest */
};
enum rtid__canary_step rtid__canary_next(enum rtid_xcheck x);

enum rtid__said {
	RTID__SAID_TID,   /* success: a tid, still to be checked as one */
	RTID__SAID_NONE,  /* a definite "no CUDA in this process" */
	RTID__SAID_FAILED /* anything else: an error */
};
/* What a driver status (the tool's exit status, the CUresult) means, for
 * every backend alike. */
enum rtid__said rtid__driver_said(int status);

/* Who may ask what about which number: the one rule every entry point
 * applies (the library's resolve, the daemon's intake, the shim before it
 * asks anyone), over facts that proc/ gathers (rtid__request_facts). Its
 * table is in README.md and rtid(1), checked against this by test-decide. */
enum rtid__req_kind {
	RTID__REQ_QUERY,  /* get-restore-tid: a process only */
	RTID__REQ_STATE,  /* get-state: a process, or a thread (CRIU asks with the restore tid) */
	RTID__REQ_ACTION, /* lock, checkpoint, restore, unlock: a process only */
};
struct rtid__req_facts {
	enum rtid__req_kind kind;
	int pid;           /* the number asked about */
	bool present;      /* <proc>/<pid> is there */
	int tgid;          /* its Tgid: (0: the status could not be read) */
	bool owner_known;  /* owner is the uid of <proc>/<pid> */
	uid_t owner;
	bool check_caller; /* the entry point answers for a caller (the daemon, the shim) */
	uid_t caller;      /* the caller's uid */
	bool may_act;      /* may ask for actions at all (the daemon's user, the action group) */
};
enum rtid__req_verdict {
	RTID__REQ_OK,
	RTID__REQ_NO_ACTIONS, /* actions, for a caller who may not act */
	RTID__REQ_NO_PROCESS, /* the number names nothing */
	RTID__REQ_A_THREAD,   /* a thread where a process is expected */
	RTID__REQ_NOT_YOURS,  /* not root, and not the owner */
	RTID__REQ_VERDICT_MAX,
};
/* The verdict on a request, first matching row first: actions for a caller
 * who may not act; no such number; a thread where only a process is taken;
 * a caller (not root) who does not own it. Root may ask and act on anything;
 * anyone else only on what is theirs, and acts only with may_act. */
enum rtid__req_verdict rtid__request_rule(const struct rtid__req_facts *f);
/* The reason a daemon or a shim gives for a verdict ("" for OK). */
const char *rtid__request_why(enum rtid__req_verdict v);

/* --- jobs.c: launch jobs (cuda-checkpoint r590, --launch-job) ---
 * The processes of one launch job must be operated on one after another
 * (NVIDIA's rule, as ai-dynamo/dynamo#11304 cites it). A process's job is
 * the file its CUDA_CHECKPOINT_JOB_FILE names, told by its device and inode
 * (the tool makes it a memfd, which its children inherit). */
enum rtid__job_kind {
	RTID__JOB_NONE,    /* no CUDA_CHECKPOINT_JOB_FILE: in no job */
	RTID__JOB_KNOWN,   /* in the job of the file (dev, ino) */
	RTID__JOB_UNKNOWN, /* its job cannot be read: it may be in any job */
};
struct rtid__job {
	enum rtid__job_kind kind;
	unsigned long long dev, ino; /* RTID__JOB_KNOWN */
};
/* Whether actions on processes of jobs a and b may run side by side: not in
 * one job, and not one that may be in any job beside one in a job. */
bool rtid__jobs_apart(const struct rtid__job *a, const struct rtid__job *b);

#endif
