/* test_dlpack.c: DLPack exchange with a C program playing the other
 * framework: a producer with its own deleter that counts its calls, and a
 * consumer that reads kern's tensors by the DLPack rules (element strides,
 * byte_offset). Round trips, strided views, every dtype and device mapping,
 * every rejection (which must leave the tensor to its producer), and the
 * lifetime rules both ways. Runs without a GPU: CUDA device types are checked
 * with a stand-in CUDA device whose memory is host memory.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kern.h"
#include "core.h"
#include "fake_gpu.h"

#include "rt_dlpack.h"

static void setup(void) {
  th_default_cache_dir("dlpack");
  cr_assert_eq(kern_init(), KERN_OK);
}

TestSuite(from_dlpack, .init = setup);
TestSuite(to_dlpack, .init = setup);
TestSuite(round_trip, .init = setup, .timeout = 300);

static kern_device *cpu(void) { return kern_device_get("cpu"); }

/* ---- the producer ------------------------------------------------------------------- */

typedef struct producer {
  DLManagedTensor m;
  int64_t shape[8], strides[8];
  void *owned; /* freed by the deleter */
} producer;

static int deletes;

static void producer_deleter(DLManagedTensor *m) {
  producer *p = m->manager_ctx;
  deletes++;
  free(p->owned);
  free(p);
}

/* A tensor over data (not owned unless `owned`), with its deleter. */
static DLManagedTensor *tensor(void *data, DLDevice dev, DLDataType dt, int ndim,
                               const int64_t *shape, const int64_t *strides, uint64_t offset) {
  producer *p = calloc(1, sizeof *p);
  for (int d = 0; d < ndim && d < 8; d++) {
    p->shape[d] = shape[d];
    if (strides) p->strides[d] = strides[d];
  }
  DLTensor *t = &p->m.dl_tensor;
  t->data = data;
  t->device = dev;
  t->ndim = ndim;
  t->dtype = dt;
  t->shape = p->shape;
  t->strides = strides ? p->strides : NULL;
  t->byte_offset = offset;
  p->m.manager_ctx = p;
  p->m.deleter = producer_deleter;
  return &p->m;
}

static const DLDevice CPU = {kDLCPU, 0};
static const DLDataType F32 = {kDLFloat, 32, 1}, I32 = {kDLInt, 32, 1};

/* ---- a stand-in CUDA device (host memory that reports CUDA kinds) ---------------------- */

/* A stand-in CUDA device whose memory is host memory. */
static kern_device *fake_gpu(void) {
  return th_fake_gpu_new((kern_device_info){.is_uva = true,
                                            .is_managed_memory_supported = true,
                                            .is_concurrent_managed_access_supported = true});
}

/* ---- import ---------------------------------------------------------------------------- */

Test(from_dlpack, dense_tensor_is_shared_and_its_deleter_runs_on_free) {
  float *buf = malloc(12 * sizeof *buf);
  for (int i = 0; i < 12; i++) buf[i] = (float)i * 0.5f;
  int64_t shape[2] = {3, 4};
  DLManagedTensor *t = tensor(buf, CPU, F32, 2, shape, NULL, 0);
  ((producer *)t->manager_ctx)->owned = buf;
  kern_array *a = kern_array_from_dlpack(t);
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_assert_eq(kern_array_device(a), cpu());
  cr_assert_eq(kern_array_memory_kind(a), KERN_MEM_HOST, "a kDLCPU tensor is host memory");
  cr_assert_eq(kern_array_dtype(a), KERN_FLOAT32);
  cr_assert_eq(kern_array_ndim(a), 2);
  cr_assert_eq(kern_array_shape(a, 0), 3);
  cr_assert_eq(kern_array_shape(a, 1), 4);
  cr_assert_eq(kern_array_stride(a, 0), 16);
  cr_assert_eq(kern_array_stride(a, 1), 4);
  cr_assert_eq(kern_array_data(a), (void *)buf, "zero-copy");
  float got[12];
  cr_assert_eq(kern_array_read(a, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, buf, sizeof got);
  float v = 9.0f;
  cr_assert_eq(kern_array_fill(a, &v), KERN_OK);
  cr_assert_eq(buf[11], 9.0f, "writes reach the producer's memory");
  cr_assert_eq(deletes, 0);
  kern_array_free(a);
  cr_assert_eq(deletes, 1, "the deleter runs when the array is freed");
}

Test(from_dlpack, the_deleter_waits_for_the_last_view) {
  int32_t buf[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  int64_t n = 10, off = 4, len = 3;
  kern_array *a = kern_array_from_dlpack(tensor(buf, CPU, I32, 1, &n, NULL, 0));
  cr_assert_not_null(a, "%s", kern_last_error());
  kern_array *v = kern_array_view(a, 1, &off, &len);
  kern_array_free(a);
  cr_assert_eq(deletes, 0, "the view still uses the tensor");
  int32_t got[3];
  cr_assert_eq(kern_array_read(v, got, sizeof got), KERN_OK);
  cr_assert_eq(got[0], 4);
  cr_assert_eq(got[2], 6);
  cr_assert_eq(kern_array_memory_kind(v), KERN_MEM_HOST);
  kern_array_free(v);
  cr_assert_eq(deletes, 1);
}

Test(from_dlpack, byte_offset_and_element_strides) {
  /* A 6x8 int32 matrix m[r][c] = 100 r + c; the tensor is the transposed 4x3
   * window starting at m[1][2]: t[i][j] = m[1 + j][2 + i]. */
  int32_t m[6][8];
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 8; c++) m[r][c] = 100 * r + c;
  int64_t shape[2] = {4, 3}, strides[2] = {1, 8};
  uint64_t offset = (1 * 8 + 2) * sizeof(int32_t);
  kern_array *a = kern_array_from_dlpack(tensor(m, CPU, I32, 2, shape, strides, offset));
  cr_assert_not_null(a, "%s", kern_last_error());
  cr_assert_eq(kern_array_stride(a, 0), 4, "element strides become byte strides");
  cr_assert_eq(kern_array_stride(a, 1), 32);
  cr_assert_eq(kern_array_data(a), (void *)&m[1][2]);
  cr_assert_not(kern_array_is_contiguous(a));
  int32_t got[4][3];
  cr_assert_eq(kern_array_read(a, got, sizeof got), KERN_OK);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      cr_assert_eq(got[i][j], 100 * (1 + j) + (2 + i), "[%d][%d] = %d", i, j, got[i][j]);
  kern_array_free(a);
  cr_assert_eq(deletes, 1);
}

Test(from_dlpack, every_supported_dtype) {
  static const struct {
    uint8_t code, bits;
    kern_dtype dt;
    size_t size;
  } map[] = {
      {DL_BOOL, 8, KERN_BOOL, 1},        {kDLInt, 8, KERN_INT8, 1},
      {kDLInt, 16, KERN_INT16, 2},       {kDLInt, 32, KERN_INT32, 4},
      {kDLInt, 64, KERN_INT64, 8},       {kDLUInt, 8, KERN_UINT8, 1},
      {kDLUInt, 16, KERN_UINT16, 2},     {kDLUInt, 32, KERN_UINT32, 4},
      {kDLUInt, 64, KERN_UINT64, 8},     {kDLFloat, 16, KERN_FLOAT16, 2},
      {kDLFloat, 32, KERN_FLOAT32, 4},   {kDLFloat, 64, KERN_FLOAT64, 8},
      {kDLBfloat, 16, KERN_BFLOAT16, 2},
  };
  static uint64_t buf[16];
  int64_t n = 5, strides = 2;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    DLDataType dt = {map[i].code, map[i].bits, 1};
    kern_array *a = kern_array_from_dlpack(tensor(buf, CPU, dt, 1, &n, &strides, 0));
    cr_assert_not_null(a, "code %d bits %d: %s", map[i].code, map[i].bits, kern_last_error());
    cr_assert_eq(kern_array_dtype(a), map[i].dt, "code %d bits %d", map[i].code, map[i].bits);
    cr_assert_eq(kern_array_stride(a, 0), (int64_t)(2 * map[i].size));
    cr_assert_eq(kern_array_nbytes(a), 5 * map[i].size);
    kern_array_free(a);
  }
  cr_assert_eq(deletes, (int)(sizeof map / sizeof map[0]));
}

Test(from_dlpack, strides_of_dims_that_cannot_step_do_not_matter) {
  int32_t buf[4] = {1, 2, 3, 4};
  int64_t shape[2] = {1, 4}, strides[2] = {-7, 1};
  kern_array *a = kern_array_from_dlpack(tensor(buf, CPU, I32, 2, shape, strides, 0));
  cr_assert_not_null(a, "a size-1 dim's negative stride is harmless: %s", kern_last_error());
  cr_assert(kern_array_is_contiguous(a));
  kern_array_free(a);
  int64_t empty[2] = {0, 4}, neg[2] = {4, -1};
  a = kern_array_from_dlpack(tensor(buf, CPU, I32, 2, empty, neg, 0));
  cr_assert_not_null(a, "an empty tensor has no elements to reach: %s", kern_last_error());
  cr_assert_eq(kern_array_size(a), 0);
  kern_array_free(a);
  cr_assert_eq(deletes, 2);
}

Test(from_dlpack, pinned_and_cuda_device_types) {
  int32_t buf[8] = {0};
  int64_t n = 8;
  kern_array *p =
      kern_array_from_dlpack(tensor(buf, (DLDevice){kDLCUDAHost, 0}, I32, 1, &n, NULL, 0));
  cr_assert_not_null(p, "%s", kern_last_error());
  cr_assert_eq(kern_array_device(p), cpu(), "pinned host memory belongs to the CPU device");
  cr_assert_eq(kern_array_memory_kind(p), KERN_MEM_PINNED_HOST);
  cr_assert(kern_can_access(cpu(), p));
  kern_array_free(p);
  /* kDLCUDA device N -> cuda:N; kDLCUDAManaged -> managed memory of a GPU. */
  kern_device *g = fake_gpu();
  kern_array *own = kern_array_new(g, KERN_INT32, 1, &n);
  kern_array *d = kern_array_from_dlpack(
      tensor(kern_array_data(own), (DLDevice){kDLCUDA, g->ordinal}, I32, 1, &n, NULL, 0));
  cr_assert_not_null(d, "%s", kern_last_error());
  cr_assert_eq(kern_array_device(d), g);
  cr_assert_eq(kern_array_memory_kind(d), KERN_MEM_CUDA_DEVICE);
  cr_assert_not(kern_can_access(cpu(), d));
  kern_array_free(d);
  /* Memory neither kern nor a driver knows: the DLPack device type decides. */
  static int32_t foreign[8];
  kern_array *m = kern_array_from_dlpack(
      tensor(foreign, (DLDevice){kDLCUDAManaged, g->ordinal}, I32, 1, &n, NULL, 0));
  cr_assert_not_null(m, "%s", kern_last_error());
  cr_assert_eq(kern_array_device(m), g);
  cr_assert_eq(kern_array_memory_kind(m), KERN_MEM_CUDA_MANAGED);
  cr_assert(kern_can_access(cpu(), m), "managed memory of a device with concurrent access");
  kern_array_free(m);
  kern_array *dd =
      kern_array_from_dlpack(tensor(foreign, (DLDevice){kDLCUDA, g->ordinal}, I32, 1, &n, NULL, 0));
  cr_assert_eq(kern_array_memory_kind(dd), KERN_MEM_CUDA_DEVICE);
  kern_array_free(dd);
  kern_array_free(own);
  cr_assert_eq(deletes, 4);
}

/* Each rejection: NULL, the status, a message naming the problem, and the
 * deleter not called (the producer still owns the tensor: we free it). */
static void expect_rejected(DLManagedTensor *t, kern_status st, const char *needle) {
  int before = deletes;
  kern_clear_error();
  cr_assert_null(kern_array_from_dlpack(t), "accepted a tensor that should fail with '%s'", needle);
  cr_assert_eq(kern_last_status(), st, "%s: %s", kern_status_name(kern_last_status()),
               kern_last_error());
  cr_assert(strstr(kern_last_error(), needle), "'%s' lacks '%s'", kern_last_error(), needle);
  cr_assert_eq(deletes, before, "a refused tensor's deleter must not run");
  t->deleter(t);
  cr_assert_eq(deletes, before + 1);
}

Test(from_dlpack, rejections_leave_the_tensor_to_its_producer) {
  static int32_t buf[64];
  int64_t shape5[5] = {1, 2, 2, 2, 2}, n = 4, negshape = -1, negstride[2] = {-1, 1},
          sh2[2] = {4, 2};
  const kern_status U = KERN_ERR_UNSUPPORTED, I = KERN_ERR_INVALID_ARGUMENT;
  expect_rejected(tensor(buf, CPU, I32, 0, &n, NULL, 0), U, "0 dimensions");
  expect_rejected(tensor(buf, CPU, I32, 5, shape5, NULL, 0), U, "5 dimensions");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLFloat, 32, 4}, 1, &n, NULL, 0), U, "4 lanes");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLBfloat, 32, 1}, 1, &n, NULL, 0), U,
                  "bfloat, 32 bits");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLBfloat, 16, 2}, 1, &n, NULL, 0), U,
                  "bfloat, 16 bits, 2 lanes");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLComplex, 64, 1}, 1, &n, NULL, 0), U, "complex");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLFloat, 8, 1}, 1, &n, NULL, 0), U,
                  "float, 8 bits");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLInt, 24, 1}, 1, &n, NULL, 0), U, "int, 24 bits");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLUInt, 1, 1}, 1, &n, NULL, 0), U, "uint, 1 bits");
  expect_rejected(tensor(buf, CPU, (DLDataType){DL_BOOL, 32, 1}, 1, &n, NULL, 0), U,
                  "bool, 32 bits");
  expect_rejected(tensor(buf, CPU, (DLDataType){kDLOpaqueHandle, 64, 1}, 1, &n, NULL, 0), U,
                  "opaque");
  expect_rejected(tensor(buf, (DLDevice){kDLOpenCL, 0}, I32, 1, &n, NULL, 0), U, "kDLOpenCL");
  expect_rejected(tensor(buf, (DLDevice){kDLVulkan, 0}, I32, 1, &n, NULL, 0), U, "kDLVulkan");
  expect_rejected(tensor(buf, (DLDevice){kDLROCM, 0}, I32, 1, &n, NULL, 0), U, "kDLROCM");
  expect_rejected(tensor(buf, (DLDevice){(DLDeviceType)99, 0}, I32, 1, &n, NULL, 0), U,
                  "device type 99");
  expect_rejected(tensor(buf, (DLDevice){kDLCUDA, 29}, I32, 1, &n, NULL, 0), U,
                  "no device cuda:29");
  expect_rejected(tensor(buf, (DLDevice){kDLCUDAManaged, 29}, I32, 1, &n, NULL, 0), U, "cuda:29");
  expect_rejected(tensor(buf, CPU, I32, 2, sh2, negstride, 0), U, "negative");
  expect_rejected(tensor(buf, CPU, I32, 1, &negshape, NULL, 0), I, "shape[0] is negative");
  DLManagedTensor *noshape = tensor(buf, CPU, I32, 1, &n, NULL, 0);
  noshape->dl_tensor.shape = NULL;
  expect_rejected(noshape, I, "shape is NULL");
  DLManagedTensor *nodata = tensor(NULL, CPU, I32, 1, &n, NULL, 0);
  expect_rejected(nodata, I, "ptr is NULL");
  cr_assert_null(kern_array_from_dlpack(NULL));
  cr_assert_eq(kern_last_status(), I);
}

Test(from_dlpack, gpu_memory_under_a_cpu_device_type_is_refused) {
  kern_device *g = fake_gpu();
  int64_t n = 8;
  kern_array *own = kern_array_new(g, KERN_INT32, 1, &n);
  expect_rejected(tensor(kern_array_data(own), CPU, I32, 1, &n, NULL, 0), KERN_ERR_INVALID_ARGUMENT,
                  "CUDA device memory of");
  kern_array_free(own);
}

Test(from_dlpack, a_null_deleter_is_allowed) {
  int32_t buf[4] = {1, 2, 3, 4};
  int64_t n = 4;
  DLManagedTensor *t = tensor(buf, CPU, I32, 1, &n, NULL, 0);
  t->deleter = NULL;
  kern_array *a = kern_array_from_dlpack(t);
  cr_assert_not_null(a, "%s", kern_last_error());
  kern_array_free(a);
  cr_assert_eq(deletes, 0);
  free(t->manager_ctx);
}

/* ---- export ---------------------------------------------------------------------------- */

/* Element [i][j] of a 2-D tensor by the DLPack rules. */
static void *elem2(const DLTensor *t, int64_t i, int64_t j) {
  size_t es = t->dtype.bits / 8;
  int64_t s0 = t->strides ? t->strides[0] : t->shape[1], s1 = t->strides ? t->strides[1] : 1;
  return (char *)t->data + t->byte_offset + (size_t)(i * s0 + j * s1) * es;
}

Test(to_dlpack, a_dense_array) {
  int64_t shape[2] = {3, 5};
  kern_array *a = kern_array_new(cpu(), KERN_INT32, 2, shape);
  int32_t vals[15];
  for (int i = 0; i < 15; i++) vals[i] = i * 11;
  kern_array_write(a, vals, sizeof vals);
  DLManagedTensor *t = kern_array_to_dlpack(a);
  cr_assert_not_null(t, "%s", kern_last_error());
  DLTensor *d = &t->dl_tensor;
  cr_assert_eq(d->device.device_type, kDLCPU);
  cr_assert_eq(d->device.device_id, 0);
  cr_assert_eq(d->dtype.code, kDLInt);
  cr_assert_eq(d->dtype.bits, 32);
  cr_assert_eq(d->dtype.lanes, 1);
  cr_assert_eq(d->ndim, 2);
  cr_assert_eq(d->shape[0], 3);
  cr_assert_eq(d->shape[1], 5);
  cr_assert_not_null(d->strides);
  cr_assert_eq(d->strides[0], 5, "element strides");
  cr_assert_eq(d->strides[1], 1);
  cr_assert_eq(d->data, kern_array_data(a), "zero-copy");
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) cr_assert_eq(*(int32_t *)elem2(d, i, j), (i * 5 + j) * 11);
  t->deleter(t);
  kern_array_free(a);
}

/* bfloat16 leaves as kDLBfloat of 16 bits and comes back as itself, same memory. */
Test(to_dlpack, bfloat16_round_trips) {
  int64_t n = 4;
  kern_array *a = kern_array_new(cpu(), KERN_BFLOAT16, 1, &n);
  uint16_t vals[4] = {0x3f80, 0xc020, 0x7fc0, 0x0001}, back[4];
  cr_assert_eq(kern_array_write(a, vals, sizeof vals), KERN_OK);
  DLManagedTensor *t = kern_array_to_dlpack(a);
  cr_assert_not_null(t, "%s", kern_last_error());
  cr_assert_eq(t->dl_tensor.dtype.code, kDLBfloat);
  cr_assert_eq(t->dl_tensor.dtype.bits, 16);
  cr_assert_eq(t->dl_tensor.dtype.lanes, 1);
  kern_array *b = kern_array_from_dlpack(t);
  cr_assert_not_null(b, "%s", kern_last_error());
  cr_assert_eq(kern_array_dtype(b), KERN_BFLOAT16);
  cr_assert_eq(kern_array_data(b), kern_array_data(a));
  cr_assert_eq(kern_array_read(b, back, sizeof back), KERN_OK);
  cr_assert_arr_eq(back, vals, sizeof vals);
  kern_array_free(b);
  kern_array_free(a);
}

Test(to_dlpack, memory_lives_until_the_consumer_deletes_the_tensor) {
  size_t before = rt_registry_count();
  int64_t n = 1000;
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT64, 1, &n);
  double *p = kern_array_data(a);
  DLManagedTensor *t = kern_array_to_dlpack(a);
  cr_assert_not_null(t, "%s", kern_last_error());
  kern_array_free(a);
  cr_assert_eq(rt_registry_count(), before + 1, "the tensor keeps the allocation");
  double *q = t->dl_tensor.data;
  cr_assert_eq(q, p);
  for (int i = 0; i < 1000; i++) q[i] = i * 0.25;
  cr_assert_eq(q[999], 999 * 0.25);
  t->deleter(t);
  cr_assert_eq(rt_registry_count(), before, "the deleter released it");
}

Test(to_dlpack, a_strided_view) {
  int64_t shape[2] = {6, 8}, off[2] = {1, 2}, sub[2] = {4, 3};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT32, 2, shape);
  float vals[48];
  for (int i = 0; i < 48; i++) vals[i] = (float)i;
  kern_array_write(a, vals, sizeof vals);
  kern_array *v = kern_array_view(a, 2, off, sub);
  kern_array_free(a);
  DLManagedTensor *t = kern_array_to_dlpack(v);
  cr_assert_not_null(t, "%s", kern_last_error());
  kern_array_free(v);
  DLTensor *d = &t->dl_tensor;
  cr_assert_eq(d->shape[0], 4);
  cr_assert_eq(d->shape[1], 3);
  cr_assert_eq(d->strides[0], 8);
  cr_assert_eq(d->strides[1], 1);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      cr_assert_eq(*(float *)elem2(d, i, j), (float)((1 + i) * 8 + 2 + j));
  t->deleter(t);
}

Test(to_dlpack, vectors_and_matrices_become_trailing_dims) {
  int64_t n = 4;
  kern_array *v = kern_array_new(cpu(), KERN_VEC3, 1, &n);
  DLManagedTensor *t = kern_array_to_dlpack(v);
  cr_assert_not_null(t, "%s", kern_last_error());
  DLTensor *d = &t->dl_tensor;
  cr_assert_eq(d->ndim, 2);
  cr_assert_eq(d->dtype.code, kDLFloat);
  cr_assert_eq(d->dtype.bits, 32);
  cr_assert_eq(d->shape[0], 4);
  cr_assert_eq(d->shape[1], 3);
  cr_assert_eq(d->strides[0], 3);
  cr_assert_eq(d->strides[1], 1);
  t->deleter(t);
  kern_array *m = kern_array_new(cpu(), KERN_MAT33, 1, &n);
  t = kern_array_to_dlpack(m);
  d = &t->dl_tensor;
  cr_assert_eq(d->ndim, 3);
  cr_assert_eq(d->shape[1], 3);
  cr_assert_eq(d->shape[2], 3);
  cr_assert_eq(d->strides[0], 9);
  cr_assert_eq(d->strides[1], 3);
  cr_assert_eq(d->strides[2], 1);
  t->deleter(t);
  kern_array *iv = kern_array_new(cpu(), KERN_IVEC2, 1, &n),
             *dv = kern_array_new(cpu(), KERN_DVEC4, 1, &n);
  t = kern_array_to_dlpack(iv);
  cr_assert(t->dl_tensor.dtype.code == kDLInt && t->dl_tensor.dtype.bits == 32 &&
            t->dl_tensor.shape[1] == 2);
  t->deleter(t);
  t = kern_array_to_dlpack(dv);
  cr_assert(t->dl_tensor.dtype.code == kDLFloat && t->dl_tensor.dtype.bits == 64 &&
            t->dl_tensor.shape[1] == 4);
  t->deleter(t);
  kern_array *b = kern_array_new(cpu(), KERN_BOOL, 1, &n);
  t = kern_array_to_dlpack(b);
  cr_assert_eq(t->dl_tensor.dtype.code, DL_BOOL);
  cr_assert_eq(t->dl_tensor.dtype.bits, 8);
  t->deleter(t);
  kern_array_free(v), kern_array_free(m), kern_array_free(iv), kern_array_free(dv),
      kern_array_free(b);
}

Test(to_dlpack, what_dlpack_cannot_describe_is_refused) {
  kern_module *mod = kern_module_from_source(
      "s.kern", "struct P { vec3 x; float m; };\nkernel void k(P[] p) {}\n");
  cr_assert_not_null(mod, "%s", kern_last_error());
  kern_dtype pdt = kern_module_dtype(mod, "P");
  int64_t n = 4;
  kern_array *s = kern_array_new(cpu(), pdt, 1, &n);
  cr_assert_null(kern_array_to_dlpack(s));
  cr_assert_eq(kern_last_status(), KERN_ERR_UNSUPPORTED);
  cr_assert(strstr(kern_last_error(), "P"), "%s", kern_last_error());
  /* A byte stride that is not a whole number of elements. */
  static char raw[64];
  int64_t odd = 6;
  kern_array *w = kern_array_wrap(raw, cpu(), KERN_INT32, 1, &n, &odd);
  cr_assert_not_null(w, "%s", kern_last_error());
  cr_assert_null(kern_array_to_dlpack(w));
  cr_assert(strstr(kern_last_error(), "not a multiple"), "%s", kern_last_error());
  cr_assert_null(kern_array_to_dlpack(NULL));
  cr_assert_eq(kern_last_status(), KERN_ERR_INVALID_ARGUMENT);
  kern_array_free(s), kern_array_free(w);
  kern_module_free(mod);
}

static void *fake_pinned_alloc(size_t n) {
  void *p = NULL;
  return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

Test(to_dlpack, memory_kinds_become_device_types) {
  kern_device *g = fake_gpu();
  rt_host.pinned_alloc = fake_pinned_alloc;
  rt_host.pinned_free = free;
  int64_t n = 4;
  kern_device_set_allocator(cpu(), KERN_ALLOC_PINNED);
  kern_array *pin = kern_array_new(cpu(), KERN_INT32, 1, &n);
  kern_device_set_allocator(cpu(), KERN_ALLOC_DEFAULT);
  kern_array *dev = kern_array_new(g, KERN_INT32, 1, &n);
  kern_device_set_allocator(g, KERN_ALLOC_CUDA_MANAGED);
  kern_array *man = kern_array_new(g, KERN_INT32, 1, &n);
  static int32_t raw[4];
  kern_array *unk = kern_array_wrap(raw, cpu(), KERN_INT32, 1, &n, NULL);
  struct {
    kern_array *a;
    int type, id;
  } cases[] = {{pin, kDLCUDAHost, 0},
               {dev, kDLCUDA, g->ordinal},
               {man, kDLCUDAManaged, 0},
               {unk, kDLCPU, 0}};
  for (int i = 0; i < 4; i++) {
    DLManagedTensor *t = kern_array_to_dlpack(cases[i].a);
    cr_assert_not_null(t, "%s", kern_last_error());
    cr_assert_eq((int)t->dl_tensor.device.device_type, cases[i].type, "case %d", i);
    cr_assert_eq(t->dl_tensor.device.device_id, cases[i].id, "case %d", i);
    t->deleter(t);
  }
  kern_array_free(pin), kern_array_free(dev), kern_array_free(man), kern_array_free(unk);
}

/* ---- round trips ------------------------------------------------------------------------ */

Test(round_trip, kern_to_dlpack_to_kern) {
  size_t before = rt_registry_count();
  int64_t shape[2] = {4, 6};
  kern_array *a = kern_array_new(cpu(), KERN_INT16, 2, shape);
  int16_t vals[24];
  for (int i = 0; i < 24; i++) vals[i] = (int16_t)(i - 12);
  kern_array_write(a, vals, sizeof vals);
  kern_array *b = kern_array_from_dlpack(kern_array_to_dlpack(a));
  cr_assert_not_null(b, "%s", kern_last_error());
  cr_assert_eq(kern_array_data(b), kern_array_data(a));
  cr_assert_eq(kern_array_dtype(b), KERN_INT16);
  cr_assert_eq(kern_array_memory_kind(b), KERN_MEM_HOST);
  cr_assert_eq(kern_array_stride(b, 0), 12);
  cr_assert_eq(kern_array_stride(b, 1), 2);
  kern_array_free(a);
  int16_t got[24];
  cr_assert_eq(kern_array_read(b, got, sizeof got), KERN_OK);
  cr_assert_arr_eq(got, vals, sizeof got);
  cr_assert_eq(rt_registry_count(), before + 1);
  kern_array_free(b);
  cr_assert_eq(rt_registry_count(), before, "freeing the import ran kern's own deleter");
}

Test(round_trip, a_strided_view_keeps_its_layout) {
  int64_t shape[2] = {5, 7}, off[2] = {0, 1}, sub[2] = {5, 2};
  kern_array *a = kern_array_new(cpu(), KERN_FLOAT64, 2, shape);
  double vals[35];
  for (int i = 0; i < 35; i++) vals[i] = i * 1.5;
  kern_array_write(a, vals, sizeof vals);
  kern_array *v = kern_array_view(a, 2, off, sub);
  kern_array *b = kern_array_from_dlpack(kern_array_to_dlpack(v));
  cr_assert_not_null(b, "%s", kern_last_error());
  cr_assert_eq(kern_array_stride(b, 0), kern_array_stride(v, 0));
  cr_assert_eq(kern_array_stride(b, 1), kern_array_stride(v, 1));
  double gv[10], gb[10];
  kern_array_read(v, gv, sizeof gv);
  kern_array_read(b, gb, sizeof gb);
  cr_assert_arr_eq(gv, gb, sizeof gv);
  cr_assert_eq(gb[3], vals[1 * 7 + 2]);
  kern_array_free(a), kern_array_free(v), kern_array_free(b);
}

Test(round_trip, producer_to_kern_to_consumer) {
  float *buf = malloc(8 * sizeof *buf);
  for (int i = 0; i < 8; i++) buf[i] = (float)i;
  int64_t n = 8;
  DLManagedTensor *t = tensor(buf, CPU, F32, 1, &n, NULL, 0);
  ((producer *)t->manager_ctx)->owned = buf;
  kern_array *a = kern_array_from_dlpack(t);
  DLManagedTensor *out = kern_array_to_dlpack(a);
  cr_assert_not_null(out, "%s", kern_last_error());
  kern_array_free(a);
  cr_assert_eq(deletes, 0, "the exported tensor still uses the producer's memory");
  cr_assert_eq(((float *)out->dl_tensor.data)[7], 7.0f);
  out->deleter(out);
  cr_assert_eq(deletes, 1, "the producer's deleter ran once, after the last user");
}

Test(round_trip, a_cpu_launch_on_an_imported_tensor) {
  kern_module *m = kern_module_from_source("dl.kern", "kernel void twice(float[,] x) {\n"
                                                      "    int i = tid(0);\n"
                                                      "    int j = tid(1);\n"
                                                      "    x[i, j] = 2.0 * x[i, j] + float(j);\n"
                                                      "}\n");
  cr_assert_not_null(m, "%s", kern_last_error());
  kern_kernel *k = kern_module_kernel(m, "twice");
  /* The transposed view of a 3x2 buffer, from the producer. */
  float buf[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  kern_array *a = kern_array_from_dlpack(tensor(buf, CPU, F32, 2, shape, strides, 0));
  cr_assert_not_null(a, "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_CHECKED);
  cr_assert_eq(KERN_LAUNCH(k, cpu(), KERN_DIM2(2, 3), a), KERN_OK, "%s", kern_last_error());
  kern_set_launch_access_mode(KERN_ACCESS_RELAXED);
  /* x[i][j] is buf[j * 2 + i]. */
  float want[6] = {2 * 1 + 0, 2 * 2 + 0, 2 * 3 + 1, 2 * 4 + 1, 2 * 5 + 2, 2 * 6 + 2};
  cr_assert_arr_eq(buf, want, sizeof buf);
  kern_array_free(a);
  kern_module_free(m);
  cr_assert_eq(deletes, 1);
}
