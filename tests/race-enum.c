/* Races enumerated, the fail-nth idea applied to time: for small processes
 * (3 to 6 threads, the restore thread among them) every single event (a
 * rename to or from a matching name, an exit, a matching thread appearing)
 * at every comm-read position, after the first readdir and after the walk,
 * then every pair of events for the smaller shapes, resolved in every mode
 * against fakeproc. Each outcome is right (the driver's tid), fallback (the
 * scan declined, or a cross-check caught it), error, or wrong. A wrong scan
 * answer is allowed only in the documented blind spot: a stable wrong single
 * match, where every thread that bore the driver's name the whole time was
 * renamed or exited by the schedule (only the driver can tell). Those are
 * counted apart; a wrong answer while a named thread stayed alive and named
 * throughout (the walk missed it) fails the run.
 *
 * Under valgrind or the sanitizers (instrumented()) only the three 3-thread
 * shapes run, single events in every mode and every fourth pair: memcheck makes
 * each resolve fifty times slower and ASan about ten, and the full enumeration
 * would take most of an hour.
 *
 * Environment: FAKEPROC, MOCK_TOOL (meson sets them). Exit 77 without FUSE. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakeproc-run.h"
#include "helpers.h"
#include "rtid.h"

#define PID 4000
#define RESTORE (PID + 2) /* the restore thread: python3, cuda-EvtHandlr, it, workers */
#define NEWTID (PID + 50) /* a thread that appears */
#define VERSION "580.159.03"

struct tally {
	long schedules, right, fallback, error, wrong, blind;
};

static char mnt[600], casefile[600];
static bool chunked;   /* the shape's readdir returns 2 threads per call */
static bool two_named; /* PID + 1 is named like the driver's thread too */

static void control(const char *text)
{
	char path[700];
	int fd;

	snprintf(path, sizeof(path), "%s/rtid-control", mnt);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		fprintf(stderr, "race-enum: control '%s': %s\n", text, strerror(errno));
		exit(1);
	}
	close(fd);
}

/* Whether a thread other than tid bore a matching name and stayed alive for
 * the whole scan: one of the shape's named threads that no event touched. A
 * scan that answered tid missed it: a real bug, not the blind spot. */
static bool missed_named(const char *faults, int tid)
{
	int named[2] = { RESTORE, two_named ? PID + 1 : 0 };

	for (int i = 0; i < 2; i++) {
		char key[32];

		snprintf(key, sizeof(key), " %d %d ", PID, named[i]);
		if (named[i] && named[i] != tid && !strstr(faults, key))
			return true;
	}
	return false;
}

/* One schedule (fault lines) in one mode. */
static void run(const char *faults, enum rtid_mode mode, const struct rtid_attestation *att,
		struct tally *t)
{
	struct rtid_config cfg = { RTID_CONFIG_INIT, .mode = mode, .proc_root = mnt, .tool = env_path("MOCK_TOOL"),
				   .attestation = att, .timeout_s = 10 };
	struct rtid_ctx *ctx = NULL;
	struct rtid_result r;
	char text[2048];
	snprintf(text, sizeof(text), "clear\n%s%sreset\n", chunked ? "fault readdir-chunk 4000 2\n" : "",
		 faults);
	control(text);
	if (rtid_ctx_new(&cfg, &ctx) < 0 || rtid_resolve(ctx, PID, &r) < 0)
		exit(1);
	rtid_ctx_free(ctx);
	control("clear\n"); /* what has fired stays; nothing more fires */
	t->schedules++;
	if (r.error != RTID_OK)
		t->error++;
	else if (r.source != RTID_SRC_SCAN && (r.fallback != RTID_FB_NONE ||
						r.crosscheck == RTID_XC_MISMATCH))
		t->fallback++; /* the scan declined, or a cross-check caught it */
	else if (r.tid == RESTORE)
		t->right++;
	else if (r.source != RTID_SRC_SCAN)
		t->wrong++; /* the driver's answer is RESTORE: cannot happen */
	else if (!missed_named(faults, r.tid))
		t->blind++; /* a stable single match, the named ones renamed or gone */
	else {
		t->wrong++;
		printf("WRONG %s: scan answered %d; schedule:\n%s", rtid_mode_name(mode), r.tid,
		       faults);
	}
}

/* Every single event of a shape with n threads, one per line of out. */
static size_t events(int n, char (*out)[128], size_t max)
{
	static const char *const when[] = { "after-readdir", "after-walk" };
	size_t k = 0;

	for (int pos = 1; pos <= n + 2; pos++) {
		char at[32];

		snprintf(at, sizeof(at), "at-read %d", pos);
		for (int i = 0; i < n && k + 4 < max; i++) {
			int tid = PID + i;

			if (tid == RESTORE && pos <= 3)
				snprintf(out[k++], 128, "fault rename %d %d renamed %s\n", PID, tid, at);
			else if (pos <= 3)
				snprintf(out[k++], 128, "fault rename %d %d cuda0000f00000f %s\n", PID,
					 tid, at);
			snprintf(out[k++], 128, "fault exit-thread %d %d %s\n", PID, tid, at);
		}
		snprintf(out[k++], 128, "fault appear %d %d cuda0000e00000e %s\n", PID, NEWTID, at);
	}
	for (int w = 0; w < 2; w++)
		for (int i = 0; i < n && k + 2 < max; i++) {
			int tid = PID + i;

			snprintf(out[k++], 128, "fault rename %d %d %s %s\n", PID, tid,
				 tid == RESTORE ? "renamed" : "cuda0000f00000f", when[w]);
			snprintf(out[k++], 128, "fault exit-thread %d %d %s\n", PID, tid, when[w]);
		}
	return k;
}

/* n threads; two: a second thread named like the driver's at PID + 1 (the
 * right verdict is then a fallback, and a walk that misses the restore
 * thread answers the other); chunk: readdir returns 2 threads per call. */
static void shape_case(int n, bool two, bool chunk)
{
	char text[1024];
	size_t o = 0;

	o += (size_t)snprintf(text + o, sizeof(text) - o,
			      "title races\nproves enumeration\ndriver " VERSION "\n"
			      "answer %d tid %d\nexpect all * error=-\n%s", PID, RESTORE,
			      chunk ? "fault readdir-chunk 4000 2\n" : "");
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "task %d %d %s\n", PID, PID + i,
				      i == 0 ? "python3" : i == 1 ? (two ? "cuda00002000009"
								       : "cuda-EvtHandlr")
						   : PID + i == RESTORE ? "cuda00001400006" : "worker");
	write_file(test_dir, "shape.case", text);
}

static void print_tally(const char *what, const struct tally *t)
{
	printf("%-26s schedules %5ld  right %5ld  fallback %5ld  error %ld  wrong %ld"
	       "  blind-spot %ld\n", what, t->schedules, t->right, t->fallback, t->error, t->wrong,
	       t->blind);
}

int main(void)
{
	static const enum rtid_mode modes[] = { RTID_MODE_SCAN, RTID_MODE_CROSSCHECK,
						RTID_MODE_CANARY, RTID_MODE_DRIVER };
	struct tally single = { 0 }, pairs = { 0 };
	struct rtid_attestation *att = NULL;
	const char *why = fuse_unusable();
	char (*ev)[128] = calloc(256, 128), pair[256];
	bool sample = instrumented();
	int st, shapes = sample ? 3 : 4 * 3;

	if (why)
		return skip_or_fail("race-enum", why);
	test_dir_setup(NULL);
	snprintf(mnt, sizeof(mnt), "%s/proc", test_dir);
	snprintf(casefile, sizeof(casefile), "%s/shape.case", test_dir);
	mkdir(mnt, 0755);
	setenv("RTID_CASE", casefile, 1);
	rtid_attest_new(&att);
	rtid_attest_add(att, VERSION, 10, 0, 0, false);
	for (int s = 0; s < shapes; s++) {
		int n = 3 + s / 3;
		bool two = s % 3 != 0;
		size_t k;
		pid_t d;

		chunked = s % 3 == 2;
		two_named = two;
		shape_case(n, two, chunked);
		d = fakeproc_start(env_path("FAKEPROC"), casefile, mnt, &st);
		if (d < 0)
			return 1;
		k = events(n, ev, 256);
		for (size_t i = 0; i < k; i++)
			for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
				run(ev[i], modes[m], att, &single);
		/* Pairs in scan mode, where a wrong answer could come from. */
		for (size_t i = 0; n <= 4 && !chunked && i < k; i++)
			for (size_t j = i + 1; j < k; j++) {
				if (sample && (i + j) % 4 != 0)
					continue;
				snprintf(pair, sizeof(pair), "%s%s", ev[i], ev[j]);
				run(pair, RTID_MODE_SCAN, att, &pairs);
			}
		fakeproc_stop(d, mnt);
	}
	printf("shapes: %s; one named thread, two, two with readdir in chunks of 2\n",
	       sample ? "3 threads, every fourth pair (under valgrind)" : "3-6 threads");
	print_tally("single events, all modes", &single);
	print_tally("pairs (3-4 threads), scan", &pairs);
	rtid_attest_free(att);
	free(ev);
	test_dir_teardown(NULL);
	return single.wrong + pairs.wrong == 0 ? 0 : 1;
}
