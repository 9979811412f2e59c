/* proc.c: the process runner.
 *
 * Requires: POSIX (posix_spawn, poll, waitpid). Produces: proc_run and
 * proc_find.
 * Breaks: the child gets stdin from /dev/null; with a time limit it runs in a
 * process group of its own so that the kill reaches what it started (a
 * compiler's own subprocesses), and without one it stays in the caller's
 * (a terminal's Ctrl-C reaches it as before). Nothing but the returned
 * status says how it went: the caller words any message.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "str.h"

extern char **environ;

/* ---- finding the program ------------------------------------------------------------ */

static bool is_exec(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* path made absolute against the current directory (malloc'd). */
static char *absolute(const char *path) {
  if (path[0] == '/') return str_dup(path);
  while (path[0] == '.' && path[1] == '/') path += 2;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  return str_printf("%s/%s", cwd, path);
}

char *proc_find(const char *name) {
  if (strchr(name, '/')) {
    if (!is_exec(name)) {
      errno = ENOENT;
      return NULL;
    }
    return absolute(name);
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    size_t n = strcspn(p, ":");
    char *cand = str_printf("%.*s/%s", (int)n, n ? p : ".", name);
    if (cand && is_exec(cand)) {
      char *abs = absolute(cand);
      free(cand);
      return abs;
    }
    free(cand);
    p += n;
    if (*p == ':') p++;
  }
  errno = ENOENT;
  return NULL;
}

/* ---- time ---------------------------------------------------------------------------- */

double proc_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static long long now_ms(void) { return (long long)proc_now_ms(); }

/* Milliseconds left before deadline (-1: no deadline, wait forever). */
static int left_ms(long long deadline) {
  if (deadline < 0) return -1;
  long long left = deadline - now_ms();
  return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* ---- running ------------------------------------------------------------------------------ */

static pid_t spawn(const ProcSpec *s, const char *path, int out_fd, bool own_group, int *err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
  }
  if (s->cwd) posix_spawn_file_actions_addchdir_np(&fa, s->cwd);
  if (own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  }
  pid_t pid;
  *err = posix_spawn(&pid, path, &fa, &attr, (char *const *)s->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return *err ? -1 : pid;
}

/* How long output is still read once the program exited: what it wrote is in
 * the pipe already; a child it left running (a compiler wrapper's background
 * job) may hold the pipe open for as long as it likes. */
enum { EXIT_GRACE_MS = 100 };

/* Whether pid has ended (its status in *status); errors count as ended. */
static bool ended(pid_t pid, int *status, int *err) {
  pid_t r;
  while ((r = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r < 0) {
    *err = errno;
    *status = -1;
  }
  return r != 0;
}

/* Appends what the child writes while it runs (and for a short grace after
 * it exited), and waits for it until the deadline. False when it is still
 * running then; else *status is its wait status (-1 when it could not be
 * waited for). */
static bool drain(int fd, pid_t pid, const ProcSpec *s, long long deadline, int *status, int *err) {
  char buf[4096];
  bool open = true, done = false;
  long long grace = -1;
  for (int nap = 1;;) {
    if (!done && (done = ended(pid, status, err))) grace = now_ms() + EXIT_GRACE_MS;
    if (done && (!open || left_ms(grace) == 0)) return true;
    if (!done && left_ms(deadline) == 0) return false;
    int wait = done ? left_ms(grace) : nap;
    if (!done && deadline >= 0 && wait > left_ms(deadline)) wait = left_ms(deadline);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = open ? poll(&p, 1, wait) : 0;
    if (!open) { /* the pipe is closed but the child runs on: wait for it */
      struct timespec t = {0, wait * 1000000L};
      nanosleep(&t, NULL);
    }
    if (r < 0 && errno != EINTR) open = false;
    if (r <= 0) {
      if (nap < 50) nap *= 2;
      continue;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      open = false;
      continue;
    }
    if (!s->max_output || s->output->len < s->max_output) buf_add(s->output, buf, (size_t)n);
  }
}

/* Waits for pid until the deadline; false when it is still running then. */
static bool reap(pid_t pid, long long deadline, int *status, int *err) {
  for (int nap = 1;;) {
    pid_t r = waitpid(pid, status, deadline < 0 ? 0 : WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      *err = errno;
      *status = -1;
      return true;
    }
    if (r == 0) {
      if (left_ms(deadline) == 0) return false;
      struct timespec t = {0, nap * 1000000L};
      nanosleep(&t, NULL);
      if (nap < 50) nap *= 2;
    }
  }
}

bool proc_run(const ProcSpec *s, ProcResult *r) {
  *r = (ProcResult){0};
  char *path = proc_find(s->argv[0]);
  if (!path) {
    r->err = errno;
    return false;
  }
  int fds[2] = {-1, -1};
  if (s->output && pipe2(fds, O_CLOEXEC) != 0) {
    r->err = errno;
    free(path);
    return false;
  }
  bool timed = s->timeout_ms > 0;
  pid_t pid = spawn(s, path, fds[1], timed, &r->err);
  free(path);
  if (fds[1] >= 0) close(fds[1]);
  if (pid < 0) {
    if (fds[0] >= 0) close(fds[0]);
    return false;
  }
  r->started = true;
  if (s->group) atomic_store(s->group, timed ? (int)pid : 0);
  long long deadline = timed ? now_ms() + s->timeout_ms : -1;
  int status = 0;
  bool in_time = fds[0] >= 0 ? drain(fds[0], pid, s, deadline, &status, &r->err)
                             : reap(pid, deadline, &status, &r->err);
  if (!in_time) {
    r->timed_out = true;
    kill(-pid, SIGKILL);
    reap(pid, -1, &status, &r->err);
  }
  if (s->group) atomic_store(s->group, 0);
  if (fds[0] >= 0) close(fds[0]);
  if (status == -1) {
    r->started = false; /* it could not be waited for: as good as never run */
    return false;
  }
  if (WIFSIGNALED(status)) r->signal = WTERMSIG(status);
  if (WIFEXITED(status)) r->status = WEXITSTATUS(status);
  return !r->timed_out && WIFEXITED(status) && r->status == 0;
}
