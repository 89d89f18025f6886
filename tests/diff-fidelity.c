/* The fake /proc against the real one: the same scenarios on a real process
 * (this test's child, its threads named and ended on command) read through
 * the kernel's /proc and through fakeproc serving a case copied from that
 * process (same pid, tids and names, the kernel's behaviour armed as
 * faults). Every observation and every verdict of the scan must be the same
 * on both; any difference fails. This is what keeps the fake honest.
 *
 * Scenarios: one, two and no named threads (the scan's verdicts and tids);
 * Threads:, Tgid: and the shape of Groups: in status; a thread reachable as /proc/TID but not
 * listed; a comm opened before its thread exits reads ESRCH, and the thread
 * leaves the listing and Threads:; a walk in chunks resumes by position
 * after the saved thread exited, skipping a live one (proc_task_readdir).
 * Not compared: EACCES under hidepid (needs a remount of the real /proc).
 *
 * Environment: FAKEPROC. Exit 77 without FUSE. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakeproc-run.h"
#include "helpers.h"
#include "basic/parse.h"
#include "core/core.h"

#define MAXT 8

/* --- the real process: threads created and ended on command --- */
struct slot {
	int pipe[2]; /* the thread returns when the write end closes */
	pthread_t th;
	pid_t tid;
	char name[16];
};

static sem_t named; /* posted once a new thread has its name and tid */

static void *hold(void *arg)
{
	struct slot *s = arg;
	char c;

	prctl(PR_SET_NAME, s->name);
	s->tid = (pid_t)syscall(SYS_gettid);
	sem_post(&named);
	while (read(s->pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Commands: "c NAME" creates a thread (reply: its tid), "r I NAME" renames
 * thread I through /proc (reply 0), "x I" ends thread I (reply once it has
 * been joined: its tid is gone). */
static void child(int cmd, int rep)
{
	static struct slot s[MAXT];
	char line[32];
	int n = 1; /* slot 0 is this thread, the leader */

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sem_init(&named, 0, 0);
	for (;;) {
		ssize_t k = read(cmd, line, sizeof(line) - 1);
		int r = 0;

		if (k <= 0)
			_exit(0);
		line[k] = '\0';
		if (line[0] == 'c' && n < MAXT) {
			snprintf(s[n].name, sizeof(s[n].name), "%.15s", line + 2);
			if (pipe(s[n].pipe) < 0 || pthread_create(&s[n].th, NULL, hold, &s[n]) != 0)
				_exit(1);
			while (sem_wait(&named) < 0 && errno == EINTR)
				;
			r = s[n++].tid;
		} else if (line[0] == 'r' && line[2] > '0' && line[2] - '0' < n && line[3] == ' ') {
			char path[64];
			int fd;

			snprintf(path, sizeof(path), "/proc/self/task/%d/comm", s[line[2] - '0'].tid);
			fd = open(path, O_WRONLY);
			r = fd >= 0 && write(fd, line + 4, strlen(line + 4)) > 0 ? 0 : -1;
			if (fd >= 0)
				close(fd);
		} else if (line[0] == 'x' && line[2] > '0' && line[2] - '0' < n) {
			int i = line[2] - '0';

			close(s[i].pipe[1]);
			pthread_join(s[i].th, NULL);
		}
		if (write(rep, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
}

static int cmd_fd, rep_fd;

static int ask(const char *line)
{
	int r;

	if (write(cmd_fd, line, strlen(line)) != (ssize_t)strlen(line) ||
	    read(rep_fd, &r, sizeof(r)) != sizeof(r)) {
		fprintf(stderr, "diff-fidelity: the child is gone\n");
		exit(1);
	}
	return r;
}

/* --- observations, each the same function on both trees --- */
static int failures;

static void same_int(const char *what, long real, long fake)
{
	if (real != fake) {
		printf("DIFFERENT %s: real %ld, fake %ld\n", what, real, fake);
		failures++;
	} else {
		printf("same      %s: %ld\n", what, real);
	}
}

static void same_str(const char *what, const char *real, const char *fake)
{
	if (strcmp(real, fake)) {
		printf("DIFFERENT %s: real '%s', fake '%s'\n", what, real, fake);
		failures++;
	} else {
		printf("same      %s: '%s'\n", what, real);
	}
}

static int status_of(const char *root, int n, const char *key)
{
	char path[700], buf[4096];
	int fd, v = -1;
	ssize_t k;

	snprintf(path, sizeof(path), "%s/%d/status", root, n);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	k = read(fd, buf, sizeof(buf));
	close(fd);
	if (k < 0 || rtid__status_field(buf, (size_t)k, key, &v) < 0)
		return -1;
	return v;
}

/* The shape of the Groups: line of n's status: "W words, ends with a space,
 * before Threads:" (what a reader of the line and of what follows relies on). */
static const char *groups_shape(const char *root, int n, char *out, size_t len, int *nwords)
{
	char path[700], buf[16384], *g, *end, *th;
	int fd, words = 0;
	ssize_t k;

	snprintf(path, sizeof(path), "%s/%d/status", root, n);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "no status";
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[k > 0 ? k : 0] = '\0';
	if (!(g = strstr(buf, "\nGroups:\t")) || !(end = strchr(g + 1, '\n')))
		return "no Groups: line";
	th = strstr(buf, "\nThreads:");
	for (char *p = g + 9; p < end; p++)
		words += *p != ' ' && (p[-1] == ' ' || p[-1] == '\t');
	*nwords = words;
	snprintf(out, len, "%d words, %s, %s", words,
		 end[-1] == ' ' ? "ends with a space" : "no space at its end",
		 th && th > g ? "before Threads:" : "not before Threads:");
	return out;
}

/* The real process's supplementary groups, for its copy ("groups N"). */
static int groups_of(int pid)
{
	char shape[96];
	int n = 0;

	groups_shape("/proc", pid, shape, sizeof(shape), &n);
	return n;
}

static bool listed(const char *dir, int n)
{
	char name[16];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	snprintf(name, sizeof(name), "%d", n);
	while (d && (de = readdir(d)))
		found = found || !strcmp(de->d_name, name);
	if (d)
		closedir(d);
	return found;
}

/* One getdents64 call of at most len bytes: tids appended to out. */
static void chunk(int fd, size_t len, char *out, size_t outlen)
{
	char buf[512];
	ssize_t n = getdents64(fd, buf, len);

	for (ssize_t o = 0; o < n;) {
		struct dirent64 *d = (struct dirent64 *)(buf + o);

		if (d->d_name[0] != '.')
			snprintf(out + strlen(out), outlen - strlen(out), " %s", d->d_name);
		o += d->d_reclen;
	}
}

static const char *verdict(const char *root, int pid, const int *tids)
{
	static char s[64];
	struct rtid__matcher m;
	struct rtid__scan r;
	int who = -1;

	rtid__matcher_init(&m, NULL);
	rtid__scan(root, pid, &m, &r);
	rtid__matcher_fini(&m);
	for (int i = 0; i < MAXT; i++)
		if (r.status == RTID__SCAN_FOUND && tids[i] == r.tid)
			who = i;
	snprintf(s, sizeof(s), "status %d, thread #%d, %d candidates", r.status, who, r.candidates);
	return s;
}

/* --- the fake tree, copied from the real process --- */
static char mnt[600], cf[600];
static pid_t fake = -1;

/* The case is the real process as /proc lists it now, in its order: every
 * thread, also those of the runtime (a sanitizer's), with its comm. */
static void mount_copy(int pid, const char *faults)
{
	char text[8192], path[300], comm[32];
	struct dirent *de;
	size_t o = 0;
	DIR *d;

	o += (size_t)snprintf(text, sizeof(text), "title copy\nproves fidelity\n"
			      "answer %d none\nexpect all %d error=-\n%s", pid, pid, faults);
	if (groups_of(pid) > 0)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "groups %d\n", groups_of(pid));
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && o < sizeof(text) - 64) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, de->d_name);
		f = fopen(path, "r");
		if (!f || !fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		if (f)
			fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		o += (size_t)snprintf(text + o, sizeof(text) - o, "task %d %s \"%s\"\n", pid,
				      de->d_name, comm);
	}
	if (d)
		closedir(d);
	write_file(test_dir, "copy.case", text);
	fake = fakeproc_start(env_path("FAKEPROC"), cf, mnt, NULL);
	if (fake < 0)
		exit(1);
}

static void unmount_copy(void)
{
	fakeproc_stop(fake, mnt);
	fake = -1;
}

/* Rename a real thread: its process writes its comm in /proc (only a thread
 * of the same process may). */
static void rename_real(int i, const char *name)
{
	char line[32];

	snprintf(line, sizeof(line), "r %d %s", i, name);
	if (ask(line) != 0) {
		fprintf(stderr, "diff-fidelity: cannot rename thread %d\n", i);
		exit(1);
	}
}

static void verdicts(int pid, int *tids, char (*names)[16], int *n)
{
	char real[64];

	/* One named thread, then two, then none. */
	snprintf(real, sizeof(real), "%s", verdict("/proc", pid, tids));
	mount_copy(pid, "");
	same_str("one named thread: the scan", real, verdict(mnt, pid, tids));
	unmount_copy();
	snprintf(names[*n], 16, "cuda00002000009");
	tids[*n] = ask("c cuda00002000009");
	(*n)++;
	snprintf(real, sizeof(real), "%s", verdict("/proc", pid, tids));
	mount_copy(pid, "");
	same_str("two named threads: the scan", real, verdict(mnt, pid, tids));
	unmount_copy();
	for (int i = 2; i < 4; i++) {
		rename_real(i, "renamed");
		snprintf(names[i], 16, "renamed");
	}
	snprintf(real, sizeof(real), "%s", verdict("/proc", pid, tids));
	mount_copy(pid, "");
	same_str("no named thread: the scan", real, verdict(mnt, pid, tids));
	same_int("status Threads:", status_of("/proc", pid, "Threads"), status_of(mnt, pid, "Threads"));
	{
		char real_g[96], fake_g[96];
		int nr = 0, nf = 0;

		same_str("status Groups:", groups_shape("/proc", pid, real_g, sizeof(real_g), &nr),
			 groups_shape(mnt, pid, fake_g, sizeof(fake_g), &nf));
	}
	same_int("status Tgid: of /proc/TID", status_of("/proc", tids[1], "Tgid"),
		 status_of(mnt, tids[1], "Tgid"));
	same_int("status Pid: of /proc/TID", status_of("/proc", tids[1], "Pid"),
		 status_of(mnt, tids[1], "Pid"));
	same_int("/proc lists the pid", listed("/proc", pid), listed(mnt, pid));
	same_int("/proc lists a tid", listed("/proc", tids[1]), listed(mnt, tids[1]));
	unmount_copy();
}

/* Thread i exits while its comm is open; real first, then the copy. */
static void exit_while_open(int pid, int *tids, char (*names)[16], int n, int i)
{
	char path[700], buf[64], rel[64], faults[128], task[700];
	int fd, re, fe, rl, rt;

	snprintf(rel, sizeof(rel), "%d/task/%d/comm", pid, tids[i]);
	snprintf(faults, sizeof(faults), "fault exit-thread %d %d after-readdir\n", pid, tids[i]);
	mount_copy(pid, faults);
	snprintf(path, sizeof(path), "/proc/%s", rel);
	fd = open(path, O_RDONLY);
	snprintf(buf, sizeof(buf), "x %d", i);
	ask(buf);
	errno = 0;
	re = read(fd, buf, sizeof(buf)) < 0 ? errno : 0;
	close(fd);
	snprintf(task, sizeof(task), "/proc/%d/task", pid);
	rl = listed(task, tids[i]);
	rt = status_of("/proc", pid, "Threads");
	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	fd = open(path, O_RDONLY);
	snprintf(task, sizeof(task), "%s/%d/task", mnt, pid);
	listed(task, 0); /* the copy's thread exits at this listing */
	errno = 0;
	fe = read(fd, buf, sizeof(buf)) < 0 ? errno : 0;
	close(fd);
	same_int("read of a comm opened before its thread exited (errno)", re, fe);
	same_int("the exited thread listed", rl, listed(task, tids[i]));
	same_int("Threads: after the exit", rt, status_of(mnt, pid, "Threads"));
	unmount_copy();
}

/* A walk in chunks of two threads; threads 1 and 2 (2 being where the next
 * chunk starts) exit between the chunks. */
static void chunked_resume(int pid, int *tids, char (*names)[16], int n)
{
	char real[128] = "", fakel[128] = "", path[700], faults[256];
	int fd, fd2;

	for (int i = 0; i < n; i++)
		if (tids[i] < 10000 || tids[i] > 9999999) {
			printf("skip      chunked resume: tids of 5 to 7 digits needed here\n");
			return;
		}
	snprintf(faults, sizeof(faults), "fault readdir-chunk %d 2\n"
		 "fault exit-thread %d %d after-readdir\nfault exit-thread %d %d after-readdir\n",
		 pid, pid, tids[1], pid, tids[2]);
	mount_copy(pid, faults);
	/* Records: "." and ".." 24 bytes, a 5-7 digit tid 32. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	chunk(fd, 24 + 24 + 32 + 32, real, sizeof(real));
	ask("x 1");
	ask("x 2");
	while (strlen(real) < sizeof(real) - 16) {
		size_t before = strlen(real);

		chunk(fd, 64, real, sizeof(real));
		if (strlen(real) == before)
			break;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/%d/task", mnt, pid);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	chunk(fd, 512, fakel, sizeof(fakel));
	fd2 = open(path, O_RDONLY | O_DIRECTORY);
	chunk(fd2, 512, faults, 0); /* a walk from the start: the two exit */
	close(fd2);
	while (strlen(fakel) < sizeof(fakel) - 16) {
		size_t before = strlen(fakel);

		chunk(fd, 512, fakel, sizeof(fakel));
		if (strlen(fakel) == before)
			break;
	}
	close(fd);
	same_str("chunked walk, two threads exiting between chunks", real, fakel);
	unmount_copy();
}

int main(void)
{
	int cmd[2], rep[2], tids[MAXT] = { 0 }, n = 3, st;
	char names[MAXT][16] = { "" }, path[64];
	const char *why = fuse_unusable();
	pid_t pid;
	FILE *f;

	if (why)
		return skip_or_fail("diff-fidelity", why);
	if (pipe(cmd) < 0 || pipe(rep) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		child(cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	cmd_fd = cmd[1];
	rep_fd = rep[0];
	test_dir_setup(NULL);
	snprintf(mnt, sizeof(mnt), "%s/proc", test_dir);
	snprintf(cf, sizeof(cf), "%s/copy.case", test_dir);
	mkdir(mnt, 0755);
	tids[0] = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(names[0], sizeof(names[0]), f))
		return 1;
	fclose(f);
	names[0][strcspn(names[0], "\n")] = '\0';
	snprintf(names[1], 16, "cuda-EvtHandlr");
	snprintf(names[2], 16, "cuda00001400006");
	tids[1] = ask("c cuda-EvtHandlr");
	tids[2] = ask("c cuda00001400006");
	verdicts(pid, tids, names, &n);
	exit_while_open(pid, tids, names, n, 3);
	/* A fresh child for the chunked walk: six threads, none exited. */
	close(cmd_fd);
	waitpid(pid, &st, 0);
	if (pipe(cmd) < 0 || pipe(rep) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		child(cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	cmd_fd = cmd[1];
	rep_fd = rep[0];
	tids[0] = pid;
	for (int i = 1; i < 6; i++) {
		snprintf(names[i], 16, "worker%d", i);
		snprintf(path, sizeof(path), "c worker%d", i);
		tids[i] = ask(path);
	}
	chunked_resume(pid, tids, names, 6);
	close(cmd_fd);
	waitpid(pid, &st, 0);
	test_dir_teardown(NULL);
	printf("%d difference(s)\n", failures);
	return failures ? 1 : 0;
}
