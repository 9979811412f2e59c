/* rt_dlpack.h: the DLPack C ABI (DLManagedTensor, unchanged from dlpack.h
 * v0.6 to v1.x's "legacy" tensor), from <dlpack/dlpack.h> when the system
 * has it, else spelled out here with the same layout and values.
 *
 * Requires: <stdint.h>. Produces: DLDevice, DLDataType, DLTensor,
 * DLManagedTensor, the device and type codes kern and its tests use, and
 * DL_BOOL. Used by runtime/dlpack.c and by the tests that play the other
 * framework, so both sides read one definition of the ABI.
 */
#ifndef KERN_RT_DLPACK_H
#define KERN_RT_DLPACK_H

#include <stdint.h>

#if defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define RT_HAVE_DLPACK_H 1
#endif
#endif

#ifndef RT_HAVE_DLPACK_H
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLROCM = 10,
  kDLCUDAManaged = 13
} DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int device_id;
} DLDevice;
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U
} DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif

/* kDLBool (DLPack 0.8 and later): one byte per element, 0 or 1. */
enum { DL_BOOL = 6 };

#endif
