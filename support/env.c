/* env.c: yes/no environment variables (env.h).
 *
 * Requires: error.c for the warning. Produces: env_bool_parse, env_bool.
 * Breaks: nothing; getenv is read at each call (callers decide when).
 */
#include "env.h"

#include <stdlib.h>
#include <strings.h>

#include "error.h"

env_bool_value env_bool_parse(const char *s) {
  static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no",
                                                                              "off"};
  if (!s || !*s) return ENV_UNSET;
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(s, yes[i])) return ENV_YES;
    if (!strcasecmp(s, no[i])) return ENV_NO;
  }
  return ENV_BAD;
}

bool env_bool(const char *name, bool dflt) {
  const char *s = getenv(name);
  switch (env_bool_parse(s)) {
    case ENV_YES: return true;
    case ENV_NO: return false;
    case ENV_BAD:
      err_warn("%s=%.64s is not a yes/no value (1, true, yes, on or 0, false, no, off); ignored, "
               "%s stays %s",
               name, s, name, dflt ? "on" : "off");
      return dflt;
    case ENV_UNSET: break;
  }
  return dflt;
}
