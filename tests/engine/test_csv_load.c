/*
 * test_csv_load.c — `load --csv` end to end (load/csv_load.h, docs/load.md "CSV"): node and
 * edge files of one invocation are one commit; neo4j-admin headers (:ID, :START_ID/:END_ID with
 * groups, name:type, :LABEL/:TYPE, :IGNORE); cells read by the declared type; empty = null and
 * "" = empty string; lists as JSON; the three modes; and every error with file:line:column and
 * nothing published.
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

#include "engine/export.h"
#include "engine/jsonval.h"
#include "fixture.h"
#include "util/buf.h"
#include "util/jsonout.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32?  score: F64?  active: Bool?  born: Date?  nick: String?  tags: [String]? }\n"
    "node City { code: I64 @key  label: String? }\n"
    "node Note { text: String }\n"
    "edge LivesIn: Person -> City { since: I32? }\n"
    "edge Knows: Person -> Person\n";

static const char *QUERIES =
    "query people() { match { $p: Person } return { $p.name, $p.age, $p.score, $p.active, $p.born, $p.nick, $p.tags } order { $p.name } }\n"
    "query homes() { match { $p: Person $p livesIn $c } return { $p.name, $c.code, $c.label } order { $p.name } }\n"
    "query knows() { match { $a: Person $a knows $b } return { $a.name, $b.name } order { $a.name, $b.name } }\n"
    "query notes() { match { $n: Note } return { $n.text } order { $n.text } }\n";

typedef struct ctx {
    fixture *f;
    char path[8][128];
} ctx;

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    c->f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(c->f);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    fixture_free(c->f);
    free(c);
    return 0;
}

/* Writes file i of the test (name `name` in the fixture directory) with `text`. */
static const char *put(ctx *c, int i, const char *name, const char *text)
{
    snprintf(c->path[i], sizeof c->path[i], "%s/%s", c->f->dir, name);
    FILE *fp = fopen(c->path[i], "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return c->path[i];
}

static og_status load(ctx *c, const og_load_csv_file *files, size_t n, char delim, og_load_mode mode, og_load_stats *stats)
{
    og_load_opts o = {.mode = mode};
    og_write_result res;
    return og_engine_load_csv(c->f->e, files, n, delim, &o, &res, stats);
}

/* Runs query q and renders it "a|b;c|d": strings bare, other values as their JSON output. */
static void expect(ctx *c, const char *q, const char *want)
{
    og_result r;
    og_status st = og_engine_query(c->f->e, NULL, NULL, "q.gq", c->f->queries, strlen(c->f->queries), q, NULL, &r, NULL);
    if (st) fail_msg("%s: %s", q, og_error_message());
    og_buf b = OG_BUF_INIT;
    for (size_t i = 0; i < r.nrows; i++)
        for (size_t k = 0; k < r.ncols; k++) {
            if (k || i) og_buf_append_str(&b, k ? "|" : ";");
            json_t *j = og_jsonval_cell(&r.cols[k], i, 0);
            char *t = json_is_string(j) ? NULL : og_json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
            og_buf_append_str(&b, t ? t : json_string_value(j));
            free(t);
            json_decref(j);
        }
    og_result_free(&r);
    const char *got = og_buf_cstr(&b);
    if (strcmp(got ? got : "", want)) fail_msg("%s:\n got: %s\nwant: %s", q, got, want);
    og_buf_free(&b);
}

static void node_and_edge_files_load_as_one_commit(void **state)
{
    ctx *c = *state;
    og_load_csv_file files[] = {
        {"Person", put(c, 0, "people.csv",
                       "name,age,score,active,born,nick,tags\r\n"
                       "Alice,30,1.5,true,1994-03-01,\"\",\"[\"\"a\"\",\"\"b\"\"]\"\r\n"
                       "\"Smith, Bob\",,-2e3,FALSE,,\"Bo \"\"B\"\"\nSmith\",[]\r\n")},
        {"City", put(c, 1, "cities.csv", "code:long,label\n7,\"Rome\"\n9,\n")},
        {"LivesIn", put(c, 2, "lives.csv", "from,to,since\nAlice,7,2020\n\"Smith, Bob\",9,\n")},
        {"Knows", put(c, 3, "knows.csv", ":START_ID(Person),:END_ID(Person)\nAlice,\"Smith, Bob\"\n")},
    };
    og_ref_entry before, after;
    assert_int_equal(og_graph_head_entry(og_engine_graph(c->f->e), "main", &before), OG_OK);
    og_load_stats st;
    assert_int_equal(load(c, files, 4, 0, OG_LOAD_OVERWRITE, &st), OG_OK);
    assert_int_equal(og_graph_head_entry(og_engine_graph(c->f->e), "main", &after), OG_OK);
    assert_int_equal(after.seq, before.seq + 1); /* four files, one commit */
    assert_int_equal(st.records, 7);
    assert_int_equal(st.inserted, 7);
    expect(c, "people", "Alice|30|1.5|true|1994-03-01||[\"a\",\"b\"];Smith, Bob|null|-2000.0|false|null|Bo \"B\"\nSmith|[]");
    expect(c, "homes", "Alice|7|Rome;Smith, Bob|9|null");
    expect(c, "knows", "Alice|Smith, Bob");
}

static void neo4j_headers_with_groups_and_pipes(void **state)
{
    ctx *c = *state;
    og_load_csv_file files[] = {
        {"City", put(c, 0, "City.csv", "\xEF\xBB\xBFid:ID(City)|label:string|junk:IGNORE\n4|Paris|x\n5|Oslo|y\n")},
        {"Person", put(c, 1, "Person.csv", "name:ID(Person)|age:int\nAnn|41\n")},
        {"LivesIn", put(c, 2, "Person_livesIn_City.csv", ":START_ID(Person)|:END_ID(City)|since:I32\nAnn|5|1999\n")},
    };
    assert_int_equal(load(c, files, 3, '|', OG_LOAD_OVERWRITE, NULL), OG_OK);
    expect(c, "homes", "Ann|5|Oslo");
}

static void label_and_type_columns_mix_types_in_one_file(void **state)
{
    ctx *c = *state;
    og_load_csv_file files[] = {
        {NULL, put(c, 0, "nodes.csv", "name,code,text,:LABEL\nAl,,,Person\n,3,,City\n,,hello,Note\n")},
        {NULL, put(c, 1, "edges.csv", ":START_ID,:END_ID,:TYPE\nAl,3,LivesIn\nAl,Al,Knows\n")},
    };
    assert_int_equal(load(c, files, 2, 0, OG_LOAD_MERGE, NULL), OG_OK);
    expect(c, "homes", "Al|3|null");
    expect(c, "knows", "Al|Al");
    expect(c, "notes", "hello");
}

static void modes_merge_and_append_work_as_for_ndjson(void **state)
{
    ctx *c = *state;
    og_load_csv_file f1[] = {{"Person", put(c, 0, "p1.csv", "name,age\nA,1\nB,2\n")}};
    assert_int_equal(load(c, f1, 1, 0, OG_LOAD_OVERWRITE, NULL), OG_OK);
    og_load_csv_file f2[] = {{"Person", put(c, 1, "p2.csv", "name,age\nB,20\nC,3\n")}};
    og_load_stats st;
    assert_int_equal(load(c, f2, 1, 0, OG_LOAD_MERGE, &st), OG_OK);
    assert_int_equal(st.inserted, 1);
    assert_int_equal(st.updated, 1);
    expect(c, "people", "A|1|null|null|null|null|null;B|20|null|null|null|null|null;C|3|null|null|null|null|null");
    assert_int_equal(load(c, f2, 1, 0, OG_LOAD_APPEND, NULL), OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "p2.csv:2: key_conflict: Person 'B' already exists"));
}

/* Each bad input: the status, the message (file:line:column), and nothing published. */
static void errors_name_file_line_column_and_load_nothing(void **state)
{
    ctx *c = *state;
    og_load_csv_file ok[] = {{"Person", put(c, 0, "seed.csv", "name,age\nZed,9\n")}};
    assert_int_equal(load(c, ok, 1, 0, OG_LOAD_OVERWRITE, NULL), OG_OK);
    const struct {
        const char *type, *text;
        og_status st;
        const char *msg;
    } cases[] = {
        {"Person", "name,age\nA,30\nB,abc\n", OG_ERR_INVALID, "bad.csv:3:3: Person.age: expected I32, got \"abc\" (not a decimal integer)"},
        {"Person", "name,age\nA,3.5\n", OG_ERR_INVALID, "bad.csv:2:3: Person.age: expected I32, got \"3.5\" (a fraction or exponent: write an integer)"},
        {"Person", "name,score\nA,fast\n", OG_ERR_INVALID, "bad.csv:2:3: Person.score: expected F64, got \"fast\""},
        {"Person", "name,active\nA,yes\n", OG_ERR_INVALID, "bad.csv:2:3: Person.active: expected Bool, got \"yes\" (write true or false)"},
        {"Person", "name,tags\nA,a;b\n", OG_ERR_INVALID, "bad.csv:2:3: Person.tags: expected [String] as a JSON array in the cell"},
        {"Person", "name,born\nA,yesterday\n", OG_ERR_INVALID, "bad.csv:2: Person.born"},
        {"Person", "name,agee\nA,1\n", OG_ERR_INVALID, "bad.csv:1:6: Person has no property 'agee' (properties: name, age, score"},
        {"Person", "name,age:string\nA,1\n", OG_ERR_INVALID, "bad.csv:1:6: column 'age:string' says string, but Person.age is I32 in the schema"},
        {"Person", "name,age:frob\nA,1\n", OG_ERR_INVALID, "bad.csv:1:6: column 'age:frob': unknown column type 'frob'"},
        {"Person", "name,age\nA,1,2\n", OG_ERR_PARSE, "bad.csv:2:5: the row has 3 fields, the header 2"},
        {"Person", "name,age\n\"A,1\n", OG_ERR_PARSE, "bad.csv:2:1: the quoted field opened here is never closed"},
        {"Person", "", OG_ERR_PARSE, "bad.csv: the file is empty"},
        {"LivesIn", ":START_ID(City),:END_ID(City)\nA,7\n", OG_ERR_INVALID,
         "bad.csv:1:1: column ':START_ID(City)': edge LivesIn goes Person -> City, so the group must be Person"},
        {"LivesIn", "from,since\nA,1\n", OG_ERR_INVALID, "bad.csv:1:1: edge LivesIn needs both endpoint columns"},
        {"LivesIn", "from,to\nZed,404\n", OG_ERR_CONSTRAINT, "bad.csv:2: LivesIn: dst '404' not found in City"},
        {"City", "id:ID(Town)\n1\n", OG_ERR_INVALID, "bad.csv:1:1: column ':ID(Town)' is loaded as City: the id group must be the node type"},
        {"Nope", "a\n1\n", OG_ERR_INVALID, "bad.csv: unknown node or edge type 'Nope'"},
        {NULL, "name\nA\n", OG_ERR_INVALID, "bad.csv: the file names no type"},
        {NULL, "name,:LABEL\nA,Persn\n", OG_ERR_INVALID, "bad.csv:2:3: unknown node type 'Persn'"},
        {NULL, "name,text,:LABEL\nA,hi,Person\n", OG_ERR_INVALID, "bad.csv:2:3: column 'text' is not part of Person, but the cell is not empty"},
        {"Person", "name,age\nA,1\nA,2\n", OG_ERR_CONSTRAINT, "bad.csv:2 and "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_load_csv_file files[] = {{"Person", c->path[0]}, {cases[i].type, put(c, 1, "bad.csv", cases[i].text)}};
        og_status st = load(c, files, 2, 0, OG_LOAD_MERGE, NULL);
        if (st != cases[i].st || !strstr(og_error_message(), cases[i].msg))
            fail_msg("case %zu: %s: %s\nwant %s: %s", i, og_status_name(st), og_error_message(), og_status_name(cases[i].st),
                     cases[i].msg);
        expect(c, "people", "Zed|9|null|null|null|null|null"); /* nothing of either file published */
    }
}

static void streaming_flushes_keep_every_row(void **state)
{
    ctx *c = *state;
    setenv("OG_LOAD_FLUSH_ROWS", "7", 1);
    char *text = malloc(64 * 1000 + 64);
    size_t o = (size_t)sprintf(text, "name,age\n");
    for (int i = 0; i < 1000; i++) o += (size_t)sprintf(text + o, "p%04d,%d\n", i, i);
    og_load_csv_file files[] = {{"Person", put(c, 0, "many.csv", text)}};
    og_load_stats st;
    og_status s = load(c, files, 1, 0, OG_LOAD_OVERWRITE, &st);
    unsetenv("OG_LOAD_FLUSH_ROWS");
    free(text);
    assert_int_equal(s, OG_OK);
    assert_int_equal(st.records, 1000);
    const char *q = "query n() { match { $p: Person } return { count($p) as n, sum($p.age) as s } }";
    char out[256];
    c->f->queries = q;
    assert_int_equal(fixture_query(c->f, "n", NULL, NULL, out, sizeof out), OG_OK);
    c->f->queries = QUERIES;
    assert_string_equal(out, "1000|499500");
}

/* export --format csv of each type, loaded into a fresh graph with load --csv, gives back the
 * same rows and the same ids; the CSV text itself is pinned for the tricky cells. */
static void export_csv_round_trips_through_load_csv(void **state)
{
    ctx *c = *state;
    og_load_csv_file files[] = {
        {"Person", put(c, 0, "people.csv",
                       "name,age,score,active,born,nick,tags\n"
                       "Alice,30,0.1,true,1994-03-01,\"\",\"[\"\"a,b\"\"]\"\n"
                       "\"Bob \"\"B\"\"\",,,,,\"two\nlines\",\n")},
        {NULL, put(c, 1, "notes.csv", "text,:LABEL\nhi,Note\n")},
        {"Knows", put(c, 2, "knows.csv", "from,to\nAlice,\"Bob \"\"B\"\"\"\n")},
    };
    assert_int_equal(load(c, files, 3, 0, OG_LOAD_OVERWRITE, NULL), OG_OK);
    const char *types[] = {"Person", "Note", "Knows"};
    og_load_csv_file back[3];
    char *text[3];
    for (int i = 0; i < 3; i++) {
        snprintf(c->path[3 + i], sizeof c->path[3 + i], "%s/out%d.csv", c->f->dir, i);
        FILE *fp = fopen(c->path[3 + i], "w+b");
        assert_non_null(fp);
        assert_int_equal(og_engine_export_csv(c->f->e, NULL, NULL, types[i], 0, fp), OG_OK);
        long n = ftell(fp);
        rewind(fp);
        text[i] = calloc(1, (size_t)n + 1);
        assert_int_equal(fread(text[i], 1, (size_t)n, fp), (size_t)n);
        fclose(fp);
        back[i].type = types[i];
        back[i].path = c->path[3 + i];
    }
    assert_string_equal(text[0], "name,age,score,active,born,nick,tags\n"
                                 "Alice,30,0.1,true,1994-03-01,\"\",\"[\"\"a,b\"\"]\"\n"
                                 "\"Bob \"\"B\"\"\",,,,,\"two\nlines\",\n");
    assert_true(!strncmp(text[1], ":ID,text\n", 9));
    assert_true(!strncmp(text[2], ":ID,from,to\n", 12));
    assert_non_null(strstr(text[2], ",Alice,\"Bob \"\"B\"\"\"\n"));
    /* a second graph: same schema, the exported files loaded back */
    fixture *g = fixture_new(SCHEMA, QUERIES);
    assert_non_null(g);
    og_load_opts o = {.mode = OG_LOAD_OVERWRITE};
    og_write_result res;
    assert_int_equal(og_engine_load_csv(g->e, back, 3, 0, &o, &res, NULL), OG_OK);
    fixture *keep = c->f;
    for (int k = 0; k < 2; k++) {
        c->f = k ? g : keep;
        expect(c, "people", "Alice|30|0.1|true|1994-03-01||[\"a,b\"];Bob \"B\"|null|null|null|null|two\nlines|null");
        expect(c, "knows", "Alice|Bob \"B\"");
        expect(c, "notes", "hi");
    }
    c->f = keep;
    /* the ids too: exporting the copy gives the same text */
    for (int i = 0; i < 3; i++) {
        char *t2 = NULL;
        size_t n2 = 0;
        FILE *fp = open_memstream(&t2, &n2);
        assert_int_equal(og_engine_export_csv(g->e, NULL, NULL, types[i], 0, fp), OG_OK);
        fclose(fp);
        assert_string_equal(t2, text[i]);
        free(t2);
        free(text[i]);
    }
    fixture_free(g);
}

int main(void)
{
    (void)fixture_load; /* the NDJSON helper of fixture.h: unused here */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(node_and_edge_files_load_as_one_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(neo4j_headers_with_groups_and_pipes, setup, teardown),
        cmocka_unit_test_setup_teardown(label_and_type_columns_mix_types_in_one_file, setup, teardown),
        cmocka_unit_test_setup_teardown(modes_merge_and_append_work_as_for_ndjson, setup, teardown),
        cmocka_unit_test_setup_teardown(errors_name_file_line_column_and_load_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(streaming_flushes_keep_every_row, setup, teardown),
        cmocka_unit_test_setup_teardown(export_csv_round_trips_through_load_csv, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
