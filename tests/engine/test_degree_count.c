/*
 * test_degree_count.c — a count over a multi-hop pattern answered from neighbour counts
 * (engine/degree_count.h) gives exactly the answers of enumerating it: every query runs with
 * og_exec_count_degrees off (the rows formed, then counted) and on, over a generated graph
 * with parallel edges, self-loops, nodes without edges and an edge between two types, and the
 * rendered results must be equal while the work (rows through the pipeline) shrinks.  Shapes
 * the counting must not take (a filter, a projection or an order key over the last node, a
 * distinct count, a multi-hop or undirected last hop) are checked to keep enumerating.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "compiler/query_check.h"
#include "compiler/schema.h"
#include "engine/degree_count.h"
#include "engine/exec.h"
#include "fixture.h"

#define SCHEMA                                                                                    \
    "node Person {\n  name: String @key\n  age: I32?\n  city: String?\n}\n"                        \
    "node Company {\n  name: String @key\n}\n"                                                     \
    "edge Knows: Person -> Person\n"                                                               \
    "edge WorksAt: Person -> Company\n"

#define Q(name, body) "query " name "() {\n  " body "\n}\n"

/* counted: the last hop is only counted */
static const char *const COUNTED[] = {"two_paths", "three_paths", "per_start", "per_city_in", "to_company",
                                      "count_start", "from_company", "filtered_before", "anonymous_end"};
/* enumerated: the shape reads the last node or is not a plain row count */
static const char *const ENUMERATED[] = {"filter_end", "group_end", "distinct_end", "two_hops_end", "either_way",
                                         "sum_end", "edge_bound"};

static const char *QUERIES =
    Q("two_paths", "match { $a: Person  $a knows $b  $b knows $c } return { count($c) as n }")
    Q("three_paths", "match { $a: Person  $a knows $b  $b knows $c  $c knows $d } return { count($d) as n }")
    Q("per_start", "match { $a: Person  $a knows $b  $b knows $c } return { $a.name, count($c) as n } order { $a.name }")
    Q("per_city_in", "match { $c: Person  $b knows $c  $a knows $b } return { $c.city, count($a) as n, count($b) as m } "
                     "order { $c.city }")
    Q("to_company", "match { $a: Person  $a knows $b  $b worksAt $c } return { $a.age, count($c) as n } order { $a.age }")
    Q("count_start", "match { $a: Person  $a knows $b  $b knows $c } return { $a.city, count($a) as n } order { n desc, $a.city }")
    Q("from_company", "match { $c: Company  $p worksAt $c  $q knows $p } return { $c.name, count($q) as n } order { $c.name }")
    Q("filtered_before", "match { $a: Person  $a.age > 30  $a knows $b  $b.age < 50  $b knows $c } return { count($c) as n }")
    Q("anonymous_end", "match { $a: Person  $a knows $b  $b knows $_ } return { $a.name, count($b) as n } order { $a.name }")
    Q("filter_end", "match { $a: Person  $a knows $b  $b knows $c  $c.age > 20 } return { count($c) as n }")
    Q("group_end", "match { $a: Person  $a knows $b  $b knows $c } return { $c.city, count($c) as n } order { $c.city }")
    Q("distinct_end", "match { $a: Person  $a knows $b  $b knows $c } return { count(distinct $c) as n }")
    Q("two_hops_end", "match { $a: Person  $a knows $b  $b knows{1,2} $c } return { count($c) as n }")
    Q("either_way", "match { $a: Person  $a knows $b  $b <knows> $c } return { count($c) as n }")
    Q("sum_end", "match { $a: Person  $a knows $b  $b knows $c } return { sum($c.age) as s }")
    Q("edge_bound", "match { $a: Person  $a knows $b  $b $k:knows $c } return { count($c) as n }");

/* n people (ages 0..59, one city in 5, some null), each knowing `deg` random others — with
 * repeats (parallel edges) and self-loops — a few knowing nobody; a third work somewhere. */
static char *generated(int n, int deg)
{
    size_t cap = (size_t)n * (160 + (size_t)deg * 64), w = 0;
    char *s = malloc(cap);
    uint32_t x = 4242;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        unsigned age = (x >> 16) % 60;
        if (i % 7 == 3)
            w += (size_t)snprintf(s + w, cap - w, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\"}}\n", i);
        else
            w += (size_t)snprintf(s + w, cap - w,
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\",\"age\":%u,\"city\":\"c%u\"}}\n", i,
                                  age, age % 5);
    }
    for (int i = 0; i < 4; i++)
        w += (size_t)snprintf(s + w, cap - w, "{\"type\":\"Company\",\"data\":{\"name\":\"co%d\"}}\n", i);
    for (int i = 0; i < n; i++) {
        if (i % 11 == 5) continue; /* knows nobody */
        for (int k = 0; k < deg; k++) {
            x = x * 1103515245u + 12345u;
            unsigned to = (x >> 16) % (unsigned)(n / 2 + 1); /* half the people: many repeats */
            if (k == 0 && i % 13 == 0) to = (unsigned)i;     /* a self-loop */
            w += (size_t)snprintf(s + w, cap - w, "{\"edge\":\"Knows\",\"from\":\"p%d\",\"to\":\"p%u\"}\n", i, to);
        }
        if (i % 3 == 0) {
            w += (size_t)snprintf(s + w, cap - w, "{\"edge\":\"WorksAt\",\"from\":\"p%d\",\"to\":\"co%d\"}\n", i, i % 4);
            if (i % 9 == 0) /* twice to the same company */
                w += (size_t)snprintf(s + w, cap - w, "{\"edge\":\"WorksAt\",\"from\":\"p%d\",\"to\":\"co%d\"}\n", i,
                                      i % 4);
        }
    }
    return s;
}

/* n people, each knowing `deg` others with no pair twice and no self-loop (deg * 7 < n): a
 * simple topology (og_topology_simple), where the count reads degrees and deduplicates
 * nothing. */
static char *generated_simple(int n, int deg)
{
    size_t cap = (size_t)n * (64 + (size_t)deg * 64), w = 0;
    char *s = malloc(cap);
    for (int i = 0; i < n; i++)
        w += (size_t)snprintf(s + w, cap - w, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\",\"age\":%d,\"city\":\"c%d\"}}\n",
                              i, i % 60, i % 5);
    for (int i = 0; i < n; i++) {
        if (i % 11 == 5) continue; /* knows nobody */
        for (int k = 0; k < deg - i % 3; k++)
            w += (size_t)snprintf(s + w, cap - w, "{\"edge\":\"Knows\",\"from\":\"p%d\",\"to\":\"p%d\"}\n", i,
                                  (i + 1 + k * 7) % n);
    }
    return s;
}

static og_status run(fixture *f, const char *name, og_result *r)
{
    return og_engine_query(f->e, NULL, NULL, "q.gq", f->queries, strlen(f->queries), name, NULL, r, NULL);
}

/* The shape test on the compiled IR: how many trailing hops are counted (0: enumerated). */
static int counted_shape(const char *name)
{
    og_catalog *cat = NULL;
    og_query_file *qf = NULL;
    og_ir_query *ir = NULL;
    og_source src;
    og_source_init(&src, "q.gq", QUERIES, strlen(QUERIES));
    assert_int_equal(og_schema_compile(&cat, "s.pg", SCHEMA, strlen(SCHEMA), NULL), OG_OK);
    assert_int_equal(og_query_parse(&qf, &src, NULL), OG_OK);
    long qi = og_query_find_index(qf, name);
    assert_true(qi >= 0);
    assert_int_equal(og_query_compile(&ir, qf, (size_t)qi, cat, &src, NULL), OG_OK);
    int yes = (int)og_degree_count_ops(ir);
    assert_true(!yes == !og_degree_count_op(ir));
    og_ir_free(ir);
    og_query_file_free(qf);
    og_catalog_free(cat);
    og_source_free(&src);
    return yes;
}

static void twin(fixture *f, const char *name, int counted)
{
    og_result off, on;
    og_exec_count_degrees = 0;
    og_status st = run(f, name, &off);
    og_exec_count_degrees = 1;
    if (st) fail_msg("%s: %s", name, og_error_message());
    if (run(f, name, &on)) fail_msg("%s: %s", name, og_error_message());
    static char a[1 << 16], b[1 << 16];
    fixture_render(&off, a, sizeof a);
    fixture_render(&on, b, sizeof b);
    if (strcmp(a, b)) fail_msg("%s: enumerated '%s' counted '%s'", name, a, b);
    assert_true(off.nrows > 0);
    if (!counted_shape(name) != !counted) fail_msg("%s: expected %s", name, counted ? "a counted hop" : "enumeration");
    print_message("%-16s %s rows through the pipeline: %llu enumerated, %llu %s\n", name, counted ? "counted   " : "enumerated",
                  (unsigned long long)off.rows_through, (unsigned long long)on.rows_through,
                  counted ? "counted" : "(same path)");
    /* the last hop's rows are never formed: fewer rows through the pipeline — by half at least
     * where the last hop fans out (Knows, ~6 per person; WorksAt is at most 2) */
    if (counted && (on.rows_through > off.rows_through ||
                    (strstr(name, "company") == NULL && on.rows_through * 2 > off.rows_through)))
        fail_msg("%s: %llu vs %llu rows: the count did not avoid the last hop's rows", name,
                 (unsigned long long)on.rows_through, (unsigned long long)off.rows_through);
    if (!counted) assert_int_equal(on.rows_through, off.rows_through);
    og_result_free(&off);
    og_result_free(&on);
}

static void counts_equal_enumeration(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    char *data = generated(300, 6);
    assert_int_equal(fixture_load(f, data, OG_LOAD_OVERWRITE, NULL), OG_OK);
    free(data);
    for (size_t i = 0; i < sizeof COUNTED / sizeof *COUNTED; i++) twin(f, COUNTED[i], 1);
    /* a chain of plain hops folds whole: only the first binding's rows are formed */
    assert_int_equal(counted_shape("two_paths"), 2);
    assert_int_equal(counted_shape("three_paths"), 3);
    assert_int_equal(counted_shape("per_city_in"), 2);
    assert_int_equal(counted_shape("anonymous_end"), 2);
    assert_int_equal(counted_shape("filtered_before"), 1); /* $b.age < 50 is pushed into the first hop */
    assert_int_equal(counted_shape("to_company"), 2);
    for (size_t i = 0; i < sizeof ENUMERATED / sizeof *ENUMERATED; i++) twin(f, ENUMERATED[i], 0);
    fixture_free(f);
}

/* The same twins over a simple graph (no parallel edges, no self-loops). */
static void counts_equal_enumeration_on_a_simple_graph(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    char *data = generated_simple(300, 6);
    assert_int_equal(fixture_load(f, data, OG_LOAD_OVERWRITE, NULL), OG_OK);
    free(data);
    static const char *const simple[] = {"two_paths", "three_paths", "per_start", "per_city_in", "count_start",
                                         "filtered_before", "anonymous_end"};
    for (size_t i = 0; i < sizeof simple / sizeof *simple; i++) twin(f, simple[i], 1);
    fixture_free(f);
}

/* A fixed graph whose counts are known: ann->bo twice (parallel), ann->cy, bo->cy, cy->cy (a
 * self-loop), dee knows nobody.  Two-paths from ann: via bo (distinct neighbour cy: 1), via cy
 * (cy: 1) = 2; from bo: via cy = 1; from cy: via cy = 1. */
static void known_counts(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    assert_int_equal(fixture_load(f,
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"ann\",\"age\":40,\"city\":\"x\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"bo\",\"age\":40,\"city\":\"x\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"cy\",\"age\":20,\"city\":\"y\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"dee\",\"age\":20}}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"cy\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"bo\",\"to\":\"cy\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"cy\",\"to\":\"cy\"}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "two_paths", NULL, "4");
    EXPECT_ROWS(f, "per_start", NULL, "ann|2;bo|1;cy|1");
    EXPECT_ROWS(f, "anonymous_end", NULL, "ann|2;bo|1;cy|1");
    og_exec_count_degrees = 0;
    EXPECT_ROWS(f, "two_paths", NULL, "4");
    EXPECT_ROWS(f, "per_start", NULL, "ann|2;bo|1;cy|1");
    og_exec_count_degrees = 1;
    fixture_free(f);
    /* a simple graph: ann->bo, ann->cy, bo->cy, cy->dee; two-paths ann: via bo 1, via cy 1;
     * bo: via cy 1; cy: via dee 0 */
    f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    assert_int_equal(fixture_load(f,
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"ann\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"bo\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"cy\"}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"dee\"}}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"cy\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"bo\",\"to\":\"cy\"}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"cy\",\"to\":\"dee\"}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "two_paths", NULL, "3");
    EXPECT_ROWS(f, "per_start", NULL, "ann|2;bo|1");
    EXPECT_ROWS(f, "three_paths", NULL, "1"); /* ann->bo->cy->dee */
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_counts),
        cmocka_unit_test(counts_equal_enumeration),
        cmocka_unit_test(counts_equal_enumeration_on_a_simple_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
