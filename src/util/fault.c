/*
 * fault.c — OG_FAULT crash points.  See fault.h.
 */
#include "util/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int name_in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

void og_fault_point(const char *name)
{
    const char *trace = getenv("OG_FAULT_TRACE");
    if (trace && trace[0] == '1') fprintf(stderr, "og_fault_point: %s\n", name);
    const char *list = getenv("OG_FAULT");
    if (list && *list && name_in_list(list, name)) _exit(OG_FAULT_EXIT_CODE);
}

int og_fault_error(const char *name)
{
    const char *list = getenv("OG_FAULT_ERROR");
    return list && *list && name_in_list(list, name);
}
