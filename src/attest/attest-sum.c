/* What an attestation says per driver version, derived from its evidence:
 * agreements of distinct processes (a process is its boot id, pid and start
 * time), reports, hosts, and whether a mismatch that no lift names revokes it.
 * Sorting makes it O(n log n) in the evidence held. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attest.h"

unsigned long rtid__att_sat_add(unsigned long a, unsigned long b)
{
	return a > ATT_COUNT_MAX - (b > ATT_COUNT_MAX ? ATT_COUNT_MAX : b) ? ATT_COUNT_MAX
									   : a + b;
}

struct ref { /* one verdict, seen from its version */
	const char *version;
	const struct att_report *r;
	const struct att_proc *p;
};

static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;
	int c = strcmp(a->version, b->version);

	if (c)
		return c;
	if (a->p->verdict != b->p->verdict)
		return (int)a->p->verdict - (int)b->p->verdict;
	if ((c = strcmp(a->p->boot, b->p->boot)))
		return c;
	if (a->p->pid != b->p->pid)
		return a->p->pid < b->p->pid ? -1 : 1;
	if (a->p->start_known != b->p->start_known)
		return a->p->start_known ? 1 : -1;
	if (a->p->start != b->p->start)
		return a->p->start < b->p->start ? -1 : 1;
	return strcmp(a->r->id, b->r->id);
}

static bool same_process(const struct ref *a, const struct ref *b)
{
	return a->p->verdict == b->p->verdict && !strcmp(a->p->boot, b->p->boot) &&
	       a->p->pid == b->p->pid && a->p->start_known == b->p->start_known &&
	       a->p->start == b->p->start;
}

static int cmp_entry(const void *x, const void *y)
{
	return strcmp(((const struct rtid_attest_entry *)x)->version,
		      ((const struct rtid_attest_entry *)y)->version);
}

static struct rtid_attest_entry *entry(struct rtid_attestation *a, const char *version)
{
	struct rtid_attest_entry key;

	if (a->ne == 0)
		return NULL;
	snprintf(key.version, sizeof(key.version), "%s", version);
	return bsearch(&key, a->e, a->ne, sizeof(*a->e), cmp_entry);
}

/* Every version that has evidence, one entry each, sorted. */
static int make_entries(struct rtid_attestation *a)
{
	size_t n = 0, k = 0;

	free(a->e);
	a->ne = 0;
	a->e = calloc(a->nr + a->nl + 1, sizeof(*a->e));
	if (!a->e)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++)
		strcpy(a->e[n++].version, a->r[i].version);
	for (size_t i = 0; i < a->nl; i++)
		strcpy(a->e[n++].version, a->l[i].version);
	if (n == 0)
		return 0;
	qsort(a->e, n, sizeof(*a->e), cmp_entry);
	for (size_t i = 1; i < n; i++)
		if (strcmp(a->e[k].version, a->e[i].version))
			a->e[++k] = a->e[i];
	a->ne = k + 1;
	return 0;
}

/* Distinct processes per verdict. An agreement without a known start time
 * cannot be told from a repeat, so it does not count; a mismatch always does. */
static int count_processes(struct rtid_attestation *a)
{
	size_t n = 0, total = 0;
	struct ref *v;

	for (size_t i = 0; i < a->nr; i++)
		total += a->r[i].n;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++)
		for (size_t j = 0; j < a->r[i].n; j++)
			v[n++] = (struct ref){ a->r[i].version, &a->r[i], &a->r[i].p[j] };
	qsort(v, n, sizeof(*v), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		struct rtid_attest_entry *e = entry(a, v[i].version);
		enum rtid_xcheck x = v[i].p->verdict;

		if (i > 0 && !strcmp(v[i - 1].version, v[i].version) && same_process(&v[i - 1], &v[i]))
			continue;
		if (x == RTID_XC_MISMATCH)
			e->mismatch++;
		else if (v[i].p->start_known && x == RTID_XC_AGREE)
			e->agree++;
		else if (v[i].p->start_known && x == RTID_XC_AGREE_NONE)
			e->agree_none++;
	}
	free(v);
	return 0;
}

static int cmp_host(const void *x, const void *y)
{
	const struct att_report *a = *(const struct att_report *const *)x;
	const struct att_report *b = *(const struct att_report *const *)y;
	int c = strcmp(a->version, b->version);

	if (c)
		return c;
	/* A report without a machine id is told apart by its host name. */
	if ((c = strcmp(a->machine, b->machine)))
		return c;
	return a->machine[0] ? 0 : strcmp(a->host, b->host);
}

static int count_reports_hosts(struct rtid_attestation *a)
{
	const struct att_report **v = calloc(a->nr ? a->nr : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		v[i] = &a->r[i];
		entry(a, a->r[i].version)->reports++;
	}
	qsort(v, a->nr, sizeof(*v), cmp_host);
	for (size_t i = 0; i < a->nr; i++)
		if (i == 0 || cmp_host(&v[i - 1], &v[i]))
			entry(a, v[i]->version)->hosts++;
	free(v);
	return 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(x, y);
}

static bool lifted_report(const struct rtid_attestation *a, const struct att_report *r)
{
	for (size_t i = 0; i < a->nf; i++) /* lifts are few; each list sorted */
		if (!strcmp(a->f[i].version, r->version) && a->f[i].nreports &&
		    bsearch(r->id, a->f[i].reports, a->f[i].nreports, ATT_ID_MAX,
			    cmp_str))
			return true;
	return false;
}

static void revocations(struct rtid_attestation *a)
{
	for (size_t i = 0; i < a->nf; i++) {
		struct rtid_attest_entry *e = entry(a, a->f[i].version);

		if (!e)
			continue; /* a lift of a version with no evidence held */
		e->lifts = rtid__att_sat_add(e->lifts, 1);
		snprintf(e->why, sizeof(e->why), "lifted %.40s: %.170s", a->f[i].time,
				 a->f[i].reason);
	}
	for (size_t i = 0; i < a->nl; i++) {
		struct rtid_attest_entry *e = entry(a, a->l[i].version);
		bool lifted = false;

		for (size_t j = 0; j < a->nf; j++)
			lifted = lifted || (!strcmp(a->f[j].version, a->l[i].version) &&
					    a->f[j].legacy && a->f[j].legacy_mismatch >= a->l[i].mismatch);
		if ((a->l[i].revoked || a->l[i].mismatch) && !lifted && !e->revoked) {
			e->revoked = true;
			snprintf(e->why, sizeof(e->why), "legacy record revoked (%lu mismatches)",
				 a->l[i].mismatch);
		}
	}
	for (size_t i = 0; i < a->nr; i++) {
		const struct att_report *r = &a->r[i];
		struct rtid_attest_entry *e = entry(a, r->version);

		for (size_t j = 0; j < r->n && !e->revoked; j++)
			if (r->p[j].verdict == RTID_XC_MISMATCH && !lifted_report(a, r)) {
				e->revoked = true;
				snprintf(e->why, sizeof(e->why), "mismatch on pid %d, host %.64s, "
					 "report %.100s", r->p[j].pid, r->host, r->id);
			}
	}
}

static void add_legacy(struct rtid_attestation *a)
{
	for (size_t i = 0; i < a->nl; i++) {
		struct rtid_attest_entry *e = entry(a, a->l[i].version);

		e->legacy = true;
		e->legacy_agree = a->l[i].agree;
		e->legacy_agree_none = a->l[i].agree_none;
		e->legacy_mismatch = a->l[i].mismatch;
		e->agree = rtid__att_sat_add(e->agree, a->l[i].agree);
		e->agree_none = rtid__att_sat_add(e->agree_none, a->l[i].agree_none);
		e->mismatch = rtid__att_sat_add(e->mismatch, a->l[i].mismatch);
	}
}

int rtid__att_summarize(struct rtid_attestation *a)
{
	int r;

	if ((r = make_entries(a)) < 0 || (r = count_processes(a)) < 0 ||
	    (r = count_reports_hosts(a)) < 0)
		return r;
	add_legacy(a);
	revocations(a);
	return 0;
}

size_t rtid_attest_count(const struct rtid_attestation *a) { return a ? a->ne : 0; }

const struct rtid_attest_entry *rtid_attest_entry_at(const struct rtid_attestation *a,
						     size_t i)
{
	return a && i < a->ne ? &a->e[i] : NULL;
}

const struct rtid_attest_entry *rtid_attest_find(const struct rtid_attestation *a,
						 const char *version)
{
	if (!a || !version || strlen(version) >= sizeof(a->e->version))
		return NULL;
	return entry((struct rtid_attestation *)a, version);
}

bool rtid_attest_clean(const struct rtid_attestation *a, const char *version)
{
	const struct rtid_attest_entry *e = rtid_attest_find(a, version);

	/* Only "agree" counts: it is the scan naming the driver's own thread.
	 * agree_none says nothing about whether the name points at the right one. */
	return e && !a->untrusted && !e->revoked && e->agree >= RTID_ATTEST_MIN_AGREE;
}
