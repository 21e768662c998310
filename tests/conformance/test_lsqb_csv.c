/*
 * test_lsqb_csv.c — LSQB's own pipe-delimited CSV files (../shared/data/lsqb-example/data,
 * neo4j-admin headers `id:ID(City)`, `:START_ID(City)|:END_ID(Country)`) loaded UNCHANGED with
 * og_db_load_csv into tests/conformance/lsqb_csv.pg — every file of the data set in one load,
 * one commit — and the LSQB queries q1–q9 (tests/conformance/lsqb_csv.gq) counted against
 * expected-counts.txt.  Queries over LDBC's Message are the sum of a Post and a Comment form;
 * q7 (OPTIONAL MATCH) is the sum of four disjoint cases per message type (lsqb_csv.gq).
 *
 * Without ../shared/data the test prints one `SKIP: … absent` line and ctest reports it
 * skipped (tests/og_test_data.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lsqb_common.h"

/* Every CSV file of the data set and the type it loads as: node files are named after their
 * type, relationship files A_rel_B after the edge type of lsqb_csv.pg. */
static const struct { const char *file, *type; } FILES[] = {
    {"Continent", "Continent"}, {"Country", "Country"}, {"City", "City"}, {"Company", "Company"},
    {"University", "University"}, {"Forum", "Forum"}, {"Person", "Person"}, {"Tag", "Tag"},
    {"TagClass", "TagClass"}, {"Post", "Post"}, {"Comment", "Comment"},
    {"City_isPartOf_Country", "CityIsPartOf"}, {"Country_isPartOf_Continent", "CountryIsPartOf"},
    {"Company_isLocatedIn_Country", "CompanyIsLocatedIn"}, {"University_isLocatedIn_City", "UniversityIsLocatedIn"},
    {"Person_isLocatedIn_City", "PersonIsLocatedIn"}, {"Post_isLocatedIn_Country", "PostIsLocatedIn"},
    {"Comment_isLocatedIn_Country", "CommentIsLocatedIn"}, {"Post_hasCreator_Person", "PostHasCreator"},
    {"Comment_hasCreator_Person", "CommentHasCreator"}, {"Comment_replyOf_Post", "CommentReplyOfPost"},
    {"Comment_replyOf_Comment", "CommentReplyOfComment"}, {"Forum_containerOf_Post", "ContainerOf"},
    {"Post_hasTag_Tag", "PostHasTag"}, {"Comment_hasTag_Tag", "CommentHasTag"}, {"Forum_hasTag_Tag", "ForumHasTag"},
    {"Forum_hasMember_Person", "HasMember"}, {"Forum_hasModerator_Person", "HasModerator"},
    {"Person_hasInterest_Tag", "HasInterest"}, {"Person_knows_Person", "Knows"}, {"Person_likes_Post", "LikesPost"},
    {"Person_likes_Comment", "LikesComment"}, {"Person_studyAt_University", "StudyAt"}, {"Person_workAt_Company", "WorkAt"},
    {"Tag_hasType_TagClass", "HasType"}, {"TagClass_isSubclassOf_TagClass", "IsSubclassOf"},
};
#define NFILES (sizeof FILES / sizeof FILES[0])

typedef struct lsqb {
    char dir[64];
    char *schema, *queries;
    int64_t expected[10];
    uint64_t data_lines;
    og_db *db;
    og_receipt receipt;
} lsqb;

static lsqb *L;

/* Non-empty lines after the header, over every file (the data set has no quoted line breaks). */
static uint64_t count_data_lines(void)
{
    uint64_t n = 0;
    for (size_t i = 0; i < NFILES; i++) {
        char path[512], line[4096];
        snprintf(path, sizeof path, "%s/data/%s.csv", lsqb_dir(), FILES[i].file);
        FILE *f = fopen(path, "r");
        if (!f) return 0;
        for (int first = 1; fgets(line, sizeof line, f); first = 0)
            if (!first && line[0] != '\n' && line[0] != '\r') n++;
        fclose(f);
    }
    return n;
}

static int setup(void **state)
{
    (void)state;
    L = calloc(1, sizeof *L);
    if (!L) return -1;
    strcpy(L->dir, "/tmp/og-lsqbcsv-XXXXXX");
    if (!mkdtemp(L->dir)) return -1;
    L->schema = lsqb_slurp(OG_SOURCE_DIR "/tests/conformance/lsqb_csv.pg");
    L->queries = lsqb_slurp(OG_SOURCE_DIR "/tests/conformance/lsqb_csv.gq");
    if (!L->schema || !L->queries || lsqb_read_expected(L->expected)) return -1;
    L->data_lines = count_data_lines();
    char uri[128];
    snprintf(uri, sizeof uri, "%s/graph", L->dir);
    og_status st = og_db_init(&L->db, uri, "lsqb_csv.pg", L->schema, strlen(L->schema), NULL);
    static char paths[NFILES][512];
    og_load_csv_file files[NFILES];
    for (size_t i = 0; i < NFILES; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/data/%s.csv", lsqb_dir(), FILES[i].file);
        files[i].type = FILES[i].type;
        files[i].path = paths[i];
    }
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    if (st == OG_OK) st = og_db_load_csv(&L->receipt, L->db, files, NFILES, '|', &lo);
    if (st) {
        fprintf(stderr, "lsqb csv load: %s: %s\n", og_status_name(st), og_error_message());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!L) return 0;
    if (L->db) og_db_close(L->db);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", L->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", L->dir);
    free(L->schema);
    free(L->queries);
    free(L);
    L = NULL;
    return 0;
}

static int64_t count_of(const char *name) { return lsqb_count_of(L->db, L->queries, name); }

/* q<n>, or the sum of q<n>_post and q<n>_comment (a Message query). */
static int64_t lsqb_count(int n)
{
    char a[32], b[32];
    if (n == 4 || n == 5 || n == 8) {
        snprintf(a, sizeof a, "q%d_post", n);
        snprintf(b, sizeof b, "q%d_comment", n);
        return count_of(a) + count_of(b);
    }
    if (n == 7) {
        static const char *cases[] = {"liked_replied", "liked_unreplied", "unliked_replied", "unliked_unreplied"};
        int64_t s = 0;
        for (int i = 0; i < 4; i++)
            for (int m = 0; m < 2; m++) {
                snprintf(a, sizeof a, "q7_%s_%s", cases[i], m ? "comment" : "post");
                s += count_of(a);
            }
        return s;
    }
    snprintf(a, sizeof a, "q%d", n);
    return count_of(a);
}

static void every_file_loads_unchanged_in_one_commit(void **state)
{
    (void)state;
    assert_true(L->data_lines > 0);
    assert_int_equal(L->receipt.published, 1);
    assert_int_equal(L->receipt.records, L->data_lines);
    assert_int_equal(L->receipt.inserted, L->data_lines);
    /* every CSV file of the data set is in FILES: none left out */
    char path[512];
    snprintf(path, sizeof path, "%s/data", lsqb_dir());
    DIR *d = opendir(path);
    assert_non_null(d);
    size_t ncsv = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".csv")) ncsv++;
    }
    closedir(d);
    assert_int_equal(ncsv, NFILES);
}

static void lsqb_counts_match_expected(void **state)
{
    (void)state;
    for (int n = 1; n <= 9; n++) {
        assert_true(L->expected[n] >= 0);
        int64_t got = lsqb_count(n);
        if (got != L->expected[n])
            fail_msg("q%d: count %lld, expected-counts.txt says %lld", n, (long long)got, (long long)L->expected[n]);
    }
}

int main(void)
{
    if (!og_test_have_data("conformance_test_lsqb_csv", lsqb_dir())) return OG_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_file_loads_unchanged_in_one_commit),
        cmocka_unit_test(lsqb_counts_match_expected),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
