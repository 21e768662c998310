/*
 * fault.c — OG_FAULT crash points.  See fault.h.
 *
 * Why counted entries ("name#N"): a point a path passes several times (one store put per
 * index file, per effect, ...) could only be armed at its first pass, so a crash test could
 * not stop a build after its k-th file.  Counting happens only for names listed with "#N", so
 * an unarmed or plainly armed point still costs a getenv.
 */
#include "util/fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0: `name` is not in list; 1: listed plainly; 2: listed with "#N" only (*nth = the first N). */
static int name_in_list(const char *list, const char *name, unsigned long *nth)
{
    size_t n = strlen(name);
    int found = 0;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0) return 1;
        if (len > n + 1 && memcmp(p, name, n) == 0 && p[n] == '#' && !found) {
            char num[24];
            size_t d = len - n - 1;
            if (d < sizeof num) {
                memcpy(num, p + n + 1, d);
                num[d] = 0;
                char *e;
                unsigned long v = strtoul(num, &e, 10);
                if (*e == 0 && v > 0) {
                    *nth = v;
                    found = 2;
                }
            }
        }
        if (!end) break;
        p = end + 1;
    }
    return found;
}

/* Passes of the points armed with "#N", by name (a handful at most in any test). */
#define MAX_COUNTED 32
static struct {
    const char *name; /* the caller's literal */
    unsigned long passes;
} g_counted[MAX_COUNTED];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long count_pass(const char *name)
{
    unsigned long n = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < MAX_COUNTED; i++) {
        if (!g_counted[i].name) g_counted[i].name = name;
        if (strcmp(g_counted[i].name, name) == 0) {
            n = ++g_counted[i].passes;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return n;
}

void og_fault_point(const char *name)
{
    const char *trace = getenv("OG_FAULT_TRACE");
    if (trace && trace[0] == '1') fprintf(stderr, "og_fault_point: %s\n", name);
    const char *list = getenv("OG_FAULT");
    if (!list || !*list) return;
    unsigned long nth = 0;
    int hit = name_in_list(list, name, &nth);
    if (hit == 1 || (hit == 2 && count_pass(name) == nth)) _exit(OG_FAULT_EXIT_CODE);
}

int og_fault_error(const char *name)
{
    const char *list = getenv("OG_FAULT_ERROR");
    unsigned long nth;
    return list && *list && name_in_list(list, name, &nth) == 1;
}
