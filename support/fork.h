/* fork.h: kern's process-wide locks, held across fork() so that a child
 * finds each of them free and what it guards whole.
 *
 * POSIX leaves a forked child with only the forking thread; a lock another
 * thread held at that moment stays locked in the child for ever. Every
 * process-wide lock a child may need registers here (FORK_GUARD, next to its
 * definition): before fork() the forking thread takes them all, in the order
 * of fork_rank below, and releases them in both processes afterwards; a
 * condition variable registered with its lock is made anew in the child
 * (its waiters were other threads). The CPU pool (runtime/cpu/pool.c) has
 * its own handler, which also forgets the workers. CUDA's locks are not
 * registered: CUDA cannot be used in a child of a process that started it.
 */
#ifndef KERN_FORK_H
#define KERN_FORK_H

#include <pthread.h>

/* Outermost first: a thread that holds a lock of one rank may take locks of
 * later ranks, never of earlier ones, so taking them in this order cannot
 * deadlock with the threads that hold some of them. */
typedef enum {
  FORK_RANK_INIT,        /* runtime/init.c: kern_init, kern_shutdown */
  FORK_RANK_PROBE,       /* runtime/device.c: the GPU probe */
  FORK_RANK_EMBEDDED,    /* runtime/embedded.c: kernc build's modules */
  FORK_RANK_PRIMS,       /* runtime/primitives.c: the primitives' modules */
  FORK_RANK_CAPTURE,     /* runtime/capture.c: the recorder */
  FORK_RANK_SLOTS,       /* runtime/module.c: which module slots are being compiled */
  FORK_RANK_REPORT,      /* runtime/init.c: kern_config_get */
  FORK_RANK_AT_SHUTDOWN, /* runtime/init.c: the shutdown list */
  FORK_RANK_MODPATH,     /* runtime/modpath.c: the search path */
  FORK_RANK_DTYPE,       /* runtime/dtype.c: struct dtypes */
  FORK_RANK_CPU_ID,      /* runtime/compile.c: the CPU's identity */
  FORK_RANK_CC_ID,       /* support/toolchain.c: compilers' identities */
  FORK_RANK_LAUNCH_WARN, /* runtime/launch.c: warnings already given */
  FORK_RANK_DL,          /* support/dl.c: kern's dlopen and dlclose */
  FORK_RANK_REGISTRY,    /* runtime/registry.c: kern's allocations */
  FORK_RANK_WARN,        /* support/error.c: the warning handler */
  FORK_RANK_LOG,         /* support/error.c: the log handler */
  FORK_RANKS
} fork_rank;

/* Registers mu (and cv, which may be NULL) under rank; one lock per rank. */
void fork_guard(pthread_mutex_t *mu, pthread_cond_t *cv, fork_rank rank);

/* Registers a file's lock when the library is loaded, before any thread
 * can take it. */
#define FORK_GUARD(mu, cv, rank)                                                                   \
  __attribute__((constructor)) static void fork_guard_##rank(void) { fork_guard(mu, cv, rank); }

#endif
