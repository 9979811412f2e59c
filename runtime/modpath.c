/* modpath.c: where kern_module_load finds a module's file: the path as given,
 * else the search path (KERN_PATH, then kern_module_search_path_add's
 * directories), and the message when it is nowhere.
 *
 * Requires: the configuration (KERN_PATH, read at kern_init), front.h (the
 * file read). Produces: rt_module_read for module.c, and
 * kern_module_search_path_add.
 * Breaks: a path is used as given when it is absolute, explicitly relative
 * ("./", "../"), or names something in the working directory (so the working
 * directory comes first, and a file the user points at is never shadowed);
 * otherwise each search directory is tried in order and the first that holds
 * the path wins. Only a regular file is read (a FIFO or a device could block
 * the load forever: support/file.c refuses them). "$ORIGIN" at the start of a search directory is the
 * program's own directory (/proc/self/exe), as in an rpath. The directories
 * added by the API stay for the life of the process.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "file.h"
#include "front.h"
#include "fork.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_MODPATH)
static char **added; /* kern_module_search_path_add's directories, in order */
static int nadded;

kern_status kern_module_search_path_add(const char *dir) {
  if (!dir || !*dir)
    return err_set(KERN_ERR_INVALID_ARGUMENT, "kern_module_search_path_add: dir is %s",
                   dir ? "empty" : "NULL");
  char *copy = str_dup(dir);
  pthread_mutex_lock(&mu);
  char **grown = copy ? realloc(added, (size_t)(nadded + 1) * sizeof *added) : NULL;
  if (grown) added = grown, added[nadded++] = copy;
  pthread_mutex_unlock(&mu);
  if (grown) return KERN_OK;
  free(copy);
  return err_set(KERN_ERR_OUT_OF_MEMORY, "out of memory adding '%s' to the module search path",
                 dir);
}

/* ---- the search list ------------------------------------------------------------------------ */

/* dir with a leading $ORIGIN (or ${ORIGIN}) replaced by the program's directory. */
static char *expand(const char *dir, size_t len) {
  size_t skip = !strncmp(dir, "$ORIGIN", 7) ? 7 : !strncmp(dir, "${ORIGIN}", 9) ? 9 : 0;
  char exe[PATH_MAX];
  ssize_t n = skip && (dir[skip] == '/' || skip == len)
                  ? readlink("/proc/self/exe", exe, sizeof exe - 1)
                  : -1;
  if (n <= 0) return str_printf("%.*s", (int)len, dir);
  exe[n] = 0;
  *strrchr(exe, '/') = 0; /* the link is an absolute path: it has a '/' */
  return str_printf("%s%.*s", exe[0] ? exe : "/", (int)(len - skip), dir + skip);
}

typedef struct Dirs {
  char **dir;
  int n;
} Dirs;

static void dirs_add(Dirs *d, const char *dir, size_t len) {
  char **grown = len ? realloc(d->dir, (size_t)(d->n + 1) * sizeof *d->dir) : NULL;
  char *e = grown ? expand(dir, len) : NULL;
  if (grown) d->dir = grown;
  if (e) d->dir[d->n++] = e;
}

/* KERN_PATH's directories (empty entries skipped), then the added ones. */
static Dirs search_dirs(void) {
  Dirs d = {0};
  for (const char *p = rt_config_get()->path; p && *p;) {
    size_t len = strcspn(p, ":");
    dirs_add(&d, p, len);
    p += len + (p[len] == ':');
  }
  pthread_mutex_lock(&mu);
  for (int i = 0; i < nadded; i++) dirs_add(&d, added[i], strlen(added[i]));
  pthread_mutex_unlock(&mu);
  return d;
}

static void dirs_free(Dirs *d) {
  for (int i = 0; i < d->n; i++) free(d->dir[i]);
  free(d->dir);
}

/* ---- finding and reading ------------------------------------------------------------------------ */

static bool explicitly_relative(const char *p) {
  return p[0] == '.' && (p[1] == '/' || p[1] == 0 || (p[1] == '.' && (p[2] == '/' || p[2] == 0)));
}

/* "cannot read 'x': why", and for a relative path where it was looked for. */
static void read_failed(const char *path, int e, const Dirs *searched) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || e != ENOENT) {
    err_set(KERN_ERR_IO, "cannot read '%s': %s", path, file_strerror(e));
    return;
  }
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "(unknown: %s)", strerror(errno));
  Buf b = {0};
  buf_printf(&b, "cannot read '%s': %s (", path, strerror(e));
  if (!searched)
    buf_printf(&b, "relative to the working directory, %s)", cwd);
  else if (searched->n == 0)
    buf_printf(&b,
               "relative to the working directory, %s; KERN_PATH or kern_module_search_path_add "
               "name more directories to search)",
               cwd);
  else {
    buf_printf(&b, "looked in the working directory, %s, then in", cwd);
    for (int i = 0; i < searched->n; i++) buf_printf(&b, "%s %s", i ? "," : "", searched->dir[i]);
    buf_puts(&b, ")");
  }
  err_text(KERN_ERR_IO, "", b.s ? b.s : "cannot read a module file");
  buf_free(&b);
}

/* The file to read for path (malloc'd), or NULL when it is nowhere. */
static char *find(const char *path, Dirs *searched, bool *was_searched) {
  struct stat st;
  *was_searched = false;
  if (path[0] == '/' || explicitly_relative(path) || stat(path, &st) == 0 || errno != ENOENT)
    return str_dup(path);
  *was_searched = true;
  *searched = search_dirs();
  for (int i = 0; i < searched->n; i++) {
    char *c = str_printf("%s/%s", searched->dir[i], path);
    if (c && stat(c, &st) == 0) return c;
    free(c);
  }
  errno = ENOENT;
  return NULL;
}

char *rt_module_read(const char *path, char **file, size_t *len) {
  Dirs searched = {0};
  bool was_searched;
  char *src = NULL;
  *file = find(path, &searched, &was_searched);
  if (*file && !(src = front_read_file(*file, len))) {
    int e = errno;
    read_failed(*file, e, NULL);
    free(*file);
    *file = NULL;
  } else if (!*file) {
    read_failed(path, errno, was_searched ? &searched : NULL);
  }
  dirs_free(&searched);
  return src;
}
