/* info.c: `kernc info`: what kern finds on this machine, for a first check
 * and for bug reports; `kernc cache info|clear`: the compiled-code cache.
 *
 * Requires: kern.h only (kern_config_get, the device queries,
 * kern_cache_info_get, kern_cache_clear). Produces: cli_info, cli_cache.
 * Breaks: nothing is compiled or launched; info only measures the cache (its
 * regular files, links not followed); cache clear empties it.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "kern.h"

static const double GIB = 1024.0 * 1024.0 * 1024.0;

static void print_device(const kern_device *d, int threads) {
  kern_device_info in;
  if (kern_device_info_get(d, &in) != KERN_OK) {
    printf("  %-8s (no information: %s)\n", kern_device_name(d), kern_last_error());
    return;
  }
  if (!kern_device_is_cuda(d)) {
    printf("  %-8s %d threads, %.1f GiB memory\n", kern_device_name(d), threads,
           (double)in.total_memory / GIB);
    return;
  }
  printf("  %-8s sm_%d%d, %.1f GiB memory\n", kern_device_name(d), in.sm_major, in.sm_minor,
         (double)in.total_memory / GIB);
  const struct {
    bool on;
    const char *name;
  } caps[] = {{in.is_uva, "unified addressing"},
              {in.is_mempool_supported, "memory pools"},
              {in.is_managed_memory_supported, "managed memory"},
              {in.is_concurrent_managed_access_supported, "concurrent managed access"},
              {in.is_cpu_memory_access_from_gpu_supported, "pageable host memory from the GPU"},
              {in.is_gpu_memory_access_from_cpu_supported, "managed memory from the CPU"},
              {in.is_cpu_gpu_atomic_supported, "CPU-GPU atomics"}};
  printf("           ");
  int n = 0;
  for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
    if (caps[i].on) printf("%s%s", n++ ? ", " : "", caps[i].name);
  printf("%s\n", n ? "" : "no optional capabilities");
}

static long long cache_bytes, cache_files;

static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  if (type == FTW_F) cache_bytes += st->st_size, cache_files++;
  return 0;
}

static void print_cache(const char *dir) {
  if (!dir) {
    printf("cache:      none (%s)\n", kern_last_error());
    return;
  }
  cache_bytes = cache_files = 0;
  nftw(dir, add_file, 16, FTW_PHYS);
  printf("cache:      %s: %.1f MiB in %lld files (KERN_CACHE_DIR to change it)\n", dir,
         (double)cache_bytes / (1024.0 * 1024.0), cache_files);
}

int cli_info(const Options *o) {
  if (o->nfiles) return cli_bad_usage("info takes no FILE, got '%s'", o->files[0]);
  if (kern_init() != KERN_OK) return cli_fail("%s", kern_last_error());
  kern_config c;
  if (kern_config_get(&c) != KERN_OK) return cli_fail("%s", kern_last_error());
  printf("kern %s\ndevices:\n", c.version);
  for (int i = 0; i < kern_device_count(); i++) print_device(kern_device_at(i), c.num_threads);
  if (kern_device_count() == 1 && !kern_device_get("cuda"))
    printf("  (no CUDA device: %s)\n", kern_last_error());
  if (c.cc)
    printf("C compiler: %s%s%s%s\n", c.cc, *c.cc_version ? " (" : "", c.cc_version,
           *c.cc_version ? ")" : "");
  else
    printf("C compiler: none found (install clang or cc, or set KERN_CC): CPU kernels cannot "
           "be compiled\n");
  if (c.nvrtc)
    printf("NVRTC:      %s (%d.%d)\n", c.nvrtc, c.nvrtc_version / 1000,
           c.nvrtc_version % 1000 / 10);
  else
    printf("NVRTC:      none (%s)\n", c.nvrtc_error);
  print_cache(c.cache_dir);
  printf("debug mode: %s\n", c.debug ? "on (KERN_DEBUG)" : "off");
  kern_shutdown();
  return EXIT_OK;
}

static void print_cache_info(const kern_cache_info *in) {
  printf("directory: %s\nentries:   %lld\nbytes:     %lld (%.1f MiB)\n", in->dir,
         (long long)in->entries, (long long)in->bytes, (double)in->bytes / (1024.0 * 1024.0));
  if (in->max_bytes)
    printf("bound:     %lld bytes (%.1f MiB; KERN_CACHE_MAX_BYTES): least recently used "
           "entries go first\n",
           (long long)in->max_bytes, (double)in->max_bytes / (1024.0 * 1024.0));
  else
    printf("bound:     none (KERN_CACHE_MAX_BYTES=0)\n");
}

int cli_cache(const Options *o) {
  const char *what = o->nfiles ? o->files[0] : "";
  if (o->nfiles != 1 || (strcmp(what, "info") && strcmp(what, "clear")))
    return cli_bad_usage("cache needs one of 'info' or 'clear', got '%s'", what);
  if (kern_init() != KERN_OK) return cli_fail("%s", kern_last_error());
  kern_cache_info before, after;
  int rc = EXIT_OK;
  if (kern_cache_info_get(&before) != KERN_OK)
    rc = cli_fail("%s", kern_last_error());
  else if (!strcmp(what, "info"))
    print_cache_info(&before);
  else if (kern_cache_clear() != KERN_OK || kern_cache_info_get(&after) != KERN_OK)
    rc = cli_fail("%s", kern_last_error());
  else
    printf("removed %lld entries (%lld bytes) from %s\n",
           (long long)(before.entries - after.entries), (long long)(before.bytes - after.bytes),
           after.dir);
  kern_shutdown();
  return rc;
}
