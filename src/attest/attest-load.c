/* Loading an attestation or a report: a regular file read whole (never a
 * FIFO or a device that would block or never end), then parsed by
 * attest-json.c. An error names the file, and the line and column of a
 * parse error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest/attest.h"
#include "attest/attest-sys.h"

static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return -errno;
	if (rtid__att_fstat(fd, &st) < 0)
		e = -errno;
	else if (!S_ISREG(st.st_mode))
		e = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

/* The whole file, then the parser: jansson reads an fd one byte per call.
 * Returns 0 and *root; -EINVAL with the parser's error in je; or -errno
 * when the file cannot be read (or memory runs out). */
static int load_fd(int fd, json_t **root, json_error_t *je)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int e = ENOMEM;

	while (buf) {
		ssize_t n = read(fd, buf + len, cap - len);
		char *p;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : 0;
			break;
		}
		len += (size_t)n;
		if (len == cap) {
			if (!(p = realloc(buf, cap * 2)))
				break;
			buf = p;
			cap *= 2;
		}
	}
	if (buf && e == 0 && !(*root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, je)))
		e = EINVAL;
	free(buf);
	return -e;
}

int rtid__att_load(const char *path, bool evidence, struct rtid_attestation **out, char *err,
		   size_t errlen)
{
	struct rtid_attestation *a;
	json_error_t je;
	json_t *root;
	char dummy[1];
	int r, fd;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if ((r = rtid_attest_new(&a)) < 0)
		return r;
	if ((r = open_regular(path)) < 0) {
		rtid_attest_free(a);
		if (r == -ENOENT && !evidence) /* no attestation yet: nothing attested */
			return rtid_attest_new(out);
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	fd = r;
	r = load_fd(fd, &root, &je);
	close(fd);
	if (r < 0) {
		rtid_attest_free(a);
		if (r == -EINVAL)
			snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	r = rtid__att_from_json(a, root, path, evidence, err, errlen);
	json_decref(root);
	if (r == 0)
		r = rtid__att_normalize(a);
	if (r < 0) {
		rtid_attest_free(a);
		return r;
	}
	*out = a;
	return 0;
}

int rtid_attest_load(const char *path, struct rtid_attestation **out, char *err, size_t errlen)
{
	return rtid__att_load(path, false, out, err, errlen);
}

int rtid_attest_load_evidence(const char *path, struct rtid_attestation **out, char *err,
			      size_t errlen)
{
	return rtid__att_load(path, true, out, err, errlen);
}
