/*
 * test_cache_cap.c — the bound on what a handle caches (og_open_opts.cache_bytes,
 * $OMNIGRAPH_CACHE_SIZE; docs/engine.md "Memory"): the graph benchmark's queries (key lookup,
 * 1/2/3-hop distinct counts, filter + aggregate + order) answer exactly the same on a handle
 * whose cache can retain nothing as on one with the default bound — before `optimize` (views
 * build id maps and topologies in memory) and after it (mapped index files) — while the capped
 * cache never holds more than its bound and the default one keeps its views (cached views are
 * charged what they hold, not a worst-case estimate that once kept big views out of any cache:
 * docs/benchmarks.md "Scaling").  And $OMNIGRAPH_CACHE_SIZE sets the bound when the caller
 * leaves cache_bytes at 0; a malformed value falls back to the default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "api/db.h"
#include "graph/graph.h"
#include "omnigraph.h"
#include "util/cache.h"

#define N 3000
#define DEGREE 5
#define STARTS 25

static const char SCHEMA[] = "node Node { key: String @key  val: I64  cat: enum(alpha, beta, gamma, delta) }\n"
                             "edge Link: Node -> Node\n";
static const char QUERIES[] =
    "query lookup($k: String) { match { $n: Node { key: $k } } return { $n.val, $n.cat } }\n"
    "query hop1($k: String) { match { $s: Node { key: $k }  $s link{1,1} $f } return { count($f) as n } }\n"
    "query hop2($k: String) { match { $s: Node { key: $k }  $s link{1,2} $f } return { count($f) as n } }\n"
    "query hop3($k: String) { match { $s: Node { key: $k }  $s link{1,3} $f } return { count($f) as n } }\n"
    "query agg($lo: I64, $hi: I64) { match { $n: Node  $n.val >= $lo  $n.val < $hi } "
    "return { $n.cat, count($n) as c, max($n.val) as m } order { c desc, $n.cat asc } }\n";

static char dir[64], data[96];

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t below(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* N nodes, DEGREE distinct out-neighbours each, half of them skewed to low ids (hubs), as
 * bench/graph/gen.mjs makes them. */
static void write_data(void)
{
    FILE *f = fopen(data, "w");
    assert_non_null(f);
    static const char *cats[] = {"alpha", "beta", "gamma", "delta"};
    for (int i = 0; i < N; i++)
        fprintf(f, "{\"type\":\"Node\",\"data\":{\"key\":\"k%05d\",\"val\":%u,\"cat\":\"%s\"}}\n", i, below(1000),
                cats[below(4) * below(4) / 4]);
    for (int i = 0; i < N; i++) {
        int dst[DEGREE];
        for (int e = 0; e < DEGREE; e++) {
            int d, dup;
            do {
                d = e % 2 ? (int)(below(N) * (uint64_t)below(N) / N) : (int)below(N);
                dup = d == i;
                for (int k = 0; k < e; k++) dup |= dst[k] == d;
            } while (dup);
            dst[e] = d;
            fprintf(f, "{\"edge\":\"Link\",\"from\":\"k%05d\",\"to\":\"k%05d\"}\n", i, d);
        }
    }
    fclose(f);
}

/* Every answer of the five queries for STARTS start keys, rendered into one string. */
static char *answers(og_db *db, og_cache *cache_to_check)
{
    size_t cap = 1 << 16, w = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    static const char *kinds[] = {"lookup", "hop1", "hop2", "hop3"};
    for (int s = 0; s < STARTS; s++)
        for (size_t k = 0; k < 4; k++) {
            char params[64];
            snprintf(params, sizeof params, "{\"k\":\"k%05d\"}", (s * 113) % N);
            og_rows *r;
            OK(og_db_query(&r, db, QUERIES, strlen(QUERIES), kinds[k], params, NULL));
            for (size_t i = 0; i < og_rows_count(r); i++) {
                size_t n = 0;
                const char *cat = og_rows_width(r) > 1 ? og_rows_string(r, i, 1, &n) : NULL;
                w += (size_t)snprintf(out + w, cap - w, "%s %d %lld %.*s\n", kinds[k], s, (long long)og_rows_int(r, i, 0),
                                      (int)n, cat ? cat : "");
            }
            og_rows_free(r);
            if (cache_to_check) {
                og_cache_stats st;
                og_cache_get_stats(cache_to_check, &st);
                assert_true(st.bytes <= st.max_bytes);
            }
        }
    og_rows *r;
    OK(og_db_query(&r, db, QUERIES, strlen(QUERIES), "agg", "{\"lo\":250,\"hi\":580}", NULL));
    assert_true(og_rows_count(r) >= 3);
    for (size_t i = 0; i < og_rows_count(r); i++) {
        size_t n;
        const char *cat = og_rows_string(r, i, 0, &n);
        w += (size_t)snprintf(out + w, cap - w, "agg %.*s %lld %lld\n", (int)n, cat, (long long)og_rows_int(r, i, 1),
                              (long long)og_rows_int(r, i, 2));
    }
    og_rows_free(r);
    assert_true(w < cap);
    return out;
}

static og_cache *cache_of(og_db *db) { return og_graph_cache(og_engine_graph(db->e)); }

static void a_cache_that_retains_nothing_answers_the_same(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-cachecap-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(data, sizeof data, "%s/graph.ndjson", dir);
    write_data();
    char root[96];
    snprintf(root, sizeof root, "%s/g", dir);
    og_db *db;
    OK(og_db_init(&db, root, "cap.pg", SCHEMA, strlen(SCHEMA), NULL));
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt rc;
    OK(og_db_load(&rc, db, data, &lo));
    og_db_close(db);

    for (int optimized = 0; optimized < 2; optimized++) {
        if (optimized) {
            OK(og_db_open(&db, root, NULL));
            og_optimize_result orr;
            OK(og_db_optimize(&orr, db, NULL, NULL));
            og_db_close(db);
        }
        og_open_opts small = {.actor = "t", .cache_bytes = 4096}; /* smaller than any view */
        og_db *capped, *plain;
        OK(og_db_open(&capped, root, &small));
        OK(og_db_open(&plain, root, NULL));
        char *a = answers(capped, cache_of(capped));
        char *b = answers(plain, NULL);
        char *a2 = answers(capped, cache_of(capped)); /* again: every view reopened, same answers */
        assert_string_equal(a, b);
        assert_string_equal(a2, b);
        assert_true(strstr(b, "hop3 0 ") != NULL);

        og_cache_stats cs, ps;
        og_cache_get_stats(cache_of(capped), &cs);
        og_cache_get_stats(cache_of(plain), &ps);
        assert_int_equal(cs.max_bytes, 4096);
        assert_true(cs.bytes <= cs.max_bytes);
        /* the default bound (64 MiB) keeps this graph's views: queries after the first hit them */
        assert_true(ps.hits > cs.hits);
        free(a);
        free(a2);
        free(b);
        og_db_close(capped);
        og_db_close(plain);
    }
    /* The budget variables read a size as an operator writes it, as the cache bound does: "1K"
     * holds this aggregate to 1 KiB (it stops with OG_ERR_LIMIT), "2G" lets it run. */
    og_db *db2;
    OK(og_db_open(&db2, root, NULL));
    og_rows *r;
    setenv("OG_QUERY_MAX_MEMORY", "1K", 1);
    assert_int_equal(og_db_query(&r, db2, QUERIES, strlen(QUERIES), "agg", "{\"lo\":0,\"hi\":100000}", NULL),
                     OG_ERR_LIMIT);
    setenv("OG_QUERY_MAX_MEMORY", "2G", 1);
    OK(og_db_query(&r, db2, QUERIES, strlen(QUERIES), "agg", "{\"lo\":0,\"hi\":100000}", NULL));
    og_rows_free(r);
    unsetenv("OG_QUERY_MAX_MEMORY");
    og_db_close(db2);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void the_environment_sets_the_bound_when_the_caller_does_not(void **state)
{
    (void)state;
    assert_int_equal(og_api_cache_bytes(12345), 12345); /* the caller's own bound wins */
    setenv("OMNIGRAPH_CACHE_SIZE", "256M", 1);
    assert_int_equal(og_api_cache_bytes(0), (size_t)256 << 20);
    assert_int_equal(og_api_cache_bytes(777), 777);
    setenv("OMNIGRAPH_CACHE_SIZE", "2G", 1);
    assert_int_equal(og_api_cache_bytes(0), (size_t)2 << 30);
    setenv("OMNIGRAPH_CACHE_SIZE", "64KiB", 1);
    assert_int_equal(og_api_cache_bytes(0), (size_t)64 << 10);
    setenv("OMNIGRAPH_CACHE_SIZE", "1048576", 1);
    assert_int_equal(og_api_cache_bytes(0), (size_t)1 << 20);
    uint64_t v;
    assert_true(og_api_size_parse("10G", &v) && v == (uint64_t)10 << 30);
    assert_true(og_api_size_parse("1t", &v) && v == (uint64_t)1 << 40);
    assert_true(og_api_size_parse("512MiB", &v) && v == (uint64_t)512 << 20);
    assert_false(og_api_size_parse("9999999999999T", &v)); /* overflows int64 */
    assert_false(og_api_size_parse("5iB", &v));
    static const char *bad[] = {"", "lots", "12X", "-5M", "0", "5M extra"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("OMNIGRAPH_CACHE_SIZE", bad[i], 1);
        assert_int_equal(og_api_cache_bytes(0), 0); /* the graph layer's default applies */
    }

    /* Through og_db_open: the handle's cache has that bound. */
    char d[64];
    snprintf(d, sizeof d, "/tmp/og-cachecap-env-XXXXXX");
    assert_non_null(mkdtemp(d));
    char root[96];
    snprintf(root, sizeof root, "%s/g", d);
    og_db *db;
    OK(og_db_init(&db, root, "cap.pg", SCHEMA, strlen(SCHEMA), NULL));
    og_db_close(db);
    setenv("OMNIGRAPH_CACHE_SIZE", "3M", 1);
    OK(og_db_open(&db, root, NULL));
    og_cache_stats st;
    og_cache_get_stats(cache_of(db), &st);
    assert_int_equal(st.max_bytes, (size_t)3 << 20);
    og_db_close(db);
    unsetenv("OMNIGRAPH_CACHE_SIZE");
    OK(og_db_open(&db, root, NULL));
    og_cache_get_stats(cache_of(db), &st);
    assert_int_equal(st.max_bytes, OG_GRAPH_DEFAULT_CACHE_BYTES);
    og_db_close(db);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cache_that_retains_nothing_answers_the_same),
        cmocka_unit_test(the_environment_sets_the_bound_when_the_caller_does_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
