/* Session settings (`set engine = v2;`, `--set engine=v2`).  The reference's language puts
 * settings lines at the head of a query file and refuses names and values it does not know;
 * this table is the one place that says which ones OmniGraph-C has.  Today that is `engine`,
 * whose one value `v2` is what every read already runs on, so the reference's own test
 * cases (which open with `set engine = v2;`) run unchanged.  A setting this engine has no
 * counterpart for is refused rather than silently accepted. */
#include "compiler/settings.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const ENGINE_VALUES[] = {"v2", NULL};

static const og_setting_def SETTINGS[] = {
    {"engine", ENGINE_VALUES, "v2", "request", "the engine a read runs on; OmniGraph-C has one, `v2` (accepted, changes nothing)"},
};

const og_setting_def *og_settings(size_t *n)
{
    *n = sizeof SETTINGS / sizeof SETTINGS[0];
    return SETTINGS;
}

/* "a, b, c" of the names (or of one setting's values) into buf. */
static void join(char *buf, size_t cap, const char *const *items, size_t n, size_t stride)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && off < cap; i++) {
        const char *s = *(const char *const *)((const char *)items + i * stride);
        if (!s) break;
        int w = snprintf(buf + off, cap - off, "%s%s", i ? ", " : "", s);
        if (w < 0) break;
        off += (size_t)w;
    }
}

int og_setting_check(const char *name, size_t name_len, const char *value, size_t value_len, int is_string, int is_int,
                     char *msg, size_t cap)
{
    size_t n;
    const og_setting_def *defs = og_settings(&n);
    const og_setting_def *d = NULL;
    for (size_t i = 0; i < n && !d; i++)
        if (strlen(defs[i].name) == name_len && !memcmp(defs[i].name, name, name_len)) d = &defs[i];
    char list[256];
    if (!d) {
        join(list, sizeof list, &defs[0].name, n, sizeof defs[0]);
        snprintf(msg, cap, "unknown setting `%.*s`; expected one of %s", (int)(name_len > 64 ? 64 : name_len), name, list);
        return 0;
    }
    if (!value) return 1;
    (void)is_string;
    if (!is_int)
        for (size_t i = 0; d->values[i]; i++)
            if (strlen(d->values[i]) == value_len && !memcmp(d->values[i], value, value_len)) return 1;
    join(list, sizeof list, d->values, SIZE_MAX, sizeof d->values[0]);
    snprintf(msg, cap, "unknown value `%.*s` for setting `%s`; expected one of %s", (int)(value_len > 64 ? 64 : value_len),
             value, d->name, list);
    return 0;
}
