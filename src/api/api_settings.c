/* Session settings through the public API: the CLI's `--set NAME=VALUE` is checked by the same
 * table (compiler/settings.h) as a `set NAME = VALUE;` line, so a flag and a line are refused
 * with the same words. */
#include <string.h>

#include "compiler/settings.h"
#include "omnigraph.h"
#include "util/error.h"

og_status og_setting_validate(const char *name, const char *value)
{
    if (!name || !value) return og_err(OG_ERR_INVALID, "a setting needs a name and a value (NAME=VALUE)");
    char msg[512];
    if (!og_setting_check(name, strlen(name), value, strlen(value), 0, 0, msg, sizeof msg))
        return og_err(OG_ERR_INVALID, "%s", msg);
    return OG_OK;
}
