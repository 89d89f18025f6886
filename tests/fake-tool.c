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
 */
#include <signal.h>
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

static const char *per_pid(const char *prefix, int argc, char **argv)
{
	char name[64];

	if (argc < 4 || strcmp(argv[2], "--pid") != 0)
		return NULL;
	snprintf(name, sizeof(name), "%s%s", prefix, argv[3]);
	return getenv(name);
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
	if (err)
		fputs(err, stderr);
	if (out)
		fputs(out, stdout);
	fflush(NULL);
	if (hang && strcmp(hang, "2") == 0 && fork() == 0)
		write_pid();
	if (hang && *hang)
		for (;;)
			pause();
	if (sig)
		raise((int)strtol(sig, NULL, 10));
	return code ? (int)strtol(code, NULL, 10) : 0;
}
