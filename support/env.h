/* env.h: kern's yes/no environment variables, read with one rule.
 *
 * Yes: 1, true, yes, on; no: 0, false, no, off; any case, nothing around
 * them. Unset or empty means the variable's default. Anything else is
 * ignored (the default holds) with a warning that names the variable and
 * the spellings, so a typo is neither silently true nor silently false.
 */
#ifndef KERN_ENV_H
#define KERN_ENV_H

#include <stdbool.h>

typedef enum { ENV_UNSET, ENV_NO, ENV_YES, ENV_BAD } env_bool_value;

/* What s spells (NULL and "" are ENV_UNSET). */
env_bool_value env_bool_parse(const char *s);
/* The variable as a yes/no value: dflt when unset, empty or not a spelling
 * above (then with a warning through err_warn). */
bool env_bool(const char *name, bool dflt);

#endif
