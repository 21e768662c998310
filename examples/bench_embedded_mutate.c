/*
 * bench_embedded_mutate.c — the embedded baseline of bench/server/run.sh: one-row insert
 * mutations through og_db_mutate on an open handle, one after another, as fast as they
 * commit.  Prints `embedded_mutations_per_s: X`.
 * Usage: bench_embedded_mutate GRAPH_ROOT [COUNT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnigraph.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_embedded_mutate GRAPH_ROOT [COUNT]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 300;
    og_db *db;
    if (og_db_open(&db, argv[1], NULL)) {
        fprintf(stderr, "%s\n", og_error_message());
        return 1;
    }
    const char *q = "query add($t: String) { insert Note { title: $t } }";
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        char params[64];
        snprintf(params, sizeof params, "{\"t\":\"embedded-%d\"}", i);
        og_receipt r;
        if (og_db_mutate(&r, db, q, strlen(q), NULL, params, NULL, NULL)) {
            fprintf(stderr, "%s\n", og_error_message());
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    printf("embedded_mutations_per_s: %.1f\n", n / s);
    og_db_close(db);
    return 0;
}
