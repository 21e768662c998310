/*
 * bench_embedded_query.c — the embedded baseline of bench/server/run.sh for reads: the key
 * lookup of bench/server/lookup.lua through og_db_query + og_rows_render on one thread.
 * Prints `embedded_lookups_per_s: X`.
 * Usage: bench_embedded_query GRAPH_ROOT [COUNT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnigraph.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_embedded_query GRAPH_ROOT [COUNT]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    og_db *db;
    if (og_db_open(&db, argv[1], NULL)) {
        fprintf(stderr, "%s\n", og_error_message());
        return 1;
    }
    const char *q = "query q($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }";
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        og_rows *r;
        if (og_db_query(&r, db, q, strlen(q), NULL, "{\"n\":\"p-4242\"}", NULL)) {
            fprintf(stderr, "%s\n", og_error_message());
            return 1;
        }
        char *text;
        size_t len;
        og_rows_render(&text, &len, r, OG_FORMAT_JSON, "main");
        og_free(text);
        og_rows_free(r);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("embedded_lookups_per_s: %.0f\n", n / s);
    og_db_close(db);
    return 0;
}
