/*
 * test_small_writes.c — a one-row write costs what it touches, not the size of the graph
 * (issue 17 "Small writes stay cheap"; docs/benchmarks.md "One-row writes at 1M nodes").
 *
 * With the key maps and topologies of the head persisted (what `optimize` writes), a keyed
 * node insert, an edge insert between existing nodes, an update and a delete by key (its
 * cascade included), and a one-line append load of an edge each do, in a fresh handle, no
 * work proportional to a whole table (og_tableview_whole_reads: no column loaded, no row
 * address list, no key map or topology built in memory) — a delete also when only an older
 * version triple has a persisted topology (og_tableview_incidence).  Every check still fails loudly
 * (a missing endpoint, a key update, @unique, @card), and every answer equals that of a twin
 * graph written with index files off (the whole-column paths).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/graph_index.h"
#include "engine/mutate.h"
#include "engine/tableview.h"
#include "fixture.h"

static const char *SCHEMA =
    "node P { name: String @key  v: I64 }\n"
    "edge E: P -> P\n"
    "node U { name: String @key  email: String?  @unique(email) }\n"
    "node C { name: String @key }\n"
    "edge Has: C -> U @card(0..1)\n";

static const char *READS =
    "query people() { match { $p: P } return { $p.name, $p.v } order { $p.name } }\n"
    "query links() { match { $a: P  $a e $b } return { $a.name, $b.name } order { $a.name, $b.name } }\n"
    "query one($n: String) { match { $p: P { name: $n } } return { $p.v } }\n"
    "query out($n: String) { match { $p: P { name: $n }  $p e $f } return { $f.name } order { $f.name } }\n";

static const char *MUTS =
    "query add($n: String, $v: I64) { insert P { name: $n, v: $v } }\n"
    "query link($a: String, $b: String) { insert E { from: $a, to: $b } }\n"
    "query set($n: String, $v: I64) { update P set { v: $v } where name = $n }\n"
    "query set_by_id($id: String, $v: I64) { update P set { v: $v } where @id = $id }\n"
    "query rename($n: String, $m: String) { update P set { name: $m } where name = $n }\n"
    "query drop($n: String) { delete P where name = $n }\n"
    "query add_u($n: String, $e: String) { insert U { name: $n, email: $e } }\n"
    "query add_c($n: String) { insert C { name: $n } }\n"
    "query has($c: String, $u: String) { insert Has { from: $c, to: $u } }\n";

#define NODES 200

static og_status mut(fixture *f, const char *name, const char *params, og_mutate_stats *stats)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_write_result res;
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, NULL, &res, stats);
    json_decref(pj);
    return st;
}

/* A fresh handle on the same graph (an empty cache: what a new process sees). */
static void reopen(fixture *f)
{
    og_engine_close(f->e);
    if (og_engine_open(&f->e, f->uri, NULL) != OG_OK) fail_msg("reopen: %s", og_error_message());
}

/* NODES nodes p000.. (v = i) and two out-edges each, loaded in two commits (two fragments). */
static fixture *seeded(void)
{
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    for (int part = 0; part < 2; part++) {
        og_buf b = OG_BUF_INIT;
        for (int i = part * NODES / 2; i < (part + 1) * NODES / 2; i++)
            og_buf_printf(&b, "{\"type\": \"P\", \"data\": {\"name\": \"p%03d\", \"v\": %d}}\n", i, i);
        if (part)
            for (int i = 0; i < NODES; i++) {
                og_buf_printf(&b, "{\"edge\": \"E\", \"from\": \"p%03d\", \"to\": \"p%03d\"}\n", i, (i * 7 + 1) % NODES);
                og_buf_printf(&b, "{\"edge\": \"E\", \"from\": \"p%03d\", \"to\": \"p%03d\"}\n", i, (i + 3) % NODES);
            }
        og_write_result res;
        if (fixture_load(f, og_buf_cstr(&b), OG_LOAD_APPEND, &res) != OG_OK) fail_msg("seed: %s", og_error_message());
        og_buf_free(&b);
    }
    return f;
}

/* What `optimize` leaves for the next process: the head's key maps and topologies, written
 * (mode 2 only); then a fresh handle. */
static void persist_indexes(fixture *f)
{
    og_graph_index_report rep;
    if (og_engine_graph_index_build(f->e, NULL, &rep) != OG_OK) fail_msg("index build: %s", og_error_message());
    reopen(f);
}

static void answers(fixture *f, char *out, size_t cap)
{
    char got[16384];
    size_t w = 0;
    if (fixture_query(f, "people", NULL, NULL, got, sizeof got) != OG_OK) fail_msg("people: %s", og_error_message());
    w += (size_t)snprintf(out + w, cap - w, "people=%s\n", got);
    if (fixture_query(f, "links", NULL, NULL, got, sizeof got) != OG_OK) fail_msg("links: %s", og_error_message());
    snprintf(out + w, cap - w, "links=%s\n", got);
}

/* The write sequence both graphs go through; with `indexed`, every step but the last delete
 * starts from persisted indexes and must do no whole-table work. */
static void write_sequence(fixture *f, int indexed)
{
    og_mutate_stats ms;
    og_write_result res;
    size_t w0;
#define ONE_ROW(call)                                                                                   \
    do {                                                                                                \
        if (indexed) persist_indexes(f);                                                                \
        w0 = og_tableview_whole_reads();                                                                \
        if ((call) != OG_OK) fail_msg("%s: %s", #call, og_error_message());                             \
        if (indexed && og_tableview_whole_reads() != w0)                                                \
            fail_msg("%s read a whole table (%zu times)", #call, og_tableview_whole_reads() - w0);      \
    } while (0)
    ONE_ROW(mut(f, "add", "{\"n\": \"pnew\", \"v\": 1000}", &ms));
    assert_int_equal(ms.affected_nodes, 1);
    ONE_ROW(mut(f, "link", "{\"a\": \"p001\", \"b\": \"pnew\"}", &ms));
    assert_int_equal(ms.affected_edges, 1);
    ONE_ROW(mut(f, "set", "{\"n\": \"p003\", \"v\": -3}", &ms));
    assert_int_equal(ms.affected_nodes, 1);
    ONE_ROW(mut(f, "set_by_id", "{\"id\": \"p050\", \"v\": -50}", &ms));
    assert_int_equal(ms.affected_nodes, 1);
    /* p004: out-edges to p029 (4*7+1) and p007 (4+3), in-edges from p029 and p001 */
    ONE_ROW(mut(f, "drop", "{\"n\": \"p004\"}", &ms));
    assert_int_equal(ms.affected_nodes, 1);
    assert_int_equal(ms.affected_edges, 4);
    ONE_ROW(fixture_load(f, "{\"edge\": \"E\", \"from\": \"p005\", \"to\": \"p006\"}\n", OG_LOAD_APPEND, &res));
    /* p010 lives in the fragment that now has a deletion file: its row address is bisected */
    ONE_ROW(mut(f, "set", "{\"n\": \"p010\", \"v\": -10}", &ms));
    assert_int_equal(ms.affected_nodes, 1);
    /* no such key: nothing matches, nothing is published */
    ONE_ROW(mut(f, "set", "{\"n\": \"zzz\", \"v\": 1}", &ms));
    assert_int_equal(ms.affected_nodes, 0);
    /* a write published since the indexes were persisted, and a lookup that persisted the key
     * maps of its head (as any first reader does), but no topology for that head: the delete
     * finds the edges through the older persisted topology plus the fragments appended since */
    assert_int_equal(mut(f, "set", "{\"n\": \"p012\", \"v\": -12}", &ms), OG_OK);
    assert_int_equal(mut(f, "link", "{\"a\": \"p120\", \"b\": \"p002\"}", &ms), OG_OK); /* appended since */
    assert_int_equal(mut(f, "link", "{\"a\": \"p003\", \"b\": \"p120\"}", &ms), OG_OK);
    char got[64];
    assert_int_equal(fixture_query(f, "one", "{\"n\": \"p012\"}", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "-12");
    reopen(f);
    w0 = og_tableview_whole_reads();
    assert_int_equal(mut(f, "drop", "{\"n\": \"p120\"}", &ms), OG_OK);
    assert_int_equal(ms.affected_edges, 6); /* out p041, p123, p002; in p017 (17*7+1), p117, p003 */
    if (indexed && og_tableview_whole_reads() != w0)
        fail_msg("the delete through an older topology read a whole table (%zu times)", og_tableview_whole_reads() - w0);
    /* no index file at all: one pass over the endpoint columns (whole reads), the same answer */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/_index'", f->uri);
    assert_int_equal(system(cmd), 0);
    reopen(f);
    w0 = og_tableview_whole_reads();
    assert_int_equal(mut(f, "drop", "{\"n\": \"p130\"}", &ms), OG_OK);
    assert_int_equal(ms.affected_edges, 4); /* out p111, p133; in p047 (47*7+1), p127 */
    if (indexed) assert_true(og_tableview_whole_reads() > w0);
#undef ONE_ROW
}

/* The one-row writes read no whole table, and the graph ends exactly as the twin written
 * with index files off. */
static void one_row_writes_touch_only_what_they_need(void **state)
{
    (void)state;
    char want[65536], got[65536];
    og_tableview_set_index_mode(0);
    fixture *twin = seeded();
    write_sequence(twin, 0);
    answers(twin, want, sizeof want);
    fixture_free(twin);

    og_tableview_set_index_mode(2);
    fixture *f = seeded();
    write_sequence(f, 1);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    /* and what the sequence did, spelled out */
    EXPECT_ROWS(f, "one", "{\"n\": \"p003\"}", "-3");
    EXPECT_ROWS(f, "one", "{\"n\": \"p050\"}", "-50");
    EXPECT_ROWS(f, "one", "{\"n\": \"p010\"}", "-10");
    EXPECT_ROWS(f, "one", "{\"n\": \"p009\"}", "9"); /* the neighbours of the rewritten rows kept */
    EXPECT_ROWS(f, "one", "{\"n\": \"p011\"}", "11");
    EXPECT_ROWS(f, "one", "{\"n\": \"p004\"}", "");
    EXPECT_ROWS(f, "one", "{\"n\": \"p120\"}", "");
    EXPECT_ROWS(f, "out", "{\"n\": \"p117\"}", "p020");   /* p117 -> p120 cascaded away */
    EXPECT_ROWS(f, "out", "{\"n\": \"p047\"}", "p050");   /* p047 -> p130 cascaded away */
    EXPECT_ROWS(f, "out", "{\"n\": \"p003\"}", "p006;p022"); /* and the appended p003 -> p120 */
    EXPECT_ROWS(f, "one", "{\"n\": \"pnew\"}", "1000");
    EXPECT_ROWS(f, "out", "{\"n\": \"p001\"}", "p008;pnew");   /* p004 (3 + 1) cascaded away */
    EXPECT_ROWS(f, "out", "{\"n\": \"p005\"}", "p006;p008;p036");
    fixture_free(f);
}

/* The checks a small write must not skip, each a typed error with nothing published and no
 * whole-table work on the way. */
static void small_writes_keep_every_check(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    fixture *f = seeded();
    og_mutate_stats ms;
    og_write_result res;
    assert_int_equal(mut(f, "add_u", "{\"n\": \"a\", \"e\": \"x@example.org\"}", &ms), OG_OK);
    assert_int_equal(mut(f, "add_c", "{\"n\": \"c1\"}", &ms), OG_OK);
    assert_int_equal(mut(f, "add_u", "{\"n\": \"b\", \"e\": \"y@example.org\"}", &ms), OG_OK);
    assert_int_equal(mut(f, "has", "{\"c\": \"c1\", \"u\": \"a\"}", &ms), OG_OK);
    char before[65536], after[65536];
    answers(f, before, sizeof before);

    persist_indexes(f);
    size_t w0 = og_tableview_whole_reads();
    /* a missing endpoint, either end, as a mutation and as a load */
    assert_int_equal(mut(f, "link", "{\"a\": \"p001\", \"b\": \"nobody\"}", &ms), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "dst 'nobody' not found in P"));
    assert_int_equal(mut(f, "link", "{\"a\": \"nobody\", \"b\": \"p001\"}", &ms), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "src 'nobody' not found in P"));
    assert_int_equal(fixture_load(f, "{\"edge\": \"E\", \"from\": \"p001\", \"to\": \"p999\"}\n", OG_LOAD_APPEND, &res),
                     OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "'p999' not found in P"));
    /* a key is never updated in place */
    assert_int_equal(mut(f, "rename", "{\"n\": \"p001\", \"m\": \"q001\"}", &ms), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "cannot update key property P.name"));
    /* a duplicate key in an append load */
    assert_int_equal(fixture_load(f, "{\"type\": \"P\", \"data\": {\"name\": \"p002\", \"v\": 5}}\n", OG_LOAD_APPEND, &res),
                     OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "'p002' already exists"));
    /* @card: the source's committed out-edges come from the topology */
    assert_int_equal(mut(f, "has", "{\"c\": \"c1\", \"u\": \"b\"}", &ms), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "@card violation on edge Has: source 'c1' has 2 edges (max 1)"));
    assert_int_equal(og_tableview_whole_reads(), w0);
    /* @unique (its check still reads the constrained column: docs/benchmarks.md) */
    assert_int_equal(mut(f, "add_u", "{\"n\": \"c\", \"e\": \"x@example.org\"}", &ms), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "@unique violation on U.email"));
    reopen(f);
    answers(f, after, sizeof after);
    assert_string_equal(after, before);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_row_writes_touch_only_what_they_need),
        cmocka_unit_test(small_writes_keep_every_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
