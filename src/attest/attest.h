/* Internals of the attestation: the evidence set (attest.c), its derived
 * summary (attest-sum.c), JSON (attest-json.c), storage (attest-store.c). */
#ifndef RTID_ATTEST_H
#define RTID_ATTEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/parse.h"
#include "rtid.h"

#define ATT_ID_MAX 128
#define ATT_BOOT_MAX 40
#define ATT_HOST_MAX 256
#define ATT_TIME_MAX 40
#define ATT_REASON_MAX 256
/* What one JSON integer holds: counts stop there rather than wrap. */
#define ATT_COUNT_MAX ((unsigned long)INT64_MAX)

struct att_proc { /* one verdict on one process */
	char boot[ATT_BOOT_MAX];
	int pid;
	bool start_known;
	unsigned long long start;
	enum rtid_xcheck verdict;
};

struct att_report {
	char id[ATT_ID_MAX], version[32], host[ATT_HOST_MAX], machine[ATT_BOOT_MAX],
		boot[ATT_BOOT_MAX], time[ATT_TIME_MAX];
	struct att_proc *p;
	size_t n;
};

struct att_legacy {
	char version[32];
	unsigned long agree, agree_none, mismatch;
	bool revoked;
};

struct att_lift {
	char id[ATT_ID_MAX], version[32], reason[ATT_REASON_MAX], time[ATT_TIME_MAX];
	char (*reports)[ATT_ID_MAX]; /* the reports whose mismatches it lifts */
	size_t nreports;
	bool legacy;                 /* it lifts the legacy record's revocation ... */
	unsigned long legacy_mismatch; /* ... as long as its mismatches are no more */
};

struct rtid_attestation {
	struct att_report *r;
	size_t nr, capr;
	struct att_legacy *l;
	size_t nl, capl;
	struct att_lift *f;
	size_t nf, capf;
	struct rtid_attest_entry *e; /* derived, sorted by version */
	size_t ne;
	bool untrusted;
};

/* attest.c */
/* Append (taking ownership of the arrays inside); normalize afterwards. */
int rtid__att_push_report(struct rtid_attestation *a, struct att_report *r);
int rtid__att_push_legacy(struct rtid_attestation *a, const struct att_legacy *l);
int rtid__att_push_lift(struct rtid_attestation *a, struct att_lift *f);
void rtid__att_report_fini(struct att_report *r);
void rtid__att_lift_fini(struct att_lift *f);
/* Sort and unite duplicates, then derive the entries. Returns 0 or -ENOMEM. */
int rtid__att_normalize(struct rtid_attestation *a);
/* The union of src in dst without normalizing (many merges, one normalize). */
int rtid__att_absorb(struct rtid_attestation *dst, const struct rtid_attestation *src);
/* Identifiers: [A-Za-z0-9._:-], 1..ATT_ID_MAX-1 bytes. */
bool rtid__att_id_valid(const char *s);
/* Copy s into a field of size n; -EINVAL when it does not fit. */
int rtid__att_copy(char *dst, size_t n, const char *s);

/* attest-sum.c: the entries derived from the set. */
int rtid__att_summarize(struct rtid_attestation *a);
/* a + b, held at ATT_COUNT_MAX rather than wrapping. */
unsigned long rtid__att_sat_add(unsigned long a, unsigned long b);

/* attest-json.c */
/* Fill a from a parsed file (reports too when evidence). -EINVAL with err. */
int rtid__att_from_json(struct rtid_attestation *a, json_t *root, const char *path,
			bool evidence, char *err, size_t errlen);
json_t *rtid__att_to_json(const struct rtid_attestation *a);
int rtid__att_load(const char *path, bool evidence, struct rtid_attestation **out, char *err,
		   size_t errlen);

/* attest-safe.c: the directory rule of rtid_attest_path_safe for an entry
 * yet to be made in dir. Returns 0, -EPERM with the reason, or -errno. */
int rtid__att_dir_safe(const char *dir, char *why, size_t whylen);

/* attest-store.c */
/* Create a temp file prefix + 12 random characters in dirfd, O_EXCL|O_NOFOLLOW,
 * trying rnd's names in turn (NULL: getrandom). Returns the fd and the name. */
int rtid__tmp_create(int dirfd, const char *prefix, uint64_t (*rnd)(void *), void *rarg,
		     char *name, size_t namelen);
/* Replace path with len bytes atomically, as rtid_attest_save writes: the old
 * content or the new, never a part; nothing left behind on failure. Under the
 * lock PATH.lock, which also removes the temp files of killed writers. */
int rtid__file_replace(const char *path, const void *buf, size_t len);
/* Write buf as dirfd/base through a temp file; see rtid__file_replace. */
int rtid__replace_at(int dirfd, const char *base, const void *buf, size_t len);

#endif
