/* arena.h: one bump allocator per compilation; everything is freed by arena_free(). */
#ifndef KERN_ARENA_H
#define KERN_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
  ArenaBlock *head;
  size_t total; /* bytes handed out, for limits */
} Arena;

Arena *arena_new(void);                  /* NULL when out of memory */
void arena_free(Arena *);                /* frees every allocation at once */
void *arena_alloc(Arena *, size_t size); /* zeroed, 16-byte aligned; NULL on OOM */
char *arena_strndup(Arena *, const char *s, size_t n);
char *arena_strdup(Arena *, const char *s);
char *arena_printf(Arena *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands a malloc'd block to the arena (freed by arena_free), so a buffer grown
 * with realloc needs no copy; on OOM frees p and returns NULL. */
void *arena_adopt(Arena *, void *p);
/* Frees a block given to arena_adopt before the arena goes (the parser drops
 * its token array this way once the tree is built); other pointers are ignored. */
void arena_release(Arena *, void *p);

#endif
