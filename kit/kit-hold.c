/* kit-hold: an ordinary process standing in for a CUDA process where there
 * is no GPU (the kit's own test): a buffer instead of device memory, the
 * threads of hold-threads.h, and with --name a thread named as the driver
 * names its restore thread, which the mock driver (RTID_MOCK_BY_NAME) takes
 * for it. Prints its pid, then "sum HEX" on each SIGUSR1. */
#include "hold-threads.h"

static unsigned char data[1 << 20];

static unsigned long long sum(void)
{
	unsigned long long s = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		s = s * 31 + data[i];
	return s;
}

int main(int argc, char **argv)
{
	struct hold_opts o;

	if (hold_parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: kit-hold [--threads N] [--churn] [--name NAME]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7);
	if (hold_start(&o) < 0)
		return 1;
	hold_loop(sum);
	return 0;
}
