/* The attestation and the validate report, from and to JSON (attest-load.c
 * reads the file).
 *
 * Format 2 (the attestation, written sorted, so equal sets give equal bytes):
 *   {"format": 2,
 *    "reports": [{"id": ID, "driver_version": V, "host": H, "machine_id": M,
 *                 "boot_id": B, "time": T,
 *                 "pids": [{"pid": P, "start": S|null, "boot_id": B,
 *                           "verdict": "agree"|"agree-none"|"mismatch"}]}],
 *    "legacy": {V: {"agree": N, "agree_none": N, "mismatch": N, "revoked": B}},
 *    "lifts": [{"id": ID, "driver_version": V, "reason": R, "time": T,
 *               "reports": [ID...], "legacy_mismatch": N (when it lifts legacy)}]}
 * Format 1 ({"format": 1, "drivers": {V: counts}}) reads as legacy records.
 * A validate report is one report record with "format": 2, "kind": "report"
 * (other keys ignored); a format-1 report (counts, no id) reads as legacy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attest/attest.h"

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static const char *const verdicts[] = { [RTID_XC_AGREE] = "agree",
					[RTID_XC_AGREE_NONE] = "agree-none",
					[RTID_XC_MISMATCH] = "mismatch" };

static int get_count(json_t *o, const char *key, unsigned long *out)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (unsigned long)json_integer_value(v);
	return 0;
}

static int get_str(json_t *o, const char *key, char *dst, size_t n, bool required)
{
	json_t *v = json_object_get(o, key);

	if (!v && !required) {
		dst[0] = '\0';
		return 0;
	}
	return json_is_string(v) ? rtid__att_copy(dst, n, json_string_value(v)) : -EINVAL;
}

static int legacy_entry(struct rtid_attestation *a, const char *version, json_t *o)
{
	struct att_legacy l = { 0 };
	json_t *rev = json_object_get(o, "revoked");

	if (!json_is_object(o) || !rtid__version_valid(version) ||
	    get_count(o, "agree", &l.agree) || get_count(o, "agree_none", &l.agree_none) ||
	    get_count(o, "mismatch", &l.mismatch) || (rev && !json_is_boolean(rev)))
		return -EINVAL;
	strcpy(l.version, version);
	l.revoked = json_is_true(rev) || l.mismatch > 0;
	return rtid__att_push_legacy(a, &l);
}

static int legacy_table(struct rtid_attestation *a, json_t *t, const char *path, char *err,
			size_t errlen)
{
	const char *version;
	json_t *o;

	if (!json_is_object(t))
		return FAIL("%s: expected an object of driver versions", path);
	json_object_foreach(t, version, o) {
		int r = legacy_entry(a, version, o);

		if (r == -EINVAL)
			return FAIL("%s: \"%.32s\": expected a version N.N[.N] with counts agree, "
				    "agree_none, mismatch (integers >= 0) and revoked (boolean)",
				    path, version);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One process of a report; *keep false for a verdict that is no evidence. */
static int proc_from(json_t *o, const struct att_report *r, struct att_proc *p, bool *keep)
{
	const char *v = json_string_value(json_object_get(o, "verdict"));
	json_t *pid = json_object_get(o, "pid"), *start = json_object_get(o, "start");

	*keep = false;
	if (!json_is_object(o) || !v)
		return -EINVAL;
	if (!strcmp(v, "error") || !strcmp(v, "undecided"))
		return 0;
	for (int i = RTID_XC_AGREE; i <= RTID_XC_MISMATCH; i++)
		if (!strcmp(v, verdicts[i]))
			p->verdict = (enum rtid_xcheck)i;
	if (p->verdict == RTID_XC_NONE || !json_is_integer(pid) || json_integer_value(pid) <= 0 ||
	    json_integer_value(pid) > 0x7fffffff || (start && !json_is_null(start) &&
	    (!json_is_integer(start) || json_integer_value(start) < 0)))
		return -EINVAL;
	p->pid = (int)json_integer_value(pid);
	p->start_known = json_is_integer(start);
	p->start = p->start_known ? (unsigned long long)json_integer_value(start) : 0;
	if (get_str(o, "boot_id", p->boot, sizeof(p->boot), false) < 0)
		return -EINVAL;
	if (!p->boot[0])
		strcpy(p->boot, r->boot);
	if (!rtid__att_id_valid(p->boot))
		return -EINVAL;
	*keep = true;
	return 0;
}

static int report_from(struct rtid_attestation *a, json_t *o, const char *path, char *err,
		       size_t errlen)
{
	struct att_report r = { 0 };
	json_t *pids = json_object_get(o, "pids"), *x;
	size_t i;

	if (!json_is_object(o) || get_str(o, "id", r.id, sizeof(r.id), true) ||
	    !rtid__att_id_valid(r.id) ||
	    get_str(o, "driver_version", r.version, sizeof(r.version), true) ||
	    !rtid__version_valid(r.version) || get_str(o, "host", r.host, sizeof(r.host), false) ||
	    get_str(o, "machine_id", r.machine, sizeof(r.machine), false) ||
	    get_str(o, "boot_id", r.boot, sizeof(r.boot), false) ||
	    get_str(o, "time", r.time, sizeof(r.time), false) || !json_is_array(pids))
		return FAIL("%s: a report needs id ([A-Za-z0-9._:-]), driver_version N.N[.N], "
			    "pids [...] and string host, machine_id, boot_id, time", path);
	r.p = calloc(json_array_size(pids) + 1, sizeof(*r.p));
	if (!r.p)
		return -ENOMEM;
	json_array_foreach(pids, i, x) {
		bool keep;

		if (proc_from(x, &r, &r.p[r.n], &keep) < 0) {
			rtid__att_report_fini(&r);
			return FAIL("%s: report %.64s: pids[%zu]: expected pid (> 0), start "
				    "(integer >= 0 or null), boot_id and verdict agree, agree-none, "
				    "mismatch, error or undecided", path, r.id, i);
		}
		r.n += keep;
	}
	if (rtid__att_push_report(a, &r) < 0) {
		rtid__att_report_fini(&r);
		return -ENOMEM;
	}
	return 0;
}

static int lift_from(struct rtid_attestation *a, json_t *o)
{
	struct att_lift f = { 0 };
	json_t *reps = json_object_get(o, "reports"), *lm = json_object_get(o, "legacy_mismatch");
	json_t *x;
	size_t i;

	if (!json_is_object(o) || get_str(o, "id", f.id, sizeof(f.id), true) ||
	    !rtid__att_id_valid(f.id) ||
	    get_str(o, "driver_version", f.version, sizeof(f.version), true) ||
	    !rtid__version_valid(f.version) ||
	    get_str(o, "reason", f.reason, sizeof(f.reason), true) || !f.reason[0] ||
	    get_str(o, "time", f.time, sizeof(f.time), false) || !json_is_array(reps) ||
	    (lm && (!json_is_integer(lm) || json_integer_value(lm) < 0)))
		return -EINVAL;
	f.legacy = lm != NULL;
	f.legacy_mismatch = lm ? (unsigned long)json_integer_value(lm) : 0;
	f.reports = calloc(json_array_size(reps) + 1, ATT_ID_MAX);
	if (!f.reports)
		return -ENOMEM;
	json_array_foreach(reps, i, x) {
		if (!json_is_string(x) || !rtid__att_id_valid(json_string_value(x))) {
			rtid__att_lift_fini(&f);
			return -EINVAL;
		}
		strcpy(f.reports[f.nreports++], json_string_value(x));
	}
	if (rtid__att_push_lift(a, &f) < 0) {
		rtid__att_lift_fini(&f);
		return -ENOMEM;
	}
	return 0;
}

static int format2(struct rtid_attestation *a, json_t *root, const char *path, char *err,
		   size_t errlen)
{
	json_t *reps = json_object_get(root, "reports"), *lifts = json_object_get(root, "lifts");
	json_t *legacy = json_object_get(root, "legacy"), *x;
	size_t i;
	int r;

	if (!json_is_array(reps) || (lifts && !json_is_array(lifts)))
		return FAIL("%s: expected {\"format\": 2, \"reports\": [...], \"legacy\": {...}, "
			    "\"lifts\": [...]}", path);
	json_array_foreach(reps, i, x)
		if ((r = report_from(a, x, path, err, errlen)) < 0)
			return r;
	json_array_foreach(lifts, i, x) {
		r = lift_from(a, x);
		if (r == -EINVAL)
			return FAIL("%s: lifts[%zu]: expected id, driver_version, reason (not "
				    "empty), time, reports [ID...] and legacy_mismatch (>= 0)", path, i);
		if (r < 0)
			return r;
	}
	return legacy ? legacy_table(a, legacy, path, err, errlen) : 0;
}

/* A report of format 1: counts without identities, kept as a legacy record. */
static int report1(struct rtid_attestation *a, json_t *o, const char *path, char *err,
		   size_t errlen)
{
	const char *v = json_string_value(json_object_get(o, "driver_version"));

	if (!v)
		return FAIL("%s: report without a driver_version", path);
	if (!json_is_integer(json_object_get(o, "agree")) ||
	    !json_is_integer(json_object_get(o, "agree_none")) ||
	    !json_is_integer(json_object_get(o, "mismatch")) || legacy_entry(a, v, o) < 0)
		return FAIL("%s: report without a valid driver_version N.N[.N] and counts agree, "
			    "agree_none, mismatch (integers >= 0)", path);
	return 0;
}

int rtid__att_from_json(struct rtid_attestation *a, json_t *root, const char *path,
			bool evidence, char *err, size_t errlen)
{
	json_t *fmt = json_object_get(root, "format");
	const char *kind = json_string_value(json_object_get(root, "kind"));
	json_int_t f = json_is_integer(fmt) ? json_integer_value(fmt) : 0;

	if (evidence && json_is_object(root) && !fmt && json_object_get(root, "driver_version"))
		return report1(a, root, path, err, errlen);
	if (evidence && f == 2 && kind && !strcmp(kind, "report"))
		return report_from(a, root, path, err, errlen);
	if (json_is_object(root) && f == 1 && json_is_object(json_object_get(root, "drivers")))
		return legacy_table(a, json_object_get(root, "drivers"), path, err, errlen);
	if (json_is_object(root) && f == 2 && !kind)
		return format2(a, root, path, err, errlen);
	return FAIL("%s: expected {\"format\": 2, \"reports\": [...]} (or format 1)%s", path,
		    evidence ? ", or a report of 'rtid validate'" : "");
}

static json_t *report_json(const struct att_report *r)
{
	json_t *pids = json_array();

	for (size_t i = 0; pids && i < r->n; i++) {
		const struct att_proc *p = &r->p[i];

		json_array_append_new(pids, json_pack("{s:i,s:o,s:s,s:s}", "pid", p->pid, "start",
			p->start_known ? json_integer((json_int_t)p->start) : json_null(),
			"boot_id", p->boot, "verdict", verdicts[p->verdict]));
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o*}", "id", r->id, "driver_version",
			 r->version, "host", r->host, "machine_id", r->machine, "boot_id", r->boot,
			 "time", r->time, "pids", pids);
}

static json_t *lift_json(const struct att_lift *f)
{
	json_t *reps = json_array(), *o;

	for (size_t i = 0; reps && i < f->nreports; i++)
		json_array_append_new(reps, json_string(f->reports[i]));
	o = json_pack("{s:s,s:s,s:s,s:s,s:o*}", "id", f->id, "driver_version", f->version,
		      "reason", f->reason, "time", f->time, "reports", reps);
	if (o && f->legacy)
		json_object_set_new(o, "legacy_mismatch", json_integer((json_int_t)f->legacy_mismatch));
	return o;
}

json_t *rtid__att_to_json(const struct rtid_attestation *a)
{
	json_t *reps = json_array(), *lifts = json_array(), *legacy = json_object();

	for (size_t i = 0; reps && i < a->nr; i++)
		json_array_append_new(reps, report_json(&a->r[i]));
	for (size_t i = 0; lifts && i < a->nf; i++)
		json_array_append_new(lifts, lift_json(&a->f[i]));
	for (size_t i = 0; legacy && i < a->nl; i++) {
		const struct att_legacy *l = &a->l[i];

		json_object_set_new(legacy, l->version, json_pack("{s:I,s:I,s:I,s:b}",
			"agree", (json_int_t)l->agree, "agree_none", (json_int_t)l->agree_none,
			"mismatch", (json_int_t)l->mismatch, "revoked", l->revoked));
	}
	return json_pack("{s:i,s:o*,s:o*,s:o*}", "format", 2, "reports", reps, "legacy", legacy,
			 "lifts", lifts);
}
