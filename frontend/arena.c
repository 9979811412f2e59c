/* arena.c: the bump allocator behind every compilation.
 *
 * Requires: only libc. Produces: zeroed, 16-byte aligned memory that lives
 * until arena_free(). Breaks: nothing is freed individually (but for adopted
 * blocks given back with arena_release), so a pass
 * that allocates in a loop grows the arena until the compilation ends.
 * Out of memory gives NULL (never an abort): callers report and stop.
 */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_BLOCK = 64 * 1024, ARENA_ALIGN = 16 };

struct ArenaBlock {
  ArenaBlock *next;
  size_t used, cap;
  void *owned; /* arena_adopt: a malloc'd block freed with this one */
  /* Keeps data[] 16-byte aligned whatever the header size is. */
  _Alignas(ARENA_ALIGN) unsigned char data[];
};

Arena *arena_new(void) { return calloc(1, sizeof(Arena)); }

void arena_free(Arena *a) {
  if (!a) return;
  for (ArenaBlock *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b->owned);
    free(b);
  }
  free(a);
}

static ArenaBlock *block_new(size_t cap) {
  if (cap > SIZE_MAX - sizeof(ArenaBlock)) return NULL;
  ArenaBlock *b = calloc(1, sizeof(ArenaBlock) + cap);
  if (b) b->cap = cap;
  return b;
}

/* A big request gets a block of its own behind the head, so the partly
 * used head block keeps serving small requests. */
static void *alloc_big(Arena *a, size_t size) {
  ArenaBlock *b = block_new(size);
  if (!b) return NULL;
  b->used = size;
  if (a->head) {
    b->next = a->head->next;
    a->head->next = b;
  } else {
    a->head = b;
  }
  return b->data;
}

void *arena_alloc(Arena *a, size_t size) {
  if (!a) return NULL;
  if (size == 0) size = 1;
  if (size > SIZE_MAX - ARENA_ALIGN) return NULL;
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  void *p;
  if (size > ARENA_BLOCK / 4) {
    p = alloc_big(a, size);
  } else {
    ArenaBlock *b = a->head;
    if (!b || b->cap - b->used < size) {
      b = block_new(ARENA_BLOCK);
      if (!b) return NULL;
      b->next = a->head;
      a->head = b;
    }
    p = b->data + b->used;
    b->used += size;
  }
  if (p) a->total += size;
  return p;
}

void *arena_adopt(Arena *a, void *p) {
  ArenaBlock *b = a ? block_new(0) : NULL;
  if (!b) {
    free(p);
    return NULL;
  }
  b->owned = p;
  if (a->head) {
    b->next = a->head->next;
    a->head->next = b;
  } else {
    a->head = b;
  }
  return p;
}

void arena_release(Arena *a, void *p) {
  if (!a || !p) return;
  for (ArenaBlock **link = &a->head; *link; link = &(*link)->next)
    if ((*link)->owned == p) {
      ArenaBlock *b = *link;
      *link = b->next;
      free(b->owned);
      free(b);
      return;
    }
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *p = arena_alloc(a, n + 1);
  if (p && n) memcpy(p, s, n);
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = arena_alloc(a, (size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}
