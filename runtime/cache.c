/* cache.c: the on-disk cache of compiled code, and whether to trust it.
 *
 * Requires: sha256.c, the configuration (the cache dir). Produces:
 * rt_cache_dir (and its reason, for kern_cache_dir), rt_cache_load/store (CPU shared objects),
 * rt_cache_blob_read/write (GPU images) and file helpers.
 * Breaks: the directory is used only when this user (or root) owns it and
 * neither its group nor others may write it; kern creates it, and any missing
 * parent, with mode 0700. Otherwise there is no cache: code is compiled in a
 * private temporary directory, and kern_cache_dir says why.
 * A CPU entry is <key>.so plus <key>.meta ("kern-cache 1", then the .so's
 * SHA-256, its key and the key of its source); a GPU entry is <key>.gpu plus
 * <key>.gpu.sha. Writers publish with a 0600 temp file + fsync + rename, the
 * hash last, so a reader sees old or new files, never half of one. Readers
 * open entries without following symlinks and accept only regular files
 * owned by this user or root that nobody else may write, whose bytes match
 * the recorded hash: a corrupt, truncated, planted or mismatched entry is a
 * miss and gets rebuilt. A GPU image is hashed in memory, the very bytes
 * handed to the driver; a CPU object is hashed through its file and then
 * dlopen'd by the same path: in a directory only this user or root can
 * write, nobody else can swap the file in between (docs/security.md).
 * Housekeeping: builds happen in uniquely named directories; the first store
 * of a process removes what killed processes left behind, and every store
 * evicts least recently used entries past the size bound (a load touches its
 * entry's meta or hash file, whose time is the entry's last use).
 */
#include "base.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "dl.h"

#define META_MAGIC "kern-cache 1"

enum { MAX_BLOB = 1 << 30 };

void rt_unique_suffix(char *out, size_t n) {
  static _Atomic unsigned long counter;
  unsigned long c = atomic_fetch_add(&counter, 1);
  snprintf(out, n, "%ld-%ld-%lu", (long)getpid(), (long)syscall(SYS_gettid), c);
}

/* ---- trust --------------------------------------------------------------------- */

/* Why someone other than this user (or root) may change the file or
 * directory st describes; NULL when nobody can. */
static const char *writable_by_others(const struct stat *st) {
  if (st->st_uid != geteuid() && st->st_uid != 0) return "it is owned by another user";
  if (st->st_mode & (S_IWGRP | S_IWOTH)) return "its group or other users may write it";
  return NULL;
}

/* Opens an entry for reading: a regular file (not a symlink, FIFO or device)
 * that only this user or root may write. -1 otherwise. */
static int open_entry(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || writable_by_others(&st))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* ---- the directory ----------------------------------------------------------------- */

/* mkdir -p; what it creates gets mode 0700 whatever the umask. */
static bool make_dirs(const char *path) {
  char *p = str_dup(path);
  if (!p) return false;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0700) == 0) chmod(p, 0700);
    *s = '/';
  }
  bool made = mkdir(p, 0700) == 0, ok = made || errno == EEXIST;
  if (made) chmod(p, 0700);
  free(p);
  return ok;
}

/* 0 when dir is (now) a directory, else an errno value. */
static int dir_error(const char *dir, struct stat *sb) {
  if (!make_dirs(dir) || stat(dir, sb) != 0) return errno ? errno : EIO;
  return S_ISDIR(sb->st_mode) ? 0 : ENOTDIR;
}

/* The cache directory, created when missing; NULL when there is none or it
 * is not trusted, with the status and the reason in *st and why. */
static const char *checked_dir(kern_status *st, char *why, size_t n) {
  const char *dir = rt_config_get()->cache_dir;
  struct stat sb;
  const char *bad;
  int err;
  *st = KERN_OK;
  if (!dir) {
    *st = KERN_ERR_NOT_FOUND;
    snprintf(why, n,
             "there is no cache directory: KERN_CACHE_DIR, XDG_CACHE_HOME and HOME are unset");
  } else if ((err = dir_error(dir, &sb))) {
    *st = KERN_ERR_IO;
    snprintf(why, n, "cannot create the cache directory '%s': %s", dir, strerror(err));
  } else if ((bad = writable_by_others(&sb))) {
    *st = KERN_ERR_IO;
    snprintf(
        why, n,
        "the cache directory '%s' is not trusted: %s (owner uid %ld, mode %04o); kern compiles without "
        "caching until it is private (chmod 700) or KERN_CACHE_DIR names another directory",
        dir, bad, (long)sb.st_uid, (unsigned)(sb.st_mode & 07777)); /* sticky, setgid bits too */
  }
  return *st == KERN_OK ? dir : NULL;
}

const char *rt_cache_dir(void) {
  kern_status st;
  char why[1024];
  return checked_dir(&st, why, sizeof why);
}

const char *rt_cache_dir_or_error(void) {
  kern_status st;
  char why[1024];
  const char *dir = checked_dir(&st, why, sizeof why);
  if (!dir) err_set(st, "%s", why);
  return dir;
}

kern_status rt_cache_explain(kern_status st) {
  kern_status why_st;
  char why[1024];
  if (st == KERN_OK || checked_dir(&why_st, why, sizeof why)) return st;
  return err_set(st, "%s (no cached build could be used: %s)", kern_last_error(), why);
}

/* ---- hashing and writing files ---------------------------------------------------------- */

static bool fd_sha256(int fd, char hex[65]) {
  rt_sha256 s;
  rt_sha256_init(&s);
  char buf[1 << 16];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    rt_sha256_add(&s, buf, (size_t)n);
  }
  unsigned char d[32];
  rt_sha256_done(&s, d);
  rt_hex(d, 32, hex);
  return true;
}

static void mem_sha256(const void *data, size_t len, char hex[65]) {
  rt_sha256 s;
  unsigned char d[32];
  rt_sha256_init(&s);
  rt_sha256_add(&s, data, len);
  rt_sha256_done(&s, d);
  rt_hex(d, 32, hex);
}

/* Writes data to path via a unique 0600 temp file in the same directory. */
static bool write_atomic(const char *path, const void *data, size_t len) {
  char suffix[64];
  rt_unique_suffix(suffix, sizeof suffix);
  char *tmp = str_printf("%s.tmp-%s", path, suffix);
  if (!tmp) return false;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && file_write_all(fd, data, len) && fsync(fd) == 0;
  if (fd >= 0) ok = close(fd) == 0 && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  free(tmp);
  return ok;
}

static bool fsync_path(const char *path, int flags) {
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

/* ---- housekeeping ------------------------------------------------------------------------ */

enum { STALE_SECONDS = 3600 };

/* This host's name, as it may appear in a file name. */
static void host_name(char out[65]) {
  if (gethostname(out, 65) != 0) snprintf(out, 65, "host");
  out[64] = 0;
  for (char *p = out; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '.' || *p == '_'))
      *p = '_';
}

char *rt_cache_build_dir(const char *dir) {
  char host[65];
  host_name(host);
  char *d = str_printf("%s/.build-%ld-%s-XXXXXX", dir, (long)getpid(), host);
  if (d && mkdtemp(d)) return d;
  int err = d ? errno : ENOMEM;
  free(d);
  errno = err;
  return NULL;
}

/* A build directory's maker, from ".build-<pid>-<host>-XXXXXX": gone when it
 * was made on this host by a process that no longer exists. */
static bool maker_gone(const char *name) {
  char *end, host[65];
  long pid = strtol(name + 7, &end, 10);
  if (end == name + 7 || *end != '-' || pid <= 0) return false;
  size_t n = strlen(end + 1);
  host_name(host);
  if (n < 7 || n - 7 != strlen(host) || strncmp(end + 1, host, n - 7) != 0) return false;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static bool is_temp(const char *name) {
  return !strncmp(name, ".alias-", 7) || strstr(name, ".tmp-") != NULL;
}

/* Removes one leftover of a killed process (with all: every temporary file). */
static void tidy_one(const char *dir, const char *name, const struct stat *st, bool all) {
  bool old = time(NULL) - st->st_mtime > STALE_SECONDS;
  char *path = NULL;
  if (S_ISDIR(st->st_mode) && !strncmp(name, ".build-", 7) && (old || maker_gone(name))) {
    if ((path = str_printf("%s/%s", dir, name))) rt_remove_tree(path);
  } else if (S_ISREG(st->st_mode) && is_temp(name) && (old || all)) {
    if ((path = str_printf("%s/%s", dir, name))) unlink(path);
  }
  free(path);
}

/* One file of the cache at the top level (no links followed). */
typedef struct cfile {
  char name[256];
  int64_t bytes;
  struct timespec time;
  bool dir;
} cfile;

/* dir's entries (regular files and directories, "." and ".." skipped),
 * malloc'd; *n of them. NULL when it cannot be read. */
static cfile *list_dir(const char *dir, size_t *n) {
  DIR *d = opendir(dir);
  cfile *v = NULL;
  size_t cap = 0;
  *n = 0;
  struct dirent *e;
  struct stat st;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || strlen(e->d_name) >= 256) continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) continue;
    if (*n == cap) {
      cfile *grown = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v);
      if (!grown) break;
      v = grown;
    }
    cfile *f = &v[(*n)++];
    snprintf(f->name, sizeof f->name, "%s", e->d_name);
    f->bytes = (int64_t)st.st_size;
    f->time = st.st_mtim;
    f->dir = S_ISDIR(st.st_mode);
  }
  if (d) closedir(d);
  return v;
}

void rt_cache_tidy(const char *dir) {
  size_t n;
  cfile *v = list_dir(dir, &n);
  for (size_t i = 0; i < n; i++) {
    struct stat st = {.st_mode = v[i].dir ? S_IFDIR : S_IFREG, .st_mtim = v[i].time};
    tidy_one(dir, v[i].name, &st, false);
  }
  free(v);
}

/* The entry a file belongs to: its name up to the first '.' (a key), or 0
 * for leftovers and directories. */
static size_t stem_len(const cfile *f) {
  if (f->dir || f->name[0] == '.' || is_temp(f->name)) return 0;
  return strcspn(f->name, ".");
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const cfile *)a)->name, ((const cfile *)b)->name);
}

/* An entry: the files [first, first + nfiles) of the sorted list. */
typedef struct centry {
  size_t first, nfiles;
  int64_t bytes;
  struct timespec used;
} centry;

static int by_use(const void *a, const void *b) {
  const struct timespec *x = &((const centry *)a)->used, *y = &((const centry *)b)->used;
  return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1)
                                : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Groups the sorted files into entries (malloc'd, *n); *total gets the bytes
 * of every regular file. */
static centry *group(cfile *v, size_t nfiles, size_t *n, int64_t *total) {
  centry *e = calloc(nfiles + 1, sizeof *e);
  *n = 0;
  *total = 0;
  for (size_t i = 0; i < nfiles; i++) {
    if (!v[i].dir) *total += v[i].bytes;
    size_t len = stem_len(&v[i]);
    if (!len || !e) continue;
    centry *last = *n ? &e[*n - 1] : NULL;
    const char *prev = last ? v[last->first].name : NULL;
    if (!last || strlen(prev) < len || strncmp(prev, v[i].name, len) || prev[len] != '.')
      last = &e[(*n)++], *last = (centry){.first = i};
    last->nfiles++;
    last->bytes += v[i].bytes;
    if (by_use(&(centry){.used = v[i].time}, last) > 0) last->used = v[i].time;
  }
  return e;
}

static void remove_entry(const char *dir, const cfile *v, const centry *e) {
  for (size_t i = e->first; i < e->first + e->nfiles; i++) {
    char *path = str_printf("%s/%s", dir, v[i].name);
    if (path) unlink(path);
    free(path);
  }
}

void rt_cache_evict(const char *dir, int64_t max_bytes) {
  if (max_bytes <= 0) return;
  size_t nfiles, n;
  int64_t total;
  cfile *v = list_dir(dir, &nfiles);
  if (v) qsort(v, nfiles, sizeof *v, by_name);
  centry *e = group(v, nfiles, &n, &total);
  if (e) qsort(e, n, sizeof *e, by_use);
  for (size_t i = 0; e && i < n && total > max_bytes; i++) {
    remove_entry(dir, v, &e[i]);
    total -= e[i].bytes;
  }
  free(e);
  free(v);
}

void rt_cache_measure(const char *dir, int64_t *entries, int64_t *bytes) {
  size_t nfiles, n;
  cfile *v = list_dir(dir, &nfiles);
  if (v) qsort(v, nfiles, sizeof *v, by_name);
  centry *e = group(v, nfiles, &n, bytes);
  *entries = 0;
  for (size_t i = 0; e && i < n; i++) {
    const char *ext = strchr(v[e[i].first].name, '.');
    bool alias = e[i].nfiles == 1 && ext && !strcmp(ext, ".latest");
    *entries += !alias;
  }
  free(e);
  free(v);
}

bool rt_cache_clear(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return false;
  closedir(d);
  size_t nfiles;
  cfile *v = list_dir(dir, &nfiles);
  bool ok = true;
  for (size_t i = 0; i < nfiles; i++) {
    struct stat st = {.st_mode = v[i].dir ? S_IFDIR : S_IFREG, .st_mtim = v[i].time};
    if (stem_len(&v[i])) {
      char *path = str_printf("%s/%s", dir, v[i].name);
      ok = path && (unlink(path) == 0 || errno == ENOENT) && ok;
      free(path);
    } else {
      tidy_one(dir, v[i].name, &st, true);
    }
  }
  free(v);
  return ok;
}

/* After a store: once per process the leftovers, every time the bound. */
static void housekeep(const char *dir) {
  static _Atomic bool tidied;
  if (!atomic_exchange(&tidied, true)) rt_cache_tidy(dir);
  rt_cache_evict(dir, rt_config_get()->cache_max_bytes);
}

/* ---- CPU entries ----------------------------------------------------------------------------- */

typedef struct meta {
  char sha[65], key[65], source[65];
} meta;

/* Reads a meta file: true when well-formed (magic line and a SHA-256). */
static bool read_meta(const char *path, meta *m) {
  memset(m, 0, sizeof *m);
  int fd = open_entry(path);
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    return false;
  }
  char line[160], name[16], value[65];
  bool ok = fgets(line, sizeof line, f) && strcmp(line, META_MAGIC "\n") == 0;
  while (ok && fgets(line, sizeof line, f))
    if (sscanf(line, "%15s %64[0-9a-f]", name, value) == 2) {
      char *field = !strcmp(name, "sha256")   ? m->sha
                    : !strcmp(name, "key")    ? m->key
                    : !strcmp(name, "source") ? m->source
                                              : NULL;
      if (field) strcpy(field, value);
    }
  fclose(f);
  return ok && strlen(m->sha) == 64;
}

/* True when <dir>/<key>.so's bytes match a meta that names key (and source). */
static bool entry_verified(const char *so, const char *meta_path, const char *key,
                           const char *source) {
  meta m;
  char have[65];
  if (!read_meta(meta_path, &m) || strcmp(m.key, key) != 0 ||
      (source && strcmp(m.source, source) != 0))
    return false;
  int fd = open_entry(so);
  bool ok = fd >= 0 && fd_sha256(fd, have) && strcmp(m.sha, have) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

bool rt_cache_load(const char *dir, const char *key, const char *source, void **handle) {
  char *so = str_printf("%s/%s.so", dir, key), *meta_path = str_printf("%s/%s.meta", dir, key);
  bool hit = so && meta_path && entry_verified(so, meta_path, key, source);
  if (hit) {
    *handle = dl_open(so, RTLD_NOW | RTLD_LOCAL);
    hit = *handle != NULL;
  }
  if (hit) utimensat(AT_FDCWD, meta_path, NULL, 0); /* used now: last to be evicted */
  free(so);
  free(meta_path);
  return hit;
}

/* Makes the built object 0600, syncs it and returns its SHA-256. */
static bool seal_built(const char *path, char hex[65]) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  bool ok = fd >= 0 && fchmod(fd, 0600) == 0 && fd_sha256(fd, hex) && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

bool rt_cache_store(const char *dir, const char *key, const char *source, const char *built_so) {
  char hex[65] = "";
  bool ok = seal_built(built_so, hex);
  char *so = str_printf("%s/%s.so", dir, key), *meta_path = str_printf("%s/%s.meta", dir, key);
  char *text = str_printf(META_MAGIC "\nsha256 %s\nkey %s\nsource %s\n", hex, key, source);
  ok = ok && so && meta_path && text && rename(built_so, so) == 0 &&
       write_atomic(meta_path, text, strlen(text));
  if (ok) fsync_path(dir, O_RDONLY | O_DIRECTORY);
  if (ok) housekeep(dir);
  free(so);
  free(meta_path);
  free(text);
  return ok;
}

/* ---- GPU entries --------------------------------------------------------------------------- */

/* The whole of a regular file opened by open_entry; NUL-terminated. */
static char *read_entry(const char *path, size_t *len) {
  int fd = open_entry(path);
  if (fd < 0) return NULL;
  char *buf = file_read_fd(fd, MAX_BLOB, len);
  close(fd);
  return buf;
}

char *rt_cache_blob_read(const char *dir, const char *key, size_t *len) {
  char *path = str_printf("%s/%s.gpu", dir, key), *sha = str_printf("%s/%s.gpu.sha", dir, key);
  size_t sha_len = 0;
  char *want = sha ? read_entry(sha, &sha_len) : NULL, have[65];
  char *data = path && want && sha_len == 64 ? read_entry(path, len) : NULL;
  if (data) mem_sha256(data, *len, have);
  if (data && memcmp(want, have, 64) != 0) {
    free(data);
    data = NULL;
  }
  if (data) utimensat(AT_FDCWD, sha, NULL, 0);
  free(path);
  free(sha);
  free(want);
  return data;
}

void rt_cache_blob_write(const char *dir, const char *key, const void *data, size_t len) {
  char hex[65];
  mem_sha256(data, len, hex);
  char *path = str_printf("%s/%s.gpu", dir, key), *sha = str_printf("%s/%s.gpu.sha", dir, key);
  if (path && sha && write_atomic(path, data, len) && write_atomic(sha, hex, 64)) housekeep(dir);
  free(path);
  free(sha);
}

void rt_remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char *p = str_printf("%s/%s", dir, e->d_name);
      if (p) unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(dir);
}
