/* A stand-in for a GPU process, for real CRIU dumps: a few threads that keep
 * waking up (so that a thread left stopped after restore shows), one of them
 * named like the driver's restore thread.
 *
 *   task [--tree] [--cuda-children N] [--plain-children N] [--plain] [--name COMM]
 *
 * It leaves its session (CRIU dumps a session leader with --shell-job), keeps
 * only fds 0-2 (to /dev/null), and reports on fd 3 one line per process,
 * "PID RESTORE_TID TID...", then closes fd 3: the reader's EOF is the
 * readiness signal. --tree: also two children, one like it and one with no
 * restore thread (its line names 0 as RESTORE_TID). --cuda-children N: N
 * children like it (before --tree's); --plain-children N: N children with no
 * restore thread (after them). --plain: the root has none either. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 2

struct ready {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int n;
	pid_t tids[WORKERS + 1];
};

static struct ready ready = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, { 0 } };
static const char *restore_name = "cuda00001400006";

static __attribute__((noreturn)) void tick(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	for (;;)
		nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	if (arg)
		prctl(PR_SET_NAME, (unsigned long)restore_name, 0, 0, 0);
	pthread_mutex_lock(&ready.lock);
	ready.tids[ready.n++] = (pid_t)syscall(SYS_gettid);
	pthread_cond_signal(&ready.cond);
	pthread_mutex_unlock(&ready.lock);
	tick();
}

/* Start the threads and write this process's line to fd. */
static void run(int fd, int cuda)
{
	char line[256];
	int len;

	for (int i = 0; i < WORKERS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, cuda && i == 0 ? (void *)1 : NULL))
			exit(1);
	}
	pthread_mutex_lock(&ready.lock);
	while (ready.n < WORKERS)
		pthread_cond_wait(&ready.cond, &ready.lock);
	pthread_mutex_unlock(&ready.lock);
	/* tids[0] is whichever started first; the named one is found by name. */
	len = snprintf(line, sizeof(line), "%d", (int)getpid());
	if (cuda) {
		char path[64], comm[32] = "";
		int rt = 0;

		for (int i = 0; i < WORKERS && !rt; i++) {
			FILE *f;

			snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)ready.tids[i]);
			if ((f = fopen(path, "r")) && fgets(comm, sizeof(comm), f) &&
			    !strncmp(comm, restore_name, strlen(restore_name)))
				rt = ready.tids[i];
			if (f)
				fclose(f);
		}
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %d", rt);
	} else {
		len += snprintf(line + len, sizeof(line) - (size_t)len, " 0");
	}
	len += snprintf(line + len, sizeof(line) - (size_t)len, " %d", (int)getpid());
	for (int i = 0; i < WORKERS; i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %d", (int)ready.tids[i]);
	line[len++] = '\n';
	if (write(fd, line, (size_t)len) != len)
		exit(1);
	close(fd);
}

/* A child: its own line on a dup of fd, then the same life as the parent. */
static pid_t child(int fd, int cuda)
{
	pid_t p = fork();

	if (p == 0) {
		run(fd, cuda);
		tick();
	}
	return p;
}

int main(int argc, char **argv)
{
	int fd = 3, tree = 0, cuda_children = 0, plain_children = 0, root_cuda = 1, null;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tree"))
			tree = 1;
		else if (!strcmp(argv[i], "--cuda-children") && i + 1 < argc)
			cuda_children = atoi(argv[++i]); /* the test's own argument */
		else if (!strcmp(argv[i], "--plain-children") && i + 1 < argc)
			plain_children = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--plain"))
			root_cuda = 0;
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			restore_name = argv[++i];
		else
			return 2;
	}
	if (fcntl(fd, F_GETFD) < 0) {
		fprintf(stderr, "task: fd 3 must be open\n");
		return 2;
	}
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		return 1;
	for (int i = 0; i < 3; i++)
		dup2(null, i);
	if (null > 3)
		close(null);
	close_range(4, ~0U, 0);
	for (int i = 0; i < cuda_children; i++)
		if (child(fd, 1) < 0)
			return 1;
	for (int i = 0; i < plain_children; i++)
		if (child(fd, 0) < 0)
			return 1;
	if (tree && (child(fd, 1) < 0 || child(fd, 0) < 0))
		return 1;
	run(fd, root_cuda);
	tick();
}
