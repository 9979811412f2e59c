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

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

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

/* Appends what the child writes until it closes the pipe or the deadline passes. */
static bool drain(int fd, const ProcSpec *s, long long deadline) {
  char buf[4096];
  struct pollfd p = {.fd = fd, .events = POLLIN};
  for (;;) {
    int r = poll(&p, 1, left_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return false; /* out of time */
    ssize_t n = r < 0 ? -1 : read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
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
  long long deadline = timed ? now_ms() + s->timeout_ms : -1;
  bool in_time = fds[0] < 0 || drain(fds[0], s, deadline);
  int status = 0;
  if (!in_time || !reap(pid, deadline, &status, &r->err)) {
    r->timed_out = true;
    kill(-pid, SIGKILL);
    reap(pid, -1, &status, &r->err);
  }
  if (fds[0] >= 0) close(fds[0]);
  if (status == -1) {
    r->started = false; /* it could not be waited for: as good as never run */
    return false;
  }
  if (WIFSIGNALED(status)) r->signal = WTERMSIG(status);
  if (WIFEXITED(status)) r->status = WEXITSTATUS(status);
  return !r->timed_out && WIFEXITED(status) && r->status == 0;
}
