/* A test double of cuda-checkpoint, driven by the environment:
 *   FAKE_STDOUT   text to print on stdout (default none)
 *   FAKE_STDERR   text to print on stderr
 *   FAKE_EXIT     exit status (default 0)
 *   FAKE_SIGNAL   die by this signal instead
 *   FAKE_HANG     1: sleep forever (after printing); 2: also fork a child that
 *                 holds the output pipes, to prove the whole group is killed
 *   FAKE_LOG      append "argv..." as one line per call, and our pid
 *   FAKE_PIDFILE  write our pid here (hang tests check it is gone)
 *   FAKE_TID_<P>  for --pid P: print this tid (overrides FAKE_STDOUT, exit 0)
 *   FAKE_EXIT_<P> for --pid P: exit with this status (overrides FAKE_EXIT)
 *   FAKE_STDERR_BYTES  write this many bytes to stderr first (a chatty tool)
 *   FAKE_READY    a FIFO: write our pid (and a hang child's) to it once set up
 *   FAKE_ESCAPE   1: before exiting, start a grandchild that leaves the group
 *                 (setsid), keeps stdout and stderr open and lives on; with
 *                 FAKE_HANG=3 the tool hangs too
 *   FAKE_SLOW_ONCE  a path: the first call (the path does not exist yet)
 *                 creates it and sleeps FAKE_SLOW_S seconds before answering
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void log_call(int argc, char **argv)
{
	const char *path = getenv("FAKE_LOG");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	for (int i = 1; i < argc; i++)
		fprintf(f, "%s%s", i > 1 ? " " : "", argv[i]);
	fputc('\n', f);
	fclose(f);
}

static void write_pid(void)
{
	const char *path = getenv("FAKE_PIDFILE");
	FILE *f;

	if (path && (f = fopen(path, "a"))) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
}

static void ready(void)
{
	const char *path = getenv("FAKE_READY");
	char line[32];
	int fd, n;

	if (!path || (fd = open(path, O_WRONLY)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

static void chatter(void)
{
	const char *bytes = getenv("FAKE_STDERR_BYTES");
	static char buf[65536];
	long left = bytes ? strtol(bytes, NULL, 10) : 0;

	memset(buf, 'w', sizeof(buf));
	while (left > 0) {
		ssize_t n = write(2, buf, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("fake-tool: write error");
			exit(70);
		}
		left -= n;
	}
}

/* A descendant outside the tool's group that holds its output open. */
static void escape(void)
{
	int p[2];
	char c;

	if (pipe(p) < 0)
		exit(71);
	if (fork() != 0) {
		/* Go on only once it has left the group and reported itself. */
		close(p[1]);
		(void)!read(p[0], &c, 1);
		close(p[0]);
		return;
	}
	close(p[0]);
	setsid();
	write_pid();
	ready();
	close(p[1]);
	for (;;)
		pause();
}

static void slow_once(void)
{
	const char *path = getenv("FAKE_SLOW_ONCE"), *secs = getenv("FAKE_SLOW_S");
	struct timespec ts = { secs ? strtol(secs, NULL, 10) : 1, 0 };
	int fd;

	if (!path || (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
		return;
	close(fd);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *per_pid(const char *prefix, int argc, char **argv)
{
	char name[64];

	if (argc < 4 || strcmp(argv[2], "--pid") != 0)
		return NULL;
	snprintf(name, sizeof(name), "%s%s", prefix, argv[3]);
	return getenv(name);
}

/* FAKE_REPLACE_FILE gets FAKE_REPLACE_TEXT while the query runs: the process
 * asked about exits and its pid is reused (a new start time) meanwhile. */
static void replace_file(void)
{
	const char *path = getenv("FAKE_REPLACE_FILE"), *text = getenv("FAKE_REPLACE_TEXT");
	FILE *f;

	if (!path || !text || !(f = fopen(path, "w")))
		return;
	fputs(text, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *out = getenv("FAKE_STDOUT"), *err = getenv("FAKE_STDERR");
	const char *code = getenv("FAKE_EXIT"), *sig = getenv("FAKE_SIGNAL");
	const char *hang = getenv("FAKE_HANG");
	const char *tid = per_pid("FAKE_TID_", argc, argv);
	const char *pcode = per_pid("FAKE_EXIT_", argc, argv);
	char line[32];

	if (tid) {
		snprintf(line, sizeof(line), "%s\n", tid);
		out = line;
		code = "0";
	}
	if (pcode) {
		out = NULL;
		code = pcode;
	}

	log_call(argc, argv);
	write_pid();
	replace_file();
	slow_once();
	chatter();
	if (err)
		fputs(err, stderr);
	if (out)
		fputs(out, stdout);
	fflush(NULL);
	if (getenv("FAKE_ESCAPE"))
		escape();
	if (hang && strcmp(hang, "2") == 0 && fork() == 0)
		write_pid();
	ready();
	if (hang && *hang)
		for (;;)
			pause();
	if (sig)
		raise((int)strtol(sig, NULL, 10));
	return code ? (int)strtol(code, NULL, 10) : 0;
}
