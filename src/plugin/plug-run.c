/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Actions side by side: the jobs of one hook loop handed to rtid serve on at
 * most K threads, each call of the loop then waiting for its own. The
 * threads only talk to the daemon (every ptrace operation, compel's wait and
 * any spawn of the tool stay on CRIU's thread, in the hooks), and run with
 * every signal blocked, so that CRIU's SIGCHLD and SIGALRM still come to
 * CRIU's thread. A job the daemon could not start ends as ANS_TO_TOOL: its
 * own hook call runs the rest through the tool. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin.h"

#define K_MAX 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct plug_job *jobs;
static size_t njobs, next;
static pthread_t threads[K_MAX];
static unsigned nthreads;

unsigned plug_run_parallel(void)
{
	const char *v = getenv("RTID_PLUGIN_PARALLEL");
	unsigned k = 0;

	for (const char *p = v; p && *p >= '0' && *p <= '9' && k <= K_MAX; p++)
		k = k * 10 + (unsigned)(*p - '0');
	if (!v || !*v || v[strspn(v, "0123456789")] || k < 1 || k > K_MAX)
		return PLUG_PARALLEL_DEFAULT;
	return k;
}

/* One job: its ops in order, each once; a failure ends it. */
static void run(struct plug_job *j)
{
	while (j->done < j->nops) {
		int v;
		enum plug_ans a = plug_serve_ask(j->ops[j->done], j->pid, 0, &v, j->msg,
						 sizeof(j->msg));

		if (a != ANS_VALUE) {
			j->end = a;
			return;
		}
		j->done++;
	}
	j->end = ANS_VALUE;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (next < njobs) {
		struct plug_job *j = &jobs[next++];

		if (j->state != 1)
			continue;
		j->state = 2;
		pthread_mutex_unlock(&lock);
		run(j);
		pthread_mutex_lock(&lock);
		j->state = 3;
		pthread_cond_broadcast(&changed);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int plug_run_start(struct plug_job *v, size_t n, unsigned k)
{
	sigset_t all, old;
	int e = 0;

	plug_run_settle(); /* one set at a time */
	jobs = v, njobs = n, next = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (nthreads = 0; nthreads < k && nthreads < n; nthreads++)
		if ((e = pthread_create(&threads[nthreads], NULL, worker, NULL)))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (nthreads)
		return 0;
	worker(NULL); /* none started: they run here, one by one */
	return -e;
}

void plug_run_wait(struct plug_job *j)
{
	pthread_mutex_lock(&lock);
	while (j->state == 1 || j->state == 2)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

void plug_run_settle(void)
{
	/* Each joined once: none is left counted (jobs, njobs and next:
	 * plug_run_start sets them before any thread). */
	while (nthreads)
		pthread_join(threads[--nthreads], NULL);
}
