/* cache.c: the on-disk cache of compiled CPU modules.
 *
 * Requires: sha256.c. Produces: rt_cache_load/store and file helpers.
 * Breaks: the layout is <dir>/<key>.so plus <dir>/<key>.meta ("kern-cache 1",
 * the .so's SHA-256 and size). Writers publish with temp file + fsync +
 * rename, the meta last, so a reader sees old or new files, never half of
 * one; a reader trusts a .so only when its bytes match the meta, so a
 * corrupt, truncated or mismatched entry is a miss and gets rebuilt.
 */
#include "rt.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define META_MAGIC "kern-cache 1"

void rt_unique_suffix(char *out, size_t n) {
  static _Atomic unsigned long counter;
  unsigned long c = atomic_fetch_add(&counter, 1);
  snprintf(out, n, "%ld-%ld-%lu", (long)getpid(), (long)syscall(SYS_gettid), c);
}

/* mkdir -p, the last component with mode 0700. */
static bool make_dirs(const char *path) {
  char *p = rt_strdup(path);
  if (!p) return false;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    mkdir(p, 0700);
    *s = '/';
  }
  bool ok = mkdir(p, 0700) == 0 || errno == EEXIST;
  free(p);
  struct stat st;
  return ok && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *rt_cache_dir(void) {
  const char *dir = rt_config_get()->cache_dir;
  if (!dir || !make_dirs(dir)) return NULL;
  return dir;
}

bool rt_file_sha256(const char *path, char hex[65]) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  rt_sha256 s;
  rt_sha256_init(&s);
  char buf[1 << 16];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) rt_sha256_add(&s, buf, (size_t)n);
  close(fd);
  if (n < 0) return false;
  unsigned char d[32];
  rt_sha256_done(&s, d);
  rt_hex(d, 32, hex);
  return true;
}

/* Reads the meta file: true with the recorded hash when well-formed. */
static bool read_meta(const char *path, char hex[65]) {
  FILE *f = fopen(path, "re");
  if (!f) return false;
  char magic[32] = "", line[128] = "";
  bool ok = fgets(magic, sizeof magic, f) && strncmp(magic, META_MAGIC "\n", sizeof META_MAGIC) == 0 &&
            fgets(line, sizeof line, f) && sscanf(line, "sha256 %64[0-9a-f]", hex) == 1 &&
            strlen(hex) == 64;
  fclose(f);
  return ok;
}

bool rt_cache_load(const char *dir, const char *key, void **handle) {
  char *so = rt_printf("%s/%s.so", dir, key), *meta = rt_printf("%s/%s.meta", dir, key);
  char want[65], have[65];
  bool hit = so && meta && read_meta(meta, want) && rt_file_sha256(so, have) &&
             strcmp(want, have) == 0;
  if (hit) {
    *handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    hit = *handle != NULL;
  }
  free(so);
  free(meta);
  return hit;
}

static bool fsync_path(const char *path, int flags) {
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

/* Writes text to path via a unique temp file in the same directory. */
static bool write_atomic(const char *path, const char *text) {
  char suffix[64];
  rt_unique_suffix(suffix, sizeof suffix);
  char *tmp = rt_printf("%s.tmp-%s", path, suffix);
  if (!tmp) return false;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  size_t n = strlen(text);
  bool ok = fd >= 0 && write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  ok = ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  free(tmp);
  return ok;
}

bool rt_cache_store(const char *dir, const char *key, const char *built_so) {
  char hex[65] = "";
  char *so = rt_printf("%s/%s.so", dir, key), *meta = rt_printf("%s/%s.meta", dir, key);
  char *text = rt_printf(META_MAGIC "\nsha256 %s\n", rt_file_sha256(built_so, hex) ? hex : "");
  bool ok = so && meta && text && hex[0] && fsync_path(built_so, O_RDONLY) &&
            rename(built_so, so) == 0 && write_atomic(meta, text);
  if (ok) fsync_path(dir, O_RDONLY | O_DIRECTORY);
  free(so);
  free(meta);
  free(text);
  return ok;
}

void rt_remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char *p = rt_printf("%s/%s", dir, e->d_name);
      if (p) unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(dir);
}
