// baseline.cu: the GPU benchmark's hand-written CUDA kernels, compiled by nvcc
// (or NVRTC where nvcc is absent) and launched with the raw driver API.
extern "C" __global__ void saxpy(const float *x, float *y, float a, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

extern "C" __global__ void tiny(int *a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
