/* The scan against the real kernel's /proc while threads exit mid-walk.
 *
 * A child process holds a few thousand idle threads, then, for each trial,
 * creates a batch of threads that will exit and after them (later in the
 * kernel's thread list) a thread named like the driver's restore thread;
 * with two named, the other comes before the batch. Those named threads stay alive and named for the whole trial, so
 * the only right verdicts are: with one named thread, that thread (or a
 * fallback); with two, never a single tid. On "go" the batch exits at random
 * moments while this process scans the child. A scan that names any other
 * thread is a wrong answer and fails the run.
 *
 * Usage: stress-walk [TRIALS [IDLE [EXITING]]]; prints the tally. Exit 0 when
 * there was no wrong answer, no missed named thread, and the quiet trials (no exits) were answered by
 * the scan; 1 otherwise. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/parse.h"
#include "core/core.h"

#define NAME_A "cuda00001400006"
#define NAME_B "cuda00002000009"

struct trial {
	int named;   /* 1 or 2 named threads */
	int exiting; /* threads that exit during the scan */
	unsigned seed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int generation; /* bumped on "go" (exiters leave) and on "end" (named leave) */
static int ready_count;
static pid_t named_tid[2];

struct job {
	int wait_for;     /* generation to wait for */
	unsigned spin_us; /* how long it lingers after it */
	const char *name; /* NULL: an exiter or an idle thread */
	int slot;
};

/* The exit moment of a thread: a workload's timing, not a synchronisation. */
static void linger(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *thread_main(void *arg)
{
	struct job *j = arg;

	if (j->name) {
		prctl(PR_SET_NAME, j->name);
		named_tid[j->slot] = (pid_t)syscall(SYS_gettid);
	}
	pthread_mutex_lock(&lock);
	ready_count++;
	pthread_cond_broadcast(&cond);
	while (generation < j->wait_for)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	linger(j->spin_us);
	free(j);
	return NULL;
}

static pthread_t start(int wait_for, unsigned spin_us, const char *name, int slot)
{
	struct job *j = malloc(sizeof(*j));
	pthread_attr_t a;
	pthread_t t;

	if (!j)
		abort();
	*j = (struct job){ wait_for, spin_us, name, slot };
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	if (pthread_create(&t, &a, thread_main, j) != 0)
		abort();
	pthread_attr_destroy(&a);
	return t;
}

static void wait_ready(int n)
{
	pthread_mutex_lock(&lock);
	while (ready_count < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void bump(void)
{
	pthread_mutex_lock(&lock);
	generation++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static int read_full(int fd, void *buf, size_t len)
{
	for (size_t o = 0; o < len;) {
		ssize_t n = read(fd, (char *)buf + o, len - o);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		o += (size_t)n;
	}
	return 0;
}

/* The child: idle threads, then per trial exiters and named threads at the
 * tail of the thread list; "go" releases the exiters, "end" the named ones. */
static void child(int cmd, int rep, int idle)
{
	struct trial tr;
	pthread_t *ex = NULL;

	for (int i = 0; i < idle; i++)
		pthread_detach(start(1 << 30, 0, NULL, 0));
	wait_ready(idle);
	while (read_full(cmd, &tr, sizeof(tr)) == 0) {
		int base = ready_count, go = generation + 1;
		pthread_t nt[2];
		char c;

		ex = realloc(ex, (size_t)(tr.exiting + 1) * sizeof(*ex));
		if (!ex)
			abort();
		srand(tr.seed);
		/* With two, the first comes before the exiters: a walk that skips
		 * the second sees one match, the wrong answer. */
		if (tr.named == 2)
			nt[1] = start(go + 1, 0, NAME_B, 1);
		for (int i = 0; i < tr.exiting; i++)
			ex[i] = start(go, (unsigned)rand() % 4000, NULL, 0);
		nt[0] = start(go + 1, 0, NAME_A, 0);
		wait_ready(base + tr.exiting + tr.named);
		if (write(rep, named_tid, sizeof(named_tid)) != sizeof(named_tid) ||
		    read_full(cmd, &c, 1) < 0)
			_exit(1);
		bump(); /* go: the exiters leave while the parent scans */
		if (read_full(cmd, &c, 1) < 0)
			_exit(1);
		bump(); /* end: the named threads leave too */
		for (int i = 0; i < tr.exiting; i++)
			pthread_join(ex[i], NULL);
		for (int i = 0; i < tr.named; i++)
			pthread_join(nt[i], NULL);
		pthread_mutex_lock(&lock);
		ready_count -= tr.exiting + tr.named;
		pthread_mutex_unlock(&lock);
		if (write(rep, "d", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

struct tally {
	long trials, right, multiple, unstable, zero, error, wrong;
};

static void classify(const struct rtid__scan *s, const struct trial *tr, const pid_t *tids,
		     struct tally *t)
{
	t->trials++;
	switch (s->status) {
	case RTID__SCAN_FOUND:
		if (tr->named == 1 && s->tid == tids[0]) {
			t->right++;
		} else {
			t->wrong++;
			fprintf(stderr, "WRONG: scan answered %d (named: %d %d, %d exiting)\n", s->tid,
				tids[0], tr->named > 1 ? tids[1] : 0, tr->exiting);
		}
		break;
	case RTID__SCAN_MULTIPLE:
		if (tr->named == 2)
			t->multiple++;
		else
			t->wrong++; /* cannot happen with one named thread: a bug */
		break;
	case RTID__SCAN_UNSTABLE:
		t->unstable++;
		break;
	case RTID__SCAN_ZERO:
		t->zero++; /* a named thread alive throughout was missed */
		fprintf(stderr, "MISSED: scan saw no match (%d named, %d exiting)\n", tr->named,
			tr->exiting);
		break;
	default:
		t->error++;
	}
}

static void print_tally(const char *what, const struct tally *t)
{
	printf("%-28s trials %5ld  right %5ld  multiple %5ld  unstable %5ld  zero %ld  error %ld"
	       "  WRONG %ld\n", what, t->trials, t->right, t->multiple, t->unstable, t->zero,
	       t->error, t->wrong);
}

static int parse_arg(int argc, char **argv, int i, int def)
{
	int v;

	if (argc <= i)
		return def;
	if (rtid__parse_pid(argv[i], &v) < 0) {
		fprintf(stderr, "stress-walk: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int trials = parse_arg(argc, argv, 1, 20), idle = parse_arg(argc, argv, 2, 100);
	int exiting = parse_arg(argc, argv, 3, 1500), cmd[2], rep[2], status;
	struct tally busy[2] = { { 0 } }, quiet = { 0 };
	struct rtid__matcher m;
	pid_t pid;

	if (getenv("RTID_UNDER_VALGRIND")) {
		/* Its point is the kernel's timing with 1600 live threads; valgrind
		 * runs one thread at a time and stops at 500. The walk itself runs
		 * under memcheck in test-scan. */
		puts("stress-walk: not under valgrind (one thread at a time, 500 at most)");
		return 77;
	}
	if (pipe(cmd) < 0 || pipe(rep) < 0 || rtid__matcher_init(&m, NULL) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(cmd[1]);
		close(rep[0]);
		child(cmd[0], rep[1], idle);
	}
	close(cmd[0]);
	close(rep[1]);
	for (int i = 0; i < trials; i++) {
		/* Every fifth trial is quiet: one named thread, no exits. */
		struct trial tr = { i % 5 == 4 ? 1 : 1 + i % 2, i % 5 == 4 ? 0 : exiting,
				    (unsigned)i * 2654435761u };
		struct tally *t = tr.exiting == 0 ? &quiet : &busy[tr.named - 1];
		struct rtid__scan s;
		pid_t tids[2];
		char c = 'g';

		if (write(cmd[1], &tr, sizeof(tr)) != sizeof(tr) ||
		    read_full(rep[0], tids, sizeof(tids)) < 0 || write(cmd[1], &c, 1) != 1)
			return 1;
		rtid__scan("/proc", pid, &m, &s);
		if (write(cmd[1], &c, 1) != 1 || read_full(rep[0], &c, 1) < 0)
			return 1;
		classify(&s, &tr, tids, t);
	}
	close(cmd[1]);
	waitpid(pid, &status, 0);
	rtid__matcher_fini(&m);
	printf("%d idle threads, %d exiting during the walk\n", idle, exiting);
	print_tally("one named, exiting", &busy[0]);
	print_tally("two named, exiting", &busy[1]);
	print_tally("one named, quiet", &quiet);
	printf("(zero: the walk missed a named thread that was alive throughout)\n");
	if (quiet.right != quiet.trials)
		fprintf(stderr, "a quiet process was not answered by the scan\n");
	return busy[0].wrong + busy[1].wrong + quiet.wrong + busy[0].zero + busy[1].zero +
				       quiet.zero == 0 && quiet.right == quiet.trials
		       ? 0 : 1;
}
