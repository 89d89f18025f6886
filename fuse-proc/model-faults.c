/* When an armed fault fires, and what it does: every decision about faults
 * in the fake /proc is made here, at one of the accesses of enum fp_at, so
 * that a new fault is one entry in scope() and one in act(). */
#include <errno.h>
#include <string.h>

#include "model-int.h"

int fp__arm(struct fp_model *m, const struct cf_fault *f)
{
	if (m->nfaults == MAX_FAULTS)
		return -ENOSPC;
	m->faults[m->nfaults].f = *f;
	m->faults[m->nfaults++].fired = false;
	return 0;
}

bool fp__roll(struct fp_model *m, double p)
{
	if (p >= 1)
		return true;
	/* xorshift64*: the same seed gives the same faults, run after run. */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return (double)((m->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0 < p;
}

/* One access being decided, with the task and process a comm open counts. */
struct access {
	const struct fp_access *a;
	struct proc *p;
	struct task *t;
};

/* Whether fault f can fire at this access at all; only then is its
 * probability rolled, so that the generator's sequence (and with it every
 * seeded case) depends on the accesses alone. */
static bool scope(const struct fp_access *a, const struct fault *f)
{
	switch (a->at) {
	case FP_AT_START:
		return f->f.kind == CF_F_EXIT && f->f.trigger == CF_T_ALWAYS;
	case FP_AT_LOOKUP:
		return f->f.kind == CF_F_VANISH && f->f.pid == a->pid && f->f.tid == a->tid;
	case FP_AT_LIST:
		return f->f.kind == CF_F_CHUNK && f->f.pid == a->pid;
	case FP_AT_WALK:
		return !f->fired && f->f.pid == a->pid && f->f.trigger == a->when;
	case FP_AT_OPEN:
		return f->f.pid == a->pid;
	case FP_AT_READ:
		return f->f.pid == a->pid && f->f.tid == a->tid;
	}
	return false;
}

/* Faults that are a state (gone from the start, a chunked listing) always hold. */
static bool rolls(enum fp_at at)
{
	return at != FP_AT_START && at != FP_AT_LIST;
}

static bool is_error_fault(enum cf_fault_kind k)
{
	return k == CF_F_EACCES || k == CF_F_EIO || k == CF_F_ENOENT;
}

static int error_of(enum cf_fault_kind k)
{
	return k == CF_F_EACCES ? -EACCES : k == CF_F_EIO ? -EIO : -ENOENT;
}

static void rename_task(struct task *t, struct fault *f)
{
	memcpy(t->comm, f->f.name, f->f.name_len);
	t->comm_len = f->f.name_len;
	f->fired = true;
}

/* A point of the walk: the process or a thread exits, or a thread is renamed. */
static void act_walk(struct fp_model *m, const struct fp_access *a, struct fault *f)
{
	struct task *t;

	if (f->f.kind == CF_F_EXIT) {
		fp__proc_of(m, a->pid)->exited = true;
		f->fired = true;
	} else if (f->f.kind == CF_F_EXIT_THREAD && (t = fp__task_of(m, a->pid, f->f.tid))) {
		t->hidden = f->fired = true;
	} else if (f->f.kind == CF_F_RENAME && (t = fp__task_of(m, a->pid, f->f.tid))) {
		rename_task(t, f);
	}
}

/* The open of a comm, counted in x->p->reads (the process's) and
 * x->t->reads (the task's): at-read faults whose count is reached. True when
 * the open fails, with e->err. A thread that exits at its own open: the open
 * works, its reads get ESRCH. */
static bool act_open(struct fp_model *m, struct access *x, struct fault *f, struct fp_effect *e)
{
	struct proc *p = x->p;
	struct task *t = x->t;
	bool mine = f->f.tid == t->tid, due = f->f.trigger == CF_T_AT_READ;

	if (f->f.kind == CF_F_EXIT && due && p->reads >= f->f.n) {
		p->exited = f->fired = true;
		e->err = -ENOENT;
		return true;
	}
	if (f->f.kind == CF_F_EXIT_THREAD && due && p->reads >= f->f.n && !f->fired &&
	    fp__task_of(m, p->pid, f->f.tid)) {
		fp__task_of(m, p->pid, f->f.tid)->hidden = true;
		f->fired = true;
	}
	if (f->f.kind == CF_F_APPEAR && p->reads >= f->f.n && !f->fired) {
		fp__task_of(m, p->pid, f->f.tid)->hidden = false;
		f->fired = true;
	}
	if (f->f.kind == CF_F_RENAME && mine && due && t->reads >= f->f.n && !f->fired)
		rename_task(t, f);
	if (is_error_fault(f->f.kind) && mine && f->f.op == CF_OP_OPEN) {
		e->err = error_of(f->f.kind);
		return true;
	}
	return false;
}

/* What fault f does at this access; true when the access is decided and no
 * later fault is looked at. */
static bool act(struct fp_model *m, struct access *x, struct fault *f, struct fp_effect *e)
{
	struct proc *p;

	switch (x->a->at) {
	case FP_AT_START:
		if ((p = fp__proc_of(m, f->f.pid)))
			p->exited = true;
		return false;
	case FP_AT_LOOKUP:
		e->vanished = true;
		return true;
	case FP_AT_LIST:
		e->chunk = (size_t)f->f.n;
		return true;
	case FP_AT_WALK:
		act_walk(m, x->a, f);
		return false;
	case FP_AT_OPEN:
		return act_open(m, x, f, e);
	case FP_AT_READ:
		if (f->f.kind == CF_F_DELAY)
			e->delay_ms += f->f.ms;
		else if (f->f.kind == CF_F_SHORT_READ)
			e->max = 1;
		else if (is_error_fault(f->f.kind) && f->f.op == CF_OP_READ)
			e->err = error_of(f->f.kind);
		return false;
	}
	return false;
}

void fp__fire(struct fp_model *m, const struct fp_access *a, struct fp_effect *e)
{
	struct access x = { .a = a };

	*e = (struct fp_effect){ .max = (size_t)-1 };
	if (a->at == FP_AT_OPEN) {
		x.p = fp__proc_of(m, a->pid);
		x.t = fp__task_of(m, a->pid, a->tid);
		x.t->reads++;
		x.p->reads++;
	}
	for (size_t i = 0; i < m->nfaults; i++) {
		struct fault *f = &m->faults[i];

		if (!scope(a, f) || (rolls(a->at) && !fp__roll(m, f->f.probability)))
			continue;
		if (act(m, &x, f, e))
			break;
	}
}
