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

/* The whole file at path, at most max bytes. */
char *file_read(const char *path, size_t max, size_t *len);
/* Everything left to read from fd (not closed), at most max bytes. */
char *file_read_fd(int fd, size_t max, size_t *len);
/* Writes all len bytes to fd; false (errno) on failure. */
bool file_write_all(int fd, const void *data, size_t len);
/* Opens path with O_WRONLY | O_CLOEXEC | flags (mode 0600 when created),
 * writes data, closes; false (errno) on any failure. */
bool file_write(const char *path, int flags, const void *data, size_t len);

#endif
