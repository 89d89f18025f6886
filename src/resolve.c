/* The resolver: per pid, what the mode asks of the scan and of the driver,
 * and how the two answers combine. Driver queries of a batch run together
 * (driver.c); scans are quick and run in order. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (s && !(*out = strdup(s)))
		return -ENOMEM;
	return 0;
}

static int ctx_version(struct rtid_ctx *ctx, const char *v)
{
	const struct rtid_attest_entry *e;

	if (v) {
		char running[sizeof(ctx->driver_version)];

		if (!rtid__version_valid(v))
			return -EINVAL;
		strcpy(ctx->driver_version, v); /* valid means at most 31 bytes */
		ctx->have_version = true;
		/* A stale version (a variable baked into an image, a driver upgraded
		 * since) must not scan under another version's attestation: the
		 * running one is reported, and nothing is trusted. */
		if (rtid__driver_version_read(ctx->proc_root, running, sizeof(running)) == 0 &&
		    strcmp(running, v) != 0) {
			strcpy(ctx->driver_version, running);
			ctx->version_mismatch = true;
			return 0;
		}
	} else {
		ctx->have_version = rtid__driver_version_read(ctx->proc_root, ctx->driver_version,
							      sizeof(ctx->driver_version)) == 0;
	}
	if (!ctx->have_version)
		return 0; /* unknown: never attested */
	ctx->attested = rtid_attest_clean(ctx->cfg.attestation, ctx->driver_version);
	e = rtid_attest_find(ctx->cfg.attestation, ctx->driver_version);
	ctx->revoked = e && e->revoked; /* a mismatch, unless explicitly lifted */
	return 0;
}

static int ctx_setup(struct rtid_ctx *ctx, const struct rtid_config *cfg)
{
	int r;

	ctx->cfg = *cfg;
	if ((unsigned)cfg->mode >= RTID__MODE_MAX || (unsigned)cfg->backend >= RTID__BACKEND_MAX)
		return -EINVAL;
	/* Defaults settled once, here: the batch code reads these as they are. */
	if (ctx->cfg.timeout_s <= 0)
		ctx->cfg.timeout_s = RTID_TIMEOUT_DEFAULT;
	if (ctx->cfg.jobs == 0)
		ctx->cfg.jobs = RTID_JOBS_DEFAULT;
	if (ctx->cfg.jobs > RTID__MAX_CHILDREN)
		ctx->cfg.jobs = RTID__MAX_CHILDREN;
	if ((r = dup_opt(cfg->proc_root ? cfg->proc_root : "/proc", &ctx->proc_root)) < 0 ||
	    (r = dup_opt(cfg->tool, &ctx->tool_name)) < 0 ||
	    (r = dup_opt(cfg->libcuda, &ctx->libcuda)) < 0 ||
	    (r = dup_opt(cfg->service_socket, &ctx->service_socket)) < 0)
		return r;
	/* Not kept: the caller's strings may go; ctx holds its own copies. */
	ctx->cfg.driver_version = NULL;
	ctx->cfg.pattern = NULL;
	ctx->cfg.proc_root = ctx->cfg.tool = ctx->cfg.libcuda = ctx->cfg.service_socket = NULL;
	if ((r = ctx_version(ctx, cfg->driver_version)) < 0)
		return r;
	/* A tool that is missing is reported per pid, where it is needed. */
	if (cfg->backend == RTID_BACKEND_TOOL) {
		r = rtid__tool_find(cfg->tool, &ctx->tool_path);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

/* The sizes of the first published layouts: the smallest a caller can have
 * been built with. Fields are only ever added at the ends. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define CONFIG_SIZE_0 END_OF(struct rtid_config, service_socket)
#define RESULT_SIZE_0 END_OF(struct rtid_result, detail)

/* Copy the caller's config, whatever header it was built with: an older one
 * reads as zeros (defaults) in the fields it lacks; a newer one may be larger
 * only by fields left zero, since a set one would be silently ignored. */
static int config_copy(const struct rtid_config *cfg, struct rtid_config *out)
{
	const unsigned char *tail = (const unsigned char *)cfg + sizeof(*out);

	if (cfg->size < CONFIG_SIZE_0 || cfg->result_size < RESULT_SIZE_0)
		return -EINVAL;
	for (size_t i = 0; cfg->size > sizeof(*out) && i < cfg->size - sizeof(*out); i++)
		if (tail[i])
			return -E2BIG;
	memset(out, 0, sizeof(*out));
	memcpy(out, cfg, cfg->size < sizeof(*out) ? cfg->size : sizeof(*out));
	return 0;
}

int rtid_ctx_new(const struct rtid_config *cfg, struct rtid_ctx **out)
{
	struct rtid_config c;
	struct rtid_ctx *ctx;
	int r;

	if (!cfg || !out)
		return -EINVAL;
	if ((r = config_copy(cfg, &c)) < 0)
		return r;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	if (rtid__matcher_init(&ctx->matcher, c.pattern) < 0) {
		free(ctx);
		return -EINVAL;
	}
	r = ctx_setup(ctx, &c);
	if (r < 0) {
		rtid_ctx_free(ctx);
		return r;
	}
	*out = ctx;
	return 0;
}

void rtid_ctx_free(struct rtid_ctx *ctx)
{
	if (!ctx)
		return;
	rtid__driver_end(ctx);
	rtid__matcher_fini(&ctx->matcher);
	free(ctx->proc_root);
	free(ctx->tool_name);
	free(ctx->tool_path);
	free(ctx->libcuda);
	free(ctx->service_socket);
	free(ctx);
}

bool rtid_ctx_version_mismatch(const struct rtid_ctx *ctx)
{
	return ctx && ctx->version_mismatch;
}

const char *rtid_ctx_driver_version(const struct rtid_ctx *ctx)
{
	return ctx && ctx->have_version ? ctx->driver_version : NULL;
}

bool rtid_ctx_attested(const struct rtid_ctx *ctx)
{
	return ctx && ctx->attested;
}

/* An error of resolve's own (the pid is no process), before any source. */
static __attribute__((format(printf, 3, 4))) void result_fail(struct rtid_result *r,
							       enum rtid_error e,
							       const char *fmt, ...)
{
	va_list ap;

	r->error = e;
	r->tid = 0;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

static struct rtid__trust trust_of(const struct rtid_ctx *ctx)
{
	return (struct rtid__trust){ .attested = ctx->attested, .revoked = ctx->revoked,
				     .allow_unattested = ctx->cfg.allow_unattested,
				     .version_mismatch = ctx->version_mismatch };
}

static enum rtid_source driver_source(const struct rtid_ctx *ctx)
{
	if (ctx->cfg.backend == RTID_BACKEND_SERVICE)
		return RTID_SRC_SERVICE;
	return ctx->cfg.backend == RTID_BACKEND_API ? RTID_SRC_API : RTID_SRC_TOOL;
}

/* Scan pid into r and s; returns false when the process is missing, which
 * ends the pid with an error and no driver query. */
static bool scan_into(struct rtid_ctx *ctx, int pid, struct rtid_result *r, struct rtid__scan *s)
{
	rtid__scan(ctx->proc_root, pid, &ctx->matcher, s);
	r->scan_candidates = s->candidates;
	r->scan_tid = s->status == RTID__SCAN_FOUND ? s->tid : 0;
	if (s->status != RTID__SCAN_NOPROC)
		return true;
	r->scan_candidates = -1;
	result_fail(r, RTID_ERR_NO_SUCH_PROCESS, "no process %d under %s", pid, ctx->proc_root);
	return false;
}

/* The scan half of scan mode. trusted: the driver version may be scanned. */
static bool plan_scan(struct rtid_ctx *ctx, int pid, bool trusted, struct rtid_result *r,
		      struct rtid__scan *s)
{
	if (!trusted) {
		struct rtid__trust t = trust_of(ctx);

		r->fallback = rtid__untrusted_why(&t);
		return true;
	}
	if (!scan_into(ctx, pid, r, s))
		return false;
	r->fallback = rtid__scan_fallback(s);
	if (r->fallback != RTID_FB_NONE)
		return true;
	r->tid = s->tid;
	r->source = RTID_SRC_SCAN;
	return false;
}

/* The number must name a process before anything acts on it: the kernel
 * also serves a thread as <proc>/<tid> (not listed), and cuda-checkpoint
 * acting on a tid can harm the real process. Tgid: settles it. Returns false
 * after setting the error; a status that cannot be read for another reason
 * (EACCES under hidepid) leaves the question to the driver, as before. */
static bool is_process(struct rtid_ctx *ctx, int pid, struct rtid_result *r)
{
	int fd = open(ctx->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), tgid, n, e;

	if (fd < 0)
		return true;
	e = rtid__status_read(fd, pid, &tgid, &n);
	close(fd);
	if (e == -ENOENT || e == -ESRCH) {
		result_fail(r, RTID_ERR_NO_SUCH_PROCESS, "no process %d under %s", pid,
			    ctx->proc_root);
		return false;
	}
	if (e == 0 && tgid != pid) {
		result_fail(r, RTID_ERR_NOT_A_PROCESS, "%d is a thread of process %d, not a process",
			    pid, tgid);
		return false;
	}
	return true;
}

/* Fill what needs no driver; returns whether the driver must be asked. */
static bool plan(struct rtid_ctx *ctx, enum rtid_mode mode, bool trusted, int pid,
		 struct rtid_result *r, struct rtid__scan *s)
{
	double t0 = rtid__now();
	bool need = true;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->scan_candidates = -1;
	if (!is_process(ctx, pid, r))
		need = false;
	else if (mode == RTID_MODE_SCAN)
		need = plan_scan(ctx, pid, trusted, r, s);
	else if (mode == RTID_MODE_CROSSCHECK)
		need = scan_into(ctx, pid, r, s);
	if (need)
		r->source = driver_source(ctx);
	r->ms = (rtid__now() - t0) * 1000.0;
	return need;
}

static void verdict(enum rtid_mode mode, struct rtid_result *r, const struct rtid__scan *s)
{
	if (mode == RTID_MODE_CROSSCHECK && r->error == RTID_OK)
		r->crosscheck = rtid__crosscheck(s, r->tid);
}

struct batch {
	struct rtid_ctx *ctx;
	double deadline;
	const int *pids;
	struct rtid_result *out;
	struct rtid__scan *scans;
	bool *need;
	struct rtid__answer *ans; /* the driver's, for the pids that need it */
};

/* The driver's answer into the result, whose source plan() has set. */
static void take_answer(struct rtid_result *r, const struct rtid__answer *a)
{
	r->tid = a->tid;
	r->error = a->error;
	r->code = a->code;
	r->ms += a->ms;
	memcpy(r->detail, a->detail, sizeof(r->detail));
}

/* Resolve pids [from, to) in one mode. */
static void run_group(struct batch *b, size_t from, size_t to, enum rtid_mode mode,
		      bool trusted, enum rtid_fallback why)
{
	for (size_t i = from; i < to; i++) {
		b->need[i] = plan(b->ctx, mode, trusted, b->pids[i], &b->out[i], &b->scans[i]);
		if (why != RTID_FB_NONE && b->out[i].fallback == RTID_FB_NONE &&
		    b->out[i].source != RTID_SRC_SCAN)
			b->out[i].fallback = why;
	}
	memset(b->ans + from, 0, (to - from) * sizeof(*b->ans));
	rtid__driver_batch(b->ctx, b->pids + from, b->need + from, to - from, b->ans + from,
			   b->deadline);
	for (size_t i = from; i < to; i++) {
		if (b->need[i])
			take_answer(&b->out[i], &b->ans[i]);
		verdict(mode, &b->out[i], &b->scans[i]);
	}
}

/* Canary: cross-check pids one by one until one gives a verdict on the naming
 * (agree or mismatch); then the rest go by scan, or all by the driver. */
static void run_canary(struct batch *b, size_t n)
{
	struct rtid__trust t = trust_of(b->ctx);

	if (!rtid__canary_may_try(&t)) {
		run_group(b, 0, n, RTID_MODE_DRIVER, false, rtid__untrusted_why(&t));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		run_group(b, i, i + 1, RTID_MODE_CROSSCHECK, false, RTID_FB_NONE);
		switch (rtid__canary_next(b->out[i].crosscheck)) {
		case RTID__CANARY_SCAN_REST:
			run_group(b, i + 1, n, RTID_MODE_SCAN, true, RTID_FB_NONE);
			return;
		case RTID__CANARY_DRIVER_REST:
			run_group(b, i + 1, n, RTID_MODE_DRIVER, false, RTID_FB_CANARY_MISMATCH);
			return;
		case RTID__CANARY_NEXT_PID:
			break;
		}
	}
}

/* Results of another size than this library's (a caller built with an older
 * or newer header) are worked out in an array of ours, then copied out. */
static void results_out(const struct rtid_ctx *ctx, const struct rtid_result *r, size_t n,
			struct rtid_result *out)
{
	size_t stride = ctx->cfg.result_size;
	size_t keep = stride < sizeof(*r) ? stride : sizeof(*r);

	for (size_t i = 0; i < n; i++) {
		unsigned char *slot = (unsigned char *)out + i * stride;

		memcpy(slot, &r[i], keep);
		memset(slot + keep, 0, stride - keep);
	}
}

static void batch_free(struct batch *b, struct rtid_result *caller)
{
	if (b->out != caller)
		free(b->out);
	free(b->ans);
	free(b->scans);
	free(b->need);
}

int rtid_resolve_many(struct rtid_ctx *ctx, const int *pids, size_t n, struct rtid_result *out)
{
	struct batch b = { ctx, 0, pids, out, NULL, NULL, NULL };
	struct rtid__trust t;
	bool trusted;

	if (!ctx || (n && (!pids || !out)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (pids[i] <= 0)
			return -EINVAL;
	b.scans = calloc(n ? n : 1, sizeof(*b.scans));
	b.need = calloc(n ? n : 1, sizeof(*b.need));
	b.ans = calloc(n ? n : 1, sizeof(*b.ans));
	if (ctx->cfg.result_size != sizeof(*out))
		b.out = calloc(n ? n : 1, sizeof(*out));
	if (!b.scans || !b.need || !b.ans || (n && !b.out)) {
		batch_free(&b, out);
		return -ENOMEM;
	}
	if (ctx->cfg.deadline_s > 0)
		b.deadline = rtid__now() + ctx->cfg.deadline_s;
	t = trust_of(ctx);
	trusted = rtid__scan_trusted(&t);
	if (ctx->cfg.mode == RTID_MODE_CANARY)
		run_canary(&b, n);
	else
		run_group(&b, 0, n, ctx->cfg.mode, trusted, RTID_FB_NONE);
	rtid__driver_end(ctx);
	if (b.out != out)
		results_out(ctx, b.out, n, out);
	batch_free(&b, out);
	return 0;
}

int rtid_resolve(struct rtid_ctx *ctx, int pid, struct rtid_result *out)
{
	return rtid_resolve_many(ctx, &pid, 1, out);
}
