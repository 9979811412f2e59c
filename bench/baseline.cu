// baseline.cu: the GPU benchmark's hand-written CUDA kernels, one per kernel of
// bench/workloads.kern and the same algorithm operation for operation, compiled
// by nvcc with --fmad=false (kern's own rounding: a*b+c rounds twice) or by
// NVRTC where nvcc is absent, and launched with the raw driver API by
// bench/bench_gpu.c. 1D kernels are grid-stride loops; 2D ones use 2D blocks.
// bench/peers.py also compiles this file as CuPy RawKernels.

extern "C" __global__ void saxpy(const float *x, float *y, float a, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

// Interior points only; the border of dst is left alone.
extern "C" __global__ void stencil(const float *src, float *dst, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i >= rows - 1 || j >= cols - 1) return;
  long long c = (long long)i * cols + j;
  dst[c] = 0.2f * (src[c] + src[c - cols] + src[c + cols] + src[c - 1] + src[c + 1]);
}

extern "C" __global__ void histogram(const int *values, int *bins, int nbins, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    atomicAdd(&bins[values[i] % nbins], 1);
}

// Naive: one output element per thread, b read down a column.
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  float s = 0.0f;
  for (int k = 0; k < n; k++) s += a[(long long)i * n + k] * b[(long long)k * n + j];
  c[(long long)i * n + j] = s;
}

extern "C" __global__ void nbody(const float3 *pos, const float3 *vel, const float *mass, float3 *pos_out,
                                 float3 *vel_out, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float3 p = pos[i], acc = make_float3(0.0f, 0.0f, 0.0f);
  for (int j = 0; j < n; j++) {
    float3 q = pos[j];
    float3 d = make_float3(q.x - p.x, q.y - p.y, q.z - p.z);
    float inv = 1.0f / sqrtf(d.x * d.x + d.y * d.y + d.z * d.z + 0.01f);
    float s = mass[j] * inv * inv * inv;
    acc.x += d.x * s, acc.y += d.y * s, acc.z += d.z * s;
  }
  float3 v = make_float3(vel[i].x + acc.x * dt, vel[i].y + acc.y * dt, vel[i].z + acc.z * dt);
  vel_out[i] = v;
  pos_out[i] = make_float3(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt);
}

extern "C" __global__ void mandelbrot(int *out, int rows, int cols, int maxit) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= rows || j >= cols) return;
  float x0 = -2.0f + 3.0f * (float)j / (float)cols, y0 = -1.5f + 3.0f * (float)i / (float)rows;
  float x = 0.0f, y = 0.0f;
  int it = 0;
  while (x * x + y * y <= 4.0f && it < maxit) {
    float xt = x * x - y * y + x0;
    y = 2.0f * x * y + y0;
    x = xt;
    it++;
  }
  out[(long long)i * cols + j] = it;
}

// Each thread sums 256 consecutive elements, then one double atomic add.
extern "C" __global__ void reduce_sum(const float *x, double *total, long long nchunks) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nchunks) return;
  float s = 0.0f;
  for (long long k = t * 256; k < t * 256 + 256; k++) s += x[k];
  atomicAdd(total, (double)s);
}

extern "C" __global__ void tiny(float *x, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + 1.0f;
}
