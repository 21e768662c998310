/*
 * fixture.h — shared by the engine's end-to-end tests: a fresh graph in a temporary
 * directory, NDJSON loads from text, and query results rendered as "a|b;c|d" strings.
 * Header-only (static functions) so each test program stays one file plus this.
 */
#ifndef OG_TEST_ENGINE_FIXTURE_H
#define OG_TEST_ENGINE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "load/load.h"
#include "util/error.h"

typedef struct fixture {
    char dir[64];
    char data[96];
    char uri[96];
    og_engine *e;
    const char *queries; /* the .gq text queries are compiled from */
} fixture;

static fixture *fixture_new(const char *schema, const char *queries)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/og-engine-XXXXXX");
    if (!mkdtemp(f->dir)) return NULL;
    snprintf(f->data, sizeof f->data, "%s/in.jsonl", f->dir);
    snprintf(f->uri, sizeof f->uri, "%s/graph", f->dir);
    f->queries = queries;
    if (og_engine_init(&f->e, f->uri, "schema.pg", schema, strlen(schema), NULL) != OG_OK) {
        fprintf(stderr, "init: %s\n", og_error_message());
        return NULL;
    }
    return f;
}

static void fixture_free(fixture *f)
{
    og_engine_close(f->e);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", f->dir);
    free(f);
}

static og_status fixture_load(fixture *f, const char *text, og_load_mode mode, og_write_result *res)
{
    FILE *fp = fopen(f->data, "w");
    if (!fp) return OG_ERR_IO;
    fputs(text, fp);
    fclose(fp);
    og_load_opts o = {.mode = mode};
    return og_engine_load(f->e, f->data, &o, res, NULL);
}

static void fixture_render(const og_result *r, char *out, size_t cap)
{
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->nrows; i++)
        for (size_t c = 0; c < r->ncols; c++) {
            const og_vector *v = &r->cols[c];
            char cell[128];
            if (og_vector_is_null(v, i)) {
                snprintf(cell, sizeof cell, "null");
            } else if (v->type.id == OG_T_STRING) {
                size_t n;
                const uint8_t *p = og_vector_get_bytes(v, i, &n);
                snprintf(cell, sizeof cell, "%.*s", (int)n, (const char *)p);
            } else if (v->type.id == OG_T_F32 || v->type.id == OG_T_F64) {
                snprintf(cell, sizeof cell, "%g", og_vector_get_f64(v, i));
            } else if (v->type.id == OG_T_BOOL) {
                snprintf(cell, sizeof cell, "%s", og_vector_get_bool(v, i) ? "true" : "false");
            } else {
                snprintf(cell, sizeof cell, "%lld", (long long)og_vector_get_i64(v, i));
            }
            w += (size_t)snprintf(out + w, cap - w, "%s%s", c ? "|" : (i ? ";" : ""), cell);
        }
}

/* Runs read query `name` of f->queries on main (or at `commit`); renders into out. */
static og_status fixture_query(fixture *f, const char *name, const char *params, const char *commit, char *out,
                               size_t cap)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_result r;
    og_status st = og_engine_query(f->e, NULL, commit, "q.gq", f->queries, strlen(f->queries), name, pj, &r, NULL);
    json_decref(pj);
    if (st) return st;
    fixture_render(&r, out, cap);
    og_result_free(&r);
    return OG_OK;
}

#define EXPECT_ROWS(f, name, params, want)                                                              \
    do {                                                                                                \
        char got_[1024];                                                                                \
        if (fixture_query((f), (name), (params), NULL, got_, sizeof got_))                              \
            fail_msg("%s: %s", (name), og_error_message());                                             \
        if (strcmp(got_, (want))) fail_msg("%s: got '%s' want '%s'", (name), got_, (want));             \
    } while (0)

#endif
