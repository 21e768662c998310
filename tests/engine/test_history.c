/*
 * test_history.c — commit DAG walks (engine/history.h): first-parent history newest first
 * with a limit (a branch shows the inherited history, then its own commits; a merge commit is
 * followed through its first parent), merge bases of linear, forked and criss-cross
 * histories (the tie goes to the later commit), ancestry, and unknown commits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/history.h"
#include "fixture.h"

static const char *SCHEMA = "node Person { name: String @key }\n";

typedef struct extra {
    const char *parent; /* second parent, or NULL */
} extra;

/* A commit with no table changes (and an optional second parent) on `branch`. */
static og_status empty_commit_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)g, (void)base, (void)attempt;
    const extra *x = ctx;
    OG_TRY(og_draft_set_operation(d, x->parent ? OG_OP_MERGE : OG_OP_MUTATE, NULL));
    if (x->parent) OG_TRY(og_draft_add_parent(d, x->parent));
    return OG_OK;
}

static void commit_on(fixture *f, const char *branch, const char *second, char out[OG_ULID_LEN + 1])
{
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = branch;
    extra x = {second};
    og_write_result r;
    if (og_graph_write(og_engine_graph(f->e), &wo, empty_commit_fn, &x, &r)) fail_msg("write: %s", og_error_message());
    snprintf(out, OG_ULID_LEN + 1, "%s", r.commit);
}

static void head(fixture *f, const char *branch, char out[OG_ULID_LEN + 1])
{
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(og_engine_graph(f->e), branch, &e), OG_OK);
    snprintf(out, OG_ULID_LEN + 1, "%s", e.commit);
}

static void expect_base(fixture *f, const char *a, const char *b, const char *want)
{
    char got[OG_ULID_LEN + 1];
    int found;
    assert_int_equal(og_history_merge_base(og_engine_graph(f->e), a, b, got, &found), OG_OK);
    assert_true(found);
    assert_string_equal(got, want);
    assert_int_equal(og_history_merge_base(og_engine_graph(f->e), b, a, got, &found), OG_OK);
    assert_string_equal(got, want);
}

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, "");
    assert_non_null(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

static void first_parent_walks(void **state)
{
    fixture *f = *state;
    og_graph *g = og_engine_graph(f->e);
    char c0[OG_ULID_LEN + 1], c1[OG_ULID_LEN + 1], c2[OG_ULID_LEN + 1], d1[OG_ULID_LEN + 1], m[OG_ULID_LEN + 1];
    head(f, "main", c0);
    commit_on(f, "main", NULL, c1);
    assert_int_equal(og_branch_create(g, "dev", "main", NULL, NULL, NULL), OG_OK);
    commit_on(f, "main", NULL, c2);
    commit_on(f, "dev", NULL, d1);
    commit_on(f, "main", d1, m);

    og_commit_id *ids;
    size_t n;
    assert_int_equal(og_history_first_parent(g, m, 0, &ids, &n), OG_OK);
    assert_int_equal(n, 4);
    assert_string_equal(ids[0].id, m);
    assert_string_equal(ids[1].id, c2);
    assert_string_equal(ids[2].id, c1);
    assert_string_equal(ids[3].id, c0);
    free(ids);
    assert_int_equal(og_history_first_parent(g, m, 2, &ids, &n), OG_OK);
    assert_int_equal(n, 2);
    free(ids);
    /* the branch: its own commit, then the inherited history */
    assert_int_equal(og_history_first_parent(g, d1, 0, &ids, &n), OG_OK);
    assert_int_equal(n, 3);
    assert_string_equal(ids[0].id, d1);
    assert_string_equal(ids[1].id, c1);
    free(ids);
    assert_int_equal(og_history_first_parent(g, "01M8VVQ35TCWPYWAZP6F0KDEYQ", 0, &ids, &n), OG_ERR_NOT_FOUND);
    assert_int_equal(og_history_first_parent(g, "not-a-ulid", 0, &ids, &n), OG_ERR_INVALID);
}

static void merge_bases(void **state)
{
    fixture *f = *state;
    og_graph *g = og_engine_graph(f->e);
    char c0[OG_ULID_LEN + 1], c1[OG_ULID_LEN + 1], m1[OG_ULID_LEN + 1], d1[OG_ULID_LEN + 1], d2[OG_ULID_LEN + 1],
        mm[OG_ULID_LEN + 1];
    head(f, "main", c0);
    commit_on(f, "main", NULL, c1);
    expect_base(f, c1, c0, c0);  /* linear: the older one */
    expect_base(f, c1, c1, c1);  /* itself */
    assert_int_equal(og_branch_create(g, "dev", "main", NULL, NULL, NULL), OG_OK);
    commit_on(f, "main", NULL, m1);
    commit_on(f, "dev", NULL, d1);
    expect_base(f, m1, d1, c1);  /* the fork point */
    commit_on(f, "main", d1, mm); /* merge dev into main */
    commit_on(f, "dev", NULL, d2);
    expect_base(f, mm, d2, d1);  /* after a merge: the merged source head */
    int yes;
    assert_int_equal(og_history_is_ancestor(g, d1, mm, &yes), OG_OK);
    assert_true(yes);
    assert_int_equal(og_history_is_ancestor(g, d2, mm, &yes), OG_OK);
    assert_false(yes);
    assert_int_equal(og_history_is_ancestor(g, c0, d2, &yes), OG_OK);
    assert_true(yes);
}

/* Criss-cross: a2 merges b1, b2 merges a1; a1 and b1 are both best common ancestors (summed
 * distance 2) and the later one, b1, wins. */
static void criss_cross_tie_goes_to_the_later_commit(void **state)
{
    fixture *f = *state;
    og_graph *g = og_engine_graph(f->e);
    char a1[OG_ULID_LEN + 1], b1[OG_ULID_LEN + 1], a2[OG_ULID_LEN + 1], b2[OG_ULID_LEN + 1];
    assert_int_equal(og_branch_create(g, "a", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_branch_create(g, "b", "main", NULL, NULL, NULL), OG_OK);
    commit_on(f, "a", NULL, a1);
    usleep(2000);
    commit_on(f, "b", NULL, b1);
    commit_on(f, "a", b1, a2);
    commit_on(f, "b", a1, b2);
    expect_base(f, a2, b2, b1);
}

/* The reference definition, by brute force: every ancestor of each side with its shortest
 * distance, then the common one with the smallest sum (ties: later created_at, then id). */
typedef struct ref_anc {
    char id[64][OG_ULID_LEN + 1];
    int dist[64];
    int n;
} ref_anc;

static int ref_find(const ref_anc *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->id[i], id)) return i;
    return -1;
}

static void ref_build(og_graph *g, const char *start, ref_anc *s)
{
    s->n = 0;
    snprintf(s->id[s->n], sizeof s->id[0], "%s", start);
    s->dist[s->n++] = 0;
    for (int i = 0; i < s->n; i++) {
        const og_commit *c;
        og_cache_entry *h;
        assert_int_equal(og_graph_commit_get(g, s->id[i], &c, &h), OG_OK);
        for (size_t p = 0; p < c->nparents; p++)
            if (ref_find(s, c->parents[p]) < 0) {
                assert_true(s->n < 64);
                snprintf(s->id[s->n], sizeof s->id[0], "%s", c->parents[p]);
                s->dist[s->n++] = s->dist[i] + 1;
            }
        og_cache_entry_release(h);
    }
}

static void ref_base(og_graph *g, const char *a, const char *b, char out[OG_ULID_LEN + 1])
{
    static ref_anc sa, sb;
    ref_build(g, a, &sa);
    ref_build(g, b, &sb);
    int best = -1;
    out[0] = '\0';
    for (int i = 0; i < sb.n; i++) {
        int j = ref_find(&sa, sb.id[i]);
        if (j < 0) continue;
        int sum = sa.dist[j] + sb.dist[i];
        int take = best < 0 || sum < best;
        if (!take && sum == best) {
            const og_commit *x, *y;
            og_cache_entry *hx, *hy;
            assert_int_equal(og_graph_commit_get(g, sb.id[i], &x, &hx), OG_OK);
            assert_int_equal(og_graph_commit_get(g, out, &y, &hy), OG_OK);
            int c = strcmp(x->created_at, y->created_at);
            take = c > 0 || (c == 0 && strcmp(sb.id[i], out) > 0);
            og_cache_entry_release(hx);
            og_cache_entry_release(hy);
        }
        if (take) {
            best = sum;
            snprintf(out, OG_ULID_LEN + 1, "%s", sb.id[i]);
        }
    }
}

/* The bounded search (it stops as soon as no deeper ancestor can win) agrees with the
 * brute-force definition on random histories of three branches that merge into each other. */
static void bounded_search_matches_the_definition(void **state)
{
    fixture *f = *state;
    og_graph *g = og_engine_graph(f->e);
    const char *br[3] = {"main", "x", "y"};
    char ids[40][OG_ULID_LEN + 1];
    int n = 0;
    head(f, "main", ids[n++]);
    assert_int_equal(og_branch_create(g, "x", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_branch_create(g, "y", "main", NULL, NULL, NULL), OG_OK);
    unsigned seed = 17;
    while (n < 40) {
        seed = seed * 1103515245u + 12345u;
        int b = (int)((seed >> 16) % 3), other = (int)((seed >> 20) % 3);
        char second[OG_ULID_LEN + 1];
        int merge = ((seed >> 24) % 3) == 0 && other != b;
        if (merge) {
            char mine[OG_ULID_LEN + 1];
            head(f, br[other], second);
            head(f, br[b], mine);
            merge = strcmp(second, mine) != 0; /* the same head cannot be a second parent */
        }
        commit_on(f, br[b], merge ? second : NULL, ids[n++]);
    }
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j += 3) {
            char want[OG_ULID_LEN + 1], got[OG_ULID_LEN + 1];
            int found;
            ref_base(g, ids[i], ids[j], want);
            assert_int_equal(og_history_merge_base(g, ids[i], ids[j], got, &found), OG_OK);
            assert_true(found);
            assert_string_equal(got, want);
        }
}

int main(void)
{
    (void)fixture_load; /* fixture.h helpers this test does not need */
    (void)fixture_query;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(first_parent_walks, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_bases, setup, teardown),
        cmocka_unit_test_setup_teardown(criss_cross_tie_goes_to_the_later_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(bounded_search_matches_the_definition, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
