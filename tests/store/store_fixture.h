/*
 * store_fixture.h — the local-store tests' one fixture (header-only, static): a fresh
 * directory under /tmp opened as a local store, removed afterwards.
 */
#ifndef OG_TEST_STORE_FIXTURE_H
#define OG_TEST_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

typedef struct fixture {
    char dir[64];
    og_store *st;
} fixture;

/* cmocka setup: `tmpl` is a mkdtemp template ("/tmp/og-store-…-XXXXXX"). */
static int store_fixture_open(void **state, const char *tmpl)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "%s", tmpl);
    if (!mkdtemp(f->dir) || og_store_open(&f->st, f->dir) != OG_OK) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    og_store_close(f->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", f->dir);
    free(f);
    return 0;
}

#endif
