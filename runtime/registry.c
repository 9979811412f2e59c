/* registry.c: every allocation kern made, by base pointer, so a wrapped
 * pointer can be classified and access checks know an allocation's kind.
 *
 * Requires: nothing. Produces: rt_registry_add/remove/find, O(1) expected.
 * Breaks: only base pointers are recorded; an interior pointer is unknown.
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), one mutex: lookups are rare (wrap, checks), not per element.
 */
#include "base.h"
#include "fork.h"

#include <stdlib.h>

typedef struct entry {
  const void *key; /* NULL: empty slot */
  rt_alloc_info info;
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
FORK_GUARD(&mu, NULL, FORK_RANK_REGISTRY)
static entry *table;
static size_t cap, count; /* cap: a power of two */

static size_t slot_of(const void *p, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & mask;
}

static void insert(entry *t, size_t mask, const void *key, const rt_alloc_info *info) {
  size_t i = slot_of(key, mask);
  while (t[i].key && t[i].key != key) i = (i + 1) & mask;
  t[i].key = key;
  t[i].info = *info;
}

static bool grow(void) {
  size_t ncap = cap ? cap * 2 : 64;
  entry *t = calloc(ncap, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < cap; i++)
    if (table[i].key) insert(t, ncap - 1, table[i].key, &table[i].info);
  free(table);
  table = t;
  cap = ncap;
  return true;
}

bool rt_registry_add(void *base, const rt_alloc_info *info) {
  pthread_mutex_lock(&mu);
  bool ok = (count + 1) * 4 <= cap * 3 || grow();
  if (ok) {
    size_t before = count;
    size_t i = slot_of(base, cap - 1);
    while (table[i].key && table[i].key != base) i = (i + 1) & (cap - 1);
    if (!table[i].key) count = before + 1;
    table[i].key = base;
    table[i].info = *info;
  }
  pthread_mutex_unlock(&mu);
  return ok;
}

static entry *find(const void *base) {
  if (!cap) return NULL;
  size_t mask = cap - 1, i = slot_of(base, mask);
  for (; table[i].key; i = (i + 1) & mask)
    if (table[i].key == base) return &table[i];
  return NULL;
}

/* Backward-shift deletion keeps every probe chain unbroken. */
static void erase(size_t hole) {
  size_t mask = cap - 1, j = hole;
  for (;;) {
    j = (j + 1) & mask;
    if (!table[j].key) break;
    size_t home = slot_of(table[j].key, mask);
    /* Move j into the hole unless its home lies cyclically in (hole, j]. */
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    table[hole] = table[j];
    hole = j;
  }
  table[hole].key = NULL;
}

void rt_registry_remove(void *base) {
  pthread_mutex_lock(&mu);
  entry *e = find(base);
  if (e) {
    erase((size_t)(e - table));
    count--;
  }
  pthread_mutex_unlock(&mu);
}

bool rt_registry_find(const void *base, rt_alloc_info *out) {
  pthread_mutex_lock(&mu);
  entry *e = find(base);
  if (e && out) *out = e->info;
  pthread_mutex_unlock(&mu);
  return e != NULL;
}

size_t rt_registry_count(void) {
  pthread_mutex_lock(&mu);
  size_t n = count;
  pthread_mutex_unlock(&mu);
  return n;
}
