/* Identities for validation reports: which machine and boot, which process
 * (pid and start time, so that a reused pid is another process), and a
 * report id no other report has. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "attest/attest-sys.h"
#include "attest/attest.h"
#include "basic/basic.h"

/* Read a small file into buf (NUL-terminated, cut at len - 1 bytes).
 * Returns the length or a negative errno. */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
	ssize_t n = rtid__read_at(AT_FDCWD, path, buf, len - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* One line of allowed characters (a uuid, a hex id), without its newline. */
static int read_id(const char *path, const char *allowed, size_t min, char *out, size_t outlen)
{
	char buf[128];
	ssize_t n = slurp(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if ((size_t)n < min || strspn(buf, allowed) != (size_t)n)
		return -EINVAL;
	return rtid__att_copy(out, outlen, buf) < 0 ? -ENOSPC : 0;
}

int rtid_boot_id(const char *proc_root, char *out, size_t outlen)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", proc_root ? proc_root : "/proc");
	return read_id(path, "0123456789abcdef-", 32, out, outlen);
}

int rtid_machine_id(char *out, size_t outlen)
{
	int r = read_id("/etc/machine-id", "0123456789abcdef", 32, out, outlen);

	return r < 0 ? read_id("/var/lib/dbus/machine-id", "0123456789abcdef", 32, out, outlen) : r;
}

int rtid_report_id(const char *machine_id, const char *boot_id, char *out, size_t outlen)
{
	struct timespec ts;
	unsigned long long rnd;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (rtid__att_getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -errno;
	/* Machine and boot name where it was made; time and chance tell apart
	 * two reports made there. */
	n = snprintf(out, outlen, "%.32s-%.36s-%lld.%09ld-%016llx",
		     machine_id && *machine_id ? machine_id : "nomachine",
		     boot_id && *boot_id ? boot_id : "noboot", (long long)ts.tv_sec, ts.tv_nsec, rnd);
	return n < 0 || (size_t)n >= outlen || !rtid__att_id_valid(out) ? -EINVAL : 0;
}
