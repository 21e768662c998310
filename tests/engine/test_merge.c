/*
 * test_merge.c — branch merge (reference-storage.md §5): the truth table of every pair of
 * operations on the two sides (add / update / delete node, add / delete edge; same row and
 * different rows; property changes on one row) with its expected outcome and merged image;
 * complete conflict reports with nothing published; validation of the merged image (orphan
 * edges, @unique, @card); fast-forward and already-up-to-date; merge commits with two
 * parents; merge after the target moved (the retry re-captures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "engine/changes.h"
#include "engine/history.h"
#include "engine/merge.h"
#include "engine/mutate.h"
#include "fixture.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32?  email: String?  @unique(email) }\n"
    "node Company { name: String @key }\n"
    "edge Knows: Person -> Person\n"
    "edge WorksAt: Person -> Company @card(0..1)\n";

static const char *SEED =
    "{\"type\": \"Person\", \"data\": {\"name\": \"A\", \"age\": 1}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"B\", \"age\": 2}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"C\", \"age\": 3}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"D\", \"age\": 4}}\n"
    "{\"type\": \"Company\", \"data\": {\"name\": \"Acme\"}}\n"
    "{\"type\": \"Company\", \"data\": {\"name\": \"Globex\"}}\n"
    "{\"edge\": \"Knows\", \"from\": \"A\", \"to\": \"B\"}\n";

static const char *READS =
    "query people() { match { $p: Person } return { $p.name, $p.age, $p.email } order { $p.name } }\n"
    "query knows() { match { $a: Person $a knows $b } return { $a.name, $b.name } order { $a.name, $b.name } }\n"
    "query jobs() { match { $p: Person $p worksAt $c } return { $p.name, $c.name } order { $p.name, $c.name } }\n";

static const char *MUTS =
    "query add_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }\n"
    "query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }\n"
    "query set_email($name: String, $email: String) { update Person set { email: $email } where name = $name }\n"
    "query del_person($name: String) { delete Person where name = $name }\n"
    "query add_knows($from: String, $to: String) { insert Knows { from: $from, to: $to } }\n"
    "query del_knows($from: String) { delete Knows where from = $from }\n"
    "query hire($p: String, $c: String) { insert WorksAt { from: $p, to: $c } }\n";

#define PEOPLE0 "A|1|null;B|2|null;C|3|null;D|4|null"

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "dev", "main", NULL, NULL, NULL), OG_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

static og_status mut_on(fixture *f, const char *branch, const char *name, const char *params)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_write_result res;
    og_mutate_opts o = {branch, NULL};
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, &o, &res, NULL);
    json_decref(pj);
    if (st) fail_msg("%s on %s: %s", name, branch, og_error_message());
    return st;
}

static void head_of(fixture *f, const char *branch, char out[OG_ULID_LEN + 1])
{
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(og_engine_graph(f->e), branch, &e), OG_OK);
    snprintf(out, OG_ULID_LEN + 1, "%s", e.commit);
}

typedef struct step {
    const char *mut, *params;
} step;

typedef struct merge_case {
    const char *name;
    step src[2], tgt[2];          /* mutations on dev (source) and main (target) */
    og_status status;
    og_merge_outcome outcome;     /* when status == OG_OK */
    og_conflict_kind kind;        /* when status == OG_ERR_CONFLICT: every conflict has it */
    size_t nconflicts;
    const char *people, *knows, *jobs; /* expected main after the merge (NULL = not checked) */
} merge_case;

#define P(n, a) "{\"name\":\"" n "\",\"age\":" #a "}"
#define N(n) "{\"name\":\"" n "\"}"
#define F(a) "{\"from\":\"" a "\"}"
#define E(a, b) "{\"from\":\"" a "\",\"to\":\"" b "\"}"

static const merge_case CASES[] = {
    /* nodes: add / add */
    {"add node, same row, same values", {{"add_person", P("X", 9)}}, {{"add_person", P("X", 9)}}, OG_OK, OG_MERGE_MERGED,
     0, 0, "A|1|null;B|2|null;C|3|null;D|4|null;X|9|null", "A|B", NULL},
    {"add node, same id, different values", {{"add_person", P("X", 9)}}, {{"add_person", P("X", 8)}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_DIVERGENT_INSERT, 1, NULL, NULL, NULL},
    {"add node, different rows", {{"add_person", P("X", 9)}}, {{"add_person", P("Y", 8)}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     "A|1|null;B|2|null;C|3|null;D|4|null;X|9|null;Y|8|null", "A|B", NULL},
    /* update / update */
    {"update, same row, same values", {{"set_age", P("A", 10)}}, {{"set_age", P("A", 10)}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     "A|10|null;B|2|null;C|3|null;D|4|null", NULL, NULL},
    {"update, same row, different values", {{"set_age", P("A", 10)}}, {{"set_age", P("A", 11)}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_DIVERGENT_UPDATE, 1, NULL, NULL, NULL},
    {"update, same row, different properties", {{"set_age", P("A", 10)}}, {{"set_email", "{\"name\":\"A\",\"email\":\"a@x\"}"}},
     OG_ERR_CONFLICT, 0, OG_CONFLICT_DIVERGENT_UPDATE, 1, NULL, NULL, NULL},
    {"update, different rows", {{"set_age", P("A", 10)}}, {{"set_age", P("B", 20)}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     "A|10|null;B|20|null;C|3|null;D|4|null", "A|B", NULL},
    /* delete / delete, delete / update */
    {"delete, same row", {{"del_person", N("C")}}, {{"del_person", N("C")}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     "A|1|null;B|2|null;D|4|null", "A|B", NULL},
    {"delete vs update, same row", {{"del_person", N("C")}}, {{"set_age", P("C", 30)}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_DELETE_VS_UPDATE, 1, NULL, NULL, NULL},
    {"update vs delete, same row", {{"set_age", P("C", 30)}}, {{"del_person", N("C")}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_DELETE_VS_UPDATE, 1, NULL, NULL, NULL},
    {"delete, different rows", {{"del_person", N("C")}}, {{"del_person", N("D")}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     "A|1|null;B|2|null", "A|B", NULL},
    {"delete vs update, different rows", {{"del_person", N("C")}}, {{"set_age", P("D", 40)}}, OG_OK, OG_MERGE_MERGED, 0,
     0, "A|1|null;B|2|null;D|40|null", "A|B", NULL},
    {"add vs delete, different rows", {{"add_person", P("X", 9)}}, {{"del_person", N("D")}}, OG_OK, OG_MERGE_MERGED, 0,
     0, "A|1|null;B|2|null;C|3|null;X|9|null", "A|B", NULL},
    /* edges against nodes */
    {"add edge vs delete its endpoint", {{"add_knows", E("A", "C")}}, {{"del_person", N("C")}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_ORPHAN_EDGE, 1, NULL, NULL, NULL},
    {"delete node vs add an edge to it", {{"del_person", N("C")}}, {{"add_knows", E("D", "C")}}, OG_ERR_CONFLICT, 0,
     OG_CONFLICT_ORPHAN_EDGE, 1, NULL, NULL, NULL},
    {"delete edge vs update its endpoint", {{"del_knows", F("A")}}, {{"set_age", P("A", 10)}}, OG_OK, OG_MERGE_MERGED,
     0, 0, "A|10|null;B|2|null;C|3|null;D|4|null", "", NULL},
    {"add edge vs add its endpoint node", {{"add_knows", E("A", "C")}}, {{"add_person", P("X", 9)}}, OG_OK,
     OG_MERGE_MERGED, 0, 0, "A|1|null;B|2|null;C|3|null;D|4|null;X|9|null", "A|B;A|C", NULL},
    /* edges against edges */
    {"add edge, different rows", {{"add_knows", E("A", "C")}}, {{"add_knows", E("A", "D")}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     NULL, "A|B;A|C;A|D", NULL},
    /* two new edges with their own ids (parallel edges; the pattern match shows the pair once) */
    {"add edge, same endpoints", {{"add_knows", E("A", "C")}}, {{"add_knows", E("A", "C")}},
     OG_OK, OG_MERGE_MERGED, 0, 0, NULL, "A|B;A|C", NULL},
    {"delete edge, same row", {{"del_knows", F("A")}}, {{"del_knows", F("A")}}, OG_OK, OG_MERGE_MERGED, 0, 0,
     PEOPLE0, "", NULL},
    {"delete edge vs add another edge", {{"del_knows", F("A")}}, {{"add_knows", E("C", "D")}}, OG_OK, OG_MERGE_MERGED,
     0, 0, NULL, "C|D", NULL},
    {"add edge vs delete another edge", {{"add_knows", E("C", "D")}}, {{"del_knows", F("A")}}, OG_OK, OG_MERGE_MERGED,
     0, 0, NULL, "C|D", NULL},
    {"delete node (cascading its edge) vs delete that edge", {{"del_person", N("B")}}, {{"del_knows", F("A")}}, OG_OK,
     OG_MERGE_MERGED, 0, 0, "A|1|null;C|3|null;D|4|null", "", NULL},
    {"delete edge vs delete node cascading it", {{"del_knows", F("A")}}, {{"del_person", N("B")}}, OG_OK,
     OG_MERGE_MERGED, 0, 0, "A|1|null;C|3|null;D|4|null", "", NULL},
    /* validation of the merged image */
    {"@unique across the sides", {{"set_email", "{\"name\":\"A\",\"email\":\"x@x\"}"}},
     {{"set_email", "{\"name\":\"B\",\"email\":\"x@x\"}"}}, OG_ERR_CONFLICT, 0, OG_CONFLICT_UNIQUE_VIOLATION, 1, NULL,
     NULL, NULL},
    {"@card across the sides", {{"hire", "{\"p\":\"A\",\"c\":\"Acme\"}"}}, {{"hire", "{\"p\":\"A\",\"c\":\"Globex\"}"}},
     OG_ERR_CONFLICT, 0, OG_CONFLICT_CARDINALITY_VIOLATION, 1, NULL, NULL, NULL},
    {"@card, different sources", {{"hire", "{\"p\":\"A\",\"c\":\"Acme\"}"}}, {{"hire", "{\"p\":\"B\",\"c\":\"Globex\"}"}},
     OG_OK, OG_MERGE_MERGED, 0, 0, NULL, NULL, "A|Acme;B|Globex"},
    /* every conflict is reported */
    {"two divergent updates, both listed", {{"set_age", P("A", 10)}, {"set_age", P("B", 20)}},
     {{"set_age", P("A", 11)}, {"set_age", P("B", 21)}}, OG_ERR_CONFLICT, 0, OG_CONFLICT_DIVERGENT_UPDATE, 2, NULL, NULL,
     NULL},
    /* outcomes without a three-way merge */
    {"source only: fast-forward", {{"add_person", P("X", 9)}}, {{NULL, NULL}}, OG_OK, OG_MERGE_FAST_FORWARD, 0, 0,
     "A|1|null;B|2|null;C|3|null;D|4|null;X|9|null", "A|B", NULL},
    {"no change on either side", {{NULL, NULL}}, {{NULL, NULL}}, OG_OK, OG_MERGE_ALREADY_UP_TO_DATE, 0, 0, PEOPLE0, "A|B",
     NULL},
    {"target only", {{NULL, NULL}}, {{"set_age", P("A", 10)}}, OG_OK, OG_MERGE_ALREADY_UP_TO_DATE, 0, 0,
     "A|10|null;B|2|null;C|3|null;D|4|null", NULL, NULL},
};

static void expect_rows(fixture *f, const char *query, const char *want, const char *cname)
{
    if (!want) return;
    char got[1024];
    if (fixture_query(f, query, NULL, NULL, got, sizeof got)) fail_msg("%s: %s: %s", cname, query, og_error_message());
    if (strcmp(got, want)) fail_msg("%s: %s: got '%s' want '%s'", cname, query, got, want);
}

static void run_case(const merge_case *mc)
{
    fixture *f;
    assert_int_equal(setup((void **)&f), 0);
    for (int i = 0; i < 2; i++) {
        if (mc->src[i].mut) mut_on(f, "dev", mc->src[i].mut, mc->src[i].params);
        if (mc->tgt[i].mut) mut_on(f, "main", mc->tgt[i].mut, mc->tgt[i].params);
    }
    char before[OG_ULID_LEN + 1], src_head[OG_ULID_LEN + 1], after[OG_ULID_LEN + 1];
    head_of(f, "main", before);
    head_of(f, "dev", src_head);
    og_merge_opts o = {"dev", "main", NULL, NULL, NULL};
    og_merge_result r;
    og_status st = og_engine_merge(f->e, &o, &r);
    char msg[4096];
    snprintf(msg, sizeof msg, "%s", og_error_message());
    head_of(f, "main", after);
    if (st != mc->status) fail_msg("%s: status %s (%s), want %s", mc->name, og_status_name(st), msg,
                                   og_status_name(mc->status));
    if (st == OG_ERR_CONFLICT) {
        if (r.nconflicts != mc->nconflicts) fail_msg("%s: %zu conflicts: %s", mc->name, r.nconflicts, msg);
        for (size_t i = 0; i < r.nconflicts; i++) {
            if (r.conflicts[i].kind != mc->kind)
                fail_msg("%s: conflict kind %s, want %s", mc->name, og_conflict_kind_name(r.conflicts[i].kind),
                         og_conflict_kind_name(mc->kind));
            if (!strstr(msg, og_conflict_kind_name(mc->kind)) || !*r.conflicts[i].type)
                fail_msg("%s: message lacks the kind or type: %s", mc->name, msg);
            if (r.conflicts[i].id && !strstr(msg, r.conflicts[i].id))
                fail_msg("%s: message lacks id %s: %s", mc->name, r.conflicts[i].id, msg);
        }
        assert_string_equal(before, after); /* nothing published */
    } else if (st == OG_OK) {
        if (r.outcome != mc->outcome)
            fail_msg("%s: outcome %s, want %s", mc->name, og_merge_outcome_name(r.outcome), og_merge_outcome_name(mc->outcome));
        const og_commit *c;
        og_cache_entry *hold;
        if (r.outcome == OG_MERGE_ALREADY_UP_TO_DATE) {
            assert_int_equal(r.write.published, 0);
            assert_string_equal(before, after);
        } else {
            assert_int_equal(r.write.published, 1);
            assert_string_equal(r.write.commit, after);
            assert_int_equal(og_graph_commit_get(og_engine_graph(f->e), after, &c, &hold), OG_OK);
            assert_int_equal(c->nparents, 2);
            assert_string_equal(c->parents[0], before);
            assert_string_equal(c->parents[1], src_head);
            assert_int_equal(c->kind, OG_OP_MERGE);
            og_cache_entry_release(hold);
        }
        expect_rows(f, "people", mc->people, mc->name);
        expect_rows(f, "knows", mc->knows, mc->name);
        expect_rows(f, "jobs", mc->jobs, mc->name);
        /* merging again changes nothing */
        og_merge_result again;
        assert_int_equal(og_engine_merge(f->e, &o, &again), OG_OK);
        assert_int_equal(again.outcome, OG_MERGE_ALREADY_UP_TO_DATE);
        og_merge_result_free(&again);
    }
    og_merge_result_free(&r);
    teardown((void **)&f);
}

static void truth_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) run_case(&CASES[i]);
}

/* A fast-forward's commit has exactly the source head's content. */
static void fast_forward_adopts_the_source_content(void **state)
{
    fixture *f = *state;
    mut_on(f, "dev", "add_person", P("X", 9));
    mut_on(f, "dev", "add_knows", E("X", "A"));
    char src[OG_ULID_LEN + 1];
    head_of(f, "dev", src);
    og_merge_opts o = {"dev", NULL, NULL, NULL, NULL};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &o, &r), OG_OK);
    assert_int_equal(r.outcome, OG_MERGE_FAST_FORWARD);
    og_graph *g = og_engine_graph(f->e);
    const og_commit *a, *b;
    og_cache_entry *ha, *hb;
    assert_int_equal(og_graph_commit_get(g, src, &a, &ha), OG_OK);
    assert_int_equal(og_graph_commit_get(g, r.write.commit, &b, &hb), OG_OK);
    assert_string_equal(a->schema, b->schema);
    assert_int_equal(a->ntables, b->ntables);
    for (size_t i = 0; i < a->ntables; i++) {
        assert_string_equal(a->tables[i].dir, b->tables[i].dir);
        assert_int_equal(a->tables[i].version, b->tables[i].version);
        assert_int_equal(a->tables[i].rows, b->tables[i].rows);
    }
    assert_string_equal(b->mode, "fast_forward");
    og_cache_entry_release(ha);
    og_cache_entry_release(hb);
    og_merge_result_free(&r);
}

/* After a merge the branch can continue and merge again; the merge commit's changes against
 * its first parent are exactly the source's changes. */
static void merge_then_continue_and_diff(void **state)
{
    fixture *f = *state;
    mut_on(f, "dev", "set_age", P("A", 10));
    mut_on(f, "main", "set_age", P("B", 20));
    og_merge_opts o = {"dev", "main", NULL, NULL, NULL};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &o, &r), OG_OK);
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_int_equal(r.updated, 1);
    og_changeset cs;
    assert_int_equal(og_changes_commit(f->e, r.write.commit, NULL, &cs), OG_OK);
    assert_int_equal(cs.updated, 1);
    assert_int_equal(cs.inserted + cs.deleted, 0);
    assert_int_equal(cs.ntables, 1);
    assert_memory_equal(cs.tables[0].changes[0].id, "A", 1);
    og_changeset_free(&cs);
    og_merge_result_free(&r);
    /* second round: base is now the source head merged before */
    mut_on(f, "dev", "set_age", P("C", 30));
    mut_on(f, "main", "set_age", P("D", 40));
    char dev_head[OG_ULID_LEN + 1];
    head_of(f, "dev", dev_head);
    assert_int_equal(og_engine_merge(f->e, &o, &r), OG_OK);
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_int_equal(r.updated, 1);
    EXPECT_ROWS(f, "people", NULL, "A|10|null;B|20|null;C|30|null;D|40|null");
    og_merge_result_free(&r);
    /* and main merged into dev is now a fast-forward of dev */
    og_merge_opts back = {"main", "dev", NULL, NULL, NULL};
    assert_int_equal(og_engine_merge(f->e, &back, &r), OG_OK);
    assert_int_equal(r.outcome, OG_MERGE_FAST_FORWARD);
    og_merge_result_free(&r);
}

/* --if-commit on the target: a stale expected head fails with nothing published. */
static void expected_head_guards_the_target(void **state)
{
    fixture *f = *state;
    char stale[OG_ULID_LEN + 1];
    head_of(f, "main", stale);
    mut_on(f, "dev", "set_age", P("A", 10));
    mut_on(f, "main", "set_age", P("B", 20));
    og_merge_opts o = {"dev", "main", stale, NULL, NULL};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &o, &r), OG_ERR_PRECONDITION_FAILED);
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "people", NULL, "A|1|null;B|20|null;C|3|null;D|4|null");
}

static void refusals(void **state)
{
    fixture *f = *state;
    og_merge_result r;
    og_merge_opts same = {"main", "main", NULL, NULL, NULL};
    assert_int_equal(og_engine_merge(f->e, &same, &r), OG_ERR_INVALID);
    og_merge_opts missing = {"nope", "main", NULL, NULL, NULL};
    assert_int_equal(og_engine_merge(f->e, &missing, &r), OG_ERR_NOT_FOUND);
    assert_int_equal(og_branch_delete(og_engine_graph(f->e), "dev", NULL), OG_OK);
    og_merge_opts deleted = {"dev", "main", NULL, NULL, NULL};
    assert_int_equal(og_engine_merge(f->e, &deleted, &r), OG_ERR_NOT_FOUND);
}

typedef struct racer {
    const char *uri;
    char commits[5][OG_ULID_LEN + 1];
    og_status st;
} racer;

/* Five writes to the target from another handle while the merge runs. */
static void *race_writes(void *arg)
{
    racer *r = arg;
    og_engine *e;
    r->st = og_engine_open(&e, r->uri, NULL);
    for (int i = 0; i < 5 && r->st == OG_OK; i++) {
        char params[64];
        snprintf(params, sizeof params, "{\"name\":\"D\",\"age\":%d}", 40 + i);
        json_t *pj = json_loads(params, 0, NULL);
        og_write_result res;
        og_mutate_opts o = {"main", NULL};
        r->st = og_engine_mutate(e, "m.gq", MUTS, strlen(MUTS), "set_age", pj, &o, &res, NULL);
        json_decref(pj);
        if (r->st == OG_OK) snprintf(r->commits[i], sizeof r->commits[i], "%s", res.commit);
    }
    if (r->st == OG_OK) og_engine_close(e);
    return NULL;
}

/* A merge racing writes to its target: a lost publish re-runs the merge on the new head, so
 * every acknowledged write stays in main's first-parent history and the merge commit's first
 * parent is the head it was actually made on. */
static void merge_racing_target_writes(void **state)
{
    fixture *f = *state;
    mut_on(f, "dev", "set_age", P("A", 10));
    mut_on(f, "main", "set_age", P("B", 20)); /* a real three-way merge */
    racer r;
    memset(&r, 0, sizeof r);
    r.uri = f->uri;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, race_writes, &r), 0);
    og_merge_opts o = {"dev", "main", NULL, NULL, NULL};
    og_merge_result m;
    og_status st = og_engine_merge(f->e, &o, &m);
    pthread_join(th, NULL);
    assert_int_equal(r.st, OG_OK);
    if (st) fail_msg("merge: %s", og_error_message());
    assert_int_equal(m.outcome, OG_MERGE_MERGED);
    og_graph *g = og_engine_graph(f->e);
    char head[OG_ULID_LEN + 1];
    head_of(f, "main", head);
    og_commit_id *ids;
    size_t n;
    assert_int_equal(og_history_first_parent(g, head, 0, &ids, &n), OG_OK);
    int seen_merge = 0, seen[5] = {0};
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ids[i].id, m.write.commit)) {
            seen_merge = 1;
            const og_commit *c;
            og_cache_entry *hold;
            assert_int_equal(og_graph_commit_get(g, ids[i].id, &c, &hold), OG_OK);
            assert_string_equal(c->parents[0], ids[i + 1].id);
            assert_string_equal(c->parents[0], m.target_head);
            og_cache_entry_release(hold);
        }
        for (int k = 0; k < 5; k++) seen[k] |= !strcmp(ids[i].id, r.commits[k]);
    }
    free(ids);
    assert_true(seen_merge);
    for (int k = 0; k < 5; k++) assert_true(seen[k]);
    EXPECT_ROWS(f, "people", NULL, "A|10|null;B|20|null;C|3|null;D|44|null");
    og_merge_result_free(&m);
}

/* The source's changes are applied on the target by row address when the target still holds
 * the row where the base had it (the merge reads no id map, evidenced by the counters), and
 * through the id map when the target rewrote its fragments in between (an overwrite load in
 * another order: same rows, new fragments and offsets): either way each changed row is
 * replaced exactly once and no other row is lost or duplicated. */
static void source_changes_land_once_whether_or_not_the_target_moved_its_rows(void **state)
{
    fixture *f = *state;
    mut_on(f, "dev", "set_age", P("B", 22));
    mut_on(f, "dev", "del_person", "{\"name\": \"D\"}");
    mut_on(f, "main", "set_age", P("A", 11)); /* in place: A keeps no address, B and D keep theirs */
    og_merge_opts o = {"dev", "main", NULL, NULL, NULL};
    og_merge_result r;
    if (og_engine_merge(f->e, &o, &r)) fail_msg("merge: %s", og_error_message());
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_int_equal(r.updated, 1);
    assert_int_equal(r.deleted, 1);
    assert_true(r.fragments_read >= 1);
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "people", NULL, "A|11|null;B|22|null;C|3|null");
    EXPECT_ROWS(f, "knows", NULL, "A|B");

    /* again, with the target's Person rows rewritten (reversed order) after the fork */
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "dev2", "main", NULL, NULL, NULL), OG_OK);
    mut_on(f, "dev2", "set_age", P("C", 33));
    mut_on(f, "dev2", "del_person", "{\"name\": \"B\"}");
    assert_int_equal(fixture_load(f,
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"C\", \"age\": 3}}\n"
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"B\", \"age\": 22}}\n"
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"A\", \"age\": 11}}\n"
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"E\", \"age\": 5}}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    og_merge_opts o2 = {"dev2", "main", NULL, NULL, NULL};
    if (og_engine_merge(f->e, &o2, &r)) fail_msg("merge 2: %s", og_error_message());
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_int_equal(r.updated, 1);
    assert_int_equal(r.deleted, 2); /* B and, by cascade on dev2, the edge A->B */
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "people", NULL, "A|11|null;C|33|null;E|5|null");
    EXPECT_ROWS(f, "knows", NULL, "");
}

/* A row conflict names the type and id once and each property that differs, with both
 * sides' values and the base's; a resolve table settles row conflicts per kind (ours keeps the
 * target's row, theirs takes the source's update, insert or delete) and reports them, while
 * an orphan edge the chosen side causes stays a conflict. */
static void conflicts_name_properties_and_strategies_settle_them(void **state)
{
    fixture *f = *state;
    mut_on(f, "dev", "set_age", P("A", 10));
    mut_on(f, "main", "set_age", P("A", 20));
    mut_on(f, "dev", "del_person", "{\"name\": \"C\"}");
    mut_on(f, "main", "set_age", P("C", 30));
    mut_on(f, "dev", "add_person", P("E", 5));
    mut_on(f, "main", "add_person", P("E", 6));
    og_merge_opts o = {"dev", "main", NULL, NULL, NULL};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &o, &r), OG_ERR_CONFLICT);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", og_error_message());
    assert_int_equal(r.nconflicts, 3);
    for (size_t i = 0; i < r.nconflicts; i++) {
        const og_merge_conflict *c = &r.conflicts[i];
        assert_non_null(c->properties);
        json_t *p0 = json_array_get(c->properties, 0);
        assert_string_equal(json_string_value(json_object_get(p0, "property")), "age");
        /* named once: the type-and-id appears once in the error message */
        char who[64];
        snprintf(who, sizeof who, "Person '%s'", c->id);
        const char *at = strstr(msg, who);
        assert_non_null(at);
        assert_null(strstr(at + 1, who));
        if (c->kind == OG_CONFLICT_DIVERGENT_UPDATE) {
            assert_string_equal(c->id, "A");
            assert_int_equal(json_integer_value(json_object_get(p0, "source")), 10);
            assert_int_equal(json_integer_value(json_object_get(p0, "target")), 20);
            assert_int_equal(json_integer_value(json_object_get(p0, "base")), 1);
            assert_non_null(strstr(c->message, "age: 10 on dev, 20 on main (was 1)"));
        } else if (c->kind == OG_CONFLICT_DELETE_VS_UPDATE) {
            assert_string_equal(c->id, "C");
            assert_null(json_object_get(p0, "source")); /* deleted there */
            assert_int_equal(json_integer_value(json_object_get(p0, "target")), 30);
            assert_non_null(strstr(c->message, "deleted on dev and updated on main: age: 3 -> 30"));
        } else {
            assert_int_equal(c->kind, OG_CONFLICT_DIVERGENT_INSERT);
            assert_null(json_object_get(p0, "base"));
        }
    }
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "people", NULL, "A|20|null;B|2|null;C|30|null;D|4|null;E|6|null");

    /* theirs for updates and inserts, ours for delete-vs-update */
    og_merge_resolve rs;
    memset(&rs, 0, sizeof rs);
    rs.side[OG_CONFLICT_DIVERGENT_UPDATE] = OG_MERGE_SIDE_THEIRS;
    rs.side[OG_CONFLICT_DIVERGENT_INSERT] = OG_MERGE_SIDE_THEIRS;
    rs.side[OG_CONFLICT_DELETE_VS_UPDATE] = OG_MERGE_SIDE_OURS;
    if (og_engine_merge_resolve(f->e, &o, &rs, &r)) fail_msg("merge: %s", og_error_message());
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_int_equal(r.nresolved, 3);
    for (size_t i = 0; i < r.nresolved; i++)
        assert_int_equal(r.resolved[i].resolution,
                         r.resolved[i].kind == OG_CONFLICT_DELETE_VS_UPDATE ? OG_MERGE_SIDE_OURS : OG_MERGE_SIDE_THEIRS);
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "people", NULL, "A|10|null;B|2|null;C|30|null;D|4|null;E|5|null");

    /* theirs for a delete whose node the target's new edge uses: the orphan stays a conflict */
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "dev3", "main", NULL, NULL, NULL), OG_OK);
    mut_on(f, "dev3", "del_person", "{\"name\": \"D\"}");
    mut_on(f, "main", "set_age", P("D", 40));
    mut_on(f, "main", "add_knows", "{\"from\":\"B\",\"to\":\"D\"}");
    og_merge_opts o3 = {"dev3", "main", NULL, NULL, NULL};
    memset(&rs, 0, sizeof rs);
    rs.side[OG_CONFLICT_DELETE_VS_UPDATE] = OG_MERGE_SIDE_THEIRS;
    char before[OG_ULID_LEN + 1], after[OG_ULID_LEN + 1];
    head_of(f, "main", before);
    assert_int_equal(og_engine_merge_resolve(f->e, &o3, &rs, &r), OG_ERR_CONFLICT);
    head_of(f, "main", after);
    assert_string_equal(before, after);
    assert_int_equal(r.nconflicts, 1);
    assert_int_equal(r.conflicts[0].kind, OG_CONFLICT_ORPHAN_EDGE);
    og_merge_result_free(&r);
    /* ours keeps D (and the edge) */
    rs.side[OG_CONFLICT_DELETE_VS_UPDATE] = OG_MERGE_SIDE_OURS;
    if (og_engine_merge_resolve(f->e, &o3, &rs, &r)) fail_msg("merge 3: %s", og_error_message());
    og_merge_result_free(&r);
    EXPECT_ROWS(f, "knows", NULL, "A|B;B|D");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truth_table),
        cmocka_unit_test_setup_teardown(fast_forward_adopts_the_source_content, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_then_continue_and_diff, setup, teardown),
        cmocka_unit_test_setup_teardown(expected_head_guards_the_target, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_racing_target_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(source_changes_land_once_whether_or_not_the_target_moved_its_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(conflicts_name_properties_and_strategies_settle_them, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
