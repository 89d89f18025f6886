/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's record in the image directory: which tasks were CUDA tasks
 * at the dump, keyed by their pid in the dumped pid namespace (the last
 * NSpid: entry: host pids change under runc and Podman, and CRIU restores
 * that one), and the driver version. A restore with the record restores its
 * tasks side by side; without one (an image of CRIU's own plugin) it works
 * task by task. CRIU ignores files it does not know in the directory.
 *
 *   rtid-cuda-plugin 1
 *   run 1b4e28ba-2fa1-...      (the CRIU run of the dump: its inventory's id)
 *   driver 580.159.03          ("-" where it could not be read)
 *   task 42                    (one line per CUDA task)
 *
 * The run binds the record to its dump: a later dump into the same directory
 * by another plugin (CRIU's own ignores this file) writes another run id into
 * the inventory, and the record of the earlier dump then proves nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/basic.h"
#include "basic/parse.h"
#include "plugin/plugin.h"

#define HEAD "rtid-cuda-plugin 1"

struct last {
	int pid;
};

/* "NSpid:\t100\t1": the last number of the line. */
static int nspid_line(const char *line, size_t len, bool whole, void *arg)
{
	size_t end = len, start;

	if (len < 6 || memcmp(line, "NSpid:", 6))
		return 0;
	if (!whole)
		return -EINVAL;
	while (end > 6 && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	for (start = end; start > 6 && line[start - 1] != ' ' && line[start - 1] != '\t'; start--)
		;
	return rtid__parse_tid(line + start, end - start, &((struct last *)arg)->pid) < 0 ? -EINVAL
											 : 1;
}

int plug_nspid_at(const char *proc_root, int pid)
{
	char path[4096];
	struct last l = { -1 };

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, pid);
	return rtid__read_lines(AT_FDCWD, path, nspid_line, &l) == 0 ? l.pid : -1;
}

int plug_nspid(int pid)
{
	return plug_nspid_at("/proc", pid);
}

static void driver_version(char *out, size_t len)
{
	char buf[512];
	ssize_t n = rtid__read_at(AT_FDCWD, "/proc/driver/nvidia/version", buf, sizeof(buf), 0);

	if (n <= 0 || rtid__parse_driver_version(buf, (size_t)n, out, len) < 0)
		snprintf(out, len, "-");
}

#define TMP PLUG_RECORD ".new"

int plug_record_remove(int dirfd)
{
	return unlinkat(dirfd, PLUG_RECORD, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* The record into TMP, whole: 0 or -errno. */
static int write_tmp(int dirfd, const char *run, const int *nspids, size_t n)
{
	char ver[64];
	FILE *f;
	int fd = openat(dirfd, TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600), e;

	if (fd < 0)
		return -errno;
	if (!(f = fdopen(fd, "w"))) {
		e = errno;
		close(fd);
		return -e;
	}
	driver_version(ver, sizeof(ver));
	fprintf(f, HEAD "\nrun %s\ndriver %s\n", run, ver);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "task %d\n", nspids[i]);
	e = ferror(f) ? -EIO : 0;
	return fclose(f) < 0 || e ? -EIO : 0;
}

int plug_record_write(int dirfd, const char *run, const int *nspids, size_t n)
{
	int e = write_tmp(dirfd, run, nspids, n);

	/* Renamed over the old one: a link planted at the name is replaced,
	 * never followed, and no reader ever sees half a record. */
	if (e == 0 && renameat(dirfd, TMP, dirfd, PLUG_RECORD) < 0)
		e = -errno;
	if (e < 0) {
		unlinkat(dirfd, TMP, 0);
		plug_record_remove(dirfd); /* an earlier dump's must not pass for this one's */
	}
	return e;
}

struct reading {
	int *pids;
	size_t max, n;
	unsigned line;
	char run[PLUG_RUN_MAX];
};

/* A run id as CRIU makes one (uuid_unparse): hex digits and dashes, into
 * run (PLUG_RUN_MAX bytes), once. */
static int run_line(char *run, const char *id, size_t len)
{
	if (len == 0 || len >= PLUG_RUN_MAX || run[0])
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef-", id[i]) || !id[i])
			return -EINVAL;
	memcpy(run, id, len);
	run[len] = '\0';
	return 0;
}

static int record_line(const char *line, size_t len, bool whole, void *arg)
{
	struct reading *r = arg;

	if (!whole)
		return -EINVAL;
	if (r->line++ == 0)
		return len == strlen(HEAD) && !memcmp(line, HEAD, len) ? 0 : -EINVAL;
	if (len > 7 && !memcmp(line, "driver ", 7)) /* "-" where it was not known */
		return 0;
	if (len >= 4 && !memcmp(line, "run ", 4))
		return run_line(r->run, line + 4, len - 4);
	if (len < 5 || memcmp(line, "task ", 5) || r->n == r->max)
		return -EINVAL;
	return rtid__parse_tid(line + 5, len - 5, &r->pids[r->n++]) < 0 ? -EINVAL : 0;
}

int plug_record_read(int dirfd, int *nspids, size_t max, size_t *n, char *run)
{
	struct reading r = { .pids = nspids, .max = max };
	int e = rtid__read_lines(dirfd, PLUG_RECORD, record_line, &r);

	if (e < 0)
		return e == -ENOENT ? e : -EINVAL;
	if (r.line == 0)
		return -EINVAL;
	*n = r.n;
	memcpy(run, r.run, sizeof(r.run));
	return 0;
}

/* --- the device map an operator puts beside the images for one restore
 * (doc/plugin.md), bound to the image by its dump's run id as the record is:
 *
 *   rtid-cuda-map 1
 *   run 1b4e28ba-2fa1-...      (the dump's CRIU run: the record's run line)
 *   map GPU-...=GPU-...,...    (cuda-checkpoint's --device-map syntax) --- */

#define MAP_HEAD "rtid-cuda-map 1"

struct map_reading {
	unsigned line;
	char run[PLUG_RUN_MAX];
	char *map;
	size_t cap;
	bool have;
};

static int map_line(const char *line, size_t len, bool whole, void *arg)
{
	struct map_reading *m = arg;

	if (++m->line == 1 || !whole) /* a line cut to a piece is none of these */
		return whole && len == strlen(MAP_HEAD) && !memcmp(line, MAP_HEAD, len) ? 0 : -EINVAL;
	if (len >= 4 && !memcmp(line, "run ", 4))
		return run_line(m->run, line + 4, len - 4);
	if (len < 4 || memcmp(line, "map ", 4) || m->have || len - 4 >= m->cap)
		return -EINVAL;
	memcpy(m->map, line + 4, len - 4);
	m->map[len - 4] = '\0';
	m->have = true;
	return 0;
}

int plug_map_read(int dirfd, char *map, size_t cap, char *run, unsigned *line)
{
	struct map_reading m = { .map = map, .cap = cap };
	int fd = openat(dirfd, PLUG_MAP_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), e;
	char self[40];
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT : errno == ELOOP ? -ELOOP : -EIO;
	/* Trusted as a settings file is: whoever else could write it could send
	 * a restore to any GPU. Read through the descriptor checked. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid && st.st_uid != geteuid()) ||
	    (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	e = rtid__read_lines(AT_FDCWD, self, map_line, &m);
	close(fd);
	*line = e < 0 ? m.line : 0;
	if (e < 0 || !m.have || !m.run[0])
		return -EINVAL;
	memcpy(run, m.run, sizeof(m.run));
	return 0;
}

/* The record for the restore: every CUDA task of the dump by its ns pid,
 * bound to this CRIU run. Whole or none: an earlier dump's record left in a
 * reused directory would name the wrong tasks. */
void plug_record_dump(const int *pids, size_t n)
{
	static int ns[PLUG_TASKS_MAX];
	int e;

	for (size_t i = 0; i < n; i++)
		if ((ns[i] = plug_nspid(pids[i])) < 0) {
			plug_log(PLUG_WARN, "no NSpid for pid %d: no record\n", pids[i]);
			plug_record_remove(plug_criu_image_dir());
			return;
		}
	if ((e = plug_record_write(plug_criu_image_dir(), plug_criu_run_id(), ns, n)) < 0)
		plug_log(PLUG_WARN, "cannot write " PLUG_RECORD ": %s\n", strerror(-e));
}

/* --- the tree as /proc shows it, for questions asked ahead --- */

/* The pids of a children file (space-separated decimals) onto the list. */
static void add_children(const char *buf, int *pids, size_t max, size_t *n)
{
	char word[16];

	for (const char *s = buf; *s;) {
		size_t len = strspn(s, "0123456789");
		int pid;

		if (!len)
			break; /* not a pid: the rest is not this file's shape */
		if (len < sizeof(word)) {
			memcpy(word, s, len);
			word[len] = '\0';
			if (rtid__parse_pid(word, &pid) == 0 && (*n)++ < max)
				pids[*n - 1] = pid;
		}
		s += len;
		s += strspn(s, " \n");
	}
}

size_t plug_descendants(int pid, int *pids, size_t max)
{
	static char buf[65536];
	size_t n = 0;

	if (max == 0)
		return 0;
	pids[n++] = pid;
	/* Breadth first, each process's main thread's children: a child of
	 * another thread is missed, and then asked alone, as without this. */
	for (size_t at = 0; at < n && at < max; at++) {
		char path[64];
		ssize_t got;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pids[at], pids[at]);
		got = rtid__read_at(AT_FDCWD, path, buf, sizeof(buf) - 1, 0);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		add_children(buf, pids, max, &n);
	}
	return n;
}

void plug_record_match(const int *pids, size_t np, const int *ns, size_t n, signed char *named)
{
	for (size_t i = 0; i < np; i++) {
		int mine = plug_nspid(pids[i]);

		named[i] = 0;
		if (mine < 0) { /* the record cannot say: as without one */
			plug_log(PLUG_WARN, "pid %d: no NSpid to find in " PLUG_RECORD ": asked "
				 "alone\n", pids[i]);
			named[i] = -1;
			continue;
		}
		for (size_t k = 0; k < n && !named[i]; k++)
			named[i] = mine == ns[k];
	}
}
