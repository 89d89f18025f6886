/* Attestations as a set of evidence: reports (per process, its identity and
 * verdict), legacy records of format 1, and lifts of revocations. Adding is a
 * union: a report already held changes nothing, so no evidence counts twice
 * however often it is merged. Counts are derived afterwards (attest-sum.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attest.h"

int rtid_attest_new(struct rtid_attestation **out)
{
	struct rtid_attestation *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	*out = a;
	return 0;
}

void rtid__att_report_fini(struct att_report *r)
{
	free(r->p);
	r->p = NULL;
	r->n = 0;
}

void rtid__att_lift_fini(struct att_lift *f)
{
	free(f->reports);
	f->reports = NULL;
	f->nreports = 0;
}

void rtid_attest_free(struct rtid_attestation *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr; i++)
		rtid__att_report_fini(&a->r[i]);
	for (size_t i = 0; i < a->nf; i++)
		rtid__att_lift_fini(&a->f[i]);
	free(a->r);
	free(a->l);
	free(a->f);
	free(a->e);
	free(a);
}

bool rtid__att_id_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n >= ATT_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-",
			    s[i]))
			return false;
	return true;
}

int rtid__att_copy(char *dst, size_t n, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len >= n)
		return -EINVAL;
	memcpy(dst, s ? s : "", len + 1);
	return 0;
}

/* Grow *v (elements of size sz, *cap of them) to hold one more. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	p = realloc(*v, c * sz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

int rtid__att_push_report(struct rtid_attestation *a, struct att_report *r)
{
	if (grow((void **)&a->r, &a->capr, a->nr, sizeof(*a->r)) < 0)
		return -ENOMEM;
	a->r[a->nr++] = *r;
	r->p = NULL;
	r->n = 0;
	return 0;
}

int rtid__att_push_legacy(struct rtid_attestation *a, const struct att_legacy *l)
{
	if (grow((void **)&a->l, &a->capl, a->nl, sizeof(*a->l)) < 0)
		return -ENOMEM;
	a->l[a->nl++] = *l;
	return 0;
}

int rtid__att_push_lift(struct rtid_attestation *a, struct att_lift *f)
{
	if (grow((void **)&a->f, &a->capf, a->nf, sizeof(*a->f)) < 0)
		return -ENOMEM;
	a->f[a->nf++] = *f;
	f->reports = NULL;
	f->nreports = 0;
	return 0;
}

static int cmp_proc(const void *x, const void *y)
{
	const struct att_proc *a = x, *b = y;
	int c = strcmp(a->boot, b->boot);

	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_known != b->start_known)
		return a->start_known ? 1 : -1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (int)a->verdict - (int)b->verdict;
}

/* Metadata of one report id seen twice with different origins (a forged or
 * edited copy): the smaller wins, so that the choice is the same in any order. */
static int cmp_meta(const struct att_report *a, const struct att_report *b)
{
	int c;

	if ((c = strcmp(a->version, b->version)) || (c = strcmp(a->host, b->host)) ||
	    (c = strcmp(a->machine, b->machine)) || (c = strcmp(a->boot, b->boot)))
		return c;
	return strcmp(a->time, b->time);
}

static int cmp_report(const void *x, const void *y)
{
	const struct att_report *a = x, *b = y;
	int c = strcmp(a->id, b->id);

	return c ? c : cmp_meta(a, b);
}

/* Sort a report's processes and drop repeats. */
static void uniq_procs(struct att_report *r)
{
	size_t k = 0;

	if (r->n == 0)
		return;
	qsort(r->p, r->n, sizeof(*r->p), cmp_proc);
	for (size_t i = 1; i < r->n; i++)
		if (cmp_proc(&r->p[k], &r->p[i]))
			r->p[++k] = r->p[i];
	r->n = k + 1;
}

/* Unite b's processes into a (same id). */
static int unite_reports(struct att_report *a, struct att_report *b)
{
	struct att_proc *p;

	if (b->n == 0) {
		rtid__att_report_fini(b); /* its array may be there, empty */
		return 0;
	}
	p = realloc(a->p, (a->n + b->n) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p + a->n, b->p, b->n * sizeof(*p));
	a->p = p;
	a->n += b->n;
	rtid__att_report_fini(b);
	return 0;
}

static int normalize_reports(struct rtid_attestation *a)
{
	size_t k = 0;

	if (a->nr == 0)
		return 0;
	qsort(a->r, a->nr, sizeof(*a->r), cmp_report);
	for (size_t i = 1; i < a->nr; i++) {
		if (strcmp(a->r[k].id, a->r[i].id)) {
			a->r[++k] = a->r[i];
			continue;
		}
		if (unite_reports(&a->r[k], &a->r[i]) < 0) {
			for (size_t j = i; j < a->nr; j++) /* not moved: still owned */
				rtid__att_report_fini(&a->r[j]);
			a->nr = k + 1;
			return -ENOMEM;
		}
	}
	a->nr = k + 1;
	for (size_t i = 0; i < a->nr; i++)
		uniq_procs(&a->r[i]);
	return 0;
}

static int cmp_legacy(const void *x, const void *y)
{
	return strcmp(((const struct att_legacy *)x)->version,
		      ((const struct att_legacy *)y)->version);
}

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Legacy records cannot be told apart, so one version's combine by maximum. */
static void normalize_legacy(struct rtid_attestation *a)
{
	size_t k = 0;

	if (a->nl == 0)
		return;
	qsort(a->l, a->nl, sizeof(*a->l), cmp_legacy);
	for (size_t i = 1; i < a->nl; i++) {
		struct att_legacy *d = &a->l[k], *s = &a->l[i];

		if (strcmp(d->version, s->version)) {
			a->l[++k] = *s;
			continue;
		}
		d->agree = MAX(d->agree, s->agree);
		d->agree_none = MAX(d->agree_none, s->agree_none);
		d->mismatch = MAX(d->mismatch, s->mismatch);
		d->revoked = d->revoked || s->revoked;
	}
	a->nl = k + 1;
}

static int cmp_id(const void *x, const void *y)
{
	return strcmp((const char *)x, (const char *)y);
}

static int cmp_lift(const void *x, const void *y)
{
	const struct att_lift *a = x, *b = y;
	int c;

	if ((c = strcmp(a->id, b->id)) || (c = strcmp(a->version, b->version)) ||
	    (c = strcmp(a->reason, b->reason)) || (c = strcmp(a->time, b->time)))
		return c;
	if (a->nreports != b->nreports)
		return a->nreports < b->nreports ? -1 : 1;
	for (size_t i = 0; i < a->nreports; i++)
		if ((c = strcmp(a->reports[i], b->reports[i])))
			return c;
	if (a->legacy != b->legacy)
		return a->legacy ? 1 : -1;
	return a->legacy_mismatch < b->legacy_mismatch ? -1 : a->legacy_mismatch > b->legacy_mismatch;
}

/* A lift is one decision: of two copies with one id, the smaller is kept. */
static void normalize_lifts(struct rtid_attestation *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->nf; i++)
		if (a->f[i].nreports)
			qsort(a->f[i].reports, a->f[i].nreports, ATT_ID_MAX, cmp_id);
	if (a->nf == 0)
		return;
	qsort(a->f, a->nf, sizeof(*a->f), cmp_lift);
	for (size_t i = 1; i < a->nf; i++) {
		if (strcmp(a->f[k].id, a->f[i].id))
			a->f[++k] = a->f[i];
		else
			rtid__att_lift_fini(&a->f[i]);
	}
	a->nf = k + 1;
}

int rtid__att_normalize(struct rtid_attestation *a)
{
	if (normalize_reports(a) < 0)
		return -ENOMEM;
	normalize_legacy(a);
	normalize_lifts(a);
	return rtid__att_summarize(a);
}
