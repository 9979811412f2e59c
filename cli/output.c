/* output.c: what kernc's generators (build.c, embed.c) share to write their
 * files: C identifiers and data, outputs that appear whole, make rules.
 *
 * Requires: the support layer (Buf, files). Produces: cli_output_prefix,
 * cli_ident, cli_c_literal, cli_c_bytes, cli_temp_beside, cli_commit_temp,
 * cli_dep_rule.
 * Breaks: nothing; outputs are written to temporary names beside their final
 * ones and renamed at the end, so a failure never leaves a partial file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"

char *cli_output_prefix(const char *out) {
  size_t n = strlen(out);
  if (n > 2 && out[n - 2] == '.' && strchr("ohc", out[n - 1])) n -= 2;
  char *p = malloc(n + 1);
  if (p) memcpy(p, out, n), p[n] = 0;
  return p;
}

bool cli_is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char *cli_ident(const char *name, const char *prefix) {
  const char *base = name ? name : strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
  char *id = malloc(strlen(base) + 3);
  if (!id) return NULL;
  size_t n = 0;
  if (base[0] >= '0' && base[0] <= '9') id[n++] = 'm', id[n++] = '_';
  for (const char *p = base; *p; p++) id[n++] = cli_is_ident_char(*p) ? *p : '_';
  id[n] = 0;
  return id;
}

/* Escapes quotes, backslashes, '?' (trigraphs) and every byte outside
 * printable ASCII. */
void cli_c_literal(Buf *out, const char *s) {
  buf_add(out, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?')
      buf_printf(out, "\\%c", *p);
    else if (*p < 32 || *p > 126)
      buf_printf(out, "\\%03o", *p);
    else
      buf_add(out, (const char *)p, 1);
  }
  buf_add(out, "\"", 1);
}

void cli_c_bytes(Buf *out, const char *name, const unsigned char *p, size_t n) {
  buf_printf(out, "static const unsigned char %s[%zu] __attribute__((aligned(16))) = {\n", name,
             n + 1);
  char line[32 * 4 + 8];
  for (size_t i = 0; i <= n;) {
    size_t k = 0;
    for (int j = 0; j < 32 && i <= n; j++, i++) {
      unsigned v = i < n ? p[i] : 0;
      if (v >= 100) line[k++] = (char)('0' + v / 100);
      if (v >= 10) line[k++] = (char)('0' + v / 10 % 10);
      line[k++] = (char)('0' + v % 10);
      line[k++] = ',';
    }
    line[k++] = '\n';
    buf_add(out, line, k);
  }
  buf_add(out, "};\n", 3);
}

char *cli_temp_beside(const char *path) {
  size_t n = strlen(path) + 16;
  char *t = malloc(n);
  if (!t) return NULL;
  snprintf(t, n, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(t);
  if (fd < 0) {
    free(t);
    return NULL;
  }
  fchmod(fd, 0644);
  close(fd);
  return t;
}

int cli_commit_temp(char **tmp, const char *dst) {
  if (!*tmp) return EXIT_OK;
  if (rename(*tmp, dst) != 0) return cli_fail("cannot write '%s': %s", dst, strerror(errno));
  free(*tmp);
  *tmp = NULL;
  return EXIT_OK;
}

/* Spaces and '#' escaped, '$' doubled, for make and CMake's DEPFILE. */
static void put_dep(Buf *out, const char *path) {
  char canon[PATH_MAX];
  const char *p = realpath(path, canon) ? canon : path;
  buf_add(out, " ", 1);
  for (; *p; p++) {
    if (*p == ' ' || *p == '#') buf_add(out, "\\", 1);
    if (*p == '$') buf_add(out, "$", 1);
    buf_add(out, p, 1);
  }
}

void cli_dep_rule(Buf *out, const char *targets, const Program *p) {
  buf_printf(out, "%s:", targets);
  put_dep(out, p->root->path);
  for (const Module *m = p->modules; m; m = m->next)
    if (m != p->root) put_dep(out, m->path);
  buf_add(out, "\n", 1);
}
