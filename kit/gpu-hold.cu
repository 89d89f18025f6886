// gpu-hold: a real CUDA process for the GPU kit (built on the GPU machine
// with nvcc): a context and 256 MiB on the device holding hold-threads.h's
// pattern, the threads of hold-threads.h (--threads N, --churn, --keep), its
// pid on stdout, then on each SIGUSR1 the checksum of the device memory
// computed by a kernel ("sum HEX"; "sum failed" when the device cannot run
// it), so that lock, checkpoint, restore and unlock can be checked to have
// kept the data and left the process able to compute.
#include <cuda_runtime.h>

#include "hold-threads.h"

static unsigned long long *dev, *dsum;
static const size_t words = (256u << 20) / 8;

__global__ void fill(unsigned long long *p, size_t n)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = hold_pattern(i);
}

__global__ void check(const unsigned long long *p, size_t n, unsigned long long *out)
{
	unsigned long long s = 0;

	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		s += hold_mix(p[i], i);
	atomicAdd(out, s);
}

static int sum(unsigned long long *out)
{
	unsigned long long s = 0;

	if (cudaMemset(dsum, 0, sizeof(s)) != cudaSuccess)
		return -1;
	check<<<256, 256>>>(dev, words, dsum);
	if (cudaGetLastError() != cudaSuccess ||
	    cudaMemcpy(&s, dsum, sizeof(s), cudaMemcpyDeviceToHost) != cudaSuccess)
		return -1;
	*out = s;
	return 0;
}

int main(int argc, char **argv)
{
	struct hold_opts o;
	cudaError_t e;

	hold_block_signals(); /* before CUDA starts threads of its own */
	if (hold_parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: gpu-hold [--threads N] [--churn] [--keep]\n");
		return 2;
	}
	if ((e = cudaMalloc(&dev, words * 8)) != cudaSuccess ||
	    (e = cudaMalloc(&dsum, sizeof(*dsum))) != cudaSuccess) {
		fprintf(stderr, "gpu-hold: cudaMalloc: %s\n", cudaGetErrorString(e));
		return 1;
	}
	fill<<<256, 256>>>(dev, words);
	if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
		fprintf(stderr, "gpu-hold: the fill kernel: %s\n", cudaGetErrorString(e));
		return 1;
	}
	if (hold_start(&o) < 0)
		return 1;
	hold_loop(sum);
	return 0;
}
