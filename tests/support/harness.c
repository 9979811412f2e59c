/* harness.c: see harness.h. */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* LeakSanitizer's suppressions (read in ASan builds only). BoxFort, the sandbox
 * inside libcriterion, loses a 48-byte timeout request from its list when a
 * test with a shorter .timeout starts while one with a longer .timeout runs:
 * bxfi_push_timeout does not link the new entry to the ones after it. That
 * leak is in the runner process, which runs no kern code. Test bodies run in
 * "boxfort-worker" processes, where libcriterion is on every stack (it calls
 * the test), so there the suppression would hide kern's leaks: it is given to
 * the runner only (which runs test bodies itself only with --no-fork). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  char argv0[32] = "";
  int fd = open("/proc/self/cmdline", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, argv0, sizeof argv0 - 1) < 0) argv0[0] = 0;
    close(fd);
  }
  return strcmp(argv0, "boxfort-worker") == 0 ? "" : "leak:libcriterion.so\n";
}

char *th_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

int th_run(const char *cmd, char **output) {
  char *full = malloc(strlen(cmd) + 16);
  sprintf(full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  free(full);
  if (!p) return -1;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += got;
    if (cap - n < 2) buf = realloc(buf, cap *= 2);
  }
  buf[n] = 0;
  int st = pclose(p);
  if (output)
    *output = buf;
  else
    free(buf);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int th_list(const char *dir, const char *suffix, char ***names) {
  DIR *d = opendir(dir);
  int n = 0, cap = 16;
  char **v = malloc(cap * sizeof *v);
  struct dirent *e;
  size_t sl = strlen(suffix);
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[n] = malloc(strlen(dir) + l + 2);
    sprintf(v[n++], "%s/%s", dir, e->d_name);
  }
  if (d) closedir(d);
  qsort(v, n, sizeof *v, cmp);
  *names = v;
  return n;
}

int th_make_temp(const char *name, const char *suffix, char **path) {
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  size_t cap = strlen(dir) + strlen(name) + strlen(suffix) + 16;
  *path = malloc(cap);
  if (!*path) return -1;
  snprintf(*path, cap, "%s/%s_XXXXXX%s", dir, name, suffix);
  return mkstemps(*path, (int)strlen(suffix));
}

void th_default_cache_dir(const char *name) {
  if (getenv("KERN_CACHE_DIR")) return;
  char dir[256];
  snprintf(dir, sizeof dir, "/tmp/kern-%s-test-%d", name, (int)getuid());
  setenv("KERN_CACHE_DIR", dir, 1);
}
