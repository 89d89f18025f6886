// gpu-hold: a real CUDA process for the GPU kit (built on the GPU machine
// with nvcc): a context and 256 MiB on the device, the threads of
// hold-threads.h (--threads N, --churn), its pid on stdout, then on each
// SIGUSR1 a checksum of the device memory ("sum HEX"), so that lock,
// checkpoint, restore and unlock can be checked to have kept it.
#include <cuda_runtime.h>
#include <vector>

#include "hold-threads.h"

static char *dev;
static const size_t n = 256u << 20;

__global__ void touch(char *p, size_t len) {
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x)
		p[i] = (char)(i * 7);
}

static unsigned long long sum(void) {
	std::vector<unsigned char> host(n);
	unsigned long long s = 0;

	if (cudaMemcpy(host.data(), dev, n, cudaMemcpyDeviceToHost) != cudaSuccess)
		return 0;
	for (size_t i = 0; i < n; i += 4096)
		s = s * 31 + host[i];
	return s;
}

int main(int argc, char **argv) {
	struct hold_opts o;

	if (hold_parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: gpu-hold [--threads N] [--churn]\n");
		return 2;
	}
	if (cudaMalloc(&dev, n) != cudaSuccess) {
		fprintf(stderr, "cudaMalloc failed\n");
		return 1;
	}
	touch<<<256, 256>>>(dev, n);
	cudaDeviceSynchronize();
	if (hold_start(&o) < 0)
		return 1;
	hold_loop(sum);
	return 0;
}
