/* Attestations: per driver version, how many cross-checks agreed and whether
 * any mismatched. The scan is trusted only for a version with a clean record.
 *
 * File format (JSON):
 *   {"format": 1, "drivers": {"580.159.03": {"agree": 12, "agree_none": 3,
 *                                            "mismatch": 0, "revoked": false}}}
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtid.h"

#define ATTEST_FORMAT 1

struct rtid_attestation {
	struct rtid_attest_entry *v;
	size_t n, cap;
};

int rtid_attest_new(struct rtid_attestation **out)
{
	struct rtid_attestation *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	*out = a;
	return 0;
}

void rtid_attest_free(struct rtid_attestation *a)
{
	if (a) {
		free(a->v);
		free(a);
	}
}

size_t rtid_attest_count(const struct rtid_attestation *a) { return a ? a->n : 0; }

const struct rtid_attest_entry *rtid_attest_entry_at(const struct rtid_attestation *a,
						     size_t i)
{
	return a && i < a->n ? &a->v[i] : NULL;
}

const struct rtid_attest_entry *rtid_attest_find(const struct rtid_attestation *a,
						 const char *version)
{
	for (size_t i = 0; a && version && i < a->n; i++)
		if (strcmp(a->v[i].version, version) == 0)
			return &a->v[i];
	return NULL;
}

bool rtid_attest_clean(const struct rtid_attestation *a, const char *version)
{
	const struct rtid_attest_entry *e = rtid_attest_find(a, version);

	/* Only "agree" counts: it is the scan naming the driver's own thread.
	 * agree_none says nothing about whether the name points at the right one. */
	return e && !e->revoked && e->mismatch == 0 && e->agree >= RTID_ATTEST_MIN_AGREE;
}

static struct rtid_attest_entry *get_or_add(struct rtid_attestation *a, const char *version)
{
	struct rtid_attest_entry *e = (struct rtid_attest_entry *)rtid_attest_find(a, version);

	if (e)
		return e;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4;
		struct rtid_attest_entry *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	e = &a->v[a->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->version, sizeof(e->version), "%s", version);
	return e;
}

int rtid_attest_add(struct rtid_attestation *a, const char *version, unsigned long agree,
		    unsigned long agree_none, unsigned long mismatch, bool revoke)
{
	struct rtid_attest_entry *e;

	if (!a || !rtid_version_valid(version))
		return -EINVAL;
	e = get_or_add(a, version);
	if (!e)
		return -ENOMEM;
	e->agree += agree;
	e->agree_none += agree_none;
	e->mismatch += mismatch;
	e->revoked = e->revoked || revoke || mismatch > 0;
	return 0;
}

int rtid_attest_merge(struct rtid_attestation *dst, const struct rtid_attestation *src)
{
	for (size_t i = 0; i < rtid_attest_count(src); i++) {
		const struct rtid_attest_entry *e = &src->v[i];
		int r = rtid_attest_add(dst, e->version, e->agree, e->agree_none, e->mismatch,
					e->revoked);

		if (r < 0)
			return r;
	}
	return 0;
}

static int get_count(json_t *o, const char *key, unsigned long *out)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (unsigned long)json_integer_value(v);
	return 0;
}

static int load_entry(struct rtid_attestation *a, const char *version, json_t *o,
		      char *err, size_t errlen, const char *path)
{
	unsigned long agree, none, mism;
	json_t *rev = json_object_get(o, "revoked");

	if (!json_is_object(o) || !rtid_version_valid(version) || get_count(o, "agree", &agree) ||
	    get_count(o, "agree_none", &none) || get_count(o, "mismatch", &mism) ||
	    (rev && !json_is_boolean(rev))) {
		snprintf(err, errlen, "%s: drivers.\"%.32s\": expected a version N.N[.N] with "
			 "counts agree, agree_none, mismatch (integers >= 0) and revoked (boolean)",
			 path, version);
		return -EINVAL;
	}
	return rtid_attest_add(a, version, agree, none, mism, json_is_true(rev));
}

static int load_root(struct rtid_attestation *a, json_t *root, const char *path, char *err,
		     size_t errlen)
{
	json_t *fmt = json_object_get(root, "format");
	json_t *drivers = json_object_get(root, "drivers");
	const char *version;
	json_t *o;

	if (!json_is_object(root) || !json_is_integer(fmt) ||
	    json_integer_value(fmt) != ATTEST_FORMAT || !json_is_object(drivers)) {
		snprintf(err, errlen, "%s: expected {\"format\": %d, \"drivers\": {...}}", path,
			 ATTEST_FORMAT);
		return -EINVAL;
	}
	json_object_foreach(drivers, version, o) {
		int r = load_entry(a, version, o, err, errlen, path);

		if (r < 0)
			return r;
	}
	return 0;
}

int rtid_attest_load(const char *path, struct rtid_attestation **out, char *err, size_t errlen)
{
	struct rtid_attestation *a;
	json_error_t je;
	json_t *root;
	char dummy[1];
	int r;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	r = rtid_attest_new(&a);
	if (r < 0)
		return r;
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		*out = a;
		return 0;
	}
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		rtid_attest_free(a);
		return json_error_code(&je) == json_error_cannot_open_file ? -EIO : -EINVAL;
	}
	r = load_root(a, root, path, err, errlen);
	json_decref(root);
	if (r < 0) {
		rtid_attest_free(a);
		return r;
	}
	*out = a;
	return 0;
}

static json_t *to_json(const struct rtid_attestation *a)
{
	json_t *drivers = json_object();

	for (size_t i = 0; drivers && i < a->n; i++) {
		const struct rtid_attest_entry *e = &a->v[i];

		json_object_set_new(drivers, e->version,
				    json_pack("{s:I,s:I,s:I,s:b}", "agree", (json_int_t)e->agree,
					      "agree_none", (json_int_t)e->agree_none, "mismatch",
					      (json_int_t)e->mismatch, "revoked", e->revoked));
	}
	return json_pack("{s:i,s:o*}", "format", ATTEST_FORMAT, "drivers", drivers);
}

int rtid_attest_save(const struct rtid_attestation *a, const char *path)
{
	char tmp[4096];
	json_t *root = to_json(a);
	int r = 0;

	if (!root)
		return -ENOMEM;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		json_decref(root);
		return -ENAMETOOLONG;
	}
	/* Write then rename: a reader never sees half a file. */
	if (json_dump_file(root, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
		r = -EIO;
	else if (rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	json_decref(root);
	return r;
}
