/* The rules, as pure functions of what the scan saw, what is on record and
 * what the driver said: when a scan names the thread, when it may be used,
 * what the canary does next and what a driver status means. One place to
 * read them, one table of tests (tests/test-decide.c) to prove them. */
#include "rules/rules.h"

bool rtid__scan_needs_reread(const struct rtid__scan_seen *s)
{
	return !s->gone && !s->err && !s->incomplete && s->candidates == 1;
}

/* A scan names a thread only when the process is there, every task was
 * read, the listing is provably complete, exactly one thread matched and it
 * still matches when read again after the walk. Anything short of that is
 * no answer, and says which rule failed. */
enum rtid__scan_status rtid__scan_rule(const struct rtid__scan_seen *s)
{
	if (s->gone)
		return RTID__SCAN_NOPROC;
	if (s->err)
		return RTID__SCAN_ERROR;
	if (s->incomplete)
		return RTID__SCAN_UNSTABLE;
	if (s->candidates == 0)
		return RTID__SCAN_ZERO;
	if (s->candidates > 1)
		return RTID__SCAN_MULTIPLE;
	switch (s->reread) {
	case RTID__REREAD_SAME:
		return RTID__SCAN_FOUND;
	case RTID__REREAD_ERROR:
		return RTID__SCAN_ERROR;
	case RTID__REREAD_CHANGED:
	case RTID__REREAD_NOT_DONE:
		break;
	}
	return RTID__SCAN_UNSTABLE;
}

enum rtid_fallback rtid__scan_fallback(const struct rtid__scan *s)
{
	switch (s->status) {
	case RTID__SCAN_FOUND:
		return RTID_FB_NONE;
	case RTID__SCAN_ZERO:
		return RTID_FB_ZERO_MATCHES;
	case RTID__SCAN_MULTIPLE:
		return RTID_FB_MULTIPLE_MATCHES;
	case RTID__SCAN_UNSTABLE:
		return RTID_FB_UNSTABLE;
	case RTID__SCAN_ERROR:
	case RTID__SCAN_NOPROC:
		break;
	}
	return RTID_FB_SCAN_ERROR;
}

/* driver_tid: > 0 the driver's tid, 0 the driver's "none". The scan has a
 * verdict only when it named one thread or none; several candidates, an
 * unstable name or an unreadable task leave nothing to compare. A zero-match
 * scan beside a driver tid is a mismatch: it is how a renamed thread shows. */
enum rtid_xcheck rtid__crosscheck(const struct rtid__scan *s, int driver_tid)
{
	switch (s->status) {
	case RTID__SCAN_FOUND:
		return s->tid == driver_tid ? RTID_XC_AGREE : RTID_XC_MISMATCH;
	case RTID__SCAN_ZERO:
		return driver_tid == 0 ? RTID_XC_AGREE_NONE : RTID_XC_MISMATCH;
	default:
		return RTID_XC_NONE;
	}
}

/* The scan may be trusted for the running driver: never on a version other
 * than the one running; else with a clean attestation, or when the caller
 * allowed the unattested scan and the version was not revoked (a mismatch
 * on record outweighs any permission). */
bool rtid__scan_trusted(const struct rtid__trust *t)
{
	if (t->version_mismatch)
		return false;
	return t->attested || (t->allow_unattested && !t->revoked);
}

/* The canary proves the naming itself, so it needs no attestation; but it
 * never tries on a version other than the running one, nor on one with a
 * mismatch on record. */
bool rtid__canary_may_try(const struct rtid__trust *t)
{
	return !t->version_mismatch && !t->revoked;
}

/* Why an untrusted scan was not used, as the result reports it. */
enum rtid_fallback rtid__untrusted_why(const struct rtid__trust *t)
{
	return t->version_mismatch ? RTID_FB_VERSION_MISMATCH : RTID_FB_UNATTESTED;
}

/* What the mode asks for one pid. Canary: its pids come here as cross-check,
 * scan or driver (rtid__canary_next); alone it is cross-check. */
enum rtid__plan rtid__plan_for(enum rtid_mode mode, bool trusted)
{
	switch (mode) {
	case RTID_MODE_SCAN:
		return trusted ? RTID__PLAN_SCAN_FIRST : RTID__PLAN_UNTRUSTED;
	case RTID_MODE_CROSSCHECK:
	case RTID_MODE_CANARY:
		return RTID__PLAN_BOTH;
	default:
		return RTID__PLAN_DRIVER;
	}
}

/* The canary's next step after cross-checking one pid: an agreement proves
 * the naming for this batch, a mismatch disproves it; no verdict (the pid
 * had no CUDA, or an error) proves nothing, and the next pid is tried. */
enum rtid__canary_step rtid__canary_next(enum rtid_xcheck x)
{
	switch (x) {
	case RTID_XC_AGREE:
		return RTID__CANARY_SCAN_REST;
	case RTID_XC_MISMATCH:
		return RTID__CANARY_DRIVER_REST;
	default:
		return RTID__CANARY_NEXT_PID;
	}
}

/* CUDA_ERROR_INVALID_VALUE and CUDA_ERROR_NOT_INITIALIZED: the driver's way
 * of saying that a process has no CUDA (cuda-checkpoint exits with the
 * CUresult truncated to 8 bits, which leaves both as they are). */
#define CU_INVALID_VALUE 1
#define CU_NOT_INITIALIZED 3

/* What a driver status means, the same for every backend: cuda-checkpoint's
 * exit status and the CUresult of the api or the service. */
enum rtid__said rtid__driver_said(int status)
{
	if (status == 0)
		return RTID__SAID_TID;
	if (status == CU_INVALID_VALUE || status == CU_NOT_INITIALIZED)
		return RTID__SAID_NONE;
	return RTID__SAID_FAILED;
}

enum rtid__req_verdict rtid__request_rule(const struct rtid__req_facts *f)
{
	bool root = f->check_caller && f->caller == 0;

	if (f->kind == RTID__REQ_ACTION && f->check_caller && !root && !f->may_act)
		return RTID__REQ_NO_ACTIONS;
	if (!f->present)
		return RTID__REQ_NO_PROCESS;
	/* A thread's status names its process: only get-state takes a thread. */
	if (f->kind != RTID__REQ_STATE && f->tgid > 0 && f->tgid != f->pid)
		return RTID__REQ_A_THREAD;
	if (f->check_caller && !root && (!f->owner_known || f->owner != f->caller))
		return RTID__REQ_NOT_YOURS;
	return RTID__REQ_OK;
}

const char *rtid__request_why(enum rtid__req_verdict v)
{
	static const char *const why[RTID__REQ_VERDICT_MAX] = {
		[RTID__REQ_OK] = "",
		[RTID__REQ_NO_ACTIONS] = "actions are for root, the daemon's own user and the action group only",
		[RTID__REQ_NO_PROCESS] = "no such process",
		[RTID__REQ_A_THREAD] = "a thread, not a process: only get-state takes a thread",
		[RTID__REQ_NOT_YOURS] = "the process belongs to another user",
	};

	return why[v]; /* v comes from rtid__request_rule */
}
