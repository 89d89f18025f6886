/* Comparing what the resolver gave with what a case expects. Every failure
 * names the case file and line, the mode, the way it ran, the pid and field. */
#include <stdio.h>
#include <string.h>

#include "run-case.h"

struct ctx {
	const struct casefile *c;
	const struct cf_expect *e;
	const char *mode, *via;
	int pid, fails;
	bool api;
};

static void fail(struct ctx *x, const char *field, const char *want, const char *got)
{
	printf("FAIL %s:%d: mode %s (%s): pid %d: %s: expected %s, got %s\n", x->c->path,
	       x->e ? x->e->line : 0, x->mode, x->via, x->pid, field, want, got);
	x->fails++;
}

static void check_str(struct ctx *x, const char *field, const char *want, const char *got)
{
	if (want && strcmp(want, got) != 0)
		fail(x, field, want, got);
}

static void check_pid(struct ctx *x, const struct got *g)
{
	const struct cf_expect *e = x->e;
	char got[32], want[32];

	if (!g->present) {
		fail(x, "result", "a line for the pid", "nothing");
		return;
	}
	snprintf(got, sizeof(got), "%s", g->tid > 0 ? "" : "none");
	if (g->tid > 0)
		snprintf(got, sizeof(got), "%d", g->tid);
	check_str(x, "tid", e->tid, got);
	/* A case's "tool" is the driver's voice: "api" when the worker answers. */
	check_str(x, "source", e->source && x->api && !strcmp(e->source, "tool") ? "api" : e->source,
		  g->source);
	check_str(x, "fallback", e->fallback, g->fallback);
	check_str(x, "crosscheck", e->crosscheck, g->crosscheck);
	check_str(x, "error", e->error, g->error);
	if (e->calls >= 0 && e->calls != g->calls) {
		snprintf(want, sizeof(want), "%d", e->calls);
		snprintf(got, sizeof(got), "%d", g->calls);
		fail(x, "calls", want, got);
	}
}

/* rtid's exit status must say whether any pid ended in an error. */
static void check_status(struct ctx *x, const struct got *g, int status)
{
	bool any = false;
	char want[8], got[8];

	for (size_t i = 0; i < x->c->npids; i++)
		any |= strcmp(g[i].error, "-") != 0;
	if (status != (any ? 1 : 0)) {
		x->e = NULL;
		x->pid = 0;
		snprintf(want, sizeof(want), "%d", any ? 1 : 0);
		snprintf(got, sizeof(got), "%d", status);
		fail(x, "exit status", want, got);
	}
}

int rc_check(const struct casefile *c, enum rtid_mode mode, const char *via, const struct got *g,
	     const struct runner *rn)
{
	struct ctx x = { .c = c, .mode = rtid_mode_name(mode), .via = via,
			 .api = rn->backend == RTID_BACKEND_API };
	char want[16], got[16];

	for (size_t i = 0; i < c->nexpects; i++) {
		x.e = &c->expects[i];
		if (!(x.e->modes & (1u << mode)))
			continue;
		for (size_t k = 0; k < c->npids; k++) {
			if (x.e->pid && x.e->pid != c->pids[k])
				continue;
			x.pid = c->pids[k];
			check_pid(&x, &g[k]);
		}
	}
	if (rn->unexpected) {
		x.e = NULL;
		x.pid = 0;
		fail(&x, "mock calls", "only calls the case answers", "an unexpected call");
	}
	if (rn->left_running) {
		x.e = NULL;
		x.pid = 0;
		snprintf(got, sizeof(got), "%d", rn->left_running);
		fail(&x, "processes left running", "0", got);
	}
	if (x.api && c->attaches[mode] >= 0 && c->attaches[mode] != rn->attaches) {
		x.e = NULL;
		x.pid = 0;
		snprintf(want, sizeof(want), "%d", c->attaches[mode]);
		snprintf(got, sizeof(got), "%d", rn->attaches);
		fail(&x, "driver attaches (cuInit)", want, got);
	}
	if (strncmp(via, "cli", 3) == 0)
		check_status(&x, g, rn->cli_status);
	return x.fails;
}
