/*
 * test_optimize_race.c — optimize is safe beside a concurrent writer (issue 17, docs/
 * maintenance.md): a write that publishes while an optimize is between planning and
 * publishing (forced through the optimize's test-only attempt hook, on another handle) makes
 * the optimize lose its publish and re-plan from the new head: the write is kept, the
 * optimize commit sits on top of it, the answers are the writes' answers, and the rows the
 * write added are compacted too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/mutate.h"
#include "engine/optimize.h"
#include "fixture.h"

static const char *SCHEMA = "node Person { name: String @key  age: I32? }\n";
static const char *QUERIES =
    "query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }\n"
    "query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n"
    "query n() { match { $p: Person } return { count($p) as n } }\n";

typedef struct race {
    const char *uri;
    int calls;
    og_status write_st;
} race;

static og_status add(og_engine *e, const char *name, int age)
{
    char p[96];
    snprintf(p, sizeof p, "{\"n\":\"%s\",\"a\":%d}", name, age);
    json_t *pj = json_loads(p, 0, NULL);
    og_write_result w;
    og_status st = og_engine_mutate(e, "q.gq", QUERIES, strlen(QUERIES), "add", pj, NULL, &w, NULL);
    json_decref(pj);
    return st;
}

/* On the first attempt only: another handle publishes a one-row commit on main. */
static void publish_meanwhile(int attempt, void *arg)
{
    race *r = arg;
    r->calls++;
    if (attempt != 1) return;
    og_engine *other;
    r->write_st = og_engine_open(&other, r->uri, NULL);
    if (r->write_st != OG_OK) return;
    r->write_st = add(other, "late", 77);
    og_engine_close(other);
}

static void a_write_published_meanwhile_makes_optimize_replan_and_is_kept(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    char name[16];
    assert_int_equal(fixture_load(f, "{\"type\": \"Person\", \"data\": {\"name\": \"p0\", \"age\": 0}}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    for (int i = 1; i < 8; i++) { /* and 7 one-row commits: 8 small fragments */
        snprintf(name, sizeof name, "p%d", i);
        assert_int_equal(add(f->e, name, i), OG_OK);
    }
    race r = {f->uri, 0, OG_ERR_INTERNAL};
    og_optimize_opts o = {.branch = NULL, .attempt_hook = publish_meanwhile, .attempt_hook_arg = &r};
    og_optimize_report rep;
    assert_int_equal(og_engine_optimize(f->e, &o, &rep), OG_OK);
    assert_int_equal(r.write_st, OG_OK);   /* the concurrent write published first ... */
    assert_int_equal(rep.published, 1);    /* ... and the optimize still published, */
    assert_int_equal(rep.attempts, 2);     /* after re-planning once */
    assert_int_equal(r.calls, 2);
    assert_int_equal(rep.fragments_before, 9); /* planned on the new head: the late row's fragment too */
    assert_int_equal(rep.fragments_after, 1);
    assert_int_equal(rep.rows_rewritten, 9);
    char got[1024];
    assert_int_equal(fixture_query(f, "people", NULL, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "late|77;p0|0;p1|1;p2|2;p3|3;p4|4;p5|5;p6|6;p7|7");
    /* a fresh handle reads the same from the compacted head; nothing is left to do */
    og_engine_close(f->e);
    assert_int_equal(og_engine_open(&f->e, f->uri, NULL), OG_OK);
    assert_int_equal(fixture_query(f, "n", NULL, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "9");
    og_optimize_opts again = {.branch = NULL};
    assert_int_equal(og_engine_optimize(f->e, &again, &rep), OG_OK);
    assert_int_equal(rep.published, 0);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_write_published_meanwhile_makes_optimize_replan_and_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
