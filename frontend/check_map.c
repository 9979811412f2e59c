/* check_map.c: the checker's hash map: names to symbols and bindings,
 * declarations to the state kept beside them.
 *
 * Requires: check.c's arena allocation. Produces: ck_map_get, ck_map_put,
 * ck_info. Breaks: nothing; open addressing with linear probing, keys never
 * removed, strings or pointers (Map.by_ptr).
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_internal.h"

static size_t hash_key(const Map *m, const void *key) {
  if (m->by_ptr) return (size_t)(((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull);
  size_t h = 14695981039346656037ull;
  for (const unsigned char *s = key; *s; s++) h = (h ^ *s) * 1099511628211ull;
  return h;
}

static bool key_eq(const Map *m, const void *a, const void *b) {
  return m->by_ptr ? a == b : strcmp(a, b) == 0;
}

static Slot *map_slot(const Map *m, const void *key) {
  size_t i = hash_key(m, key) & (m->cap - 1);
  while (m->slots[i].key && !key_eq(m, m->slots[i].key, key)) i = (i + 1) & (m->cap - 1);
  return &m->slots[i];
}

void *ck_map_get(const Map *m, const void *key) { return m->cap ? map_slot(m, key)->val : NULL; }

void ck_map_put(Check *c, Map *m, const void *key, void *val) {
  if (2 * (m->n + 1) > m->cap) {
    Map big = {.cap = m->cap ? m->cap * 2 : 64, .by_ptr = m->by_ptr};
    big.slots = ck_alloc(c, big.cap * sizeof(Slot));
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key) *map_slot(&big, m->slots[i].key) = m->slots[i];
    big.n = m->n;
    *m = big;
  }
  Slot *s = map_slot(m, key);
  if (!s->key) m->n++;
  s->key = key;
  s->val = val;
}

Info *ck_info(Check *c, Decl *d) {
  Info *in = ck_map_get(&c->infos, d);
  if (!in) {
    in = ck_alloc(c, sizeof *in);
    ck_map_put(c, &c->infos, d, in);
  }
  return in;
}
