/* Part 4: loading attestations of growing size. Time per entry stays flat
 * when loading is O(n log n); it grew with n when each version was looked up
 * in a list (quadratic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "rtid.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An attestation of n versions, each with a legacy record and a report of 4
 * processes, written as text (building it through the API would normalize
 * after every addition). */
static int make(const char *path, int n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\"format\": 2, \"reports\": [");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"id\": \"report-%d\", \"driver_version\": \"%d.%d.1\", \"pids\": [",
			i ? "," : "", i, 500 + i / 1000, i % 1000);
		for (int k = 0; k < 4; k++)
			fprintf(f, "%s{\"pid\": %d, \"start\": %d, \"boot_id\": \"b\", "
				"\"verdict\": \"agree\"}", k ? "," : "", 100 + k, i);
		fprintf(f, "]}");
	}
	fprintf(f, "], \"legacy\": {");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\"%d.%d.1\": {\"agree\": 1}", i ? "," : "", 500 + i / 1000, i % 1000);
	fprintf(f, "}}\n");
	return fclose(f) == 0 ? 0 : -1;
}

void bench_attest(void)
{
	static const int sizes[] = { 1000, 4000, 16000 };
	char dir[] = "/tmp/rtid-bench-att-XXXXXX", path[64];
	double base = 0;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/a.json", dir);
	printf("\n## Loading an attestation (versions, each with a report of 4 processes)\n\n");
	printf("| versions | load ms (median of 5) | us per version | vs smallest |\n"
	       "| ---: | ---: | ---: | ---: |\n");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		double t[5];

		if (make(path, sizes[s]) < 0) {
			fprintf(stderr, "rtid-bench: cannot write %s\n", path);
			break;
		}
		for (int k = 0; k < 5; k++) {
			struct rtid_attestation *a = NULL;
			double t0 = now();

			if (rtid_attest_load(path, &a, NULL, 0) < 0 || rtid_attest_count(a) != (size_t)sizes[s])
				fprintf(stderr, "rtid-bench: %s did not load whole\n", path);
			t[k] = now() - t0;
			rtid_attest_free(a);
		}
		double per = median(t, 5) * 1e6 / sizes[s];

		if (s == 0)
			base = per;
		printf("| %d | %.1f | %.2f | %.2fx |\n", sizes[s], median(t, 5) * 1e3, per,
		       per / base);
	}
	unlink(path);
	rmdir(dir);
}
