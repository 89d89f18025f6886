/* kit-hold: an ordinary process standing in for a CUDA process where there
 * is no GPU (the kit's own test): a buffer instead of device memory, the
 * threads of hold-threads.h, and with --name a thread named as the driver
 * names its restore thread, which the mock driver (RTID_MOCK_BY_NAME) takes
 * for it. Prints its pid, then "sum HEX" on each SIGUSR1.
 *
 *   kit-hold --selftest   checks the holders' checksum itself: every single
 *                         changed word, two swapped words and a zeroed
 *                         buffer change it (gpu-hold computes the same sum
 *                         on the device, where no test can run it). */
#include "hold-threads.h"

#define WORDS (1u << 17) /* 1 MiB */

static unsigned long long data[WORDS];

static int sum(unsigned long long *out)
{
	*out = hold_sum_host(data, WORDS);
	return 0;
}

static int selftest(void)
{
	unsigned long long s, t;
	int bad = 0;

	s = hold_sum_host(data, WORDS);
	for (size_t i = 0; i < WORDS; i += 509) { /* every word position class */
		data[i] ^= 1ull << (i % 64);
		bad += hold_sum_host(data, WORDS) == s;
		data[i] ^= 1ull << (i % 64);
	}
	t = data[1];
	data[1] = data[4096];
	data[4096] = t;
	bad += hold_sum_host(data, WORDS) == s;
	data[4096] = data[1];
	data[1] = t;
	bad += hold_sum_host(data, WORDS) != s;
	memset(data, 0, sizeof(data));
	bad += hold_sum_host(data, WORDS) == s;
	printf("selftest: %s\n", bad ? "the checksum misses changes" : "every change seen");
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct hold_opts o;

	hold_block_signals();
	for (size_t i = 0; i < WORDS; i++)
		data[i] = hold_pattern(i);
	if (argc == 2 && !strcmp(argv[1], "--selftest"))
		return selftest();
	if (hold_parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: kit-hold [--threads N] [--churn] [--keep] [--name NAME] | --selftest\n");
		return 2;
	}
	if (hold_start(&o) < 0)
		return 1;
	hold_loop(sum);
	return 0;
}
