#include "mock-log.h"

#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "casefile.h"

double mock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mock_log(const char *who, const char *event, int pid, int argc, char **argv,
	      const char *note)
{
	const char *path = getenv("RTID_MOCK_LOG");
	json_t *o, *args;
	char *text;
	int fd;

	if (!path || !*path)
		return;
	args = json_array();
	for (int i = 0; argv && i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	o = json_pack("{s:s,s:s,s:i,s:i,s:o,s:f,s:s?}", "mock", who, "event", event, "pid", pid,
		      "self", (int)getpid(), "argv", args, "t", mock_now(), "note", note);
	text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(o);
	if (!text)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t len = strlen(text);

		text[len] = '\n';
		/* One write: O_APPEND makes it land whole after the others. */
		if (write(fd, text, len + 1) < 0) {
			/* nothing to do: a lost log line fails the case that counts it */
		}
		close(fd);
	}
	free(text);
}

int mock_listed(const char *var, const char *op, int all)
{
	const char *ops = getenv(var);
	size_t len = strlen(op);

	if (!ops || !*ops)
		return all;
	for (const char *p = ops; (p = strstr(p, op)); p += len)
		if ((p == ops || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return 0;
}

void mock_slow_op(const char *op)
{
	mock_slow_op_on(op, 0);
}

void mock_slow_op_on(const char *op, int pid)
{
	const char *slow = getenv("RTID_MOCK_SLOW_S"), *pids = getenv("RTID_MOCK_STUCK_PIDS");
	char num[16];
	double s;
	struct timespec ts;

	snprintf(num, sizeof(num), "%d", pid);
	if (mock_listed("RTID_MOCK_STUCK_OPS", op, 0) &&
	    (!pids || !*pids || (pid > 0 && mock_listed("RTID_MOCK_STUCK_PIDS", num, 0))))
		mock_hang();
	if (!slow || !mock_listed("RTID_MOCK_SLOW_OPS", op, 0))
		return;
	s = cf_scaled(strtod(slow, NULL)); /* the test's own setting, not foreign text */
	ts = (struct timespec){ (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void mock_hang(void)
{
	const char *path = getenv("RTID_MOCK_STUCK_FILE");
	char byte;
	int fd;

	/* Returns only when the server has gone (the connection aborted). */
	if (path && *path && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		(void)!read(fd, &byte, 1);
		close(fd);
	}
	for (;;)
		pause();
}

/* The process a number names: itself, or the thread group of a thread. */
static int tgid_of(int n)
{
	char path[64], line[128];
	FILE *f;
	int tgid = n;

	snprintf(path, sizeof(path), "/proc/%d/status", n);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5))
			tgid = (int)strtol(line + 5, NULL, 10); /* the kernel's own text */
	fclose(f);
	return tgid;
}

int mock_by_name(int *pid, int *tid)
{
	char path[320], comm[64];
	struct dirent *de;
	regex_t re;
	DIR *d;
	int found = 0, p;

	if (!getenv("RTID_MOCK_BY_NAME"))
		return -1;
	if ((p = tgid_of(*pid)) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	if (!(d = opendir(path)) || regcomp(&re, "^cuda[0-9a-f]{11}$", REG_EXTENDED | REG_NOSUB)) {
		if (d)
			closedir(d);
		return 0;
	}
	while (!found && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", p, de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			if (regexec(&re, comm, 0, NULL, 0) == 0) {
				*tid = (int)strtol(de->d_name, NULL, 10);
				found = 1;
			}
		}
		fclose(f);
	}
	regfree(&re);
	closedir(d);
	*pid = p;
	return found;
}

int mock_state_key(int pid, char *buf, size_t len)
{
	char path[64], line[256];
	unsigned long long h = 1469598103934665603ULL; /* FNV-1a of the cgroup file */
	FILE *f;
	int ns = -1, c;

	if (!getenv("RTID_MOCK_BY_NAME"))
		return snprintf(buf, len, "%d", pid) < (int)len ? 0 : -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;

			/* The last number: the pid in its innermost namespace. */
			for (long v; (v = strtol(p, &end, 10)), end != p; p = end)
				ns = (int)v;
		}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (ns < 0 || !(f = fopen(path, "r")))
		return -1;
	while ((c = fgetc(f)) != EOF)
		h = (h ^ (unsigned char)c) * 1099511628211ULL;
	fclose(f);
	return snprintf(buf, len, "%016llx.%d", h, ns) < (int)len ? 0 : -1;
}

/* The group of $RTID_MOCK_JOBS ("100,200;300,400": the pids of each launch
 * job) that pid is in, from 0; -1 for none. */
static int job_of(int pid)
{
	const char *p = getenv("RTID_MOCK_JOBS");
	int g = 0;

	while (p && *p) {
		char *end;
		long v = strtol(p, &end, 10); /* the test's own setting */

		if (end == p)
			return -1;
		if (v == pid)
			return g;
		g += *end == ';';
		p = *end ? end + 1 : end;
	}
	return -1;
}

int mock_job_enter(const char *op, int pid)
{
	const char *dir = getenv("RTID_MOCK_STATE");
	char path[1024], note[64];
	int g = job_of(pid), fd;

	if (g < 0 || !dir || !*dir)
		return 0;
	snprintf(path, sizeof(path), "%s/job-%d.busy", dir, g);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(note, sizeof(note), "job %d busy: %s refused", g, op);
		mock_log("libcuda", "job-overlap", pid, 0, NULL, note);
		return -1;
	}
	close(fd);
	return 1;
}

void mock_job_leave(int pid)
{
	const char *dir = getenv("RTID_MOCK_STATE");
	char path[1024];
	int g = job_of(pid);

	if (g < 0 || !dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/job-%d.busy", dir, g);
	unlink(path);
}

void mock_state_path(int pid, const char *suffix, char *buf, size_t len)
{
	const char *dir = getenv("RTID_MOCK_STATE");
	char key[512];

	buf[0] = '\0';
	if (dir && *dir && mock_state_key(pid, key, sizeof(key)) == 0)
		snprintf(buf, len, "%s/%s%s", dir, key, suffix);
}
