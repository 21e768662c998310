/*
 * api_rows.h — the API tests' one query-and-render helper (header-only, static).
 */
#ifndef OG_TEST_API_ROWS_H
#define OG_TEST_API_ROWS_H

#include <stdio.h>
#include <string.h>

#include "omnigraph.h"

/* Runs read query `gq` on db (at `commit`, NULL = head) and renders the rows as "a|b;c|d"
 * (null as "null", strings verbatim, other values as integers). */
static og_status api_rows_render(og_db *db, const char *gq, const char *commit, char *out, size_t cap)
{
    og_rows *r;
    og_read_opts at = {NULL, commit};
    og_status st = og_db_query(&r, db, gq, strlen(gq), NULL, NULL, &at);
    if (st) return st;
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < og_rows_count(r); i++)
        for (size_t k = 0; k < og_rows_width(r); k++) {
            char cell[64];
            size_t n;
            const char *s = og_rows_string(r, i, k, &n);
            if (og_rows_is_null(r, i, k)) snprintf(cell, sizeof cell, "null");
            else if (s) snprintf(cell, sizeof cell, "%.*s", (int)n, s);
            else snprintf(cell, sizeof cell, "%lld", (long long)og_rows_int(r, i, k));
            if (w < cap) w += (size_t)snprintf(out + w, cap - w, "%s%s", k ? "|" : (i ? ";" : ""), cell);
        }
    og_rows_free(r);
    return OG_OK;
}

#endif
