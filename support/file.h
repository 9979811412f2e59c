/* file.h: reading and writing whole files.
 *
 * Reads return malloc'd, NUL-terminated bytes (the NUL is not counted in
 * *len), or NULL with errno set: EFBIG past the caller's limit, ENOMEM, or
 * the system call's error. Writes retry interrupted and partial writes.
 */
#ifndef KERN_FILE_H
#define KERN_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* errno of file_read for a path that is not a regular file: a directory, a
 * FIFO or a device, which could block or never end, is not read. No system
 * call sets this value: print it with file_strerror. */
enum { FILE_ENOTREG = 0x4b52 };
/* The whole regular file at path, at most max bytes. */
char *file_read(const char *path, size_t max, size_t *len);
/* strerror, and words for FILE_ENOTREG. */
const char *file_strerror(int err);
/* Everything left to read from fd (not closed), at most max bytes. */
char *file_read_fd(int fd, size_t max, size_t *len);
/* Writes all len bytes to fd; false (errno) on failure. */
bool file_write_all(int fd, const void *data, size_t len);
/* Opens path with O_WRONLY | O_CLOEXEC | flags (mode 0600 when created),
 * writes data, closes; false (errno) on any failure. */
bool file_write(const char *path, int flags, const void *data, size_t len);

#endif
