/* Adding evidence to an attestation: reports, legacy records, lifts, merges.
 * Each public call leaves the set normalized and its entries derived. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attest.h"

static unsigned long clamp(unsigned long v)
{
	return v > ATT_COUNT_MAX ? ATT_COUNT_MAX : v;
}

int rtid_attest_add(struct rtid_attestation *a, const char *version, unsigned long agree,
		    unsigned long agree_none, unsigned long mismatch, bool revoke)
{
	struct att_legacy l = { .agree = clamp(agree), .agree_none = clamp(agree_none),
				.mismatch = clamp(mismatch), .revoked = revoke || mismatch > 0 };

	if (!a || !rtid__version_valid(version))
		return -EINVAL;
	strcpy(l.version, version); /* valid: at most 31 bytes */
	if (rtid__att_push_legacy(a, &l) < 0)
		return -ENOMEM;
	return rtid__att_normalize(a);
}

static bool boot_valid(const char *s)
{
	return rtid__att_id_valid(s) && strlen(s) < ATT_BOOT_MAX;
}

static int fill_report(struct att_report *d, const struct rtid_attest_report *r)
{
	if (!r || !rtid__att_id_valid(r->id) || !rtid__version_valid(r->version) ||
	    rtid__att_copy(d->id, sizeof(d->id), r->id) ||
	    rtid__att_copy(d->version, sizeof(d->version), r->version) ||
	    rtid__att_copy(d->host, sizeof(d->host), r->host) ||
	    rtid__att_copy(d->machine, sizeof(d->machine), r->machine_id) ||
	    rtid__att_copy(d->boot, sizeof(d->boot), r->boot_id) ||
	    rtid__att_copy(d->time, sizeof(d->time), r->time))
		return -EINVAL;
	return 0;
}

int rtid_attest_add_report(struct rtid_attestation *a, const struct rtid_attest_report *r,
			   const struct rtid_attest_proc *p, size_t n)
{
	struct att_report d = { 0 };

	if (!a || fill_report(&d, r) < 0 || (n && !p))
		return -EINVAL;
	d.p = calloc(n ? n : 1, sizeof(*d.p));
	if (!d.p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (p[i].verdict == RTID_XC_NONE)
			continue;
		if (p[i].pid <= 0 || (unsigned)p[i].verdict >= RTID__XC_MAX ||
		    !boot_valid(p[i].boot_id)) {
			free(d.p);
			return -EINVAL;
		}
		/* A start time JSON cannot hold is as good as unknown. */
		bool known = p[i].start_known && p[i].start <= (unsigned long long)INT64_MAX;

		d.p[d.n] = (struct att_proc){ .pid = p[i].pid, .start_known = known,
					      .start = known ? p[i].start : 0,
					      .verdict = p[i].verdict };
		strcpy(d.p[d.n++].boot, p[i].boot_id);
	}
	if (rtid__att_push_report(a, &d) < 0) {
		free(d.p);
		return -ENOMEM;
	}
	return rtid__att_normalize(a);
}

/* The mismatching reports of version, as a lift names them. */
static int lift_reports(const struct rtid_attestation *a, const char *version,
			struct att_lift *f)
{
	f->reports = calloc(a->nr ? a->nr : 1, ATT_ID_MAX);
	if (!f->reports)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		const struct att_report *r = &a->r[i];
		bool bad = false;

		for (size_t j = 0; j < r->n && !bad; j++)
			bad = r->p[j].verdict == RTID_XC_MISMATCH;
		if (bad && !strcmp(r->version, version))
			strcpy(f->reports[f->nreports++], r->id);
	}
	return 0;
}

int rtid_attest_lift(struct rtid_attestation *a, const char *version, const char *reason,
		     const char *id, const char *time)
{
	const struct rtid_attest_entry *e = rtid_attest_find(a, version);
	struct att_lift f = { 0 };

	if (!a || !rtid__version_valid(version) || !reason || !*reason ||
	    !rtid__att_id_valid(id) || rtid__att_copy(f.reason, sizeof(f.reason), reason) ||
	    rtid__att_copy(f.time, sizeof(f.time), time))
		return -EINVAL;
	if (!e || !e->revoked)
		return -ENOENT;
	strcpy(f.id, id);
	strcpy(f.version, version);
	for (size_t i = 0; i < a->nl; i++)
		if (!strcmp(a->l[i].version, version) && (a->l[i].revoked || a->l[i].mismatch)) {
			f.legacy = true;
			f.legacy_mismatch = a->l[i].mismatch;
		}
	if (lift_reports(a, version, &f) < 0 || rtid__att_push_lift(a, &f) < 0) {
		rtid__att_lift_fini(&f);
		return -ENOMEM;
	}
	return rtid__att_normalize(a);
}

static int copy_report(struct att_report *d, const struct att_report *s)
{
	*d = *s;
	d->p = malloc((s->n ? s->n : 1) * sizeof(*d->p));
	if (!d->p)
		return -ENOMEM;
	if (s->n)
		memcpy(d->p, s->p, s->n * sizeof(*d->p));
	return 0;
}

static int copy_lift(struct att_lift *d, const struct att_lift *s)
{
	*d = *s;
	d->reports = malloc((s->nreports ? s->nreports : 1) * ATT_ID_MAX);
	if (!d->reports)
		return -ENOMEM;
	if (s->nreports)
		memcpy(d->reports, s->reports, s->nreports * ATT_ID_MAX);
	return 0;
}

int rtid__att_absorb(struct rtid_attestation *dst, const struct rtid_attestation *src)
{
	for (size_t i = 0; i < src->nr; i++) {
		struct att_report r;

		if (copy_report(&r, &src->r[i]) < 0)
			return -ENOMEM;
		if (rtid__att_push_report(dst, &r) < 0) {
			rtid__att_report_fini(&r);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < src->nl; i++)
		if (rtid__att_push_legacy(dst, &src->l[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < src->nf; i++) {
		struct att_lift f;

		if (copy_lift(&f, &src->f[i]) < 0)
			return -ENOMEM;
		if (rtid__att_push_lift(dst, &f) < 0) {
			rtid__att_lift_fini(&f);
			return -ENOMEM;
		}
	}
	/* Evidence from a file not trusted keeps its revocations, never its trust. */
	dst->untrusted = dst->untrusted || src->untrusted;
	return 0;
}

int rtid_attest_merge(struct rtid_attestation *dst, const struct rtid_attestation *src)
{
	int r;

	if (!dst || !src)
		return -EINVAL;
	if (dst == src)
		return 0; /* a union with itself */
	r = rtid__att_absorb(dst, src);
	return r < 0 ? r : rtid__att_normalize(dst);
}
