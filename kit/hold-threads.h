/* The threads and data of a holder process, shared by kit-hold (no GPU: the
 * kit's test) and gpu-hold (a real CUDA process, built with nvcc on the GPU
 * machine): parked threads that rename themselves, optionally one thread
 * that keeps starting short-lived ones (churn, for a scan racing them), and
 * a checksum of the process's data printed on SIGUSR1 ("sum HEX", or "sum
 * failed"), so that a checkpoint and restore can be checked to have kept it.
 * The data's pattern and its checksum are the same functions in both (on
 * the device in gpu-hold), so the kit's test of kit-hold tests gpu-hold's
 * checksum too. C, C++ and CUDA alike. */
#ifndef RTID_KIT_HOLD_THREADS_H
#define RTID_KIT_HOLD_THREADS_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifdef __CUDACC__
#define HOLD_HD __host__ __device__
#else
#define HOLD_HD
#endif

/* One 64-bit word of the checksum: the word mixed with its index (the
 * splitmix64 finaliser), so that any change of any word, or two words
 * swapped, changes the sum. The sum of these is independent of order: a
 * device computes it with atomic adds. */
static HOLD_HD unsigned long long hold_mix(unsigned long long x, unsigned long long i)
{
	x ^= (i + 1) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The data: word i of a holder's buffer (no two alike, none zero in
 * practice). */
static HOLD_HD unsigned long long hold_pattern(unsigned long long i)
{
	return hold_mix(i, 0x6b6974ull);
}

/* The checksum of n words on the host (kit-hold; the self test). */
static inline unsigned long long hold_sum_host(const unsigned long long *p, size_t n)
{
	unsigned long long s = 0;

	for (size_t i = 0; i < n; i++)
		s += hold_mix(p[i], i);
	return s;
}

struct hold_opts {
	int threads;      /* parked threads, each renaming itself once started (one at least with a name) */
	int churn;        /* one more thread that starts and ends others all the time */
	int keep;         /* outlives the kit's shell (CRIU restores it elsewhere) */
	const char *name; /* a parked thread takes this name (a restore-thread stand-in) */
};

/* --threads N, --churn, --keep, --name NAME; anything else is refused. */
static int hold_parse(int argc, char **argv, struct hold_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			o->threads = (int)strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			o->name = argv[++i];
		else if (!strcmp(argv[i], "--churn"))
			o->churn = 1;
		else if (!strcmp(argv[i], "--keep"))
			o->keep = 1;
		else
			return -1;
	}
	return o->threads < 0 || o->threads > 512 ? -1 : 0;
}

static void *hold_parked(void *arg)
{
	char name[16];

	/* Started as kit-new, then renamed, as a worker pool names its threads. */
	snprintf(name, sizeof(name), "%s", arg ? (const char *)arg : "kit-worker");
	prctl(PR_SET_NAME, name, 0, 0, 0);
	for (;;)
		pause();
	return NULL;
}

static void *hold_short(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "kit-short", 0, 0, 0);
	return NULL;
}

static void *hold_churn(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	prctl(PR_SET_NAME, "kit-churn", 0, 0, 0);
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, hold_short, NULL) == 0)
			pthread_join(t, NULL);
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/* SIGUSR1 and SIGTERM blocked in the calling thread and every thread it
 * starts from now on, also those CUDA starts (call it first thing): only
 * hold_loop's sigwait takes them, never the default action elsewhere. */
static void hold_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Start the threads (SIGUSR1 blocked in all of them: only hold_loop takes
 * it). Unless --keep, the holder dies with the kit's shell, also when that
 * is killed with SIGKILL and its cleanup never runs: a holder left behind
 * keeps GPU memory. */
static int hold_start(const struct hold_opts *o)
{
	pthread_t t;

	if (!o->keep && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	hold_block_signals();
	for (int i = 0; i < o->threads || (i == 0 && o->name); i++)
		if (pthread_create(&t, NULL, hold_parked, i == 0 && o->name ? (void *)o->name : NULL))
			return -1;
	if (o->churn && pthread_create(&t, NULL, hold_churn, NULL))
		return -1;
	return 0;
}

/* Print the pid, then a checksum for each SIGUSR1 (sum returns 0 and the
 * checksum, or < 0 when it could not be taken), until SIGTERM. */
static void hold_loop(int (*sum)(unsigned long long *))
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	while (sigwait(&set, &sig) == 0 && sig == SIGUSR1) {
		unsigned long long v;

		if (sum(&v) == 0)
			printf("sum %llx\n", v);
		else
			printf("sum failed\n");
		fflush(stdout);
	}
}

#endif
