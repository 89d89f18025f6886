/* The attestation as a set: merging is commutative, associative and
 * idempotent; counts are of distinct processes and never wrap; a mismatch
 * revokes until an explicit lift; format 1 reads as legacy records. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "attest/attest.h"
#include "helpers.h"

#define POOL 48
#define TRIALS 60

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char *const versions[] = { "580.159.03", "570.86.15", "590.1" };

/* One item of evidence, as an attestation of its own. */
static struct rtid_attestation *make_item(int i)
{
	struct rtid_attestation *a = NULL;
	struct rtid_attest_proc p[6];
	char id[64], host[32], machine[40];
	const char *v = versions[rnd() % 3];
	size_t n = 1 + rnd() % 6;

	assert_int_equal(rtid_attest_new(&a), 0);
	if (i % 11 == 5) { /* a legacy record */
		assert_int_equal(rtid_attest_add(a, v, rnd() % 20, rnd() % 3, i % 22 == 5, false), 0);
		return a;
	}
	snprintf(id, sizeof(id), "report-%03d", i % 40); /* some ids twice: copies */
	snprintf(host, sizeof(host), "node%d", (int)(rnd() % 5));
	snprintf(machine, sizeof(machine), "%032x", (unsigned)(rnd() % 5));
	for (size_t k = 0; k < n; k++) {
		/* A small pool of processes, so that reports share them. */
		p[k] = (struct rtid_attest_proc){ .pid = 100 + (int)(rnd() % 12),
						  .start_known = rnd() % 8 != 0, .start = rnd() % 3,
						  .verdict = rnd() % 9 == 0 ? RTID_XC_MISMATCH
							   : (enum rtid_xcheck)(1 + rnd() % 2) };
		snprintf(p[k].boot_id, sizeof(p[k].boot_id), "boot-%d", (int)(rnd() % 2));
	}
	assert_int_equal(rtid_attest_add_report(a, &(struct rtid_attest_report){
		id, v, host, machine, "boot-0", "2026-01-01T00:00:00Z" }, p, n), 0);
	if (i % 13 == 7 && rtid_attest_find(a, v)->revoked)
		assert_int_equal(rtid_attest_lift(a, v, "checked by hand", "lift-1", "t"), 0);
	return a;
}

static char *dump(const struct rtid_attestation *a)
{
	json_t *j = rtid__att_to_json(a);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	char line[400];
	size_t len = strlen(s);

	json_decref(j);
	/* The derived entries too, so that a summary bug shows as well. */
	for (size_t i = 0; i < rtid_attest_count(a); i++) {
		const struct rtid_attest_entry *e = rtid_attest_entry_at(a, i);
		int n = snprintf(line, sizeof(line), "|%s %lu %lu %lu %lu %lu %d %s", e->version,
				 e->agree, e->agree_none, e->mismatch, e->reports, e->hosts,
				 e->revoked, e->why);

		s = realloc(s, len + (size_t)n + 1);
		memcpy(s + len, line, (size_t)n + 1);
		len += (size_t)n;
	}
	return s;
}

/* Merge the items in a random order, each at least once and some again,
 * through random intermediate groups (associativity). */
static char *random_merge(struct rtid_attestation **item)
{
	struct rtid_attestation *acc = NULL, *group = NULL;
	int order[POOL * 2], n = 0;
	char *s;

	for (int i = 0; i < POOL; i++)
		order[n++] = i;
	for (int i = 0; i < POOL; i++)
		if (rnd() % 3 == 0)
			order[n++] = (int)(rnd() % POOL); /* a repetition */
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	assert_int_equal(rtid_attest_new(&acc), 0);
	assert_int_equal(rtid_attest_new(&group), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(rtid_attest_merge(group, item[order[i]]), 0);
		if (rnd() % 4 == 0) {
			assert_int_equal(rtid_attest_merge(acc, group), 0);
			if (rnd() % 2)
				assert_int_equal(rtid_attest_merge(acc, group), 0); /* idempotent */
			rtid_attest_free(group);
			assert_int_equal(rtid_attest_new(&group), 0);
		}
	}
	assert_int_equal(rtid_attest_merge(group, acc), 0); /* either way round */
	s = dump(group);
	rtid_attest_free(acc);
	rtid_attest_free(group);
	return s;
}

static void merge_order_never_matters(void **state)
{
	struct rtid_attestation *item[POOL];
	char *first = NULL;

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		rng_state = seed * 0x9e3779b97f4a7c15ULL;
		for (int i = 0; i < POOL; i++)
			item[i] = make_item(i);
		for (int t = 0; t < TRIALS; t++) {
			char *s = random_merge(item);

			if (!first)
				first = s;
			else if (strcmp(first, s)) {
				fprintf(stderr, "seed %llu trial %d:\n%s\n%s\n",
					(unsigned long long)seed, t, first, s);
				fail();
			} else {
				free(s);
			}
		}
		free(first);
		first = NULL;
		for (int i = 0; i < POOL; i++)
			rtid_attest_free(item[i]);
	}
}

static struct rtid_attest_report rep(const char *id, const char *v)
{
	return (struct rtid_attest_report){ id, v, "node1", "0123456789abcdef0123456789abcdef",
					    "boot-a", "2026-01-01T00:00:00Z" };
}

static void distinct_processes_only(void **state)
{
	struct rtid_attestation *a = NULL;
	struct rtid_attest_proc p[12];
	struct rtid_attest_report r1 = rep("r1", "580.1"), r2 = rep("r2", "580.1");

	(void)state;
	for (int i = 0; i < 12; i++)
		p[i] = (struct rtid_attest_proc){ .pid = 7, .start_known = true, .start = 42,
						  .boot_id = "boot-a", .verdict = RTID_XC_AGREE };
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_add_report(a, &r1, p, 12), 0); /* one process, 12 times */
	assert_int_equal(rtid_attest_add_report(a, &r2, p, 12), 0); /* in another report */
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 1);
	assert_int_equal(rtid_attest_find(a, "580.1")->reports, 2);
	assert_int_equal(rtid_attest_find(a, "580.1")->hosts, 1);
	for (int i = 0; i < 12; i++)
		p[i].start = 100 + (unsigned long long)i; /* now 12 processes (pid reused) */
	p[3].start_known = false;                         /* one that cannot be told apart */
	assert_int_equal(rtid_attest_add_report(a, &r2, p, 12), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 12);
	assert_true(rtid_attest_clean(a, "580.1"));
	/* Bad input. */
	p[0].pid = 0;
	assert_int_equal(rtid_attest_add_report(a, &r1, p, 1), -EINVAL);
	p[0].pid = 7;
	r1.id = "bad id";
	assert_int_equal(rtid_attest_add_report(a, &r1, p, 1), -EINVAL);
	r1.id = "r1";
	r1.version = "580";
	assert_int_equal(rtid_attest_add_report(a, &r1, p, 1), -EINVAL);
	assert_int_equal(rtid_attest_add_report(NULL, &r2, p, 1), -EINVAL);
	rtid_attest_free(a);
}

static void mismatch_revokes_until_lifted(void **state)
{
	struct rtid_attestation *a = NULL, *b = NULL;
	struct rtid_attest_proc p[11];
	struct rtid_attest_report r1 = rep("r1", "580.1"), r2 = rep("r2", "580.1");
	const struct rtid_attest_entry *e;

	(void)state;
	for (int i = 0; i < 11; i++)
		p[i] = (struct rtid_attest_proc){ .pid = 10 + i, .start_known = true, .start = 1,
						  .boot_id = "boot-a", .verdict = RTID_XC_AGREE };
	p[10].verdict = RTID_XC_MISMATCH;
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_new(&b), 0);
	assert_int_equal(rtid_attest_add_report(a, &r1, p, 11), 0);
	e = rtid_attest_find(a, "580.1");
	assert_true(e->revoked);
	assert_non_null(strstr(e->why, "mismatch on pid 20"));
	assert_int_equal(rtid_attest_lift(a, "590.1", "x", "l1", "t"), -ENOENT);
	assert_int_equal(rtid_attest_lift(a, "580.1", "", "l1", "t"), -EINVAL);
	assert_int_equal(rtid_attest_lift(a, "580.1", "fixed", "l1", "2026"), 0);
	assert_false(rtid_attest_find(a, "580.1")->revoked);
	assert_true(rtid_attest_clean(a, "580.1"));
	assert_int_equal(rtid_attest_lift(a, "580.1", "again", "l2", "t"), -ENOENT);
	/* The unlifted evidence elsewhere: the lift travels with the merge and names
	 * that same report; a new mismatch (another report) revokes again. */
	assert_int_equal(rtid_attest_add_report(b, &r1, p, 11), 0);
	assert_int_equal(rtid_attest_merge(b, a), 0);
	assert_false(rtid_attest_find(b, "580.1")->revoked);
	assert_int_equal(rtid_attest_add_report(b, &r2, p + 10, 1), 0);
	assert_true(rtid_attest_find(b, "580.1")->revoked);
	assert_int_equal(rtid_attest_merge(b, b), 0);
	assert_int_equal(rtid_attest_merge(NULL, b), -EINVAL);
	rtid_attest_free(a);
	rtid_attest_free(b);
}

static void counts_saturate_never_wrap(void **state)
{
	struct rtid_attestation *a = NULL, *b = NULL;
	struct rtid_attest_proc p = { .pid = 5, .start_known = true, .start = 9,
				      .boot_id = "boot-a", .verdict = RTID_XC_AGREE };
	struct rtid_attest_report r = rep("r1", "580.1");
	char path[600], err[512] = "";

	(void)state;
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_add(a, "580.1", ULONG_MAX, ULONG_MAX, 0, false), 0);
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, (unsigned long)INT64_MAX);
	snprintf(path, sizeof(path), "%s/big.json", test_dir);
	assert_int_equal(rtid_attest_save(a, path), 0);
	assert_int_equal(rtid_attest_load(path, &b, NULL, 0), 0); /* still loads */
	assert_int_equal(rtid_attest_find(b, "580.1")->agree, (unsigned long)INT64_MAX);
	assert_true(rtid_attest_clean(b, "580.1"));
	rtid_attest_free(b);
	/* 2^63 does not fit: refused, with the place. */
	write_file(test_dir, "big.json", "{\"format\": 1, \"drivers\": {\"580.1\": "
					 "{\"agree\": 9223372036854775808}}}");
	b = (void *)0x1;
	assert_int_equal(rtid_attest_load(path, &b, err, sizeof(err)), -EINVAL);
	assert_ptr_equal(b, (void *)0x1);
	assert_non_null(strstr(err, "big.json:1:"));
	rtid_attest_free(a);
}

static void format1_reads_as_legacy_and_writes_format2(void **state)
{
	struct rtid_attestation *a = NULL;
	char path[600];
	json_t *j;

	(void)state;
	write_file(test_dir, "f1.json", "{\"format\": 1, \"drivers\": {\"580.1\": {\"agree\": 12, "
					"\"agree_none\": 2}, \"570.2\": {\"agree\": 30, \"mismatch\": 1}}}");
	snprintf(path, sizeof(path), "%s/f1.json", test_dir);
	assert_int_equal(rtid_attest_load(path, &a, NULL, 0), 0);
	assert_true(rtid_attest_find(a, "580.1")->legacy);
	assert_int_equal(rtid_attest_find(a, "580.1")->legacy_agree, 12);
	assert_true(rtid_attest_clean(a, "580.1"));
	assert_true(rtid_attest_find(a, "570.2")->revoked);
	assert_non_null(strstr(rtid_attest_find(a, "570.2")->why, "legacy"));
	assert_int_equal(rtid_attest_save(a, path), 0);
	rtid_attest_free(a);
	j = json_load_file(path, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(j, "format")), 2);
	assert_non_null(json_object_get(json_object_get(j, "legacy"), "580.1"));
	json_decref(j);
	assert_int_equal(rtid_attest_load(path, &a, NULL, 0), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 12);
	/* A lift of a legacy revocation holds until its mismatches grow. */
	assert_int_equal(rtid_attest_lift(a, "570.2", "old driver bug", "l1", "t"), 0);
	assert_false(rtid_attest_find(a, "570.2")->revoked);
	assert_int_equal(rtid_attest_add(a, "570.2", 0, 0, 2, false), 0);
	assert_true(rtid_attest_find(a, "570.2")->revoked);
	rtid_attest_free(a);
}

static void malformed_format2_names_the_place(void **state)
{
	static const char *bad[] = {
		"{\"format\": 2}",
		"{\"format\": 2, \"reports\": [{\"id\": \"a b\", \"driver_version\": \"580.1\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\"}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": "
		"[{\"pid\": 0, \"verdict\": \"agree\", \"boot_id\": \"b\"}]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": "
		"[{\"pid\": 3, \"verdict\": \"maybe\", \"boot_id\": \"b\"}]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": "
		"[{\"pid\": 3, \"start\": -1, \"verdict\": \"agree\", \"boot_id\": \"b\"}]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": "
		"[{\"pid\": 3, \"verdict\": \"agree\"}]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"\", \"reports\": []}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"r\", \"reports\": [3]}]}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580\": {}}}",
		"{\"format\": 2, \"kind\": \"report\", \"id\": \"r\"}",
		"{\"format\": 3, \"reports\": []}",
		/* Each field of each record wrong once. */
		"{\"format\": 2, \"reports\": [3]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"host\": 3, \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"machine_id\": 3, \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"boot_id\": 3, \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"time\": 3, \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": [3]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": [{\"pid\": 3000000000, \"verdict\": \"agree\", \"boot_id\": \"b\"}]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": [{\"pid\": 3, \"start\": \"7\", \"verdict\": \"agree\", \"boot_id\": \"b\"}]}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", \"pids\": [{\"pid\": 3, \"verdict\": \"agree\", \"boot_id\": 3}]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": {}}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [3]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"r\", \"reports\": [\"a b\"]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"r\", \"reports\": [], \"legacy_mismatch\": -1}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"r\", \"reports\": [], \"legacy_mismatch\": \"1\"}]}",
		"{\"format\": 2, \"reports\": [], \"legacy\": []}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": 3}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"agree\": -1}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"mismatch\": \"x\"}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"agree_none\": 1.5}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"revoked\": 1}}}",
		"[]",
	};
	char path[600];

	(void)state;
	snprintf(path, sizeof(path), "%s/bad2.json", test_dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rtid_attestation *a = (void *)0x1;
		char err[512] = "";

		write_file(test_dir, "bad2.json", bad[i]);
		assert_int_equal(rtid_attest_load(path, &a, err, sizeof(err)), -EINVAL);
		assert_ptr_equal(a, (void *)0x1);
		assert_non_null(strstr(err, "bad2.json"));
	}
}

static void stat_start_time_strictly(void **state)
{
	static const struct { const char *line; int ok; unsigned long long start; } t[] = {
		{ "42 (python3) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 4 0 8812 1 2 3\n", 1, 8812 },
		{ "42 (a) b (c)) R 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 77 1\n", 1, 77 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 18446744073709551615", 1,
		  18446744073709551615ULL },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 18446744073709551616 1", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 -5 1", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12x 1", 0, 0 },
		{ "42 (x) Q 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "42 x S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "0 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "42 (x) S  1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 012 1", 0, 0 },
		{ "42 (x)", 0, 0 }, { "42 (x)S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "42 (x) SS 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 }, { "42 (x) S", 0, 0 },
		{ "42 ) (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "42(x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 }, { "42", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12", 1, 12 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 ", 1, 12 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 -", 0, 0 },
		{ "42 (x) S 1 42 42 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12\n", 1, 12 },
		{ "07 (x) S 1 7 7 0 -1 4 1 0 0 0 5 3 0 0 20 0 4 0 12 1", 0, 0 },
		{ "", 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		unsigned long long v = 3;
		int r = rtid__parse_stat_start(t[i].line, strlen(t[i].line), &v);

		assert_int_equal(r, t[i].ok ? 0 : -EINVAL);
		assert_true(v == (t[i].ok ? t[i].start : 3));
	}
	assert_int_equal(rtid__parse_stat_start(NULL, 0, NULL), -EINVAL);
	/* The real file of this process. */
	{
		unsigned long long v = 0;

		assert_int_equal(rtid_proc_start_time(NULL, getpid(), &v), 0);
		assert_true(v > 0);
		assert_int_equal(rtid_proc_start_time(NULL, 0, &v), -EINVAL);
		assert_true(rtid_proc_start_time("/nonexistent", 1, &v) < 0);
	}
}

static void identities(void **state)
{
	char boot[40], boot2[40], id[128], id2[128], m[40];

	(void)state;
	assert_int_equal(rtid_boot_id(NULL, boot, sizeof(boot)), 0);
	assert_int_equal(strlen(boot), 36);
	assert_int_equal(rtid_boot_id(NULL, boot2, sizeof(boot2)), 0);
	assert_string_equal(boot, boot2);
	assert_int_equal(rtid_boot_id(NULL, boot2, 8), -ENOSPC);
	assert_true(rtid_boot_id("/nonexistent", boot2, sizeof(boot2)) < 0);
	write_file(test_dir, "sys/kernel/random/boot_id", "not a uuid!\n");
	assert_int_equal(rtid_boot_id(test_dir, boot2, sizeof(boot2)), -EINVAL);
	if (rtid_machine_id(m, sizeof(m)) < 0)
		m[0] = '\0';
	assert_int_equal(rtid_report_id(m, boot, id, sizeof(id)), 0);
	assert_int_equal(rtid_report_id(m, boot, id2, sizeof(id2)), 0);
	assert_string_not_equal(id, id2); /* the random part */
	assert_non_null(strstr(id, boot));
	assert_int_equal(rtid_report_id(NULL, NULL, id, 20), -EINVAL);
	assert_int_equal(rtid_report_id(NULL, "", id, sizeof(id)), 0);
	assert_non_null(strstr(id, "nomachine-noboot-"));
	assert_int_equal(rtid_report_id("a b", NULL, id, sizeof(id)), -EINVAL);
	/* Ids without a newline; a stat line that is not the kernel's. */
	write_file(test_dir, "sys/kernel/random/boot_id", "0b6e8f4e-9d2c-4c1a-8f3e-2a1b3c4d5e6f");
	assert_int_equal(rtid_boot_id(test_dir, boot2, sizeof(boot2)), 0);
	write_file(test_dir, "sys/kernel/random/boot_id", "");
	assert_int_equal(rtid_boot_id(test_dir, boot2, sizeof(boot2)), -EINVAL);
	write_file(test_dir, "sys/kernel/random/boot_id", "0b6e\n");
	assert_int_equal(rtid_boot_id(test_dir, boot2, sizeof(boot2)), -EINVAL);
	write_file(test_dir, "77/stat", "77 (x) S garbage\n");
	{
		unsigned long long v = 5;

		assert_int_equal(rtid_proc_start_time(test_dir, 77, &v), -EINVAL);
		assert_true(v == 5);
		/* An empty stat is no start time either (not 0 with nothing written). */
		write_file(test_dir, "78/stat", "");
		assert_int_equal(rtid_proc_start_time(test_dir, 78, &v), -EINVAL);
		assert_true(v == 5);
		/* pid 1 is a process like any other (a container's init). */
		write_file(test_dir, "1/stat", "1 (init) S 0 1 1 0 -1 4 1 0 0 0 5 3 0 0 20 0 1 0 9 1\n");
		assert_int_equal(rtid_proc_start_time(test_dir, 1, &v), 0);
		assert_true(v == 9);
	}
}

/* Lifts and reports that differ in every field still sort to one order. */
static void lifts_in_any_order(void **state)
{
	static const char *const files[] = {
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", "
		"\"boot_id\": \"b\", \"pids\": [{\"pid\": 1, \"start\": 1, \"verdict\": \"mismatch\"}]}], "
		"\"lifts\": [{\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"a\", "
		"\"reports\": [\"r\", \"q\"]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"a\", \"reports\": [\"r\"]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"a\", \"reports\": [\"r\"], \"legacy_mismatch\": 1}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"a\", \"reports\": [\"r\"], \"legacy_mismatch\": 3}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"a\", \"reports\": [\"s\"]}]}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [{\"id\": \"l\", \"driver_version\": "
		"\"580.1\", \"reason\": \"b\", \"reports\": [], \"time\": \"t\"}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", "
		"\"machine_id\": \"z\", \"boot_id\": \"b\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", "
		"\"boot_id\": \"c\", \"pids\": []}]}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"agree\": 2}}}",
	};
	enum { N = sizeof(files) / sizeof(files[0]) };
	struct rtid_attestation *item[N], *x = NULL, *y = NULL;
	char path[600], *s1, *s2;

	(void)state;
	snprintf(path, sizeof(path), "%s/l.json", test_dir);
	for (size_t i = 0; i < N; i++) {
		write_file(test_dir, "l.json", files[i]);
		assert_int_equal(rtid_attest_load(path, &item[i], NULL, 0), 0);
	}
	assert_int_equal(rtid_attest_new(&x), 0);
	assert_int_equal(rtid_attest_new(&y), 0);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(rtid_attest_merge(x, item[i]), 0);
		assert_int_equal(rtid_attest_merge(y, item[N - 1 - i]), 0);
	}
	s1 = dump(x);
	s2 = dump(y);
	assert_string_equal(s1, s2);
	assert_int_equal(rtid_attest_find(x, "580.1")->lifts, 1);
	free(s1);
	free(s2);
	for (size_t i = 0; i < N; i++)
		rtid_attest_free(item[i]);
	rtid_attest_free(x);
	rtid_attest_free(y);
}


/* Every field of a report, a process, a lift and a legacy record is checked:
 * one wrong field in a good document makes the whole file an error. */
#define REP(x) "{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"580.1\", " \
	"\"host\": \"h\", \"machine_id\": \"m\", \"boot_id\": \"b\", \"time\": \"t\", " x "}]}"
#define PID(x) REP("\"pids\": [{" x "}]")
#define LIFT(x) "{\"format\": 2, \"reports\": [], \"lifts\": [{" x "}]}"
#define OKL "\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"r\", \"time\": \"t\""

static void every_field_checked(void **state)
{
	static const char *bad[] = {
		"{\"format\": 2, \"reports\": [3]}",
		"{\"format\": 2, \"reports\": [{\"driver_version\": \"580.1\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": 3, \"driver_version\": \"580.1\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"pids\": []}]}",
		"{\"format\": 2, \"reports\": [{\"id\": \"r\", \"driver_version\": \"5.1.2.3.4\", \"pids\": []}]}",
		REP("\"pids\": [], \"host\": 3"), REP("\"pids\": [], \"machine_id\": []"),
		REP("\"pids\": [], \"boot_id\": 1"), REP("\"pids\": [], \"time\": null"),
		REP("\"pids\": {}"),
		"{\"format\": 2, \"reports\": [{\"id\": \"" "0123456789012345678901234567890123456789"
		"01234567890123456789012345678901234567890123456789012345678901234567890123456789"
		"0123456789\", \"driver_version\": \"580.1\", \"pids\": []}]}",
		PID("\"pid\": 3"), PID("\"verdict\": \"agree\", \"boot_id\": \"b\""),
		PID("\"pid\": \"3\", \"verdict\": \"agree\""),
		PID("\"pid\": 2147483648, \"verdict\": \"agree\""),
		PID("\"pid\": 3, \"verdict\": 1"),
		PID("\"pid\": 3, \"verdict\": \"agree\", \"start\": \"9\""),
		PID("\"pid\": 3, \"verdict\": \"agree\", \"boot_id\": 7"),
		PID("\"pid\": 3, \"verdict\": \"agree\", \"boot_id\": \"a b\""),
		REP("\"pids\": [3]"),
		LIFT("\"driver_version\": \"580.1\", \"reason\": \"r\", \"reports\": []"),
		LIFT("\"id\": \"l\", \"reason\": \"r\", \"reports\": []"),
		LIFT("\"id\": \"l\", \"driver_version\": \"580\", \"reason\": \"r\", \"reports\": []"),
		LIFT("\"id\": \"l\", \"driver_version\": \"580.1\", \"reports\": []"),
		LIFT(OKL ", \"reports\": {}"), LIFT(OKL), LIFT(OKL ", \"reports\": [], \"legacy_mismatch\": -1"),
		LIFT(OKL ", \"reports\": [], \"legacy_mismatch\": \"1\""),
		LIFT(OKL ", \"reports\": [\"a b\"]"), LIFT("\"id\": \"l l\", \"driver_version\": \"580.1\", "
		"\"reason\": \"r\", \"reports\": []"),
		LIFT("\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"r\", \"time\": 1, "
		     "\"reports\": []"),
		"{\"format\": 2, \"reports\": [], \"lifts\": {}}",
		"{\"format\": 2, \"reports\": [], \"lifts\": [3]}",
		"{\"format\": 2, \"reports\": [], \"legacy\": []}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": 3}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"agree_none\": -2}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"mismatch\": 1.5}}}",
		"{\"format\": 1, \"drivers\": 3}", "{\"format\": \"1\", \"drivers\": {}}", "3",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"revoked\": \"yes\"}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580\": {}}}",
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"agree\": \"3\"}}}",
		"{\"format\": 1, \"drivers\": {\"580.1\": {\"mismatch\": -1}}}",
		"{\"format\": 2}", "{\"format\": 3, \"reports\": []}", "[]",
		"{\"format\": 2, \"kind\": \"other\", \"reports\": []}",
		PID("\"pid\": 0, \"verdict\": \"agree\""), PID("\"pid\": -4, \"verdict\": \"agree\""),
		PID("\"pid\": 3, \"verdict\": \"bogus\""),
		PID("\"pid\": 3, \"verdict\": \"agree\", \"start\": -1"),
		LIFT(OKL ", \"reports\": [3]"),
		LIFT("\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": \"\", \"reports\": []"),
		LIFT("\"id\": \"l\", \"driver_version\": \"580.1\", \"reason\": 5, \"reports\": []"),
		("{\"format\": 2, \"kind\": \"report\", \"id\": \"r\", \"driver_version\": \"580.1\", "
		 "\"pids\": []}"), /* a report is not an attestation */
	};
	static const char *good[] = {
		PID("\"pid\": 3, \"verdict\": \"agree\", \"start\": null"),
		PID("\"pid\": 3, \"verdict\": \"error\""), PID("\"pid\": 3, \"verdict\": \"undecided\""),
		LIFT(OKL ", \"reports\": [\"r\"], \"legacy_mismatch\": 2"),
		"{\"format\": 2, \"reports\": [], \"legacy\": {\"580.1\": {\"revoked\": true}}}",
	};
	char path[600];

	(void)state;
	snprintf(path, sizeof(path), "%s/f.json", test_dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rtid_attestation *a = (void *)0x1;
		char err[512] = "";

		write_file(test_dir, "f.json", bad[i]);
		if (rtid_attest_load(path, &a, err, sizeof(err)) != -EINVAL) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			fail();
		}
		assert_ptr_equal(a, (void *)0x1);
		assert_non_null(strstr(err, "f.json"));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct rtid_attestation *a = NULL;

		write_file(test_dir, "f.json", good[i]);
		assert_int_equal(rtid_attest_load(path, &a, NULL, 0), 0);
		rtid_attest_free(a);
	}
}

/* What merge takes besides attestations: reports of both formats. */
static void evidence_files(void **state)
{
	static const struct { const char *text; int r; unsigned long agree; bool revoked; } t[] = {
		{ "{\"driver_version\": \"580.1\", \"agree\": 4, \"agree_none\": 0, \"mismatch\": 0}", 0,
		  4, false },
		{ "{\"driver_version\": \"580.1\", \"agree\": 4, \"agree_none\": 0, \"mismatch\": 1}", 0,
		  4, true },
		{ "{\"driver_version\": \"580.1\", \"agree\": 4}", -EINVAL, 0, false },
		{ "{\"driver_version\": \"580.1\", \"agree\": 4, \"agree_none\": \"0\", \"mismatch\": 0}",
		  -EINVAL, 0, false },
		{ "{\"driver_version\": null, \"agree\": 4, \"agree_none\": 0, \"mismatch\": 0}", -EINVAL,
		  0, false },
		{ "{\"driver_version\": \"580\", \"agree\": 4, \"agree_none\": 0, \"mismatch\": 0}",
		  -EINVAL, 0, false },
		{ "{\"format\": 2, \"kind\": \"report\", \"id\": \"r\", \"driver_version\": \"580.1\", "
		  "\"boot_id\": \"b\", \"pids\": [{\"pid\": 3, \"start\": 1, \"verdict\": \"agree\"}, "
		  "{\"pid\": 4, \"start\": 1, \"verdict\": \"mismatch\", \"boot_id\": \"c\"}]}", 0, 1,
		  true },
		{ "{\"format\": 2, \"kind\": \"report\", \"id\": \"r\", \"pids\": []}", -EINVAL, 0, false },
		{ "{\"format\": 2, \"kind\": \"other\", \"reports\": []}", -EINVAL, 0, false },
	};
	char path[600];

	(void)state;
	snprintf(path, sizeof(path), "%s/e.json", test_dir);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rtid_attestation *a = NULL;
		char err[512] = "";

		write_file(test_dir, "e.json", t[i].text);
		assert_int_equal(rtid_attest_load_evidence(path, &a, err, sizeof(err)), t[i].r);
		if (t[i].r < 0) {
			assert_non_null(strstr(err, "e.json"));
			continue;
		}
		assert_int_equal(rtid_attest_find(a, "580.1")->agree, t[i].agree);
		assert_int_equal(rtid_attest_find(a, "580.1")->revoked, t[i].revoked);
		rtid_attest_free(a);
	}
	/* A missing report is an error, where a missing attestation is empty. */
	snprintf(path, sizeof(path), "%s/none.json", test_dir);
	{
		struct rtid_attestation *a = NULL;
		char err[512] = "";

		assert_int_equal(rtid_attest_load_evidence(path, &a, err, sizeof(err)), -ENOENT);
		assert_non_null(strstr(err, "No such file"));
	}
}

/* The API refuses what it cannot record, and says so. */
static void odd_arguments(void **state)
{
	struct rtid_attestation *a = NULL;
	struct rtid_attest_proc p = { .pid = 5, .start_known = true, .start = 1, .boot_id = "b",
				      .verdict = RTID_XC_AGREE };
	struct rtid_attest_report r = rep("r1", "580.1");
	char big[400];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_add_report(a, NULL, &p, 1), -EINVAL);
	assert_int_equal(rtid_attest_add_report(a, &r, NULL, 1), -EINVAL);
	r.host = big;
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	r.host = "h";
	p.verdict = (enum rtid_xcheck)9;
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	p.verdict = RTID_XC_AGREE;
	p.boot_id[0] = '\0';
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	strcpy(p.boot_id, "b");
	p.start = ~0ULL; /* no JSON integer holds it: as good as unknown */
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 0);
	p.verdict = RTID_XC_NONE; /* no verdict: nothing recorded, the report is */
	r = rep("r2", "580.1");
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), 0);
	assert_int_equal(rtid_attest_find(a, "580.1")->reports, 2);
	r = rep("r3", "580.1");
	assert_int_equal(rtid_attest_add_report(a, &r, NULL, 0), 0);
	assert_int_equal(rtid_attest_lift(a, "580.1", "x", "bad id", "t"), -EINVAL);
	assert_int_equal(rtid_attest_lift(a, "580.1", NULL, "l", "t"), -EINVAL);
	assert_int_equal(rtid_attest_lift(a, "580", "x", "l", "t"), -EINVAL);
	assert_int_equal(rtid_attest_lift(a, "580.1", big, "l", "t"), -EINVAL);
	assert_int_equal(rtid_attest_lift(NULL, "580.1", "x", "l", "t"), -EINVAL);
	assert_int_equal(rtid_attest_add(a, "580", 1, 0, 0, false), -EINVAL);
	r = rep("r4", "580.1");
	r.machine_id = big;
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	r = rep("r4", "580.1");
	r.boot_id = big;
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	r = rep("r4", "580.1");
	r.time = big;
	assert_int_equal(rtid_attest_add_report(a, &r, &p, 1), -EINVAL);
	assert_int_equal(rtid_attest_merge(a, NULL), -EINVAL);
	assert_null(rtid_attest_find(a, big));
	assert_null(rtid_attest_find(a, "590.1"));
	assert_null(rtid_attest_entry_at(a, 5));
	rtid_attest_free(a);
	/* Empty: nothing found, nothing clean. */
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_null(rtid_attest_find(a, "580.1"));
	assert_int_equal(rtid_attest_merge(a, a), 0);
	rtid_attest_free(a);
}

/* A forged copy of a report id: the same union whichever comes first. */
static void same_id_other_origin(void **state)
{
	struct rtid_attestation *a = NULL, *b = NULL;
	struct rtid_attest_proc p = { .pid = 5, .start_known = true, .start = 1, .boot_id = "b",
				      .verdict = RTID_XC_AGREE };
	struct rtid_attest_report r1 = rep("r", "580.1"), r2 = rep("r", "580.1");
	char *x, *y;

	(void)state;
	r2.host = "forged";
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_new(&b), 0);
	assert_int_equal(rtid_attest_add_report(a, &r1, &p, 1), 0);
	p.pid = 6;
	assert_int_equal(rtid_attest_add_report(a, &r2, &p, 1), 0);
	assert_int_equal(rtid_attest_add_report(b, &r2, &p, 1), 0);
	p.pid = 5;
	assert_int_equal(rtid_attest_add_report(b, &r1, &p, 1), 0);
	x = dump(a);
	y = dump(b);
	assert_string_equal(x, y);
	assert_int_equal(rtid_attest_find(a, "580.1")->reports, 1);
	assert_int_equal(rtid_attest_find(a, "580.1")->agree, 2);
	free(x);
	free(y);
	/* Two lifts of one id: one kept, the same either way. */
	p.verdict = RTID_XC_MISMATCH;
	r1 = rep("m", "580.1");
	assert_int_equal(rtid_attest_add_report(a, &r1, &p, 1), 0);
	assert_int_equal(rtid_attest_add_report(b, &r1, &p, 1), 0);
	assert_int_equal(rtid_attest_lift(a, "580.1", "one", "l", "t"), 0);
	assert_int_equal(rtid_attest_lift(b, "580.1", "two", "l", "t"), 0);
	{
		struct rtid_attestation *c = NULL;

		assert_int_equal(rtid_attest_new(&c), 0);
		assert_int_equal(rtid_attest_merge(c, b), 0);
		assert_int_equal(rtid_attest_merge(c, a), 0);
		assert_int_equal(rtid_attest_merge(a, b), 0);
		x = dump(a);
		y = dump(c);
		assert_string_equal(x, y);
		assert_int_equal(rtid_attest_find(a, "580.1")->lifts, 1);
		free(x);
		free(y);
		rtid_attest_free(c);
	}
	rtid_attest_free(a);
	rtid_attest_free(b);
}

/* A lift names only its own version's mismatches and legacy record. */
static void lift_is_per_version(void **state)
{
	struct rtid_attestation *a = NULL, *u = NULL;
	struct rtid_attest_proc p = { .pid = 5, .start_known = true, .start = 1, .boot_id = "b",
				      .verdict = RTID_XC_MISMATCH };
	struct rtid_attest_report r1 = rep("r1", "580.1"), r2 = rep("r2", "590.1");
	char path[600];
	bool trusted = true;

	(void)state;
	assert_int_equal(rtid_attest_new(&a), 0);
	assert_int_equal(rtid_attest_add_report(a, &r1, &p, 1), 0);
	assert_int_equal(rtid_attest_add_report(a, &r2, &p, 1), 0);
	assert_int_equal(rtid_attest_add(a, "580.1", 20, 0, 1, false), 0);
	assert_int_equal(rtid_attest_add(a, "590.1", 20, 0, 1, false), 0);
	assert_int_equal(rtid_attest_add(a, "570.1", 20, 0, 0, false), 0);
	assert_int_equal(rtid_attest_lift(a, "580.1", "checked", "l1", "t"), 0);
	assert_false(rtid_attest_find(a, "580.1")->revoked);
	assert_true(rtid_attest_find(a, "590.1")->revoked);
	assert_true(rtid_attest_clean(a, "570.1"));
	/* Evidence from an untrusted file makes nothing clean where it goes. */
	write_file(test_dir, "u.json", "{\"format\": 1, \"drivers\": {}}");
	snprintf(path, sizeof(path), "%s/u.json", test_dir);
	chmod(path, 0666);
	assert_int_equal(rtid_attest_load_trusted(path, &u, &trusted, NULL, 0), 0);
	assert_false(trusted);
	assert_int_equal(rtid_attest_merge(a, u), 0);
	assert_false(rtid_attest_clean(a, "570.1"));
	rtid_attest_free(u);
	rtid_attest_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_order_never_matters),
		cmocka_unit_test(distinct_processes_only),
		cmocka_unit_test(mismatch_revokes_until_lifted),
		cmocka_unit_test(counts_saturate_never_wrap),
		cmocka_unit_test(format1_reads_as_legacy_and_writes_format2),
		cmocka_unit_test(malformed_format2_names_the_place),
		cmocka_unit_test(stat_start_time_strictly),
		cmocka_unit_test(identities),
		cmocka_unit_test(every_field_checked),
		cmocka_unit_test(evidence_files),
		cmocka_unit_test(odd_arguments),
		cmocka_unit_test(same_id_other_origin),
		cmocka_unit_test(lifts_in_any_order),
		cmocka_unit_test(lift_is_per_version),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
