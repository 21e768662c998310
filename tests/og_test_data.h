/*
 * og_test_data.h — why: a few tests use external corpora from ../shared/data (the cookbook
 * graph, LSQB, Graphalytics). CI has them beside the checkout; a user's clone does not. Such a
 * test calls og_test_have_data() once: when the directory is missing it prints exactly one
 * visible `SKIP: <test>: ../shared/data/<name> absent` line, and the test either skips those
 * cases (still running the rest) or exits OG_TEST_SKIP, which ctest reports as "Skipped"
 * (CMakeLists.txt sets SKIP_RETURN_CODE) — never a silent pass.
 */
#ifndef OG_TEST_DATA_H
#define OG_TEST_DATA_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define OG_TEST_SKIP 77

static inline int og_test_have_data(const char *test, const char *path)
{
    if (access(path, R_OK) == 0) return 1;
    const char *rel = strstr(path, "/data/");
    printf("SKIP: %s: ../shared%s absent\n", test, rel ? rel : path);
    fflush(stdout);
    return 0;
}

#endif
