// gpu-hold: a minimal CUDA process for validation: it creates a context, keeps
// 256 MiB on the device, writes its pid and waits until killed.
#include <cstdio>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void touch(char *p, size_t n) {
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] = (char)i;
}

int main() {
	char *p;
	size_t n = 256u << 20;
	if (cudaMalloc(&p, n) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\n"); return 1; }
	touch<<<256, 256>>>(p, n);
	cudaDeviceSynchronize();
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (;;) pause();
}
