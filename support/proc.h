/* proc.h: running a program: an argument vector (no shell), a working
 * directory, an optional time limit, its output captured or inherited.
 *
 * The program is found before anything changes directory: a name without a
 * slash is searched on PATH, a relative path is taken from the caller's
 * current directory, and the absolute result is what runs.
 */
#ifndef KERN_PROC_H
#define KERN_PROC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

typedef struct ProcSpec {
  const char *const *argv; /* NULL-terminated; argv[0]: a path or a name on PATH */
  const char *cwd;         /* where it runs; NULL: the current directory */
  int timeout_ms;          /* killed (with its process group) after this long; 0: no limit */
  Buf *output;             /* stdout and stderr, appended; NULL: inherited */
  size_t max_output;       /* bytes kept in output; 0: all */
  _Atomic int *group;      /* NULL, or set to the program's process group while it runs
                            * with a time limit (0 otherwise): a signal handler's way to
                            * stop it (kill(-group, sig)) */
} ProcSpec;

typedef struct ProcResult {
  bool started;   /* false: it could not start (err says why) */
  bool timed_out; /* it ran past timeout_ms and was killed */
  int status;     /* its exit status, when it exited */
  int signal;     /* the signal that ended it, 0 when it exited */
  int err;        /* errno when it could not start or be waited for */
} ProcResult;

/* Runs the program and waits for it to exit (with output captured, its output
 * is read until then, and for 100 ms after while something it left running
 * keeps the pipe open). True when it exited with status 0. */
bool proc_run(const ProcSpec *, ProcResult *);
/* The absolute path of a program: name made absolute when it has a slash,
 * else the first executable regular file of that name on PATH (default
 * "/usr/local/bin:/usr/bin:/bin"). malloc'd; NULL (errno ENOENT, or ENOMEM)
 * when there is none. */
char *proc_find(const char *name);
/* The monotonic clock in milliseconds (for time limits, and the log's timings). */
double proc_now_ms(void);

#endif
