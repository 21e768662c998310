/*
 * test_exec_read.c — the read executor end to end over the reference fixture F1
 * (reference-examples.md E1–E4, E7): queries are compiled by the real compiler and run over an
 * in-memory source, so these tests pin the executor's semantics independent of storage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir.h"
#include "compiler/query_check.h"
#include "compiler/schema.h"
#include "engine/exec.h"
#include "util/error.h"

static const char *F1_SCHEMA =
    "node Person { name: String @key  age: I32? }\n"
    "node Company { name: String @key }\n"
    "edge Knows: Person -> Person { since: Date? }\n"
    "edge WorksAt: Person -> Company\n";

/* An in-memory graph: per node type an id column and property columns; per edge type src/dst
 * node rows. */
typedef struct mem_table {
    og_vector id;
    og_vector props[4];
    uint64_t prop_ids[4];
    size_t nprops;
    uint32_t src[16], dst[16];
    size_t nedges;
    og_topology *topo;
} mem_table;

typedef struct mem_graph {
    og_catalog *cat;
    mem_table nodes[4], edges[4];
} mem_graph;

static og_status m_node_rows(void *ud, size_t node, size_t *n)
{
    *n = ((mem_graph *)ud)->nodes[node].id.len;
    return OG_OK;
}

static og_status find_col(mem_table *t, uint64_t prop_id, const og_vector **out)
{
    if (prop_id == OG_PROP_ID_COLUMN) {
        *out = &t->id;
        return OG_OK;
    }
    for (size_t i = 0; i < t->nprops; i++)
        if (t->prop_ids[i] == prop_id) {
            *out = &t->props[i];
            return OG_OK;
        }
    return og_err(OG_ERR_NOT_FOUND, "no property %llu", (unsigned long long)prop_id);
}

static og_status m_node_column(void *ud, size_t node, uint64_t prop_id, const og_vector **out)
{
    return find_col(&((mem_graph *)ud)->nodes[node], prop_id, out);
}

static og_status m_edge_column(void *ud, size_t edge, uint64_t prop_id, const og_vector **out)
{
    return find_col(&((mem_graph *)ud)->edges[edge], prop_id, out);
}

static og_status m_edge_topology(void *ud, size_t edge, const og_topology **out)
{
    mem_graph *g = ud;
    mem_table *e = &g->edges[edge];
    if (!e->topo) {
        const og_cat_type *et = &g->cat->edges[edge];
        OG_TRY(og_topology_build(&e->topo, (uint32_t)g->nodes[et->from_node].id.len,
                                 (uint32_t)g->nodes[et->to_node].id.len, e->src, e->dst, e->nedges, NULL));
    }
    *out = e->topo;
    return OG_OK;
}

static int find_calls;

static og_status m_node_find_id(void *ud, size_t node, const char *id, size_t len, uint32_t *row)
{
    mem_table *t = &((mem_graph *)ud)->nodes[node];
    find_calls++;
    for (size_t i = 0; i < t->id.len; i++) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(&t->id, i, &n);
        if (n == len && memcmp(p, id, n) == 0) {
            *row = (uint32_t)i;
            return OG_OK;
        }
    }
    *row = UINT32_MAX; /* a miss (exec.h node_find_id) */
    return OG_OK;
}

static size_t node_index(const og_catalog *cat, const char *name)
{
    const og_cat_type *t = og_catalog_node(cat, name);
    assert_non_null(t);
    return (size_t)(t - cat->nodes);
}

static uint32_t row_of(mem_table *t, const char *id)
{
    for (size_t i = 0; i < t->id.len; i++) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(&t->id, i, &n);
        if (n == strlen(id) && memcmp(p, id, n) == 0) return (uint32_t)i;
    }
    fail_msg("no node %s", id);
    return 0;
}

static void add_person(mem_graph *g, const char *name, int age)
{
    mem_table *t = &g->nodes[node_index(g->cat, "Person")];
    og_vector_append_bytes(&t->id, name, strlen(name));
    og_vector_append_bytes(&t->props[0], name, strlen(name));
    if (age >= 0)
        og_vector_append_i64(&t->props[1], age);
    else
        og_vector_append_null(&t->props[1]);
}

static void add_company(mem_graph *g, const char *name)
{
    mem_table *t = &g->nodes[node_index(g->cat, "Company")];
    og_vector_append_bytes(&t->id, name, strlen(name));
    og_vector_append_bytes(&t->props[0], name, strlen(name));
}

static void add_edge(mem_graph *g, const char *edge, const char *from, const char *to)
{
    const og_cat_type *et = og_catalog_edge(g->cat, edge);
    mem_table *e = &g->edges[et - g->cat->edges];
    char id[32];
    snprintf(id, sizeof id, "e%zu", e->nedges);
    og_vector_append_bytes(&e->id, id, strlen(id));
    for (size_t i = 0; i < e->nprops; i++) og_vector_append_null(&e->props[i]);
    e->src[e->nedges] = row_of(&g->nodes[et->from_node], from);
    e->dst[e->nedges] = row_of(&g->nodes[et->to_node], to);
    e->nedges++;
}

static void table_init(mem_table *t, const og_cat_type *ct)
{
    memset(t, 0, sizeof *t);
    og_vector_init(&t->id, (og_type){OG_T_STRING, 0, 0});
    for (size_t i = 0; i < ct->nprops; i++) {
        og_vector_init(&t->props[i], ct->props[i].type);
        t->prop_ids[i] = ct->props[i].id;
    }
    t->nprops = ct->nprops;
}

static mem_graph *f1_graph(int with_edges)
{
    mem_graph *g = calloc(1, sizeof *g);
    assert_int_equal(og_schema_compile(&g->cat, "f1.pg", F1_SCHEMA, strlen(F1_SCHEMA), NULL), OG_OK);
    for (size_t i = 0; i < g->cat->nnodes; i++) table_init(&g->nodes[i], &g->cat->nodes[i]);
    for (size_t i = 0; i < g->cat->nedges; i++) table_init(&g->edges[i], &g->cat->edges[i]);
    add_person(g, "Alice", 30);
    add_person(g, "Bob", 25);
    add_person(g, "Charlie", 35);
    add_person(g, "Diana", 28);
    add_company(g, "Acme");
    add_company(g, "Globex");
    if (with_edges) {
        add_edge(g, "Knows", "Alice", "Bob");
        add_edge(g, "Knows", "Alice", "Charlie");
        add_edge(g, "Knows", "Bob", "Diana");
        add_edge(g, "WorksAt", "Alice", "Acme");
        add_edge(g, "WorksAt", "Bob", "Globex");
    }
    return g;
}

static void free_table(mem_table *t)
{
    og_vector_free(&t->id);
    for (size_t i = 0; i < t->nprops; i++) og_vector_free(&t->props[i]);
    og_topology_free(t->topo);
}

static void f1_free(mem_graph *g)
{
    for (size_t i = 0; i < g->cat->nnodes; i++) free_table(&g->nodes[i]);
    for (size_t i = 0; i < g->cat->nedges; i++) free_table(&g->edges[i]);
    og_catalog_free(g->cat);
    free(g);
}

/* Renders a result as "a|b;c|d" (nulls as "null", floats with %g). */
static void render(const og_result *r, char *out, size_t cap)
{
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t c = 0; c < r->ncols; c++) {
            const og_vector *v = &r->cols[c];
            char cell[128];
            if (og_vector_is_null(v, i)) {
                snprintf(cell, sizeof cell, "null");
            } else if (v->type.id == OG_T_STRING) {
                size_t n;
                const uint8_t *p = og_vector_get_bytes(v, i, &n);
                snprintf(cell, sizeof cell, "%.*s", (int)n, (const char *)p);
            } else if (v->type.id == OG_T_F64 || v->type.id == OG_T_F32) {
                snprintf(cell, sizeof cell, "%g", og_vector_get_f64(v, i));
            } else {
                snprintf(cell, sizeof cell, "%lld", (long long)og_vector_get_i64(v, i));
            }
            w += (size_t)snprintf(out + w, cap - w, "%s%s", c ? "|" : (i ? ";" : ""), cell);
        }
    }
}

/* Compiles query `name` from `gq` and runs it with `params` (JSON text or NULL); returns the
 * status, and the rendered rows in out. */
static og_status run_query(mem_graph *g, const char *gq, const char *name, const char *params, char *out, size_t cap,
                           og_result *keep)
{
    og_source src;
    og_source_init(&src, "t.gq", gq, strlen(gq));
    og_query_file *f;
    og_diag d;
    memset(&d, 0, sizeof d);
    og_status st = og_query_parse(&f, &src, &d);
    if (st) fail_msg("parse: %s", d.message);
    size_t qi = 0;
    const og_query *q = og_query_find(f, name);
    assert_non_null(q);
    qi = (size_t)(q - f->queries);
    og_ir_query *ir;
    st = og_query_compile(&ir, f, qi, g->cat, &src, &d);
    if (st) fail_msg("compile %s: %s", name, d.message);
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_vector *pv;
    st = og_exec_bind_params(ir, pj, &pv);
    json_decref(pj);
    if (st == OG_OK) {
        og_exec_source s = {g, m_node_rows, m_node_column, m_edge_column, m_edge_topology, m_node_find_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        og_result r;
        st = og_exec_read(ir, &s, pv, 0, &r);
        if (st == OG_OK) {
            render(&r, out, cap);
            if (keep)
                *keep = r;
            else
                og_result_free(&r);
        }
        for (size_t i = 0; i < ir->nparams; i++) og_vector_free(&pv[i]);
        free(pv);
    }
    og_ir_free(ir);
    og_query_file_free(f);
    og_source_free(&src);
    return st;
}

static const char *Q =
    "query get_person($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }\n"
    "query adults() { match { $p: Person  $p.age > 30 } return { $p.name, $p.age } order { $p.age desc } }\n"
    "query top_by_age() { match { $p: Person } return { $p.name, $p.age } order { $p.age desc } limit 2 }\n"
    "query friends_of($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name } order { $f.name } }\n"
    "query employees_of($company: String) { match { $c: Company { name: $company }  $p worksAt $c } return { $p.name } }\n"
    "query fof_chain($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $p.name, $mid.name, $fof.name } }\n"
    "query fof_via($name: String, $mid_name: String) { match { $p: Person { name: $name }  $p knows $mid $mid: Person { name: $mid_name }  $mid knows $fof } return { $fof.name } }\n"
    "query at_acme() { match { $p: Person  $p worksAt $c  $c: Company { name: \"Acme\" } } return { $p.name } }\n"
    "query employee_companies() { match { $p: Person  $p worksAt $c  $c: Company } return { $p.name, $c.name } order { $p.name } }\n"
    "query unemployed() { match { $p: Person  not { $p worksAt $_ } } return { $p.name } order { $p.name } }\n"
    "query not_at_acme() { match { $p: Person  not { $p worksAt $c  $c.name = \"Acme\" } } return { $p.name } order { $p.name } }\n"
    "query no_nonacme_employer() { match { $p: Person not { $p worksAt $c not { $c.name = \"Acme\" } } } return { $p.name } order { $p.name } }\n"
    "query friend_counts() { match { $p: Person  $p knows $f } return { $p.name count($f) as friends } order { friends desc } limit 20 }\n"
    "query total_people() { match { $p: Person } return { count($p) as total } }\n"
    "query age_stats() { match { $p: Person  $p worksAt $c } return { $c.name sum($p.age) as total_age avg($p.age) as avg_age min($p.age) as youngest max($p.age) as oldest count($p) as headcount } order { $c.name } }\n"
    "query name_range() { match { $p: Person } return { min($p.name) as first_name  max($p.name) as last_name } }\n"
    "query reach($name: String) { match { $p: Person { name: $name }  $p knows{1,2} $f } return { $f.name } order { $f.name } }\n"
    "query exact2($name: String) { match { $p: Person { name: $name }  $p knows{2,2} $f } return { $f.name } }\n"
    "query everyone_by_name() { match { $p: Person } return { $p.name } order { $p.name desc } }\n"
    "query cross() { match { $p: Person { name: \"Alice\" }  $c: Company } return { $p.name, $c.name } order { $c.name } }\n";

#define EXPECT(g, name, params, want)                                                     \
    do {                                                                                  \
        char buf_[1024];                                                                  \
        og_status st_ = run_query((g), Q, (name), (params), buf_, sizeof buf_, NULL);     \
        if (st_) fail_msg("%s: %s", (name), og_error_message());                         \
        if (strcmp(buf_, (want))) fail_msg("%s: got '%s', want '%s'", (name), buf_, (want)); \
    } while (0)

static void lookups_filters_order_and_limit(void **state)
{
    (void)state;
    mem_graph *g = f1_graph(1);
    find_calls = 0;
    EXPECT(g, "get_person", "{\"name\":\"Alice\"}", "Alice|30");
    EXPECT(g, "get_person", "{\"name\":\"Nobody\"}", "");
    assert_int_equal(find_calls, 2); /* an equality on the @key is a lookup, not a scan */
    EXPECT(g, "adults", NULL, "Charlie|35");
    EXPECT(g, "top_by_age", NULL, "Charlie|35;Alice|30");
    EXPECT(g, "everyone_by_name", NULL, "Diana;Charlie;Bob;Alice");
    f1_free(g);
}

static void traversals_forward_reverse_chained_and_deferred_bindings(void **state)
{
    (void)state;
    mem_graph *g = f1_graph(1);
    EXPECT(g, "friends_of", "{\"name\":\"Alice\"}", "Bob;Charlie");
    EXPECT(g, "employees_of", "{\"company\":\"Acme\"}", "Alice");
    EXPECT(g, "fof_chain", "{\"name\":\"Alice\"}", "Alice|Bob|Diana");
    EXPECT(g, "fof_via", "{\"name\":\"Alice\",\"mid_name\":\"Bob\"}", "Diana");
    EXPECT(g, "at_acme", NULL, "Alice");
    EXPECT(g, "employee_companies", NULL, "Alice|Acme;Bob|Globex");
    EXPECT(g, "reach", "{\"name\":\"Alice\"}", "Bob;Charlie;Diana");
    EXPECT(g, "exact2", "{\"name\":\"Alice\"}", "Diana");
    EXPECT(g, "cross", NULL, "Alice|Acme;Alice|Globex");
    f1_free(g);
}

static void negation_bare_predicated_and_nested(void **state)
{
    (void)state;
    mem_graph *g = f1_graph(1);
    EXPECT(g, "unemployed", NULL, "Charlie;Diana");
    EXPECT(g, "not_at_acme", NULL, "Bob;Charlie;Diana");
    EXPECT(g, "no_nonacme_employer", NULL, "Alice;Charlie;Diana");
    f1_free(g);
    g = f1_graph(0);
    EXPECT(g, "unemployed", NULL, "Alice;Bob;Charlie;Diana");
    EXPECT(g, "friends_of", "{\"name\":\"Alice\"}", "");
    f1_free(g);
}

static void aggregates_group_implicitly(void **state)
{
    (void)state;
    mem_graph *g = f1_graph(1);
    EXPECT(g, "friend_counts", NULL, "Alice|2;Bob|1");
    EXPECT(g, "total_people", NULL, "4");
    EXPECT(g, "age_stats", NULL, "Acme|30|30|30|30|1;Globex|25|25|25|25|1");
    EXPECT(g, "name_range", NULL, "Alice|Diana");
    og_result r;
    char buf[256];
    assert_int_equal(run_query(g, Q, "age_stats", NULL, buf, sizeof buf, &r), OG_OK);
    assert_int_equal(r.cols[1].type.id, OG_T_F64); /* sum is F64 */
    assert_int_equal(r.cols[3].type.id, OG_T_I32); /* min keeps I32 */
    assert_string_equal(r.names[0], "c.name");
    assert_string_equal(r.names[5], "headcount");
    og_result_free(&r);
    f1_free(g);
}

static void a_missing_required_parameter_is_a_typed_error(void **state)
{
    (void)state;
    mem_graph *g = f1_graph(1);
    char buf[64];
    assert_int_equal(run_query(g, Q, "get_person", "{}", buf, sizeof buf, NULL), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "parameter 'name' not provided"));
    assert_int_equal(run_query(g, Q, "get_person", "{\"name\": 5}", buf, sizeof buf, NULL), OG_ERR_INVALID);
    f1_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookups_filters_order_and_limit),
        cmocka_unit_test(traversals_forward_reverse_chained_and_deferred_bindings),
        cmocka_unit_test(negation_bare_predicated_and_nested),
        cmocka_unit_test(aggregates_group_implicitly),
        cmocka_unit_test(a_missing_required_parameter_is_a_typed_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
