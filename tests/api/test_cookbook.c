/*
 * test_cookbook.c — the real cookbook graph (shared/data/cookbook-industry-intel) through the
 * public C API (include/omnigraph.h): og_db_init from schema.pg, og_db_load of seed.jsonl
 * (overwrite), then EVERY query of the 8 files in queries/ (73: 42 reads, 31 mutations):
 *   - every read runs; the 2 that give `nearest` a String (hybrid.gq: the question must be
 *     embedded) run through the mock embedding provider (OMNIGRAPH_EMBED_PROVIDER=mock, set in
 *     main: offline, not semantic, so only that they run is checked);
 *     the 5 full-text `search` reads return the rows a hand check of the names says;
 *   - all 35 runnable reads, and 30-odd test-local reads over the same graph, are checked
 *     against rows worked out by hand from seed.jsonl (jq / a python script over the seed; each
 *     expectation says how; none was copied from this engine's output);
 *   - every mutation runs once, in an order that lets a read verify each one before and after;
 *     failing writes (enum, @card, @unique, edge endpoints, parameters, CAS) publish nothing;
 *   - keyed upsert, update, edge delete and node-delete cascades (test-local; mutations.gq has
 *     only inserts), reloading the seed in each load mode.
 * docs/cookbook-tests.md summarises the coverage.
 *
 * Rows are compared as text: the listed columns of each row joined by '|', rows by ';', values
 * as og_rows_render(JSON) encodes them (strings raw, DateTime "YYYY-MM-DDTHH:MM:SS.mmmZ", lists
 * as compact JSON, null as "null").  Queries without `order` are compared with sorted rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "../og_test_data.h"
#include "omnigraph.h"


#define COOKBOOK OG_SHARED_DIR "/data/cookbook-industry-intel"

static const char *FILES[] = {"elements.gq", "hybrid.gq", "insights.gq", "knowhow.gq",
                              "mutations.gq", "patterns.gq", "signals.gq", "workflow.gq"};
#define NFILES (sizeof FILES / sizeof FILES[0])

/* ---- fixture: one graph in a temporary directory ----------------------------------------- */

typedef struct cook {
    char dir[64];
    char graph[96];
    og_db *db;
    char *src[NFILES];
    char load_commit[32];
} cook;

static char *slurp(const char *path)
{
    og_buf b = OG_BUF_INIT;
    if (og_buf_read_file(&b, path) != OG_OK) return NULL;
    return (char *)og_buf_take(&b).data;
}

static const char *src_of(cook *c, const char *file)
{
    for (size_t i = 0; i < NFILES; i++)
        if (!strcmp(FILES[i], file)) return c->src[i];
    return NULL;
}

static cook *cook_new(void)
{
    cook *c = calloc(1, sizeof *c);
    assert_non_null(c);
    strcpy(c->dir, "/tmp/og-cookbook-XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    snprintf(c->graph, sizeof c->graph, "%s/graph", c->dir);
    char *schema = slurp(COOKBOOK "/schema.pg");
    assert_non_null(schema);
    og_status st = og_db_init(&c->db, c->graph, "schema.pg", schema, strlen(schema), NULL);
    free(schema);
    if (st) fail_msg("init: %s: %s", og_status_name(st), og_error_message());
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    st = og_db_load(&r, c->db, COOKBOOK "/seed.jsonl", &lo);
    if (st) fail_msg("load: %s: %s", og_status_name(st), og_error_message());
    /* `wc -l seed.jsonl` = 263 records: 109 nodes + 154 edges (jq 'select(.type)' | wc -l). */
    assert_int_equal(r.records, 263);
    assert_true(r.published);
    snprintf(c->load_commit, sizeof c->load_commit, "%s", r.commit);
    for (size_t i = 0; i < NFILES; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/queries/%s", COOKBOOK, FILES[i]);
        c->src[i] = slurp(p);
        assert_non_null(c->src[i]);
    }
    return c;
}

static void cook_free(cook *c)
{
    og_db_close(c->db);
    for (size_t i = 0; i < NFILES; i++) free(c->src[i]);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", c->dir);
    free(c);
}

/* Params are written with ' for " to keep them readable: P("{'slug':'el-mcp'}"). */
static const char *P(const char *s)
{
    static char buf[8][512];
    static int k;
    if (!s) return NULL;
    char *b = buf[k++ & 7];
    snprintf(b, 512, "%s", s);
    for (char *q = b; *q; q++)
        if (*q == '\'') *q = '"';
    return b;
}

/* The head commit of main, from og_db_snapshot. */
static void head_of(cook *c, char out[32])
{
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    json_t *j = json_loads(snap, 0, NULL);
    og_free(snap);
    assert_non_null(j);
    const char *id = json_string_value(json_object_get(j, "commit"));
    assert_non_null(id);
    snprintf(out, 32, "%s", id);
    json_decref(j);
}

/* ---- rows as text ----------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Whether the document's `columns` names col (a row leaves a null cell's key out). */
static int has_column(json_t *doc, const char *col)
{
    json_t *cs = json_object_get(doc, "columns");
    for (size_t k = 0; k < json_array_size(cs); k++)
        if (!strcmp(json_string_value(json_array_get(cs, k)), col)) return 1;
    return 0;
}

/* Renders the comma-separated columns `cols` of every row of r into out (see top comment). */
static void rows_text(const og_rows *r, const char *cols, int sorted, char *out, size_t cap)
{
    char *json;
    out[0] = '\0';
    if (og_rows_render(&json, NULL, r, OG_FORMAT_JSON, "main") != OG_OK) {
        snprintf(out, cap, "<render failed>");
        return;
    }
    json_t *doc = json_loads(json, 0, NULL);
    og_free(json);
    json_t *rows = json_object_get(doc, "rows");
    size_t n = json_array_size(rows);
    char **lines = calloc(n ? n : 1, sizeof *lines);
    for (size_t i = 0; i < n; i++) {
        char line[2048] = "";
        size_t w = 0;
        char names[256];
        snprintf(names, sizeof names, "%s", cols);
        int first = 1;
        for (char *save = NULL, *col = strtok_r(names, ",", &save); col; col = strtok_r(NULL, ",", &save)) {
            json_t *v = json_object_get(json_array_get(rows, i), col);
            char *dump = NULL;
            const char *cell;
            if (!v) cell = has_column(doc, col) ? "null" : "<no such column>"; /* a null cell has no key */
            else if (json_is_null(v)) cell = "null";
            else if (json_is_string(v)) cell = json_string_value(v);
            else cell = dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            w += (size_t)snprintf(line + w, sizeof line - w, "%s%s", first ? "" : "|", cell ? cell : "?");
            if (w >= sizeof line) w = sizeof line - 1;
            free(dump);
            first = 0;
        }
        lines[i] = strdup(line);
    }
    if (sorted) qsort(lines, n, sizeof *lines, cmp_str);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        w += (size_t)snprintf(out + w, cap - w, "%s%s", i ? ";" : "", lines[i]);
        if (w >= cap) w = cap - 1;
        free(lines[i]);
    }
    free(lines);
    json_decref(doc);
}

enum { ORDERED = 0, UNORDERED = 1 };

/* Runs read `name` of `src` (at `commit`, NULL = main head) and renders `cols` into out. */
static og_status run_read(cook *c, const char *src, const char *name, const char *params, const char *commit,
                          const char *cols, int sorted, char *out, size_t cap)
{
    og_rows *r;
    og_read_opts at = {NULL, commit};
    og_status st = og_db_query(&r, c->db, src, strlen(src), name, P(params), commit ? &at : NULL);
    if (st) return st;
    rows_text(r, cols, sorted, out, cap);
    og_rows_free(r);
    return OG_OK;
}

#define EXPECT_AT(c, src, name, params, commit, cols, sorted, want)                                         \
    do {                                                                                                    \
        char got_[8192];                                                                                    \
        og_status st_ = run_read((c), (src), (name), (params), (commit), (cols), (sorted), got_, sizeof got_); \
        if (st_) fail_msg("%s: %s: %s", (name), og_status_name(st_), og_error_message());                   \
        if (strcmp(got_, (want))) fail_msg("%s %s:\n got '%s'\nwant '%s'", (name), (params) ? (params) : "", \
                                           got_, (want));                                                   \
    } while (0)

/* A cookbook query (by file) on main. */
#define EXPECT(c, file, name, params, cols, sorted, want) \
    EXPECT_AT((c), src_of((c), (file)), (name), (params), NULL, (cols), (sorted), (want))
/* A query of this test's own LOCAL source on main. */
#define EXPECT_LOCAL(c, name, params, cols, sorted, want) EXPECT_AT((c), LOCAL, (name), (params), NULL, (cols), (sorted), (want))

/* Verification reads the cookbook lacks (node types without a get_* query, edges no cookbook
 * read walks), multi-hop shapes, aggregates, and a delete (mutations.gq has no delete). */
static const char *LOCAL =
    "query get_company($slug: String) { match { $c: Company { slug: $slug } } return { $c.slug, $c.name, $c.type } }\n"
    "query get_source($slug: String) { match { $s: SourceEntity { slug: $slug } } return { $s.slug, $s.name, $s.type } }\n"
    "query get_expert($slug: String) { match { $x: Expert { slug: $slug } } return { $x.slug, $x.name } }\n"
    "query get_artifact($slug: String) { match { $a: InformationArtifact { slug: $slug } }\n"
    "    return { $a.slug, $a.name, $a.artifactType, $a.link } }\n"
    "query element_enabled_patterns($slug: String) { match { $e: Element { slug: $slug }  $e enablesPattern $p }\n"
    "    return { $p.slug } }\n"
    "query pattern_enablers($slug: String) { match { $p: Pattern { slug: $slug }  $e enablesPattern $p }\n"
    "    return { $e.slug } }\n"
    "query company_elements($slug: String) { match { $c: Company { slug: $slug }  $e developedByCompany $c }\n"
    "    return { $e.slug } }\n"
    "query artifact_publishers($slug: String) { match { $a: InformationArtifact { slug: $slug }\n"
    "    $a publishedBySource $s } return { $s.slug } }\n"
    "query artifact_experts($slug: String) { match { $a: InformationArtifact { slug: $slug }\n"
    "    $a contributedByExpert $x } return { $x.slug } }\n"
    "query expert_companies($slug: String) { match { $x: Expert { slug: $slug }  $x affiliatedWithCompany $c }\n"
    "    return { $c.slug } }\n"
    "query uses_near($slug: String) { match { $e: Element { slug: $slug }  $e <usesElement>{1,2} $n }\n"
    "    return { $n.slug } order { $n.slug } }\n"
    "query uses_two_hops($slug: String) { match { $e: Element { slug: $slug }  $e <usesElement>{2,2} $n }\n"
    "    return { $n.slug } order { $n.slug } }\n"
    "query uses_forward($slug: String) { match { $e: Element { slug: $slug }  $e usesElement{1,2} $n }\n"
    "    return { $n.slug } order { $n.slug } }\n"
    "query signal_element_company($slug: String) { match { $s: Signal { slug: $slug }  $s onElement $e\n"
    "    $e developedByCompany $c } return { $e.slug, $c.slug } }\n"
    "query pattern_peers_of_signal($slug: String) { match { $s: Signal { slug: $slug }  $s formsPattern $p\n"
    "    $e exemplifiesPattern $p } return { $p.slug, $e.slug } order { $e.slug } }\n"
    "query top_companies() { match { $c: Company  $s relevantCompany $c }\n"
    "    return { $c.slug, count($s) as n } order { n desc, $c.slug } limit 3 }\n"
    "query signal_count() { match { $s: Signal } return { count($s) as n } }\n"
    "query no_signal_count() { match { $s: Signal { slug: \"sig-none\" } } return { count($s) as n } }\n"
    "query unattached_elements() { match { $e: Element  not { $s onElement $e }  not { $e exemplifiesPattern $_ } }\n"
    "    return { $e.slug } order { $e.slug } }\n"
    "query agentic() { match { $e: Element { category: \"agentic\" } } return { $e.slug } }\n"
    "query in_category($c: String) { match { $e: Element  $e.category contains $c } return { $e.slug } }\n"
    "query released_since($y: I64) { match { $e: Element  $e.release_year >= $y } return { count($e) as n } }\n"
    "query not_released_in($y: I64) { match { $e: Element  $e.release_year != $y } return { $e.slug } }\n"
    "query oldest_first() { match { $e: Element } return { $e.slug, $e.release_year }\n"
    "    order { $e.release_year asc } limit 4 }\n"
    "query newest_first() { match { $e: Element } return { $e.slug, $e.release_year }\n"
    "    order { $e.release_year desc, $e.slug desc } limit 2 }\n"
    "query years_by_kind() { match { $e: Element } return { $e.kind, count($e) as n, count($e.release_year) as dated,\n"
    "    min($e.release_year) as lo, max($e.release_year) as hi, avg($e.release_year) as mean,\n"
    "    sum($e.release_year) as total } order { $e.kind } }\n"
    "query name_has($t: String) { match { $s: Signal  $s.name contains $t } return { $s.slug } }\n"
    "query slug_prefix($t: String) { match { $e: Element  $e.slug starts_with $t } return { $e.slug } }\n"
    "query self_consistent() { match { $s: Signal  $s formsPattern $p  $s onElement $e  $e exemplifiesPattern $p }\n"
    "    return { $s.slug, $e.slug } }\n"
    "query mutual($slug: String) { match { $e: Element { slug: $slug }  $e enablesElement $t  $t usesElement $e }\n"
    "    return { $t.slug } }\n"
    "query fully_sourced_patterns() { match { $p: Pattern\n"
    "    not { $s formsPattern $p  not { $s sourcedFromSource $_ } } } return { $p.slug } }\n"
    "query silent_experts() { match { $x: Expert  not { $a contributedByExpert $x } } return { $x.slug } }\n"
    "query disruption_x_knowhow() { match { $p: Pattern { kind: \"disruption\" }  $k: KnowHow }\n"
    "    return { $p.slug, $k.slug } }\n"
    "query security_provenance() { match { $s: Signal { domain: \"security\" }  $s spottedInArtifact $a\n"
    "    $a publishedBySource $src } return { $s.slug, count($a) as n } }\n"
    "query set_domain($slug: String, $d: String) { update Signal set { domain: $d } where slug = $slug }\n"
    "query rekey($slug: String) { update Signal set { slug: \"sig-renamed\" } where slug = $slug }\n"
    "query bump_year($from: I32, $to: I32) { update Element set { release_year: $to } where release_year = $from }\n"
    "query chained_update() { update Element set { release_year: 2030 } where slug = \"el-hornet\"\n"
    "    update Element set { license: \"X\" } where release_year = 2030 }\n"
    "query by_license($l: String) { match { $e: Element { license: $l } } return { $e.slug, $e.release_year } }\n"
    "query by_domain($d: String) { match { $s: Signal { domain: $d } } return { $s.slug } }\n"
    "query signal_with_contradiction() { insert Signal { slug: \"sig-contra\", name: \"c\", brief: \"c\",\n"
    "    stagingTimestamp: datetime(\"2026-06-01T00:00:00Z\"), createdAt: datetime(\"2026-06-01T00:00:00Z\"),\n"
    "    updatedAt: datetime(\"2026-06-01T00:00:00Z\") }\n"
    "    insert ContradictsPattern { from: \"sig-contra\", to: \"pat-context-graphs\" } }\n"
    "query unlink_forms($slug: String) { delete FormsPattern where from = $slug }\n"
    "query delete_signal($slug: String) { delete Signal where slug = $slug }\n"
    "query delete_pattern($slug: String) { delete Pattern where slug = $slug }\n"
    "query delete_company($slug: String) { delete Company where slug = $slug }\n"
    "query mixed() { insert Company { slug: \"co-q\", name: \"Q\" }  delete Company where slug = \"co-q\" }\n"
    "query bare_signal($slug: String) { match { $s: Signal { slug: $slug } } return { $s.@id as s, $s.domain } }\n"
    "query delete_element($slug: String) { delete Element where slug = $slug }\n";

/* ---- the 42 read queries of the cookbook, with parameters for the seed data --------------- */

enum { RUN = 0, EMBED = 1 };

typedef struct read_q {
    const char *file, *name, *params;
    int kind; /* RUN: must succeed; EMBED: needs a text embedding (the mock provider), must succeed */
} read_q;

static const read_q READS[] = {
    {"elements.gq", "get_element", "{'slug':'el-mcp'}", RUN},
    {"elements.gq", "elements_by_kind", "{'kind':'concept'}", RUN},
    {"elements.gq", "search_elements", "{'q':'agent'}", RUN},
    {"elements.gq", "element_enables", "{'slug':'el-mcp'}", RUN},
    {"elements.gq", "element_uses", "{'slug':'el-edra'}", RUN},
    {"elements.gq", "element_patterns", "{'slug':'el-openclaw'}", RUN},
    {"elements.gq", "element_signals", "{'slug':'el-openclaw'}", RUN},
    {"elements.gq", "element_developer", "{'slug':'el-project-glasswing'}", RUN},
    {"elements.gq", "element_sources", "{'slug':'el-zylon'}", RUN},
    {"hybrid.gq", "related_chunks", "{'q':'sovereign AI on-prem'}", EMBED},
    {"hybrid.gq", "hybrid_chunks", "{'q':'sovereign AI on-prem'}", EMBED},
    {"insights.gq", "get_insight", "{'slug':'ins-onprem-is-new-cloud'}", RUN},
    {"insights.gq", "search_insights", "{'q':'agents'}", RUN},
    {"insights.gq", "insight_patterns", "{'slug':'ins-agents-informed-walkers'}", RUN},
    {"insights.gq", "insight_elements", "{'slug':'ins-onprem-is-new-cloud'}", RUN},
    {"knowhow.gq", "get_knowhow", "{'slug':'how-to-deploy-onprem-ai'}", RUN},
    {"knowhow.gq", "recent_knowhow", NULL, RUN},
    {"knowhow.gq", "search_knowhow", "{'q':'research'}", RUN},
    {"knowhow.gq", "knowhow_elements", "{'slug':'how-to-autonomous-research-loop'}", RUN},
    {"knowhow.gq", "knowhow_sources", "{'slug':'how-to-autonomous-research-loop'}", RUN},
    {"patterns.gq", "get_pattern", "{'slug':'pat-context-graphs'}", RUN},
    {"patterns.gq", "patterns_by_kind", "{'kind':'disruption'}", RUN},
    {"patterns.gq", "search_patterns", "{'q':'cyber'}", RUN},
    {"patterns.gq", "pattern_signals", "{'slug':'pat-new-cyber-threats'}", RUN},
    {"patterns.gq", "pattern_drives", "{'slug':'pat-sovereign-ai'}", RUN},
    {"patterns.gq", "pattern_relies_on", "{'slug':'pat-sovereign-ai'}", RUN},
    {"patterns.gq", "pattern_contradicts", "{'slug':'pat-sovereign-ai'}", RUN},
    {"patterns.gq", "pattern_elements", "{'slug':'pat-saaspocalypse'}", RUN},
    {"patterns.gq", "pattern_insights", "{'slug':'pat-sovereign-ai'}", RUN},
    {"signals.gq", "get_signal", "{'slug':'sig-gartner-50pct-context-graphs'}", RUN},
    {"signals.gq", "recent_signals", NULL, RUN},
    {"signals.gq", "search_signals", "{'q':'context graphs'}", RUN},
    {"signals.gq", "signal_patterns", "{'slug':'sig-kimi-k25-oss-frontier'}", RUN},
    {"signals.gq", "signal_contradictions", "{'slug':'sig-kimi-k25-oss-frontier'}", RUN},
    {"signals.gq", "signal_elements", "{'slug':'sig-tao-erdos-728'}", RUN},
    {"signals.gq", "signal_companies", "{'slug':'sig-klarna-replaces-salesforce'}", RUN},
    {"signals.gq", "signal_sources", "{'slug':'sig-openclaw-unvetted-access'}", RUN},
    {"workflow.gq", "orphan_signals", NULL, RUN},
    {"workflow.gq", "pattern_momentum", "{'since':'2026-03-01T00:00:00Z'}", RUN},
    {"workflow.gq", "stale_patterns", "{'since':'2026-04-01T00:00:00Z'}", RUN},
    {"workflow.gq", "contested_patterns", NULL, RUN},
    {"workflow.gq", "unsourced_signals", NULL, RUN},
};
#define NREADS (sizeof READS / sizeof READS[0])

/* ---- the 31 mutations, in an order where each is verified by a read before and after ------ */

typedef struct mut_step {
    const char *name, *params;
    int edges;                              /* 0: inserts one node; 1: inserts one edge */
    const char *check_file;                 /* NULL: the LOCAL source */
    const char *check, *check_params, *cols;
    int sorted;
    const char *before, *after;             /* rows of the check read before / after */
} mut_step;

#define TS "'2026-05-02T00:00:00Z'"
static const mut_step MUTS[] = {
    /* Nodes.  Every seed signal forms a pattern (all 15 have a FormsPattern edge), so
     * orphan_signals is empty until the new, unattached signal arrives. */
    {"add_signal", "{'slug':'sig-test-new','name':'Test signal','brief':'b','stagingTimestamp':" TS ",'createdAt':" TS ",'updatedAt':" TS "}",
     0, "workflow.gq", "orphan_signals", NULL, "s.slug,s.stagingTimestamp", ORDERED, "", "sig-test-new|2026-05-02T00:00:00"},
    /* unassigned nullable props (brief) are NULL */
    {"add_element", "{'slug':'el-test-new','name':'Test element','kind':'ops','createdAt':" TS ",'updatedAt':" TS "}",
     0, "elements.gq", "get_element", "{'slug':'el-test-new'}", "e.slug,e.name,e.kind,e.brief,e.category", ORDERED, "",
     "el-test-new|Test element|ops|null|null"},
    /* the only seed challenge is pat-new-cyber-threats ("New Cyber Threats" < "Test pattern") */
    {"add_pattern", "{'slug':'pat-test-new','name':'Test pattern','kind':'challenge','createdAt':" TS ",'updatedAt':" TS "}",
     0, "patterns.gq", "patterns_by_kind", "{'kind':'challenge'}", "p.slug", ORDERED, "pat-new-cyber-threats",
     "pat-new-cyber-threats;pat-test-new"},
    {"add_insight", "{'slug':'ins-test-new','name':'Test insight','createdAt':" TS ",'updatedAt':" TS "}",
     0, "insights.gq", "get_insight", "{'slug':'ins-test-new'}", "i.slug,i.name,i.importance", ORDERED, "",
     "ins-test-new|Test insight|null"},
    /* both seed know-hows are staged 2026-04-14 (tie broken by id); the new one is later */
    {"add_knowhow", "{'slug':'how-to-test-new','name':'Test knowhow','stagingTimestamp':'2026-05-03T00:00:00Z','createdAt':" TS ",'updatedAt':" TS "}",
     0, "knowhow.gq", "recent_knowhow", NULL, "k.slug", ORDERED, "how-to-autonomous-research-loop;how-to-deploy-onprem-ai",
     "how-to-test-new;how-to-autonomous-research-loop;how-to-deploy-onprem-ai"},
    {"add_company", "{'slug':'co-test-new','name':'Test company'}", 0, NULL, "get_company", "{'slug':'co-test-new'}",
     "c.slug,c.name,c.type", ORDERED, "", "co-test-new|Test company|null"},
    {"add_source", "{'slug':'source-test-new','name':'Test source'}", 0, NULL, "get_source", "{'slug':'source-test-new'}",
     "s.slug,s.name,s.type", ORDERED, "", "source-test-new|Test source|null"},
    {"add_expert", "{'slug':'exp-test-new','name':'Test expert'}", 0, NULL, "get_expert", "{'slug':'exp-test-new'}",
     "x.slug,x.name", ORDERED, "", "exp-test-new|Test expert"},
    {"add_artifact", "{'slug':'ia-test-new','name':'Test artifact','artifactType':'pdf','stagingTimestamp':" TS ",'createdAt':" TS ",'updatedAt':" TS "}",
     0, NULL, "get_artifact", "{'slug':'ia-test-new'}", "a.slug,a.name,a.artifactType,a.link", ORDERED, "",
     "ia-test-new|Test artifact|pdf|null"},
    /* Edges between the new nodes and seed nodes. */
    {"link_signal_forms_pattern", "{'signal':'sig-test-new','pattern':'pat-test-new'}", 1, "workflow.gq", "orphan_signals",
     NULL, "s.slug", ORDERED, "sig-test-new", ""},
    /* the seed has no ContradictsPattern edge at all */
    {"link_signal_contradicts_pattern", "{'signal':'sig-test-new','pattern':'pat-sovereign-ai'}", 1, "workflow.gq",
     "contested_patterns", NULL, "p.slug,p.name,contradictions", UNORDERED, "", "pat-sovereign-ai|Sovereign AI|1"},
    {"link_insight_highlights_pattern", "{'insight':'ins-test-new','pattern':'pat-test-new'}", 1, "patterns.gq",
     "pattern_insights", "{'slug':'pat-test-new'}", "i.slug", UNORDERED, "", "ins-test-new"},
    {"link_insight_relies_on_element", "{'insight':'ins-test-new','element':'el-nanograph'}", 1, "insights.gq",
     "insight_elements", "{'slug':'ins-test-new'}", "e.slug,e.name", UNORDERED, "", "el-nanograph|nanograph"},
    {"link_pattern_relies_on", "{'from':'pat-test-new','to':'pat-context-graphs'}", 1, "patterns.gq", "pattern_relies_on",
     "{'slug':'pat-test-new'}", "dep.slug,dep.kind", UNORDERED, "", "pat-context-graphs|dynamic"},
    {"link_pattern_drives", "{'from':'pat-test-new','to':'pat-saaspocalypse'}", 1, "patterns.gq", "pattern_drives",
     "{'slug':'pat-test-new'}", "target.slug,target.kind", UNORDERED, "", "pat-saaspocalypse|disruption"},
    {"link_pattern_contradicts", "{'from':'pat-test-new','to':'pat-sovereign-ai'}", 1, "patterns.gq", "pattern_contradicts",
     "{'slug':'pat-test-new'}", "target.slug", UNORDERED, "", "pat-sovereign-ai"},
    {"link_signal_on_element", "{'signal':'sig-test-new','element':'el-test-new'}", 1, "elements.gq", "element_signals",
     "{'slug':'el-test-new'}", "s.slug,s.name", ORDERED, "", "sig-test-new|Test signal"},
    {"link_element_enables", "{'from':'el-test-new','to':'el-mcp'}", 1, "elements.gq", "element_enables",
     "{'slug':'el-test-new'}", "target.slug,target.kind", UNORDERED, "", "el-mcp|technology"},
    {"link_element_uses", "{'from':'el-test-new','to':'el-zylon'}", 1, "elements.gq", "element_uses",
     "{'slug':'el-test-new'}", "dep.slug,dep.kind", UNORDERED, "", "el-zylon|product"},
    /* seed: el-openclaw exemplifies only pat-new-cyber-threats */
    {"link_element_exemplifies_pattern", "{'element':'el-openclaw','pattern':'pat-test-new'}", 1, "elements.gq",
     "element_patterns", "{'slug':'el-openclaw'}", "p.slug", UNORDERED, "pat-new-cyber-threats",
     "pat-new-cyber-threats;pat-test-new"},
    {"link_element_enables_pattern", "{'element':'el-test-new','pattern':'pat-test-new'}", 1, NULL,
     "element_enabled_patterns", "{'slug':'el-test-new'}", "p.slug", UNORDERED, "", "pat-test-new"},
    {"link_artifact_published_by", "{'artifact':'ia-test-new','source':'source-test-new'}", 1, NULL, "artifact_publishers",
     "{'slug':'ia-test-new'}", "s.slug", UNORDERED, "", "source-test-new"},
    {"link_artifact_contributed_by", "{'artifact':'ia-test-new','expert':'exp-test-new'}", 1, NULL, "artifact_experts",
     "{'slug':'ia-test-new'}", "x.slug", UNORDERED, "", "exp-test-new"},
    /* unsourced in the seed: only sig-gartner-50pct-context-graphs (no SpottedInArtifact and
     * no SourcedFromSource edge); the new signal (staged later, so first) joins it */
    {"link_signal_spotted_in", "{'signal':'sig-test-new','artifact':'ia-test-new'}", 1, "workflow.gq", "unsourced_signals",
     NULL, "s.slug", ORDERED, "sig-test-new;sig-gartner-50pct-context-graphs", "sig-gartner-50pct-context-graphs"},
    {"link_signal_sourced_from", "{'signal':'sig-gartner-50pct-context-graphs','source':'source-forbes-nl'}", 1,
     "workflow.gq", "unsourced_signals", NULL, "s.slug", ORDERED, "sig-gartner-50pct-context-graphs", ""},
    {"link_element_identified_in", "{'element':'el-test-new','artifact':'ia-test-new'}", 1, "elements.gq", "element_sources",
     "{'slug':'el-test-new'}", "a.slug,a.artifactType,a.link", UNORDERED, "", "ia-test-new|pdf|null"},
    {"link_knowhow_sourced_from", "{'knowhow':'how-to-test-new','artifact':'ia-test-new'}", 1, "knowhow.gq",
     "knowhow_sources", "{'slug':'how-to-test-new'}", "a.slug", UNORDERED, "", "ia-test-new"},
    {"link_signal_relevant_company", "{'signal':'sig-test-new','company':'co-test-new'}", 1, "signals.gq",
     "signal_companies", "{'slug':'sig-test-new'}", "c.slug,c.name", UNORDERED, "", "co-test-new|Test company"},
    {"link_element_developed_by", "{'element':'el-test-new','company':'co-test-new'}", 1, "elements.gq",
     "element_developer", "{'slug':'el-test-new'}", "c.slug", UNORDERED, "", "co-test-new"},
    {"link_expert_affiliated_with", "{'expert':'exp-test-new','company':'co-test-new'}", 1, NULL, "expert_companies",
     "{'slug':'exp-test-new'}", "c.slug", UNORDERED, "", "co-test-new"},
    {"link_knowhow_references", "{'knowhow':'how-to-test-new','element':'el-test-new'}", 1, "knowhow.gq",
     "knowhow_elements", "{'slug':'how-to-test-new'}", "e.slug", UNORDERED, "", "el-test-new"},
};
#define NMUTS (sizeof MUTS / sizeof MUTS[0])

/* ---- coverage: the tables above are exactly the queries of the files ---------------------- */

/* Calls fn for every `query NAME` that starts a line (after blanks) of src. */
static size_t each_query(const char *src, void (*fn)(const char *name, void *ctx), void *ctx)
{
    size_t n = 0;
    for (const char *l = src; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = l;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, "query ", 6)) continue;
        p += 6;
        char name[128];
        size_t k = 0;
        while (k + 1 < sizeof name && (p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
                                       (p[k] >= '0' && p[k] <= '9'))) {
            name[k] = p[k];
            k++;
        }
        name[k] = '\0';
        fn(name, ctx);
        n++;
    }
    return n;
}

typedef struct cover_ctx {
    const char *file;
    int seen_reads[NREADS];
    int seen_muts[NMUTS];
    int unknown;
} cover_ctx;

static void cover_one(const char *name, void *vctx)
{
    cover_ctx *x = vctx;
    int hit = 0;
    if (!strcmp(x->file, "mutations.gq")) {
        for (size_t i = 0; i < NMUTS; i++)
            if (!strcmp(MUTS[i].name, name)) x->seen_muts[i]++, hit = 1;
    } else {
        for (size_t i = 0; i < NREADS; i++)
            if (!strcmp(READS[i].file, x->file) && !strcmp(READS[i].name, name)) x->seen_reads[i]++, hit = 1;
    }
    if (!hit) {
        fprintf(stderr, "%s: query %s is not in this test's tables\n", x->file, name);
        x->unknown++;
    }
}

static void every_cookbook_query_is_listed_once_73_in_all(void **state)
{
    (void)state;
    cover_ctx x;
    memset(&x, 0, sizeof x);
    size_t total = 0;
    for (size_t f = 0; f < NFILES; f++) {
        char p[512];
        snprintf(p, sizeof p, "%s/queries/%s", COOKBOOK, FILES[f]);
        char *src = slurp(p);
        assert_non_null(src);
        x.file = FILES[f];
        total += each_query(src, cover_one, &x);
        free(src);
    }
    assert_int_equal(x.unknown, 0);
    for (size_t i = 0; i < NREADS; i++)
        if (x.seen_reads[i] != 1) fail_msg("%s %s appears %d times", READS[i].file, READS[i].name, x.seen_reads[i]);
    for (size_t i = 0; i < NMUTS; i++)
        if (x.seen_muts[i] != 1) fail_msg("mutation %s appears %d times", MUTS[i].name, x.seen_muts[i]);
    assert_int_equal(total, 73);
    assert_int_equal(NREADS + NMUTS, 73);
    assert_int_equal(NMUTS, 31);
}

/* ---- reads -------------------------------------------------------------------------------- */

static int setup_graph(void **state)
{
    *state = cook_new();
    return 0;
}

static int teardown_graph(void **state)
{
    cook_free(*state);
    return 0;
}

static void every_read_runs_and_embedding_reads_use_the_provider(void **state)
{
    cook *c = *state;
    size_t ran = 0, ok = 0, embedded = 0;
    for (size_t i = 0; i < NREADS; i++) {
        const read_q *q = &READS[i];
        const char *src = src_of(c, q->file);
        og_rows *r = NULL;
        og_status st = og_db_query(&r, c->db, src, strlen(src), q->name, P(q->params), NULL);
        ran++;
        if (q->kind == RUN || q->kind == EMBED) {
            if (st) fail_msg("%s %s: %s: %s", q->file, q->name, og_status_name(st), og_error_message());
            assert_string_equal(og_rows_query_name(r), q->name);
            assert_true(og_rows_width(r) >= 2); /* every cookbook read returns 2+ columns */
            assert_string_equal(og_rows_commit(r), c->load_commit);
            og_rows_free(r);
            ok++;
            embedded += q->kind == EMBED;
        }
    }
    assert_int_equal(ran, 42);
    assert_int_equal(ok, 42);
    assert_int_equal(embedded, 2);
}

/* The five `search($x.name, $q)` reads: every query term (lower-cased, stemmed) must be a word
 * of the name.  Expectations: `jq -r 'select(.type=="T") | .data.slug + " " + .data.name'
 * seed.jsonl` read by hand for the query's words (and their plurals / -ic forms: "agentic"
 * would stem to "agent", no name has it). */
static void full_text_search_reads(void **state)
{
    cook *c = *state;
    /* "Hermes Agent", "Anthropic Managed Agents", "Meta Internal AI Agents" */
    EXPECT(c, "elements.gq", "search_elements", "{'q':'agent'}", "e.slug", UNORDERED,
           "el-anthropic-managed-agents;el-hermes-agent;el-meta-internal-agents");
    /* "Agents are informed walkers", "Agents thrive in messy legacy systems" */
    EXPECT(c, "insights.gq", "search_insights", "{'q':'agents'}", "i.slug", UNORDERED,
           "ins-agents-informed-walkers;ins-agents-thrive-messy-systems");
    /* "Set up autonomous research loop (Karpathy + Google)" */
    EXPECT(c, "knowhow.gq", "search_knowhow", "{'q':'research'}", "k.slug", UNORDERED,
           "how-to-autonomous-research-loop");
    /* "New Cyber Threats" */
    EXPECT(c, "patterns.gq", "search_patterns", "{'q':'cyber'}", "p.slug", UNORDERED, "pat-new-cyber-threats");
    /* both words: the Forbes and Gartner signals ("context graphs" in each name) */
    EXPECT(c, "signals.gq", "search_signals", "{'q':'context graphs'}", "s.slug", UNORDERED,
           "sig-forbes-context-graphs;sig-gartner-50pct-context-graphs");
    /* "autoresearch" is one word: it does not match "research" */
    EXPECT(c, "signals.gq", "search_signals", "{'q':'research'}", "s.slug", UNORDERED, "");
}

/* Lookups by key.  Expectations: `jq -c 'select(.data.slug=="…") | .data' seed.jsonl`. */
static void key_lookups_return_the_seed_row(void **state)
{
    cook *c = *state;
    /* el-mcp: kind technology, category ["agentic","infrastructure"], no domain field */
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-mcp'}", "e.slug,e.name,e.kind,e.category,e.domain", ORDERED,
           "el-mcp|MCP|technology|[\"agentic\",\"infrastructure\"]|null");
    /* the signal's domain is the enum value "context", stagingTimestamp 2026-04-01T00:00:00Z */
    EXPECT(c, "signals.gq", "get_signal", "{'slug':'sig-gartner-50pct-context-graphs'}", "s.slug,s.domain,s.stagingTimestamp",
           ORDERED, "sig-gartner-50pct-context-graphs|context|2026-04-01T00:00:00");
    /* an insight by slug: name as in the seed row */
    EXPECT(c, "insights.gq", "get_insight", "{'slug':'ins-agents-informed-walkers'}", "i.slug,i.name", ORDERED,
           "ins-agents-informed-walkers|Agents are informed walkers");
    /* pat-context-graphs has no "evolution" field → null */
    EXPECT(c, "patterns.gq", "get_pattern", "{'slug':'pat-context-graphs'}", "p.slug,p.name,p.kind,p.evolution", ORDERED,
           "pat-context-graphs|Context Graphs|dynamic|null");
    /* how-to-deploy-onprem-ai has 4 guidelines and no url; the first guideline verbatim */
    EXPECT(c, "knowhow.gq", "get_knowhow", "{'slug':'how-to-deploy-onprem-ai'}", "k.slug,k.url", ORDERED,
           "how-to-deploy-onprem-ai|null");
    og_rows *r;
    const char *src = src_of(c, "knowhow.gq");
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), "get_knowhow", P("{'slug':'how-to-deploy-onprem-ai'}"), NULL),
                     OG_OK);
    char *json;
    assert_int_equal(og_rows_render(&json, NULL, r, OG_FORMAT_JSON, "main"), OG_OK);
    json_t *doc = json_loads(json, 0, NULL);
    json_t *g = json_object_get(json_array_get(json_object_get(doc, "rows"), 0), "k.guidelines");
    assert_int_equal(json_array_size(g), 4);
    assert_string_equal(json_string_value(json_array_get(g, 0)),
                        "Choose tier by constraint: VPC for elasticity + residency, Managed for no MLOps team, In-House for air-gap");
    json_decref(doc);
    og_free(json);
    og_rows_free(r);
    /* a slug that is not in the seed → zero rows, not an error */
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-nope'}", "e.slug", ORDERED, "");
}

/* Forward one-hop traversals.  Expectations: `jq -r 'select(.edge=="E" and .from=="X") | .to'`. */
static void forward_traversals_follow_out_edges(void **state)
{
    cook *c = *state;
    EXPECT(c, "elements.gq", "element_enables", "{'slug':'el-mcp'}", "target.slug", UNORDERED,
           "el-anthropic-managed-agents;el-edra;el-hornet");
    EXPECT(c, "elements.gq", "element_uses", "{'slug':'el-edra'}", "dep.slug,dep.kind", UNORDERED,
           "el-genkm|concept;el-mcp|technology");
    EXPECT(c, "elements.gq", "element_patterns", "{'slug':'el-openclaw'}", "p.slug,p.kind", UNORDERED,
           "pat-new-cyber-threats|challenge");
    /* el-mcp only *enables* patterns (EnablesPattern), it exemplifies none */
    EXPECT(c, "elements.gq", "element_patterns", "{'slug':'el-mcp'}", "p.slug", UNORDERED, "");
    EXPECT(c, "elements.gq", "element_developer", "{'slug':'el-project-glasswing'}", "c.slug,c.name", UNORDERED,
           "co-anthropic|Anthropic");
    EXPECT(c, "signals.gq", "signal_patterns", "{'slug':'sig-kimi-k25-oss-frontier'}", "p.slug,p.name", UNORDERED,
           "pat-sovereign-ai|Sovereign AI");
    EXPECT(c, "signals.gq", "signal_elements", "{'slug':'sig-tao-erdos-728'}", "e.slug,e.kind", UNORDERED,
           "el-erdos-ai-tools|product");
    EXPECT(c, "signals.gq", "signal_companies", "{'slug':'sig-klarna-replaces-salesforce'}", "c.slug", UNORDERED,
           "co-klarna;co-salesforce");
    /* three SpottedInArtifact edges; artifactType and link from the artifact rows */
    EXPECT(c, "signals.gq", "signal_sources", "{'slug':'sig-openclaw-unvetted-access'}", "a.slug,a.artifactType,a.link",
           UNORDERED,
           "ia-bloomberg-openclaw-china-ban|article|https://www.bloomberg.com/news/articles/2026-03-11;"
           "ia-paloalto-openclaw-crisis|article|https://www.paloaltonetworks.com/blog/network-security/why-moltbot-may-signal-ai-crisis/;"
           "ia-snyk-openclaw-security|article|https://snyk.io/articles/clawdbot-ai-assistant/");
    EXPECT(c, "insights.gq", "insight_elements", "{'slug':'ins-onprem-is-new-cloud'}", "e.slug", UNORDERED,
           "el-kimi-k25;el-nanograph;el-zylon");
    EXPECT(c, "insights.gq", "insight_patterns", "{'slug':'ins-agents-informed-walkers'}", "p.slug", UNORDERED,
           "pat-context-graphs");
    EXPECT(c, "knowhow.gq", "knowhow_elements", "{'slug':'how-to-autonomous-research-loop'}", "e.slug", UNORDERED,
           "el-alphaevolve;el-autoresearch;el-karpathy-llm-wiki");
    EXPECT(c, "knowhow.gq", "knowhow_sources", "{'slug':'how-to-autonomous-research-loop'}", "a.slug,a.artifactType",
           UNORDERED, "ia-deepmind-alphaevolve|article;ia-fortune-karpathy-loop|article");
    /* the seed has no IdentifiedInArtifact, DrivesPattern, ReliesOnPattern, ContradictsToPattern or
     * ContradictsPattern edge (jq 'select(.edge=="…")' prints nothing): empty, not an error */
    EXPECT(c, "elements.gq", "element_sources", "{'slug':'el-zylon'}", "a.slug", UNORDERED, "");
    EXPECT(c, "patterns.gq", "pattern_drives", "{'slug':'pat-sovereign-ai'}", "target.slug", UNORDERED, "");
    EXPECT(c, "patterns.gq", "pattern_relies_on", "{'slug':'pat-sovereign-ai'}", "dep.slug", UNORDERED, "");
    EXPECT(c, "patterns.gq", "pattern_contradicts", "{'slug':'pat-sovereign-ai'}", "target.slug", UNORDERED, "");
    EXPECT(c, "signals.gq", "signal_contradictions", "{'slug':'sig-kimi-k25-oss-frontier'}", "p.slug", UNORDERED, "");
}

/* Reverse traversals (`$s onElement $e` with $e bound walks OnElement backwards).
 * Expectations: `jq -r 'select(.edge=="E" and .to=="X") | .from'`. */
static void reverse_traversals_follow_in_edges(void **state)
{
    cook *c = *state;
    EXPECT(c, "elements.gq", "element_signals", "{'slug':'el-openclaw'}", "s.slug,s.stagingTimestamp", ORDERED,
           "sig-openclaw-unvetted-access|2026-01-29T00:00:00");
    EXPECT(c, "patterns.gq", "pattern_elements", "{'slug':'pat-saaspocalypse'}", "e.slug", UNORDERED,
           "el-claude-cowork;el-headless-saas;el-salesforce-crm;el-sap-ai");
    EXPECT(c, "patterns.gq", "pattern_insights", "{'slug':'pat-sovereign-ai'}", "i.slug,i.name", UNORDERED,
           "ins-onprem-is-new-cloud|On-prem is the new cloud");
    /* FormsPattern into pat-new-cyber-threats: mythos (04-07), meta (03-18), openclaw (01-29) */
    EXPECT(c, "patterns.gq", "pattern_signals", "{'slug':'pat-new-cyber-threats'}", "s.slug,s.stagingTimestamp", ORDERED,
           "sig-mythos-181-exploits|2026-04-07T00:00:00;sig-meta-rogue-agent-breach|2026-03-18T00:00:00;"
           "sig-openclaw-unvetted-access|2026-01-29T00:00:00");
    /* reverse through the Company side: DevelopedByCompany into co-anthropic (5 elements) */
    EXPECT_LOCAL(c, "company_elements", "{'slug':'co-anthropic'}", "e.slug", UNORDERED,
                 "el-anthropic-managed-agents;el-claude-cowork;el-claude-mythos-preview;el-mcp;el-project-glasswing");
}

/* Ordering + limit: keys asc/desc and the id tie-break (ids of keyed nodes = their slug).
 * Expectations: python sort of the seed rows by (key, slug). */
static void ordering_breaks_ties_by_id_and_limit_truncates(void **state)
{
    cook *c = *state;
    /* concepts by name (byte order): GenKM, Headless SaaS, Karpathy LLM Wiki, Permissioned
     * Inference, Precedent Poisoning */
    EXPECT(c, "elements.gq", "elements_by_kind", "{'kind':'concept'}", "e.slug", ORDERED,
           "el-genkm;el-headless-saas;el-karpathy-llm-wiki;el-permissioned-inference;el-precedent-poisoning");
    /* "SaaSpocalypse" < "Sovereign AI" ('a' < 'o') */
    EXPECT(c, "patterns.gq", "patterns_by_kind", "{'kind':'disruption'}", "p.slug,p.name", ORDERED,
           "pat-saaspocalypse|SaaSpocalypse;pat-sovereign-ai|Sovereign AI");
    /* all 15 signals (limit 50) by stagingTimestamp desc; 03-18 ties edra < meta < sap and the
     * 02-01 tie 93pct < klarna break by id ascending */
    EXPECT(c, "signals.gq", "recent_signals", NULL, "s.slug,s.domain", ORDERED,
           "sig-mythos-181-exploits|security;sig-forbes-context-graphs|context;sig-gartner-50pct-context-graphs|context;"
           "sig-edra-30m-series-a|harness;sig-meta-rogue-agent-breach|security;sig-sap-consumption-pricing|harness;"
           "sig-karpathy-autoresearch-700|training;sig-zylon-onprem-ai|infra;sig-830b-software-selloff|harness;"
           "sig-93pct-repatriation|infra;sig-klarna-replaces-salesforce|infra;sig-openclaw-unvetted-access|security;"
           "sig-kimi-k25-oss-frontier|inference;sig-tao-erdos-728|inference;sig-alphaevolve-matrix-multiply|inference");
    /* both know-hows staged 2026-04-14T00:00:00Z: the tie breaks by id */
    EXPECT(c, "knowhow.gq", "recent_knowhow", NULL, "k.slug,k.stagingTimestamp", ORDERED,
           "how-to-autonomous-research-loop|2026-04-14T00:00:00;how-to-deploy-onprem-ai|2026-04-14T00:00:00");
    /* RelevantCompany targets counted (jq … | sort | uniq -c): co-anthropic 2, seven others 1;
     * order by the alias desc then slug, limit 3 */
    EXPECT_LOCAL(c, "top_companies", NULL, "c.slug,n", ORDERED, "co-anthropic|2;co-edra|1;co-google-deepmind|1");
}

/* not { } anti-joins.  Expectations: python set differences over the edge lists. */
static void negation_keeps_rows_without_a_match(void **state)
{
    cook *c = *state;
    /* every one of the 15 signals has a FormsPattern edge */
    EXPECT(c, "workflow.gq", "orphan_signals", NULL, "s.slug", ORDERED, "");
    /* signals staged >= 2026-04-01: gartner (context-graphs), forbes (context-graphs), mythos
     * (new-cyber-threats); the other three patterns are stale */
    EXPECT(c, "workflow.gq", "stale_patterns", "{'since':'2026-04-01T00:00:00Z'}", "p.slug", UNORDERED,
           "pat-accelerated-research;pat-saaspocalypse;pat-sovereign-ai");
    /* a cutoff before every signal (earliest 2025-06-16): nothing is stale */
    EXPECT(c, "workflow.gq", "stale_patterns", "{'since':'2025-01-01T00:00:00Z'}", "p.slug", UNORDERED, "");
    /* 14 signals have a SpottedInArtifact edge; gartner has neither that nor SourcedFromSource */
    EXPECT(c, "workflow.gq", "unsourced_signals", NULL, "s.slug,s.stagingTimestamp", ORDERED,
           "sig-gartner-50pct-context-graphs|2026-04-01T00:00:00");
    /* elements with no OnElement in-edge and no ExemplifiesPattern out-edge: 24 elements minus
     * the 16 exemplifiers (the 12 OnElement targets are all among them) = 8 */
    EXPECT_LOCAL(c, "unattached_elements", NULL, "e.slug", ORDERED,
                 "el-anthropic-managed-agents;el-genkm;el-hermes-agent;el-hornet;el-karpathy-llm-wiki;el-mcp;"
                 "el-playerzero-sim1;el-project-glasswing");
}

/* count() with implicit grouping.  Expectations: python Counter over FormsPattern targets. */
static void aggregates_group_by_the_other_columns(void **state)
{
    cook *c = *state;
    /* signals staged >= 2026-03-01 per pattern: zylon (sovereign, 03-01 inclusive), sap
     * (saaspocalypse), edra+forbes+gartner (context-graphs), mythos+meta (cyber), karpathy
     * (research) */
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2026-03-01T00:00:00Z'}", "p.slug,recent_signals", UNORDERED,
           "pat-accelerated-research|1;pat-context-graphs|3;pat-new-cyber-threats|2;pat-saaspocalypse|1;pat-sovereign-ai|1");
    /* the same instant written with a +01:00 offset: 00:00Z is still included (zylon) */
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2026-03-01T01:00:00+01:00'}", "p.slug,recent_signals", UNORDERED,
           "pat-accelerated-research|1;pat-context-graphs|3;pat-new-cyber-threats|2;pat-saaspocalypse|1;pat-sovereign-ai|1");
    /* one millisecond later the 2026-03-01T00:00:00Z signal (zylon, sovereign-ai's only one) drops out */
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2026-03-01T00:00:00.001Z'}", "p.slug,recent_signals", UNORDERED,
           "pat-accelerated-research|1;pat-context-graphs|3;pat-new-cyber-threats|2;pat-saaspocalypse|1");
    /* group keys and no input rows → no rows */
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2027-01-01T00:00:00Z'}", "p.slug,recent_signals", UNORDERED, "");
    EXPECT(c, "workflow.gq", "contested_patterns", NULL, "p.slug,contradictions", UNORDERED, "");
    /* no group keys: one row, 15 signals; zero input rows → count 0 */
    EXPECT_LOCAL(c, "signal_count", NULL, "n", ORDERED, "15");
    EXPECT_LOCAL(c, "no_signal_count", NULL, "n", ORDERED, "0");
}

/* Chains of traversals and bounded multi-hop (test-local queries over the cookbook graph). */
static void multi_hop_chains_and_bounded_hops(void **state)
{
    cook *c = *state;
    /* sig-830b-software-selloff onElement el-claude-cowork developedByCompany co-anthropic */
    EXPECT_LOCAL(c, "signal_element_company", "{'slug':'sig-830b-software-selloff'}", "e.slug,c.slug", UNORDERED,
                 "el-claude-cowork|co-anthropic");
    /* sig-kimi forms pat-sovereign-ai, which el-kimi-k25, el-nanograph, el-zylon exemplify */
    EXPECT_LOCAL(c, "pattern_peers_of_signal", "{'slug':'sig-kimi-k25-oss-frontier'}", "p.slug,e.slug", ORDERED,
                 "pat-sovereign-ai|el-kimi-k25;pat-sovereign-ai|el-nanograph;pat-sovereign-ai|el-zylon");
    /* UsesElement: zylon→mcp, autoresearch→llm-wiki, edra→genkm, edra→mcp.  Undirected 1..2 from
     * mcp: zylon, edra (depth 1), genkm (depth 2 via edra); mcp itself is never re-emitted */
    EXPECT_LOCAL(c, "uses_near", "{'slug':'el-mcp'}", "n.slug", ORDERED, "el-edra;el-genkm;el-zylon");
    /* exactly 2 hops, undirected, from zylon: mcp is at depth 1, edra (edra→mcp) at depth 2,
     * genkm only at depth 3 */
    EXPECT_LOCAL(c, "uses_two_hops", "{'slug':'el-zylon'}", "n.slug", ORDERED, "el-edra");
    /* forward 1..2 from edra: genkm and mcp at depth 1; neither uses anything → no depth 2 */
    EXPECT_LOCAL(c, "uses_forward", "{'slug':'el-edra'}", "n.slug", ORDERED, "el-genkm;el-mcp");
    /* forward 1..2 from zylon: mcp (depth 1) only */
    EXPECT_LOCAL(c, "uses_forward", "{'slug':'el-zylon'}", "n.slug", ORDERED, "el-mcp");
}

/* Filter operators on the cookbook's lists, strings, numbers and nulls (test-local reads).
 * Expectations: python over the Element / Signal rows of seed.jsonl. */
static void filters_on_lists_strings_numbers_and_nulls(void **state)
{
    cook *c = *state;
    /* inline filter on a list property = membership: 13 elements list "agentic" */
    EXPECT_LOCAL(c, "agentic", NULL, "e.slug", UNORDERED,
                 "el-alphaevolve;el-anthropic-managed-agents;el-autoresearch;el-claude-cowork;el-edra;el-hermes-agent;"
                 "el-mcp;el-meta-internal-agents;el-openclaw;el-permissioned-inference;el-playerzero-sim1;"
                 "el-precedent-poisoning;el-sap-ai");
    EXPECT_LOCAL(c, "in_category", "{'c':'ml'}", "e.slug", UNORDERED, "el-alphaevolve;el-autoresearch;el-erdos-ai-tools");
    /* release_year (I32?) against an I64 param: 16 elements are 2026 or later */
    EXPECT_LOCAL(c, "released_since", "{'y':2026}", "n", ORDERED, "16");
    /* != drops the two elements without a release_year */
    EXPECT_LOCAL(c, "not_released_in", "{'y':2026}", "e.slug", UNORDERED,
                 "el-alphaevolve;el-mcp;el-openclaw;el-playerzero-sim1;el-salesforce-crm;el-zylon");
    /* nulls first ascending (tie by id), then 1999, then the 2024 tie mcp < playerzero */
    EXPECT_LOCAL(c, "oldest_first", NULL, "e.slug,e.release_year", ORDERED,
                 "el-permissioned-inference|null;el-precedent-poisoning|null;el-salesforce-crm|1999;el-mcp|2024");
    /* nulls last descending; among the 2026s the largest slugs */
    EXPECT_LOCAL(c, "newest_first", NULL, "e.slug,e.release_year", ORDERED, "el-sap-ai|2026;el-project-glasswing|2026");
    /* per kind: rows, non-null years, min, max, avg (F64), sum (F64); concepts have 2 nulls */
    EXPECT_LOCAL(c, "years_by_kind", NULL, "e.kind,n,dated,lo,hi,mean,total", ORDERED,
                 "concept|5|3|2026|2026|2026.0|6078.0;framework|2|2|2026|2026|2026.0|4052.0;"
                 "product|16|16|1999|2026|2024.0|32384.0;technology|1|1|2024|2024|2024.0|2024.0");
    /* case-sensitive substring and prefix */
    EXPECT_LOCAL(c, "name_has", "{'t':'Karpathy'}", "s.slug", UNORDERED, "sig-karpathy-autoresearch-700");
    EXPECT_LOCAL(c, "name_has", "{'t':'karpathy'}", "s.slug", UNORDERED, "");
    EXPECT_LOCAL(c, "slug_prefix", "{'t':'el-claude'}", "e.slug", UNORDERED, "el-claude-cowork;el-claude-mythos-preview");
    /* an enum filter with a value outside the enum matches nothing (not an error) */
    EXPECT(c, "elements.gq", "elements_by_kind", "{'kind':'gadget'}", "e.slug", ORDERED, "");
    /* a missing required parameter of a read */
    og_rows *r = NULL;
    const char *src = src_of(c, "elements.gq");
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), "get_element", "{}", NULL), OG_ERR_INVALID);
    assert_null(r);
    /* a name the file does not hold; no name for a file of 9 queries */
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), "get_elements", P("{'slug':'el-mcp'}"), NULL),
                     OG_ERR_NOT_FOUND);
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), NULL, P("{'slug':'el-mcp'}"), NULL), OG_ERR_INVALID);
    assert_null(r);
}

/* Cycle-closing joins, nested negation, cross products and aggregates over a 3-variable
 * pattern (test-local reads).  Expectations: python joins over the edge lists. */
static void joins_cycles_nested_negation_and_cross_products(void **state)
{
    cook *c = *state;
    /* signal → element → pattern closes back on the signal's pattern for all 12 OnElement
     * edges (each element a signal is on exemplifies that signal's pattern) */
    EXPECT_LOCAL(c, "self_consistent", NULL, "s.slug,e.slug", UNORDERED,
                 "sig-830b-software-selloff|el-claude-cowork;sig-alphaevolve-matrix-multiply|el-alphaevolve;"
                 "sig-edra-30m-series-a|el-edra;sig-karpathy-autoresearch-700|el-autoresearch;"
                 "sig-kimi-k25-oss-frontier|el-kimi-k25;sig-klarna-replaces-salesforce|el-salesforce-crm;"
                 "sig-meta-rogue-agent-breach|el-meta-internal-agents;sig-mythos-181-exploits|el-claude-mythos-preview;"
                 "sig-openclaw-unvetted-access|el-openclaw;sig-sap-consumption-pricing|el-sap-ai;"
                 "sig-tao-erdos-728|el-erdos-ai-tools;sig-zylon-onprem-ai|el-zylon");
    /* mcp enables edra, and edra uses mcp: the only 2-cycle */
    EXPECT_LOCAL(c, "mutual", "{'slug':'el-mcp'}", "t.slug", UNORDERED, "el-edra");
    /* patterns none of whose signals lacks a SourcedFromSource edge: 93pct, kimi, zylon
     * (sovereign-ai) and gartner (context-graphs) lack one */
    EXPECT_LOCAL(c, "fully_sourced_patterns", NULL, "p.slug", UNORDERED,
                 "pat-accelerated-research;pat-new-cyber-threats;pat-saaspocalypse");
    /* 7 experts, 5 ContributedByExpert targets */
    EXPECT_LOCAL(c, "silent_experts", NULL, "x.slug", UNORDERED, "exp-animesh-koratana;exp-eugen-alpeza");
    /* two unconnected bindings: 2 disruption patterns × 2 know-hows */
    EXPECT_LOCAL(c, "disruption_x_knowhow", NULL, "p.slug,k.slug", UNORDERED,
                 "pat-saaspocalypse|how-to-autonomous-research-loop;pat-saaspocalypse|how-to-deploy-onprem-ai;"
                 "pat-sovereign-ai|how-to-autonomous-research-loop;pat-sovereign-ai|how-to-deploy-onprem-ai");
    /* security signals' artifacts that have a publisher: openclaw's 3 all do */
    EXPECT_LOCAL(c, "security_provenance", NULL, "s.slug,n", UNORDERED,
                 "sig-meta-rogue-agent-breach|1;sig-mythos-181-exploits|1;sig-openclaw-unvetted-access|3");
}

/* Result metadata and rendering of a cookbook row: reference column names, query-language
 * type names, CSV quoting of the seed's embedded quotes. */
static void results_have_reference_columns_and_render_as_csv(void **state)
{
    cook *c = *state;
    og_rows *r;
    const char *src = src_of(c, "signals.gq");
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), "get_signal", P("{'slug':'sig-forbes-context-graphs'}"), NULL),
                     OG_OK);
    assert_int_equal(og_rows_count(r), 1);
    assert_int_equal(og_rows_width(r), 6);
    static const char *names[] = {"s.slug", "s.name", "s.brief", "s.description", "s.domain", "s.stagingTimestamp"};
    for (size_t i = 0; i < 6; i++) assert_string_equal(og_rows_column_name(r, i), names[i]);
    assert_string_equal(og_rows_column_type(r, 0), "String");
    assert_string_equal(og_rows_column_type(r, 5), "DateTime");
    /* stagingTimestamp 2026-04-03T00:00:00Z = 20546 days × 86,400,000 ms (date -d … +%s) */
    assert_int_equal(og_rows_int(r, 0, 5), INT64_C(1775174400000));
    size_t n;
    const char *name = og_rows_string(r, 0, 1, &n);
    assert_non_null(name);
    assert_memory_equal(name, "Forbes: \"VCs say context graphs might be the next big thing\"", n);
    char *csv;
    assert_int_equal(og_rows_render(&csv, NULL, r, OG_FORMAT_CSV, "main"), OG_OK);
    const char *header = "s.slug,s.name,s.brief,s.description,s.domain,s.stagingTimestamp\r\n";
    assert_true(strncmp(csv, header, strlen(header)) == 0);
    assert_non_null(strstr(csv, "\r\nsig-forbes-context-graphs,\"Forbes: \"\"VCs say context graphs might be the next big thing\"\"\","));
    assert_non_null(strstr(csv, ",context,2026-04-03T00:00:00\r\n"));
    og_free(csv);
    og_rows_free(r);
    /* the node's @id (= the slug key) under the alias "s" */
    EXPECT_LOCAL(c, "bare_signal", "{'slug':'sig-tao-erdos-728'}", "s,s.domain", ORDERED, "sig-tao-erdos-728|inference");
}

/* ---- mutations ---------------------------------------------------------------------------- */

static void run_mutation(cook *c, const char *name, const char *params, og_receipt *r)
{
    const char *src = src_of(c, "mutations.gq");
    og_status st = og_db_mutate(r, c->db, src, strlen(src), name, P(params), NULL, NULL);
    if (st) fail_msg("%s: %s: %s", name, og_status_name(st), og_error_message());
}

static void every_mutation_runs_and_a_read_sees_its_effect(void **state)
{
    (void)state;
    cook *c = cook_new();
    char prev[32];
    head_of(c, prev);
    assert_string_equal(prev, c->load_commit);
    size_t ran = 0;
    for (size_t i = 0; i < NMUTS; i++) {
        const mut_step *m = &MUTS[i];
        const char *src = m->check_file ? src_of(c, m->check_file) : LOCAL;
        EXPECT_AT(c, src, m->check, m->check_params, NULL, m->cols, m->sorted, m->before);
        og_receipt r;
        run_mutation(c, m->name, m->params, &r);
        ran++;
        if (!r.published) fail_msg("%s published nothing", m->name);
        if (!strcmp(r.commit, prev)) fail_msg("%s: same commit as before", m->name);
        assert_int_equal(r.affected_nodes, m->edges ? 0 : 1);
        assert_int_equal(r.affected_edges, m->edges ? 1 : 0);
        char head[32];
        head_of(c, head);
        assert_string_equal(head, r.commit);
        snprintf(prev, sizeof prev, "%s", r.commit);
        EXPECT_AT(c, src, m->check, m->check_params, NULL, m->cols, m->sorted, m->after);
    }
    assert_int_equal(ran, 31);
    /* the net effect seen by other reads: the new signal (staged 2026-05-02) now leads
     * recent_signals, forms pat-test-new and is the only momentum since May */
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2026-05-01T00:00:00Z'}", "p.slug,recent_signals", UNORDERED,
           "pat-test-new|1");
    EXPECT(c, "patterns.gq", "pattern_signals", "{'slug':'pat-test-new'}", "s.slug", ORDERED, "sig-test-new");
    EXPECT(c, "patterns.gq", "pattern_elements", "{'slug':'pat-test-new'}", "e.slug", UNORDERED, "el-openclaw");
    EXPECT_LOCAL(c, "signal_count", NULL, "n", ORDERED, "16");
    /* inserting the same pair again adds a parallel edge; traversals without an edge binding
     * have set semantics (one row per distinct destination), so nothing is counted twice */
    og_receipt again;
    run_mutation(c, "link_signal_forms_pattern", "{'signal':'sig-test-new','pattern':'pat-test-new'}", &again);
    assert_true(again.published);
    assert_int_equal(again.affected_edges, 1);
    EXPECT(c, "patterns.gq", "pattern_signals", "{'slug':'pat-test-new'}", "s.slug", ORDERED, "sig-test-new");
    EXPECT(c, "workflow.gq", "pattern_momentum", "{'since':'2026-05-01T00:00:00Z'}", "p.slug,recent_signals", UNORDERED,
           "pat-test-new|1");
    /* ...while the load's commit still shows the seed */
    EXPECT_AT(c, LOCAL, "signal_count", NULL, c->load_commit, "n", ORDERED, "15");
    EXPECT_AT(c, src_of(c, "workflow.gq"), "unsourced_signals", NULL, c->load_commit, "s.slug", ORDERED,
              "sig-gartner-50pct-context-graphs");
    cook_free(c);
}

/* Runs a mutation that must fail with `want` and checks that the head did not move. */
static void expect_rejected(cook *c, const char *name, const char *params, og_status want)
{
    char before[32], after[32];
    head_of(c, before);
    const char *src = src_of(c, "mutations.gq");
    og_receipt r;
    og_status st = og_db_mutate(&r, c->db, src, strlen(src), name, P(params), NULL, NULL);
    if (st != want)
        fail_msg("%s: want %s, got %s: %s", name, og_status_name(want), og_status_name(st), og_error_message());
    assert_false(r.published);
    head_of(c, after);
    assert_string_equal(before, after);
}

static void failing_mutations_publish_nothing(void **state)
{
    (void)state;
    cook *c = cook_new();
    /* enum: Element.kind is enum(product, technology, framework, concept, ops) */
    expect_rejected(c, "add_element", "{'slug':'el-gadget','name':'Gadget','kind':'gadget','createdAt':" TS ",'updatedAt':" TS "}",
                    OG_ERR_CONSTRAINT);
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-gadget'}", "e.slug", ORDERED, "");
    /* enum: InformationArtifact.artifactType is enum(email, youtube, pdf, article) */
    expect_rejected(c, "add_artifact",
                    "{'slug':'ia-pod','name':'Pod','artifactType':'podcast','stagingTimestamp':" TS ",'createdAt':" TS ",'updatedAt':" TS "}",
                    OG_ERR_CONSTRAINT);
    EXPECT_LOCAL(c, "get_artifact", "{'slug':'ia-pod'}", "a.slug", ORDERED, "");
    /* @card(0..1) on PublishedBySource: ia-reuters-830b-selloff is already published by
     * source-reuters-nl (seed), a second publisher would make 2 */
    expect_rejected(c, "link_artifact_published_by", "{'artifact':'ia-reuters-830b-selloff','source':'source-bloomberg-nl'}",
                    OG_ERR_CONSTRAINT);
    EXPECT_LOCAL(c, "artifact_publishers", "{'slug':'ia-reuters-830b-selloff'}", "s.slug", UNORDERED, "source-reuters-nl");
    /* ...while an artifact with no publisher yet (ia-levie-agents-legacy has none) takes one */
    EXPECT_LOCAL(c, "artifact_publishers", "{'slug':'ia-levie-agents-legacy'}", "s.slug", UNORDERED, "");
    og_receipt r;
    run_mutation(c, "link_artifact_published_by", "{'artifact':'ia-levie-agents-legacy','source':'source-bloomberg-nl'}", &r);
    assert_true(r.published);
    EXPECT_LOCAL(c, "artifact_publishers", "{'slug':'ia-levie-agents-legacy'}", "s.slug", UNORDERED, "source-bloomberg-nl");
    /* edge referential integrity: no Pattern pat-missing */
    expect_rejected(c, "link_signal_forms_pattern", "{'signal':'sig-zylon-onprem-ai','pattern':'pat-missing'}",
                    OG_ERR_CONSTRAINT);
    /* an endpoint of the wrong type: pat-sovereign-ai is a Pattern, OnElement wants an Element */
    expect_rejected(c, "link_signal_on_element", "{'signal':'sig-zylon-onprem-ai','element':'pat-sovereign-ai'}",
                    OG_ERR_CONSTRAINT);
    EXPECT(c, "signals.gq", "signal_patterns", "{'slug':'sig-zylon-onprem-ai'}", "p.slug", UNORDERED, "pat-sovereign-ai");
    EXPECT(c, "signals.gq", "signal_elements", "{'slug':'sig-zylon-onprem-ai'}", "e.slug", UNORDERED, "el-zylon");
    /* a required parameter missing, and a DateTime parameter that does not parse */
    expect_rejected(c, "add_company", "{'slug':'co-x'}", OG_ERR_INVALID);
    expect_rejected(c, "add_signal", "{'slug':'sig-x','name':'x','brief':'x','stagingTimestamp':'yesterday','createdAt':" TS ",'updatedAt':" TS "}",
                    OG_ERR_INVALID);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-x'}", "c.slug", ORDERED, "");
    EXPECT(c, "signals.gq", "get_signal", "{'slug':'sig-x'}", "s.slug", ORDERED, "");
    /* a mutation handed to og_db_query is refused */
    og_rows *rows = NULL;
    const char *src = src_of(c, "mutations.gq");
    assert_int_equal(og_db_query(&rows, c->db, src, strlen(src), "add_company", P("{'slug':'co-y','name':'Y'}"), NULL),
                     OG_ERR_INVALID);
    assert_null(rows);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-y'}", "c.slug", ORDERED, "");
    /* a read handed to og_db_mutate, and a mutation name mutations.gq does not hold */
    char before[32], after[32];
    head_of(c, before);
    const char *reads = src_of(c, "elements.gq");
    assert_int_equal(og_db_mutate(&r, c->db, reads, strlen(reads), "get_element", P("{'slug':'el-mcp'}"), NULL, NULL),
                     OG_ERR_INVALID);
    assert_int_equal(og_db_mutate(&r, c->db, src, strlen(src), "add_thing", P("{'slug':'x'}"), NULL, NULL), OG_ERR_NOT_FOUND);
    head_of(c, after);
    assert_string_equal(before, after);
    /* compare-and-swap on the head: the load's commit is no longer the head (the publisher
     * link above moved it), the current head is */
    assert_int_equal(og_db_mutate(&r, c->db, src, strlen(src), "add_company", P("{'slug':'co-cas','name':'CAS'}"), NULL,
                                  c->load_commit),
                     OG_ERR_PRECONDITION_FAILED);
    assert_false(r.published);
    head_of(c, after);
    assert_string_equal(before, after);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-cas'}", "c.slug", ORDERED, "");
    assert_int_equal(og_db_mutate(&r, c->db, src, strlen(src), "add_company", P("{'slug':'co-cas','name':'CAS'}"), NULL, after),
                     OG_OK);
    assert_true(r.published);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-cas'}", "c.slug", ORDERED, "co-cas");
    cook_free(c);
}

/* A keyed insert is an upsert that replaces the whole row (omitted nullable props → NULL);
 * the node keeps its id, so its edges stay. */
static void inserting_an_existing_key_replaces_the_row_and_keeps_edges(void **state)
{
    (void)state;
    cook *c = cook_new();
    og_receipt r;
    run_mutation(c, "add_element", "{'slug':'el-mcp','name':'MCP v2','kind':'framework','createdAt':" TS ",'updatedAt':" TS "}", &r);
    assert_true(r.published);
    assert_int_equal(r.affected_nodes, 1);
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-mcp'}", "e.slug,e.name,e.kind,e.brief,e.category", ORDERED,
           "el-mcp|MCP v2|framework|null|null");
    EXPECT(c, "elements.gq", "elements_by_kind", "{'kind':'technology'}", "e.slug", ORDERED, ""); /* mcp was the only one */
    EXPECT(c, "elements.gq", "element_enables", "{'slug':'el-mcp'}", "target.slug", UNORDERED,
           "el-anthropic-managed-agents;el-edra;el-hornet");
    EXPECT(c, "elements.gq", "element_uses", "{'slug':'el-zylon'}", "dep.slug,dep.name", UNORDERED, "el-mcp|MCP v2");
    EXPECT_AT(c, src_of(c, "elements.gq"), "get_element", "{'slug':'el-mcp'}", c->load_commit, "e.name,e.category", ORDERED,
              "MCP|[\"agentic\",\"infrastructure\"]");
    cook_free(c);
}

/* Deleting a node removes every edge touching it (test-local delete: mutations.gq has none).
 * el-mcp touches 9 seed edges (python: edges with el-mcp as from or to): EnablesElement ×3
 * out, UsesElement ×2 in (zylon, edra), EnablesPattern ×2 out, DevelopedByCompany ×1 out,
 * ReferencesElement ×1 in (how-to-deploy-onprem-ai). */
static void deleting_a_node_cascades_to_its_edges(void **state)
{
    (void)state;
    cook *c = cook_new();
    og_receipt r;
    assert_int_equal(og_db_mutate(&r, c->db, LOCAL, strlen(LOCAL), "delete_element", P("{'slug':'el-mcp'}"), NULL, NULL),
                     OG_OK);
    assert_true(r.published);
    assert_int_equal(r.affected_nodes, 1);
    assert_int_equal(r.affected_edges, 9);
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-mcp'}", "e.slug", ORDERED, "");
    EXPECT(c, "elements.gq", "element_enables", "{'slug':'el-mcp'}", "target.slug", UNORDERED, "");
    EXPECT(c, "elements.gq", "element_uses", "{'slug':'el-zylon'}", "dep.slug", UNORDERED, "");
    EXPECT(c, "elements.gq", "element_uses", "{'slug':'el-edra'}", "dep.slug", UNORDERED, "el-genkm");
    EXPECT(c, "knowhow.gq", "knowhow_elements", "{'slug':'how-to-deploy-onprem-ai'}", "e.slug", UNORDERED, "el-zylon");
    EXPECT_LOCAL(c, "pattern_enablers", "{'slug':'pat-context-graphs'}", "e.slug", UNORDERED, "el-hornet");
    EXPECT_LOCAL(c, "company_elements", "{'slug':'co-anthropic'}", "e.slug", UNORDERED,
                 "el-anthropic-managed-agents;el-claude-cowork;el-claude-mythos-preview;el-project-glasswing");
    /* the other endpoints are untouched */
    EXPECT(c, "elements.gq", "get_element", "{'slug':'el-hornet'}", "e.slug", ORDERED, "el-hornet");
    /* the load's commit still has el-mcp and its edges */
    EXPECT_AT(c, src_of(c, "elements.gq"), "element_enables", "{'slug':'el-mcp'}", c->load_commit, "target.slug", UNORDERED,
              "el-anthropic-managed-agents;el-edra;el-hornet");
    /* deleting what is not there publishes nothing */
    char before[32], after[32];
    head_of(c, before);
    assert_int_equal(og_db_mutate(&r, c->db, LOCAL, strlen(LOCAL), "delete_element", P("{'slug':'el-mcp'}"), NULL, NULL),
                     OG_OK);
    assert_false(r.published);
    assert_int_equal(r.affected_nodes, 0);
    assert_int_equal(r.affected_edges, 0);
    head_of(c, after);
    assert_string_equal(before, after);
    cook_free(c);
}

/* Runs a test-local mutation; returns its status and fills r. */
static og_status local_mutate(cook *c, const char *name, const char *params, og_receipt *r)
{
    return og_db_mutate(r, c->db, LOCAL, strlen(LOCAL), name, P(params), NULL, NULL);
}

#define MUTATE_LOCAL(c, name, params, nodes, nedges)                                                 \
    do {                                                                                             \
        og_receipt r_;                                                                               \
        og_status st_ = local_mutate((c), (name), (params), &r_);                                    \
        if (st_) fail_msg("%s: %s: %s", (name), og_status_name(st_), og_error_message());            \
        assert_true(r_.published);                                                                   \
        if (r_.affected_nodes != (nodes) || r_.affected_edges != (nedges))                           \
            fail_msg("%s: affected %llu nodes, %llu edges; want %d, %d", (name),                     \
                     (unsigned long long)r_.affected_nodes, (unsigned long long)r_.affected_edges,   \
                     (nodes), (nedges));                                                             \
    } while (0)

static void expect_local_rejected(cook *c, const char *name, const char *params, og_status want)
{
    char before[32], after[32];
    head_of(c, before);
    og_receipt r;
    og_status st = local_mutate(c, name, params, &r);
    if (st != want)
        fail_msg("%s: want %s, got %s: %s", name, og_status_name(want), og_status_name(st), og_error_message());
    assert_false(r.published);
    head_of(c, after);
    assert_string_equal(before, after);
}

/* update, edge delete and node-delete cascades on the cookbook graph (test-local mutations).
 * Edge counts per deleted node: python over the seed edges with that slug as from or to. */
static void updates_and_deletes_change_exactly_what_they_match(void **state)
{
    (void)state;
    cook *c = cook_new();
    /* infra signals in the seed: 93pct, klarna, zylon */
    EXPECT_LOCAL(c, "by_domain", "{'d':'infra'}", "s.slug", UNORDERED,
                 "sig-93pct-repatriation;sig-klarna-replaces-salesforce;sig-zylon-onprem-ai");
    MUTATE_LOCAL(c, "set_domain", "{'slug':'sig-zylon-onprem-ai','d':'data-eng'}", 1, 0);
    EXPECT_LOCAL(c, "by_domain", "{'d':'infra'}", "s.slug", UNORDERED, "sig-93pct-repatriation;sig-klarna-replaces-salesforce");
    EXPECT_LOCAL(c, "by_domain", "{'d':'data-eng'}", "s.slug", UNORDERED, "sig-zylon-onprem-ai");
    /* the rest of the row is kept */
    EXPECT(c, "signals.gq", "get_signal", "{'slug':'sig-zylon-onprem-ai'}", "s.slug,s.domain,s.stagingTimestamp", ORDERED,
           "sig-zylon-onprem-ai|data-eng|2026-03-01T00:00:00");
    /* an enum value outside Signal.domain, and assigning the key, are refused */
    expect_local_rejected(c, "set_domain", "{'slug':'sig-zylon-onprem-ai','d':'nope'}", OG_ERR_CONSTRAINT);
    expect_local_rejected(c, "rekey", "{'slug':'sig-zylon-onprem-ai'}", OG_ERR_CONSTRAINT);
    EXPECT_LOCAL(c, "by_domain", "{'d':'data-eng'}", "s.slug", UNORDERED, "sig-zylon-onprem-ai");
    /* a multi-row update: el-mcp and el-playerzero-sim1 were released in 2024 */
    MUTATE_LOCAL(c, "bump_year", "{'from':2024,'to':2027}", 2, 0);
    EXPECT_LOCAL(c, "released_since", "{'y':2027}", "n", ORDERED, "2");
    /* the second statement sees the first one's write (read-your-writes) */
    MUTATE_LOCAL(c, "chained_update", NULL, 2, 0);
    EXPECT_LOCAL(c, "by_license", "{'l':'X'}", "e.slug,e.release_year", UNORDERED, "el-hornet|2030");
    /* node + edge to it in one mutation (the edge's endpoint is only staged); a signal that only
     * contradicts a pattern is not an orphan (the second `not` of orphan_signals) */
    MUTATE_LOCAL(c, "signal_with_contradiction", NULL, 1, 1);
    EXPECT(c, "workflow.gq", "orphan_signals", NULL, "s.slug", ORDERED, "");
    EXPECT(c, "workflow.gq", "contested_patterns", NULL, "p.slug,contradictions", UNORDERED, "pat-context-graphs|1");
    /* delete edges by source: sig-openclaw-unvetted-access forms one pattern; it becomes an orphan */
    MUTATE_LOCAL(c, "unlink_forms", "{'slug':'sig-openclaw-unvetted-access'}", 0, 1);
    EXPECT(c, "patterns.gq", "pattern_signals", "{'slug':'pat-new-cyber-threats'}", "s.slug", ORDERED,
           "sig-mythos-181-exploits;sig-meta-rogue-agent-breach");
    EXPECT(c, "workflow.gq", "orphan_signals", NULL, "s.slug", ORDERED, "sig-openclaw-unvetted-access");
    /* its remaining edges: OnElement 1, SpottedInArtifact 3, SourcedFromSource 1 */
    MUTATE_LOCAL(c, "delete_signal", "{'slug':'sig-openclaw-unvetted-access'}", 1, 5);
    EXPECT(c, "workflow.gq", "orphan_signals", NULL, "s.slug", ORDERED, "");
    EXPECT(c, "elements.gq", "element_signals", "{'slug':'el-openclaw'}", "s.slug", ORDERED, "");
    EXPECT_LOCAL(c, "security_provenance", NULL, "s.slug,n", UNORDERED,
                 "sig-meta-rogue-agent-breach|1;sig-mythos-181-exploits|1");
    /* pat-accelerated-research: FormsPattern 3 in, ExemplifiesPattern 3 in, EnablesPattern 1 in */
    MUTATE_LOCAL(c, "delete_pattern", "{'slug':'pat-accelerated-research'}", 1, 7);
    EXPECT(c, "signals.gq", "signal_patterns", "{'slug':'sig-tao-erdos-728'}", "p.slug", UNORDERED, "");
    EXPECT(c, "elements.gq", "element_patterns", "{'slug':'el-autoresearch'}", "p.slug", UNORDERED, "");
    EXPECT(c, "workflow.gq", "orphan_signals", NULL, "s.slug", ORDERED,
           "sig-karpathy-autoresearch-700;sig-tao-erdos-728;sig-alphaevolve-matrix-multiply");
    EXPECT(c, "knowhow.gq", "knowhow_elements", "{'slug':'how-to-autonomous-research-loop'}", "e.slug", UNORDERED,
           "el-alphaevolve;el-autoresearch;el-karpathy-llm-wiki");
    /* co-anthropic: DevelopedByCompany 5 in, RelevantCompany 2 in */
    MUTATE_LOCAL(c, "delete_company", "{'slug':'co-anthropic'}", 1, 7);
    EXPECT(c, "elements.gq", "element_developer", "{'slug':'el-mcp'}", "c.slug", UNORDERED, "");
    EXPECT(c, "signals.gq", "signal_companies", "{'slug':'sig-mythos-181-exploits'}", "c.slug", UNORDERED, "");
    EXPECT_LOCAL(c, "top_companies", NULL, "c.slug,n", ORDERED, "co-edra|1;co-google-deepmind|1;co-klarna|1");
    /* inserts and deletes in one mutation are refused before any effect */
    expect_local_rejected(c, "mixed", NULL, OG_ERR_TYPE);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-q'}", "c.slug", ORDERED, "");
    cook_free(c);
}

/* Loading seed.jsonl again: append conflicts on the first key, merge adds a second
 * PublishedBySource edge per artifact (edges without ids are always new) and breaks @card(0..1),
 * overwrite replaces every type in the file (so rows inserted since disappear). */
static void reloading_the_seed_in_each_mode(void **state)
{
    (void)state;
    cook *c = cook_new();
    char before[32], after[32];
    head_of(c, before);
    og_receipt r;
    og_load_opts lo = {.mode = OG_LOAD_APPEND};
    assert_int_equal(og_db_load(&r, c->db, COOKBOOK "/seed.jsonl", &lo), OG_ERR_ALREADY_EXISTS);
    assert_false(r.published);
    lo.mode = OG_LOAD_MERGE;
    assert_int_equal(og_db_load(&r, c->db, COOKBOOK "/seed.jsonl", &lo), OG_ERR_CONSTRAINT);
    assert_false(r.published);
    head_of(c, after);
    assert_string_equal(before, after);
    run_mutation(c, "add_company", "{'slug':'co-test-new','name':'Test company'}", &r);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-test-new'}", "c.slug", ORDERED, "co-test-new");
    lo.mode = OG_LOAD_OVERWRITE;
    assert_int_equal(og_db_load(&r, c->db, COOKBOOK "/seed.jsonl", &lo), OG_OK);
    assert_true(r.published);
    assert_int_equal(r.records, 263);
    EXPECT_LOCAL(c, "get_company", "{'slug':'co-test-new'}", "c.slug", ORDERED, "");
    EXPECT_LOCAL(c, "signal_count", NULL, "n", ORDERED, "15");
    EXPECT(c, "signals.gq", "signal_sources", "{'slug':'sig-openclaw-unvetted-access'}", "a.slug", UNORDERED,
           "ia-bloomberg-openclaw-china-ban;ia-paloalto-openclaw-crisis;ia-snyk-openclaw-security");
    cook_free(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

#define IA(slug, link)                                                                                        \
    "{\"type\":\"InformationArtifact\",\"data\":{\"slug\":\"" slug "\",\"name\":\"n\",\"artifactType\":\"article\"," \
    "\"link\":\"" link "\",\"stagingTimestamp\":\"2026-01-26T00:00:00Z\",\"createdAt\":\"2026-01-26T00:00:00Z\","   \
    "\"updatedAt\":\"2026-01-27T00:00:00Z\"}}\n"
#define KIMI_LINK "https://www.kimi.com/blog/kimi-k2-5.html"

/* InformationArtifact.link is @unique: checked against the committed rows, where a row's own
 * old version does not count.  KIMI_LINK is ia-kimi-k25-release's link in the seed. */
static void unique_link_is_checked_against_committed_rows(void **state)
{
    (void)state;
    cook *c = cook_new();
    char path[128], before[32], after[32];
    snprintf(path, sizeof path, "%s/extra.jsonl", c->dir);
    og_load_opts lo = {.mode = OG_LOAD_MERGE};
    og_receipt r;
    /* a new artifact taking an existing link */
    write_file(path, IA("ia-dup", KIMI_LINK));
    head_of(c, before);
    assert_int_equal(og_db_load(&r, c->db, path, &lo), OG_ERR_CONSTRAINT);
    head_of(c, after);
    assert_string_equal(before, after);
    EXPECT_LOCAL(c, "get_artifact", "{'slug':'ia-dup'}", "a.slug", ORDERED, "");
    /* the holder re-written with its own link */
    write_file(path, IA("ia-kimi-k25-release", KIMI_LINK));
    assert_int_equal(og_db_load(&r, c->db, path, &lo), OG_OK);
    assert_int_equal(r.updated, 1);
    EXPECT_LOCAL(c, "get_artifact", "{'slug':'ia-kimi-k25-release'}", "a.name,a.link", ORDERED, "n|" KIMI_LINK);
    /* the link moves to a new row in the same load that gives the holder another one */
    write_file(path, IA("ia-kimi-k25-release", "https://example.org/kimi") IA("ia-new", KIMI_LINK));
    assert_int_equal(og_db_load(&r, c->db, path, &lo), OG_OK);
    assert_int_equal(r.inserted, 1);
    assert_int_equal(r.updated, 1);
    EXPECT_LOCAL(c, "get_artifact", "{'slug':'ia-new'}", "a.link", ORDERED, KIMI_LINK);
    EXPECT_LOCAL(c, "get_artifact", "{'slug':'ia-kimi-k25-release'}", "a.link", ORDERED, "https://example.org/kimi");
    /* the signal's SpottedInArtifact edge to the re-written artifact survives */
    EXPECT(c, "signals.gq", "signal_sources", "{'slug':'sig-kimi-k25-oss-frontier'}", "a.slug,a.link", UNORDERED,
           "ia-kimi-k25-release|https://example.org/kimi");
    cook_free(c);
}

/* og_rows_column_type uses the query language's spelling: an enum property is a String
 * (docs/query-language.md) and a `$v.@id` column is the node id, a String (a bare `$v` is the
 * node as an object, column type Object: tests/logic/object). */
static void column_types_use_query_language_spelling(void **state)
{
    cook *c = *state;
    og_rows *r;
    const char *src = src_of(c, "elements.gq");
    assert_int_equal(og_db_query(&r, c->db, src, strlen(src), "get_element", P("{'slug':'el-mcp'}"), NULL), OG_OK);
    assert_string_equal(og_rows_column_name(r, 2), "e.kind");
    assert_string_equal(og_rows_column_name(r, 6), "e.domain");
    char kind[32], domain[32], bare[32];
    snprintf(kind, sizeof kind, "%s", og_rows_column_type(r, 2));
    snprintf(domain, sizeof domain, "%s", og_rows_column_type(r, 6));
    og_rows_free(r);
    assert_int_equal(og_db_query(&r, c->db, LOCAL, strlen(LOCAL), "bare_signal", P("{'slug':'sig-tao-erdos-728'}"), NULL),
                     OG_OK);
    assert_string_equal(og_rows_column_name(r, 0), "s");
    snprintf(bare, sizeof bare, "%s", og_rows_column_type(r, 0));
    og_rows_free(r);
    assert_string_equal(kind, "String");
    assert_string_equal(domain, "String?");
    assert_string_equal(bare, "String");
}

int main(void)
{
    if (!og_test_have_data("api_test_cookbook", COOKBOOK)) return OG_TEST_SKIP;
    setenv("OMNIGRAPH_EMBED_PROVIDER", "mock", 1); /* text `nearest` without a network */
    const struct CMUnitTest reads[] = {
        cmocka_unit_test(every_read_runs_and_embedding_reads_use_the_provider),
        cmocka_unit_test(full_text_search_reads),
        cmocka_unit_test(key_lookups_return_the_seed_row),
        cmocka_unit_test(forward_traversals_follow_out_edges),
        cmocka_unit_test(reverse_traversals_follow_in_edges),
        cmocka_unit_test(ordering_breaks_ties_by_id_and_limit_truncates),
        cmocka_unit_test(negation_keeps_rows_without_a_match),
        cmocka_unit_test(aggregates_group_by_the_other_columns),
        cmocka_unit_test(multi_hop_chains_and_bounded_hops),
        cmocka_unit_test(filters_on_lists_strings_numbers_and_nulls),
        cmocka_unit_test(joins_cycles_nested_negation_and_cross_products),
        cmocka_unit_test(results_have_reference_columns_and_render_as_csv),
        cmocka_unit_test(column_types_use_query_language_spelling),
    };
    const struct CMUnitTest writes[] = {
        cmocka_unit_test(every_cookbook_query_is_listed_once_73_in_all),
        cmocka_unit_test(every_mutation_runs_and_a_read_sees_its_effect),
        cmocka_unit_test(failing_mutations_publish_nothing),
        cmocka_unit_test(inserting_an_existing_key_replaces_the_row_and_keeps_edges),
        cmocka_unit_test(deleting_a_node_cascades_to_its_edges),
        cmocka_unit_test(updates_and_deletes_change_exactly_what_they_match),
        cmocka_unit_test(reloading_the_seed_in_each_mode),
        cmocka_unit_test(unique_link_is_checked_against_committed_rows),
    };
    int failed = cmocka_run_group_tests_name("cookbook reads", reads, setup_graph, teardown_graph);
    failed += cmocka_run_group_tests_name("cookbook writes", writes, NULL, NULL);
    return failed;
}
