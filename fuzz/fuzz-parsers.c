/* libFuzzer harnesses for rtid's parsers of foreign text. One binary per
 * target, chosen at build time by FUZZ_TARGET:
 *   1 tool output (rtid__parse_tid)    2 driver version file
 *   3 thread-name matcher             4 case files       5 attestation files
 *   6 /proc/PID/stat start time      7 rtid serve's protocol
 * Each checks what it can beyond "no crash": a parsed tid is positive and
 * prints back to the same digits; a version is valid; a match has the shape. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attest/attest.h"
#include "casefile.h"
#include "basic/parse.h"
#include "core/core.h"
#include "rtid.h"
#include "proto/serve-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tid(const uint8_t *data, size_t size)
{
	int tid = -7;
	char back[16];

	if (rtid__parse_tid((const char *)data, size, &tid) != 0) {
		if (tid != -7)
			abort(); /* out-parameter written on failure */
		return;
	}
	snprintf(back, sizeof(back), "%d", tid);
	if (tid <= 0 || !memmem(data, size, back, strlen(back)))
		abort();
}

static void check_version(const uint8_t *data, size_t size)
{
	char out[32];

	if (rtid__parse_driver_version((const char *)data, size, out, sizeof(out)) == 0 &&
	    !rtid__version_valid(out))
		abort();
}

static void check_match(const uint8_t *data, size_t size)
{
	static struct rtid__matcher m;
	static int ready;

	if (!ready && rtid__matcher_init(&m, NULL) == 0)
		ready = 1;
	if (rtid__matcher_match(&m, (const char *)data, size) &&
	    (size != 15 || memcmp(data, "cuda", 4) != 0))
		abort();
}

/* Parsers that take a path read the input through a memfd. */
static int with_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void check_casefile(const uint8_t *data, size_t size)
{
	struct casefile *c = NULL;
	char path[64], err[512];
	int fd = with_file(data, size, path, sizeof(path));

	if (fd < 0)
		return;
	if (cf_load(path, &c, err, sizeof(err)) == 0) {
		if (c->npids == 0 || c->nexpects == 0)
			abort(); /* the whole-case rules */
		cf_free(c);
	} else if (!strstr(err, path)) {
		abort(); /* every error names the file */
	}
	close(fd);
}

static char *canonical(const struct rtid_attestation *a)
{
	json_t *j = rtid__att_to_json(a);
	char *s = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}

/* What loaded is consistent, and writing it then reading it back gives the
 * same set (the format is its own fixed point). */
static void check_loaded(const struct rtid_attestation *a)
{
	struct rtid_attestation *b = NULL;
	char *s = canonical(a), *t;
	json_t *j;

	for (size_t i = 0; i < rtid_attest_count(a); i++) {
		const struct rtid_attest_entry *e = rtid_attest_entry_at(a, i);

		if (!rtid__version_valid(e->version) ||
		    (rtid_attest_clean(a, e->version) &&
		     (e->revoked || e->agree < RTID_ATTEST_MIN_AGREE)) ||
		    e->agree > (unsigned long)INT64_MAX)
			abort();
	}
	if (!s || !(j = json_loads(s, 0, NULL)) || rtid_attest_new(&b) < 0 ||
	    rtid__att_from_json(b, j, "x", false, NULL, 0) < 0 || rtid__att_normalize(b) < 0)
		abort();
	t = canonical(b);
	if (!t || strcmp(s, t))
		abort();
	json_decref(j);
	free(s);
	free(t);
	rtid_attest_free(b);
}

static void check_attest(const uint8_t *data, size_t size)
{
	struct rtid_attestation *a = NULL;
	char path[64], err[512];
	int fd = with_file(data, size, path, sizeof(path));

	if (fd < 0)
		return;
	for (int evidence = 0; evidence < 2; evidence++) {
		err[0] = '\0';
		if (rtid__att_load(path, evidence, &a, err, sizeof(err)) == 0) {
			check_loaded(a);
			rtid_attest_free(a);
		} else if (!strstr(err, path)) {
			abort(); /* every error names the file */
		}
	}
	close(fd);
}

/* /proc/PID/stat: a start time only from a line of the kernel's shape. */
static void check_stat(const uint8_t *data, size_t size)
{
	unsigned long long v = 7;

	if (rtid__parse_stat_start((const char *)data, size, &v) < 0 && v != 7)
		abort(); /* out-parameter written on failure */
	if (size && data[0] == '0')
		if (rtid__parse_stat_start((const char *)data, size, &v) == 0)
			abort(); /* pid 0 never */
}

/* rtid serve's messages: whatever parses formats back to the same bytes. */
static void check_serve(const uint8_t *data, size_t size)
{
	char buf[RTID__SVC_MSG_MAX];
	struct rtid__svc_req q;
	struct rtid__svc_ans a;
	bool actions;
	int v;

	if (rtid__svc_req_parse((const char *)data, size, &q) == 0 &&
	    (rtid__svc_req_format(&q, buf) != size || memcmp(buf, data, size)))
		abort();
	if (rtid__svc_ans_parse((const char *)data, size, &a) == 0 &&
	    (rtid__svc_ans_format(&a, buf) != size || memcmp(buf, data, size)))
		abort();
	if (rtid__svc_hello_parse((const char *)data, size, &v) == 0 && v <= 0)
		abort();
	(void)rtid__svc_welcome_parse((const char *)data, size, RTID__SVC_VERSION, &actions);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	switch (FUZZ_TARGET) {
	case 1: check_tid(data, size); break;
	case 2: check_version(data, size); break;
	case 3: check_match(data, size); break;
	case 4: check_casefile(data, size); break;
	case 5: check_attest(data, size); break;
	case 6: check_stat(data, size); break;
	case 7: check_serve(data, size); break;
	}
	return 0;
}
