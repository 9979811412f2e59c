/* harness.h: helpers shared by the test suites (reading fixtures, running kernc). */
#ifndef KERN_TEST_HARNESS_H
#define KERN_TEST_HARNESS_H

#include <stddef.h>

/* Reads a whole file (malloc'd, NUL-terminated); NULL if unreadable. */
char *th_read_file(const char *path, size_t *len);
/* Runs a shell command, captures stdout+stderr (malloc'd) and returns the exit status. */
int th_run(const char *cmd, char **output);
/* Lists files in dir ending in suffix, sorted; returns count, *names malloc'd array of malloc'd paths. */
int th_list(const char *dir, const char *suffix, char ***names);

/* A new empty file in $TMPDIR (or /tmp), named NAME_XXXXXXSUFFIX: its
 * descriptor (-1 on failure) and its path in *path (malloc'd, always). */
int th_make_temp(const char *name, const char *suffix, char **path);

/* Points KERN_CACHE_DIR, unless already set (CTest sets the suites' shared
 * cache), at /tmp/kern-NAME-test-UID, for a suite run by hand. */
void th_default_cache_dir(const char *name);

/* A Criterion timeout of s seconds, KERN_TEST_SLOWDOWN times longer in a
 * sanitizer build (tests/CMakeLists.txt sets it: under ASan, beside the other
 * suites on two cores, the heaviest tests ran up to ten times slower). */
#ifndef KERN_TEST_SLOWDOWN
#define KERN_TEST_SLOWDOWN 1
#endif
#define TH_TIMEOUT(s) ((s)*KERN_TEST_SLOWDOWN)

#endif
