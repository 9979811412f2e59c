/* file.c: whole-file reads and writes.
 *
 * Requires: POSIX. Produces: file_read, file_read_fd, file_strerror,
 * file_write_all, file_write. Breaks: nothing; a failed call leaves errno as the failing step
 * set it (a failed write may leave a partial file: callers write temporaries
 * and rename).
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *file_read_fd(int fd, size_t max, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      errno = ENOMEM;
      return NULL;
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || n + (size_t)r > max) {
      int err = r < 0 ? errno : EFBIG;
      if (r == 0) break;
      free(buf);
      errno = err;
      return NULL;
    }
    n += (size_t)r;
    if (n + 1 == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Opening without blocking, then the type: opening a FIFO waits for a writer,
 * and reading one (or a device) may never end. */
char *file_read(const char *path, size_t max, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) != 0)
    ;
  else if (!S_ISREG(st.st_mode))
    errno = FILE_ENOTREG;
  else
    buf = file_read_fd(fd, max, len);
  int err = errno;
  close(fd);
  errno = err;
  return buf;
}

const char *file_strerror(int err) {
  return err == FILE_ENOTREG ? "not a regular file (a directory, FIFO or device)" : strerror(err);
}

bool file_write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

bool file_write(const char *path, int flags, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0600);
  if (fd < 0) return false;
  bool ok = file_write_all(fd, data, len);
  int err = errno;
  if (close(fd) != 0 && ok) return false;
  errno = err;
  return ok;
}
