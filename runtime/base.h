/* base.h: the bottom of the runtime: configuration, the allocation
 * registry, dtypes, SHA-256 and the disk cache (never installed; kern.h is
 * the API).
 *
 * Nothing here knows devices, modules or launches, and nothing here calls
 * up: every other runtime file, core or backend, may use it. The layers
 * above are described in backend.h and core.h.
 */
#ifndef KERN_RT_BASE_H
#define KERN_RT_BASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "kern.h"
#include "kern_abi.h"
#include "str.h"

struct Type;

/* ---- config.c: the environment, read at kern_init ---------------------------------- */

typedef struct rt_config {
  int num_threads; /* >= 1 */
  bool debug;      /* KERN_DEBUG at init (rt_debug() has the current flag) */
  bool verify_fp;  /* KERN_VERIFY_FP at init: the default of modules loaded afterwards */
  char *cache_dir; /* KERN_CACHE_DIR, or the XDG default; NULL when no home */
  char *cc;        /* KERN_CC, or NULL: the toolchain's default */
  char *path;      /* KERN_PATH: directories for relative module paths, ':'-separated; or NULL */
  int block2d[2];  /* KERN_CUDA_BLOCK2D=WxH: the block of multi-dimensional CUDA launches */
  int compile_timeout_ms;  /* KERN_COMPILE_TIMEOUT (seconds) in ms; 0: no limit */
  int64_t cache_max_bytes; /* KERN_CACHE_MAX_BYTES: the cache's size bound; 0: none */
} rt_config;
/* The configuration kern_init read (read-only afterwards, except debug). */
const rt_config *rt_config_get(void);
/* Rereads the environment (kern_init; tests change KERN_CC / KERN_CACHE_DIR
 * between compiles). Not thread-safe with respect to compiles in flight. */
void rt_config_reload(void);
/* Forgets it (kern_shutdown). */
void rt_config_clear(void);
/* The debug flag: KERN_DEBUG at init, then kern_set_debug. */
bool rt_debug(void);
void rt_set_debug(bool);

/* ---- registry.c: kern's own allocations ------------------------------------------------ */

typedef struct rt_alloc_info {
  kern_device *device;
  kern_memory_kind kind;
  size_t bytes;
} rt_alloc_info;
bool rt_registry_add(void *base, const rt_alloc_info *);
void rt_registry_remove(void *base);
bool rt_registry_find(const void *base, rt_alloc_info *out);
size_t rt_registry_count(void);

/* ---- dtype.c ---------------------------------------------------------------------------- */

bool rt_dtype_valid(kern_dtype);
/* The dtype of a checked type (scalar, vector, matrix, quat, struct); for
 * structs this registers it. KERN_DTYPE_INVALID for anything else or on OOM. */
kern_dtype rt_dtype_of_type(const struct Type *);
/* Registers (or finds) a struct dtype by name and layout signature. */
kern_dtype rt_dtype_register_struct(const char *name, const char *signature, size_t size,
                                    size_t align);

/* ---- sha256.c ----------------------------------------------------------------------------- */

typedef struct rt_sha256 {
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t nbuf;
} rt_sha256;
void rt_sha256_init(rt_sha256 *);
void rt_sha256_add(rt_sha256 *, const void *, size_t);
void rt_sha256_done(rt_sha256 *, unsigned char out[32]);
/* Lowercase hex of the first nbytes of a digest into out (2*nbytes+1 chars). */
void rt_hex(const unsigned char *digest, size_t nbytes, char *out);

/* ---- cache.c: the disk cache and whether to trust it ------------------------------------------ */

/* The cache directory for this process (created 0700), or NULL if there is
 * none, it cannot be created, or others may write it. */
const char *rt_cache_dir(void);
/* The same, with the reason there is none as this thread's error (kern_cache_dir). */
const char *rt_cache_dir_or_error(void);
/* st unchanged when there is a cache directory; otherwise st with the reason
 * there is none appended to the current message. */
kern_status rt_cache_explain(kern_status st);
/* Loads <dir>/<key>.so if its bytes match its meta, which must name key
 * (and source, unless NULL); true on a hit. */
bool rt_cache_load(const char *dir, const char *key, const char *source, void **handle);
/* Moves a built shared object into the cache (0600, temp + fsync + rename,
 * meta last); source is the compiler-independent key of what it was built from. */
bool rt_cache_store(const char *dir, const char *key, const char *source, const char *built_so);
/* <dir>/<key>.gpu when its bytes match <key>.gpu.sha: malloc'd, NUL-terminated, *len bytes. */
char *rt_cache_blob_read(const char *dir, const char *key, size_t *len);
/* Stores a GPU image as <key>.gpu and <key>.gpu.sha (temp + rename, hash last). */
void rt_cache_blob_write(const char *dir, const char *key, const void *data, size_t len);
/* A fresh private directory for one build in the cache:
 * <dir>/.build-<pid>-<host>-XXXXXX (mkdtemp), so a leftover of a killed
 * process never blocks a later one. malloc'd; NULL (errno) on failure. */
char *rt_cache_build_dir(const char *dir);
/* Removes what killed processes left in dir: build directories older than an
 * hour or made on this host by a process that is gone, temporary files older
 * than an hour. */
void rt_cache_tidy(const char *dir);
/* Removes least recently used entries (by the time they were stored or last
 * loaded) until dir's files take at most max_bytes; 0: no bound. */
void rt_cache_evict(const char *dir, int64_t max_bytes);
/* What dir holds: entries (CPU and GPU) and the bytes of all its files. */
void rt_cache_measure(const char *dir, int64_t *entries, int64_t *bytes);
/* Removes every entry, alias and leftover of dir (build directories of live
 * processes stay); false (errno) when something could not be removed. */
bool rt_cache_clear(const char *dir);
/* A name unique across processes and threads: "<pid>-<tid>-<counter>". */
void rt_unique_suffix(char *out, size_t n);
/* Removes a directory tree created for a build (files one level deep). */
void rt_remove_tree(const char *dir);

#endif
