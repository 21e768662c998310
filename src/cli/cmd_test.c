/*
 * cmd_test.c — `omnigraph test FILE|DIR...`: runs `.gqt` logic-test scenarios (docs/testing.md).
 *
 * Each case gets a fresh graph in a temporary directory, built and driven only through the
 * public API (include/omnigraph.h) — this verb is a surface, so a case exercises exactly what
 * a user's program would.  One line per case, a diff per failure, a summary, and an exit
 * status CI can gate on; `--bless` rewrites failing row and shape expectations in place.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gqt.h"
#include "cli/remote.h"

static const char *test_help =
    "usage: omnigraph test [--bless] [-k TEXT] [--keep] [-q] FILE|DIR...\n"
    "       omnigraph test --server URL|NAME --graph ID --yes [-k TEXT] [-q] FILE|DIR...\n"
    "\n"
    "Runs logic-test cases (.gqt files; a directory means every .gqt file under it, sorted):\n"
    "each case on a fresh graph in a temporary directory.  Prints one line per case (ok, FAIL\n"
    "or SKIP with the reason), the failing step and a diff for each failure, and a summary.\n"
    "Exit status: 0 when no case failed, 1 otherwise, 2 on a usage error.\n"
    "  --bless       rewrite the failing `expect unordered|ordered` rows and `expect shape`\n"
    "                bodies with what the run produced (review the diff; the run still fails)\n"
    "  -k TEXT       run only cases whose path contains TEXT (repeatable)\n"
    "  --keep        keep the graph of a failing case and print its path\n"
    "  -q, --quiet   print only failures and the summary\n"
    "  --server URL|NAME\n"
    "                run the cases against omnigraph-server instead (token as for the served\n"
    "                verbs): each case on a fresh graph created through POST /graphs and deleted\n"
    "                after it (the server must be started with --graph-dir DIR).  Steps a server\n"
    "                cannot answer (restart, `expect shape`, a load's `expect affected`) are\n"
    "                reported as skipped.\n"
    "  --server URL|NAME --graph ID --yes\n"
    "                the same on the served graph ID, used as scratch: before each case its other\n"
    "                branches are deleted, its schema replaced and the seed loaded (so --yes)\n"
    "The format is described in docs/testing.md.\n";

typedef struct opts {
    int bless, keep, quiet;
    og_remote *srv;     /* --server: the cases run on this served graph (test_served.c) */
    int fresh;          /* --server without --graph: each case on a graph created for it */
    const char **filters;
    size_t nfilters;
} opts;

typedef struct stats {
    size_t passed, failed, skipped, env_skipped, expect_skipped;
} stats;

/* ---- helpers ------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    return remove(p);
}

static void rm_rf(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *substitute(const char *s, const char *var, const char *val)
{
    if (!s) return NULL;
    og_buf b = OG_BUF_INIT;
    char pat[80];
    snprintf(pat, sizeof pat, "${%s}", var ? var : "");
    size_t pl = strlen(pat);
    for (const char *p = s; *p;) {
        if (var && !strncmp(p, pat, pl)) {
            og_buf_append_str(&b, val);
            p += pl;
        } else {
            og_buf_append_byte(&b, (uint8_t)*p++);
        }
    }
    og_buf_append_byte(&b, 0);
    return (char *)b.data;
}

typedef struct strv {
    char **v;
    size_t n;
} strv;

static void strv_push(strv *s, const char *p, size_t n)
{
    char **g = realloc(s->v, (s->n + 1) * sizeof *g);
    if (!g) abort();
    s->v = g;
    s->v[s->n] = malloc(n + 1);
    if (!s->v[s->n]) abort();
    memcpy(s->v[s->n], p, n);
    s->v[s->n][n] = 0;
    s->n++;
}

static void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void strv_sort(strv *s)
{
    if (s->n > 1) qsort(s->v, s->n, sizeof *s->v, cmp_str);
}

/* ---- one failure's report ------------------------------------------------------------------ */

typedef struct run {
    gqt_case *c;
    const opts *o;
    og_db *db;
    char dir[512], uri[600];
    char graph_id[80];  /* the served graph created for this case ("" = none) */
    og_buf report;      /* what failed, with diffs */
    size_t step_no;     /* ordinal of the step being run (1-based) */
    const gqt_step *st;
    const char *loop_var, *loop_val;
    og_buf skips;       /* expectations / steps reported as skipped, one line each */
    size_t nskips;
    char *stopped;      /* the case stopped at a step it cannot run: why (reported as SKIP) */
    /* bless replacements */
    gqt_span bless_span[2];
    char *bless_text[2];
    int nbless;
} run;

static const char *step_kind(const gqt_step *st)
{
    switch (st->kind) {
    case GQT_QUERY: return "query";
    case GQT_MUTATE: return "mutate";
    case GQT_LOAD: return "load";
    case GQT_CONCURRENT: return "concurrent";
    default: return "restart";
    }
}

/* Records an expectation this build cannot honour (the case's others still run). */
static void step_skip(run *r, int line, const char *why)
{
    og_buf_printf(&r->skips, "     skipped: step %zu (%s, line %d)", r->step_no, step_kind(r->st), line);
    if (r->loop_var) og_buf_printf(&r->skips, " [$%s=%s]", r->loop_var, r->loop_val);
    og_buf_printf(&r->skips, ": %s\n", why);
    r->nskips++;
}

static void step_fail(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step_fail(run *r, const char *fmt, ...)
{
    og_buf_printf(&r->report, "  step %zu (%s, line %d)", r->step_no, step_kind(r->st), r->st->line);
    if (r->loop_var) og_buf_printf(&r->report, " [$%s=%s]", r->loop_var, r->loop_val);
    og_buf_append_str(&r->report, ": ");
    va_list ap;
    va_start(ap, fmt);
    char tmp[4096];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    og_buf_append_str(&r->report, tmp);
    og_buf_append_byte(&r->report, '\n');
}

static void add_bless(run *r, gqt_span span, og_buf *text)
{
    if (r->nbless == 2) return;
    og_buf_append_byte(text, 0);
    r->bless_span[r->nbless] = span;
    r->bless_text[r->nbless] = (char *)text->data;
    memset(text, 0, sizeof *text);
    r->nbless++;
}

/* The error a call left, as matched by `expect error:` ("<status>: <message>"). */
static char *error_text(og_status st)
{
    og_buf b = OG_BUF_INIT;
    og_buf_printf(&b, "%s: %s", og_status_name(st), og_error_message());
    og_buf_append_byte(&b, 0);
    return (char *)b.data;
}

/* ---- expectations -------------------------------------------------------------------------- */

/* Parses an expected rows body (JSONL) into canonical lines. */
static int expected_rows(run *r, const char *body, strv *out)
{
    const char *p = body;
    int line = r->st->expect_line;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        line++;
        size_t a = 0;
        while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
        if (a < n) {
            if (p[a] == '#') {
                step_fail(r, "line %d: `#` lines are not allowed in an expect body", line);
                return -1;
            }
            og_buf c = OG_BUF_INIT, err = OG_BUF_INIT;
            if (gqt_json_canon(p, n, &c, &err)) {
                og_buf_append_byte(&err, 0);
                step_fail(r, "line %d: expected row is not JSON: %s", line, (char *)err.data);
                og_buf_free(&c);
                og_buf_free(&err);
                return -1;
            }
            if (!c.len || c.data[0] != '{') {
                step_fail(r, "line %d: an expected row is a JSON object", line);
                og_buf_free(&c);
                return -1;
            }
            strv_push(out, (const char *)c.data, c.len);
            og_buf_free(&c);
        }
        p += n + (e ? 1 : 0);
    }
    return 0;
}

static void diff_rows(run *r, strv *exp, strv *act, int ordered)
{
    if (ordered) {
        og_buf_append_str(&r->report, "    expected (in order):\n");
        for (size_t i = 0; i < exp->n; i++)
            og_buf_printf(&r->report, "    %c %s\n", i < act->n && !strcmp(exp->v[i], act->v[i]) ? ' ' : '-', exp->v[i]);
        og_buf_append_str(&r->report, "    actual:\n");
        for (size_t i = 0; i < act->n; i++)
            og_buf_printf(&r->report, "    %c %s\n", i < exp->n && !strcmp(exp->v[i], act->v[i]) ? ' ' : '+', act->v[i]);
        return;
    }
    /* both sorted: a merge walk gives the multiset difference */
    size_t i = 0, j = 0;
    while (i < exp->n || j < act->n) {
        int c = i == exp->n ? 1 : j == act->n ? -1 : strcmp(exp->v[i], act->v[j]);
        if (c == 0) {
            og_buf_printf(&r->report, "      %s\n", exp->v[i]);
            i++, j++;
        } else if (c < 0) {
            og_buf_printf(&r->report, "    - %s\n", exp->v[i++]);
        } else {
            og_buf_printf(&r->report, "    + %s\n", act->v[j++]);
        }
    }
}

static void norm_type(const char *s, size_t n, char *out, size_t cap, int *nullable)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        if (s[i] != ' ' && s[i] != '\t') out[k++] = s[i];
    out[k] = 0;
    *nullable = 0;
    if (k && out[k - 1] == '?') {
        out[--k] = 0;
        *nullable = 1;
    }
}

typedef struct column {
    const char *name;
    char type[128];
    int has_null;
} column;

/* Compares the shape section with the executed columns; 0 when it holds. */
static int check_shape(run *r, const char *shape, const column *cols, size_t ncols)
{
    strv lines = {0};
    const char *p = shape;
    int line = 0, rc = 0;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        line++;
        size_t a = 0;
        while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
        if (a < n) strv_push(&lines, p + a, n - a);
        p += n + (e ? 1 : 0);
    }
    if (lines.n != ncols) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < ncols; i++) og_buf_printf(&b, "%s%s", i ? ", " : "", cols[i].name);
        og_buf_append_byte(&b, 0);
        step_fail(r, "shape: %zu column(s) expected, the query returned %zu (%s)", lines.n, ncols,
                  ncols ? (char *)b.data : "none");
        og_buf_free(&b);
        rc = -1;
    }
    for (size_t i = 0; i < lines.n && !rc; i++) {
        char *l = lines.v[i];
        char *colon = strstr(l, ": ");
        if (!colon) {
            step_fail(r, "shape line %zu: expected `<name>: <type>`, got '%s'", i + 1, l);
            rc = -1;
            break;
        }
        size_t nl = (size_t)(colon - l);
        while (nl && l[nl - 1] == ' ') nl--;
        char want[128];
        int nullable;
        norm_type(colon + 2, strlen(colon + 2), want, sizeof want, &nullable);
        if (strlen(cols[i].name) != nl || strncmp(cols[i].name, l, nl)) {
            step_fail(r, "shape column %zu: expected name '%.*s', the query returned '%s'", i + 1, (int)nl, l,
                      cols[i].name);
            rc = -1;
        } else if (strcmp(want, cols[i].type)) {
            step_fail(r, "shape column %zu (%s): expected %s, the query returned %s", i + 1, cols[i].name, want,
                      cols[i].type);
            rc = -1;
        } else if (!nullable && cols[i].has_null) {
            step_fail(r, "shape column %zu (%s): written without `?` but the result holds a null", i + 1, cols[i].name);
            rc = -1;
        }
    }
    strv_free(&lines);
    return rc;
}

static void bless_shape(run *r, const column *cols, size_t ncols)
{
    og_buf b = OG_BUF_INIT;
    for (size_t i = 0; i < ncols; i++)
        og_buf_printf(&b, "%s: %s%s\n", cols[i].name, cols[i].type, cols[i].has_null ? "?" : "");
    og_buf_append_byte(&b, '\n');
    add_bless(r, r->st->shape_span, &b);
}

static void bless_rows(run *r, strv *act)
{
    og_buf b = OG_BUF_INIT;
    for (size_t i = 0; i < act->n; i++) og_buf_printf(&b, "%s\n", act->v[i]);
    og_buf_append_byte(&b, '\n');
    add_bless(r, r->st->rows_span, &b);
}

/* Checks a rows result (columns + canonical rows) against the step's expectation. */
static int check_rows(run *r, const column *cols, size_t ncols, strv *act)
{
    const gqt_step *st = r->st;
    /* a `show` step's shape is derived (five String columns), not written */
    int no_shape = st->show || !cols; /* no column types: a served answer (the caller noted the skip) */
    char *shape = no_shape ? NULL : substitute(st->shape, r->loop_var, r->loop_val);
    int rc = no_shape ? 0 : check_shape(r, shape, cols, ncols);
    free(shape);
    if (rc) {
        if (r->o->bless && !r->loop_var) bless_shape(r, cols, ncols);
        return -1;
    }
    char *body = substitute(st->rows, r->loop_var, r->loop_val);
    strv exp = {0};
    rc = expected_rows(r, body, &exp);
    free(body);
    if (rc) {
        strv_free(&exp);
        return -1;
    }
    int ordered = st->expect == GQT_EX_ORDERED;
    strv sorted_act = {0};
    for (size_t i = 0; i < act->n; i++) strv_push(&sorted_act, act->v[i], strlen(act->v[i]));
    if (!ordered) {
        strv_sort(&exp);
        strv_sort(&sorted_act);
    }
    int same = exp.n == sorted_act.n;
    for (size_t i = 0; same && i < exp.n; i++) same = !strcmp(exp.v[i], sorted_act.v[i]);
    if (!same) {
        step_fail(r, "rows differ (%zu expected, %zu returned; - expected only, + returned only)", exp.n,
                  sorted_act.n);
        diff_rows(r, &exp, &sorted_act, ordered);
        if (r->o->bless && !r->loop_var) bless_rows(r, &sorted_act);
        rc = -1;
    }
    strv_free(&exp);
    strv_free(&sorted_act);
    return rc;
}

/* An error ("<status>: <message>", consumed) when the step expected one; else a failure naming it. */
static int check_error_text(run *r, char *msg)
{
    int rc = 0;
    if (r->st->expect != GQT_EX_ERROR) {
        step_fail(r, "failed: %s", msg);
        rc = -1;
    } else if (!strstr(msg, r->st->expect_arg)) {
        step_fail(r, "expected an error containing '%s', got: %s", r->st->expect_arg, msg);
        rc = -1;
    }
    free(msg);
    return rc;
}

static int check_error(run *r, og_status st) { return check_error_text(r, error_text(st)); }

/* ---- steps --------------------------------------------------------------------------------- */

static char *trimmed(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) n--;
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* Splits a branch statement into words; quoted names lose their quotes. */
static size_t words(char *s, char **w, size_t cap)
{
    size_t n = 0;
    while (*s && n < cap) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        if (*s == '"') {
            char *e = strchr(s + 1, '"');
            w[n++] = s + 1;
            if (!e) break;
            *e = 0;
            s = e + 1;
            continue;
        }
        w[n++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') s++;
        if (*s) *s++ = 0;
    }
    return n;
}

static int run_branch_list(run *r)
{
    char *out = NULL, *err = NULL;
    json_t *j = NULL;
    if (r->o->srv) { /* the served list is names only: dress it as the library's document */
        char **names = NULL;
        size_t n = 0;
        if (gqt_srv_branch_list(r->o->srv, &names, &n, &err)) return check_error_text(r, err);
        j = json_pack("{s:[]}", "branches");
        for (size_t k = 0; k < n; k++)
            json_array_append_new(json_object_get(j, "branches"), json_pack("{s:s}", "name", names[k]));
        gqt_srv_strings_free(names, n);
    } else {
        og_status st = og_db_branch_list(&out, r->db);
        if (st) return check_error(r, st);
        j = json_loads(out, 0, NULL);
        og_free(out);
    }
    if (r->st->expect == GQT_EX_ERROR) {
        step_fail(r, "expected an error containing '%s', the statement succeeded", r->st->expect_arg);
        json_decref(j);
        return -1;
    }
    strv act = {0};
    json_t *bs = json_object_get(j, "branches");
    size_t i;
    json_t *b;
    json_array_foreach(bs, i, b) {
        json_t *row = json_pack("{s:O}", "name", json_object_get(b, "name"));
        char *t = json_dumps(row, JSON_COMPACT);
        og_buf c = OG_BUF_INIT, cerr = OG_BUF_INIT;
        gqt_json_canon(t, strlen(t), &c, &cerr);
        strv_push(&act, (const char *)c.data, c.len);
        og_buf_free(&c);
        og_buf_free(&cerr);
        free(t);
        json_decref(row);
    }
    json_decref(j);
    strv_sort(&act);
    column col = {"name", "String", 0};
    int rc = check_rows(r, &col, 1, &act);
    strv_free(&act);
    return rc;
}

static int run_statement(run *r, const char *body)
{
    char *s = trimmed(body);
    char *w[8];
    size_t n = words(s, w, 8);
    og_status st = OG_OK;
    int rc = 0;
    char *merge_out = NULL, *err = NULL;
    const og_remote *srv = r->o->srv;
    if (n == 2 && !strcmp(w[1], "list")) {
        free(s);
        return run_branch_list(r);
    } else if (n >= 3 && !strcmp(w[1], "create") && (n == 3 || (n == 5 && !strcmp(w[3], "from")))) {
        if (srv) gqt_srv_branch(srv, "create", w[2], n == 5 ? w[4] : NULL, NULL, &err);
        else st = og_db_branch_create(r->db, w[2], n == 5 ? w[4] : NULL, NULL, NULL);
    } else if (n == 3 && !strcmp(w[1], "delete")) {
        if (srv) gqt_srv_branch(srv, "delete", w[2], NULL, NULL, &err);
        else st = og_db_branch_delete(r->db, w[2]);
    } else if (n >= 3 && !strcmp(w[1], "merge") && (n == 3 || (n == 5 && !strcmp(w[3], "into")))) {
        if (srv) {
            char *oc = NULL;
            if (!gqt_srv_branch(srv, "merge", w[2], n == 5 ? w[4] : NULL, &oc, &err)) {
                json_t *mj = json_pack("{s:s?}", "outcome", oc);
                merge_out = json_dumps(mj, JSON_COMPACT);
                json_decref(mj);
            }
            free(oc);
        } else {
            og_db_merge_opts mo = {w[2], n == 5 ? w[4] : NULL, NULL, 0};
            st = og_db_branch_merge(&merge_out, r->db, &mo);
        }
    } else {
        step_fail(r, "unknown branch statement '%s' (branch create X [from Y], branch merge X [into Y], "
                     "branch delete X, branch list)", s);
        free(s);
        return -1;
    }
    if (err) {
        rc = check_error_text(r, err);
    } else if (st) {
        rc = check_error(r, st);
    } else if (r->st->expect == GQT_EX_ERROR) {
        step_fail(r, "expected an error containing '%s', the statement succeeded", r->st->expect_arg);
        rc = -1;
    } else if (r->st->has_affected) {
        step_fail(r, "`expect affected:` does not apply to a branch statement (no counts exist)");
        rc = -1;
    } else if (r->st->has_outcome) {
        if (!merge_out) {
            step_fail(r, "`expect outcome:` applies to `branch merge` only");
            rc = -1;
        } else {
            json_t *j = json_loads(merge_out, 0, NULL);
            const char *oc = json_string_value(json_object_get(j, "outcome"));
            if (!oc || strcmp(oc, r->st->outcome)) {
                step_fail(r, "expected merge outcome %s, got %s", r->st->outcome, oc ? oc : "(none)");
                rc = -1;
            }
            json_decref(j);
        }
    }
    if (srv) free(merge_out);
    else og_free(merge_out);
    free(s);
    return rc;
}

/* Session settings lines are in the language (docs/query-language.md "Session settings"), so a
 * refused `set` / `reset` is an outcome the step's expectation checks.  Two refusals are
 * skipped instead, never passed: a `show` statement (OmniGraph-C answers no settings rows) and,
 * on a step that expects success, a setting the reference has and OmniGraph-C does not.
 * `cls` and `m` are the error's class and message, embedded or served alike. */
static int settings_refused_text(run *r, const char *cls, const char *m)
{
    if (!r->st->settings || strcmp(cls, og_status_name(OG_ERR_PARSE))) return 0;
    static const char *const reference_only[] = {"rrf_plan", "merge_lineage", "ann_nprobes", "stage_write_concurrency",
                                                 "traversal_work_limit", "history_release_bytes"};
    int skip = r->st->show && strstr(m, "`show` is not supported") != NULL;
    for (size_t i = 0; !skip && r->st->expect != GQT_EX_ERROR && i < sizeof reference_only / sizeof *reference_only; i++) {
        char want[96];
        snprintf(want, sizeof want, "unknown setting `%s`", reference_only[i]);
        skip = strstr(m, want) != NULL;
    }
    if (!skip) return 0;
    og_buf w = OG_BUF_INIT;
    int ml = (int)strlen(m);
    while (ml && (m[ml - 1] == '\n' || m[ml - 1] == ' ')) ml--;
    og_buf_printf(&w, "session settings: %s (%s: %.*s)",
                  r->st->show ? "`show` is not answered by OmniGraph-C" : "a setting OmniGraph-C does not have",
                  cls, ml, m);
    og_buf_append_byte(&w, 0);
    step_skip(r, r->st->line, (char *)w.data);
    og_buf_free(&w);
    return 1;
}

static int settings_refused(run *r, og_status st)
{
    return st && settings_refused_text(r, og_status_name(st), og_error_message());
}

/* The same for a served error "<class>: <message>". */
static int settings_refused_served(run *r, const char *err)
{
    const char *colon = strstr(err, ": ");
    if (!colon) return 0;
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)(colon - err), err);
    return settings_refused_text(r, cls, colon + 2);
}

/* The names of an `expect shape` against a served answer's columns; their types are reported
 * as skipped (the served answer has none). */
static int check_shape_names(run *r, char **names, size_t nc)
{
    char *shape = substitute(r->st->shape, r->loop_var, r->loop_val);
    strv want = {0};
    for (const char *p = shape; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t a = 0;
        while (a < n && (p[a] == ' ' || p[a] == '\t')) a++;
        const char *colon = a < n ? strstr(p + a, ": ") : NULL;
        if (a < n) {
            size_t k = colon && colon < p + n ? (size_t)(colon - p) : n;
            while (k > a && p[k - 1] == ' ') k--;
            strv_push(&want, p + a, k - a);
        }
        p += n + (e ? 1 : 0);
    }
    free(shape);
    int rc = 0;
    if (want.n != nc) {
        step_fail(r, "shape: %zu column(s) expected, the server returned %zu", want.n, nc);
        rc = -1;
    }
    for (size_t i = 0; !rc && i < nc; i++)
        if (strcmp(want.v[i], names[i])) {
            step_fail(r, "shape column %zu: expected name '%s', the server returned '%s'", i + 1, want.v[i], names[i]);
            rc = -1;
        }
    if (!rc) step_skip(r, r->st->line, "expect shape: column names checked; the served answer carries no column types");
    strv_free(&want);
    return rc;
}

/* A read against the server: its answer names the columns but not their types, so an
 * `expect shape` is reported as skipped; rows are compared as embedded. */
static int run_query_served(run *r, const char *params)
{
    char **names = NULL, **rows = NULL, *err = NULL;
    size_t nc = 0, nr = 0;
    if (gqt_srv_query(r->o->srv, r->st->branch, r->st->body, params, &names, &nc, &rows, &nr, &err)) {
        if (settings_refused_served(r, err)) {
            free(err);
            return 0;
        }
        return check_error_text(r, err);
    }
    int rc = 0;
    if (r->st->expect == GQT_EX_ERROR) {
        step_fail(r, "expected an error containing '%s', the query returned %zu row(s)", r->st->expect_arg, nr);
        rc = -1;
    } else if (r->st->expect != GQT_EX_UNORDERED && r->st->expect != GQT_EX_ORDERED) {
        step_fail(r, "a query step expects rows or an error");
        rc = -1;
    }
    strv act = {0};
    for (size_t i = 0; i < nr && !rc; i++) {
        og_buf c = OG_BUF_INIT, e = OG_BUF_INIT;
        if (gqt_json_canon(rows[i], strlen(rows[i]), &c, &e)) {
            step_fail(r, "the served row is not JSON: %s", rows[i]);
            rc = -1;
        } else {
            strv_push(&act, (const char *)c.data, c.len);
        }
        og_buf_free(&c);
        og_buf_free(&e);
    }
    if (!rc && r->st->has_shape && !r->st->show) rc = check_shape_names(r, names, nc);
    if (!rc) rc = check_rows(r, NULL, nc, &act);
    strv_free(&act);
    gqt_srv_strings_free(names, nc);
    gqt_srv_strings_free(rows, nr);
    return rc;
}

static int run_query(run *r, const char *params)
{
    if (r->o->srv) return run_query_served(r, params);
    og_rows *rows = NULL;
    og_read_opts at = {r->st->branch, NULL};
    og_status st = og_db_query(&rows, r->db, r->st->body, strlen(r->st->body), NULL, params, &at);
    if (st && settings_refused(r, st)) return 0;
    if (st) return check_error(r, st);
    int rc = 0;
    if (r->st->expect == GQT_EX_ERROR) {
        step_fail(r, "expected an error containing '%s', the query returned %zu row(s)", r->st->expect_arg,
                  og_rows_count(rows));
        og_rows_free(rows);
        return -1;
    }
    if (r->st->expect != GQT_EX_UNORDERED && r->st->expect != GQT_EX_ORDERED) {
        step_fail(r, "a query step expects rows or an error");
        og_rows_free(rows);
        return -1;
    }
    size_t w = og_rows_width(rows), nr = og_rows_count(rows);
    column *cols = calloc(w ? w : 1, sizeof *cols);
    for (size_t c = 0; c < w; c++) {
        cols[c].name = og_rows_column_name(rows, c);
        int nullable;
        const char *t = og_rows_column_type(rows, c);
        norm_type(t, strlen(t), cols[c].type, sizeof cols[c].type, &nullable);
        for (size_t i = 0; i < nr && !cols[c].has_null; i++) cols[c].has_null = og_rows_is_null(rows, i, c);
    }
    char *text = NULL;
    size_t len = 0;
    strv act = {0};
    st = og_rows_render(&text, &len, rows, OG_FORMAT_JSONL, r->st->branch ? r->st->branch : "main");
    if (st) {
        step_fail(r, "rendering the rows failed: %s", og_error_message());
        rc = -1;
    } else {
        const char *p = text;
        const char *e = strchr(p, '\n'); /* the metadata line */
        p = e ? e + 1 : p + strlen(p);
        while (*p && !rc) {
            e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n) {
                og_buf c = OG_BUF_INIT, err = OG_BUF_INIT;
                if (gqt_json_canon(p, n, &c, &err)) {
                    og_buf_append_byte(&err, 0);
                    step_fail(r, "the rendered row is not JSON: %s", (char *)err.data);
                    rc = -1;
                } else {
                    strv_push(&act, (const char *)c.data, c.len);
                }
                og_buf_free(&c);
                og_buf_free(&err);
            }
            p += n + (e ? 1 : 0);
        }
    }
    if (!rc) rc = check_rows(r, cols, w, &act);
    strv_free(&act);
    og_free(text);
    free(cols);
    og_rows_free(rows);
    return rc;
}

/* The success-side expectations of a write (ok, affected) against its receipt. */
static int check_write_ok(run *r, const og_receipt *rec, const char *what)
{
    if (r->st->expect == GQT_EX_ERROR) {
        step_fail(r, "expected an error containing '%s', the %s succeeded (nodes=%llu edges=%llu)", r->st->expect_arg,
                  what, (unsigned long long)rec->affected_nodes, (unsigned long long)rec->affected_edges);
        return -1;
    }
    if (r->st->has_affected && (rec->affected_nodes != r->st->nodes || rec->affected_edges != r->st->edges)) {
        step_fail(r, "expected affected: nodes=%llu edges=%llu, got nodes=%llu edges=%llu",
                  (unsigned long long)r->st->nodes, (unsigned long long)r->st->edges,
                  (unsigned long long)rec->affected_nodes, (unsigned long long)rec->affected_edges);
        return -1;
    }
    if (r->st->has_outcome) {
        step_fail(r, "`expect outcome:` applies to `branch merge` only");
        return -1;
    }
    return 0;
}

static int check_write(run *r, og_status st, const og_receipt *rec, const char *what)
{
    if (st) return check_error(r, st);
    return check_write_ok(r, rec, what);
}

static int run_mutate_served(run *r, const char *params)
{
    og_receipt rec;
    memset(&rec, 0, sizeof rec);
    char *err = NULL;
    uint64_t nodes = 0, edges = 0;
    if (gqt_srv_mutate(r->o->srv, r->st->branch, r->st->body, params, &nodes, &edges, &err)) {
        if (settings_refused_served(r, err)) {
            free(err);
            if (!r->stopped && strstr(r->st->body, "query"))
                r->stopped = strdup("a mutation led by session settings was refused; later steps would see a different graph");
            return 0;
        }
        return check_error_text(r, err);
    }
    rec.affected_nodes = nodes;
    rec.affected_edges = edges;
    return check_write_ok(r, &rec, "mutation");
}

static int run_mutate(run *r, const char *params)
{
    if (r->o->srv) return run_mutate_served(r, params);
    og_receipt rec;
    memset(&rec, 0, sizeof rec);
    og_db_mutate_opts mo = {r->st->branch, NULL, NULL};
    og_status st = og_db_mutate_ex(&rec, r->db, r->st->body, strlen(r->st->body), NULL, params, &mo);
    if (st && settings_refused(r, st)) {
        /* a refused settings step changed nothing; one that also writes cannot be skipped over */
        if (!r->stopped && strstr(r->st->body, "query"))
            r->stopped = strdup("a mutation led by session settings was refused; later steps would see a different graph");
        return 0;
    }
    return check_write(r, st, &rec, "mutation");
}

/* `--- load [mode: M] [branch: B] [from: F]`: the NDJSON body as one load. */
static int run_load(run *r)
{
    if (r->o->srv) {
        char *err = NULL;
        if (gqt_srv_load(r->o->srv, r->dir, r->st->body, r->st->branch, r->st->load_from, r->st->load_mode, &err))
            return check_error_text(r, err);
        if (r->st->expect == GQT_EX_ERROR) {
            step_fail(r, "expected an error containing '%s', the load succeeded", r->st->expect_arg);
            return -1;
        }
        if (r->st->has_affected)
            step_skip(r, r->st->line, "expect affected: the served load answers the batch's rows per type, not the "
                                      "rows it changed");
        return 0;
    }
    char path[700];
    snprintf(path, sizeof path, "%s/load-%zu.jsonl", r->dir, r->step_no);
    FILE *f = fopen(path, "w");
    if (!f) {
        step_fail(r, "cannot write %s", path);
        return -1;
    }
    fputs(r->st->body, f);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_APPEND, .branch = r->st->branch, .from = r->st->load_from};
    if (r->st->load_mode && og_load_mode_parse(r->st->load_mode, &lo.mode)) {
        step_fail(r, "unknown load mode '%s'", r->st->load_mode);
        return -1;
    }
    og_receipt rec;
    memset(&rec, 0, sizeof rec);
    og_status st = og_db_load(&rec, r->db, path, &lo);
    remove(path);
    return check_write(r, st, &rec, "load");
}

/* ---- `--- concurrent` blocks ---------------------------------------------------------------- */

typedef struct session_run {
    run *r;
    const gqt_session *ss;
    pthread_barrier_t *start;
    og_status st;
    char *err;          /* "<status>: <message>" when it failed */
    int was_mutation;
} session_run;

/* One session on its own thread, on the case's one handle (the handle is thread-safe): a read
 * query, or — when the library says the text is a mutation — the same text as a mutation. */
static void *session_main(void *arg)
{
    session_run *sr = arg;
    pthread_barrier_wait(sr->start);
    const char *src = sr->ss->body;
    if (sr->r->o->srv) { /* each request on its own connection: the server runs them at once */
        char **c = NULL, **rw = NULL, *err = NULL;
        size_t nc = 0, nr = 0;
        uint64_t nodes, edges;
        int rc = gqt_srv_query(sr->r->o->srv, sr->ss->branch, src, NULL, &c, &nc, &rw, &nr, &err);
        gqt_srv_strings_free(c, nc);
        gqt_srv_strings_free(rw, nr);
        if (rc && strstr(err, "mutation")) {
            free(err);
            err = NULL;
            sr->was_mutation = 1;
            rc = gqt_srv_mutate(sr->r->o->srv, sr->ss->branch, src, NULL, &nodes, &edges, &err);
        }
        sr->st = rc ? OG_ERR_INVALID : OG_OK;
        sr->err = err;
        return NULL;
    }
    og_rows *rows = NULL;
    og_read_opts at = {sr->ss->branch, NULL};
    og_status st = og_db_query(&rows, sr->r->db, src, strlen(src), NULL, NULL, &at);
    if (st == OG_ERR_INVALID && strstr(og_error_message(), "mutation")) {
        og_receipt rec;
        memset(&rec, 0, sizeof rec);
        og_db_mutate_opts mo = {sr->ss->branch, NULL, NULL};
        sr->was_mutation = 1;
        st = og_db_mutate_ex(&rec, sr->r->db, src, strlen(src), NULL, NULL, &mo);
    }
    og_rows_free(rows);
    sr->st = st;
    if (st) sr->err = error_text(st);
    return NULL;
}

static int run_concurrent(run *r)
{
    const gqt_step *st = r->st;
    size_t n = st->nsessions;
    session_run sr[4];
    pthread_t th[4];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    memset(sr, 0, sizeof sr);
    size_t started = 0;
    for (size_t i = 0; i < n; i++) {
        sr[i].r = r;
        sr[i].ss = &st->sessions[i];
        sr[i].start = &start;
    }
    for (; started < n; started++)
        if (pthread_create(&th[started], NULL, session_main, &sr[started])) break;
    if (started < n) {
        /* cannot happen in practice; the barrier would never open, so run the rest here */
        step_fail(r, "cannot start %zu threads", n);
        abort();
    }
    for (size_t i = 0; i < n; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    int rc = 0;
    if (st->order_unenforceable) {
        og_buf w = OG_BUF_INIT;
        og_buf_printf(&w, "the sessions ran concurrently, but `order: %s` names object-store requests, which "
                          "OmniGraph-C cannot hold, so the per-session outcomes (which depend on that "
                          "interleaving) were not checked", st->order);
        og_buf_append_byte(&w, 0);
        step_skip(r, st->expect_line, (char *)w.data);
        og_buf_free(&w);
    } else {
        for (size_t i = 0; i < n; i++) {
            const gqt_session *ss = sr[i].ss;
            if (ss->expect == GQT_EX_OK && sr[i].st) {
                step_fail(r, "session %s (line %d) failed: %s", ss->label, ss->line, sr[i].err);
                rc = -1;
            } else if (ss->expect == GQT_EX_ERROR && !sr[i].st) {
                step_fail(r, "session %s (line %d): expected an error containing '%s', it succeeded", ss->label,
                          ss->line, ss->expect_arg);
                rc = -1;
            } else if (ss->expect == GQT_EX_ERROR && !strstr(sr[i].err, ss->expect_arg)) {
                step_fail(r, "session %s (line %d): expected an error containing '%s', got: %s", ss->label, ss->line,
                          ss->expect_arg, sr[i].err);
                rc = -1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) free(sr[i].err);
    return rc;
}

static int run_step(run *r)
{
    const gqt_step *st = r->st;
    if (st->kind == GQT_RESTART && r->o->srv) {
        step_skip(r, st->line, "restart: a served graph stays open in the server; the runner cannot restart it");
        return 0;
    }
    if (st->kind == GQT_RESTART) {
        og_db_close(r->db);
        r->db = NULL;
        og_status s = og_db_open(&r->db, r->uri, NULL);
        if (s) {
            char *m = error_text(s);
            step_fail(r, "reopening the graph failed: %s", m);
            free(m);
            return -1;
        }
        return 0;
    }
    if (st->skip_step) {
        step_skip(r, st->line, st->skip_step);
        /* a read changes nothing, so the case goes on; a write that did not run would leave later
         * steps checking a graph the case never built */
        if (st->kind != GQT_QUERY) r->stopped = strdup(st->skip_step);
        return 0;
    }
    for (size_t k = 0; k < st->nnotes; k++) step_skip(r, st->notes[k].line, st->notes[k].why);
    if (st->kind == GQT_CONCURRENT) return run_concurrent(r);
    if (st->kind == GQT_LOAD) return run_load(r);
    char *t = trimmed(st->body);
    int stmt = !strncmp(t, "branch ", 7);
    free(t);
    if (stmt) return run_statement(r, st->body);
    char *params = substitute(st->params, r->loop_var, r->loop_val);
    char *p = params;
    if (p) {
        char *tp = trimmed(p);
        free(params);
        params = p = tp;
        if (!*p) p = NULL;
    }
    int rc = st->kind == GQT_QUERY ? run_query(r, p) : run_mutate(r, p);
    free(params);
    return rc;
}

/* ---- one case ------------------------------------------------------------------------------ */

static int setup(run *r)
{
    gqt_case *c = r->c;
    const char *tmp = getenv("TMPDIR");
    snprintf(r->dir, sizeof r->dir, "%s/omnigraph-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(r->dir)) {
        og_buf_printf(&r->report, "  setup: cannot create a temporary directory under %s\n", tmp ? tmp : "/tmp");
        r->dir[0] = 0;
        return -1;
    }
    snprintf(r->uri, sizeof r->uri, "%s/graph", r->dir);
    if (r->o->srv && r->o->fresh) { /* a graph of its own, named after this process and case */
        static unsigned seq;
        char id[80], *err = NULL;
        snprintf(id, sizeof id, "gqt-%ld-%u", (long)getpid(), ++seq);
        if (!gqt_srv_fresh(r->o->srv, id, r->dir, c->schema, c->seed, &err)) {
            snprintf(r->graph_id, sizeof r->graph_id, "%s", id);
            r->o->srv->graph = r->graph_id;
            return 0;
        }
        og_buf_printf(&r->report, "  setup: creating served graph %s: %s\n", id, err);
        free(err);
        return -1;
    }
    if (r->o->srv) {
        char *err = NULL;
        if (!gqt_srv_reset(r->o->srv, r->dir, c->schema, c->seed, &err)) return 0;
        og_buf_printf(&r->report, "  setup: resetting served graph %s: %s\n", r->o->srv->graph, err);
        free(err);
        return -1;
    }
    og_status st = og_db_init(&r->db, r->uri, "schema", c->schema, strlen(c->schema), NULL);
    if (st) {
        og_buf_printf(&r->report, "  setup: the schema was refused: %s: %s\n", og_status_name(st), og_error_message());
        return -1;
    }
    int blank_seed = 1;
    for (const char *p = c->seed; *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\t') blank_seed = 0;
    if (blank_seed) return 0;
    char seed_path[700];
    snprintf(seed_path, sizeof seed_path, "%s/seed.jsonl", r->dir);
    FILE *f = fopen(seed_path, "w");
    if (!f) {
        og_buf_printf(&r->report, "  setup: cannot write %s\n", seed_path);
        return -1;
    }
    fputs(c->seed, f);
    fclose(f);
    og_receipt rec;
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    st = og_db_load(&rec, r->db, seed_path, &lo);
    if (st) {
        og_buf_printf(&r->report, "  setup: the seed was refused: %s: %s\n", og_status_name(st), og_error_message());
        return -1;
    }
    return 0;
}

static void apply_bless(run *r)
{
    gqt_case *c = r->c;
    if (!r->nbless) return;
    og_buf b = OG_BUF_INIT;
    size_t at = 0;
    /* spans are disjoint; write them in file order */
    int order[2] = {0, 1};
    if (r->nbless == 2 && r->bless_span[1].off < r->bless_span[0].off) order[0] = 1, order[1] = 0;
    for (int k = 0; k < r->nbless; k++) {
        gqt_span s = r->bless_span[order[k]];
        og_buf_append(&b, c->text + at, s.off - at);
        og_buf_append_str(&b, r->bless_text[order[k]]);
        at = s.off + s.len;
    }
    og_buf_append(&b, c->text + at, c->len - at);
    /* a section that ended the file keeps no extra blank line */
    while (b.len >= 2 && b.data[b.len - 1] == '\n' && b.data[b.len - 2] == '\n') b.len--;
    FILE *f = fopen(c->path, "w");
    if (f) {
        fwrite(b.data, 1, b.len, f);
        fclose(f);
        og_buf_printf(&r->report, "  blessed: rewrote the failing expectation in %s (rerun to confirm)\n", c->path);
    } else {
        og_buf_printf(&r->report, "  bless: cannot write %s\n", c->path);
    }
    og_buf_free(&b);
}

/* Runs one parsed case; returns 0 pass, 1 fail.  The report receives the failure detail. */
static int run_case(gqt_case *c, const opts *o, og_buf *report, og_buf *skips, size_t *nskips, char **stopped)
{
    run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.o = o;
    int rc = setup(&r);
    double t0 = now_s();
    for (size_t i = 0; i < c->nsteps && !rc && !r.stopped;) {
        const gqt_step *st = &c->steps[i];
        if (st->loop >= 0 && c->loops[st->loop].first == i) {
            gqt_loop *L = &c->loops[st->loop];
            for (size_t v = 0; v < L->nvalues && !rc; v++) {
                r.loop_var = L->var;
                r.loop_val = L->values[v];
                for (size_t k = L->first; k < L->end && !rc && !r.stopped; k++) {
                    r.st = &c->steps[k];
                    r.step_no = k + 1;
                    rc = run_step(&r);
                }
            }
            if (!rc) r.loop_var = r.loop_val = NULL;
            i = L->end;
        } else {
            r.st = st;
            r.step_no = i + 1;
            rc = run_step(&r);
            i++;
        }
        if (!rc && (now_s() - t0) * 1000.0 > (double)c->timeout_ms) {
            og_buf_printf(&r.report, "  timeout: the case ran past its timeout_ms of %ld\n", c->timeout_ms);
            rc = -1;
        }
    }
    if (rc && o->bless) {
        if (r.loop_var && r.nbless == 0)
            og_buf_append_str(&r.report, "  bless: refused inside a loop (one expectation serves every iteration)\n");
        apply_bless(&r);
    }
    for (int k = 0; k < r.nbless; k++) free(r.bless_text[k]);
    if (r.db) og_db_close(r.db);
    if (r.graph_id[0] && rc && o->keep) {
        og_buf_printf(&r.report, "  kept the served graph %s\n", r.graph_id);
    } else if (r.graph_id[0]) {
        char *err = NULL;
        if (gqt_srv_drop(o->srv, r.graph_id, &err)) og_buf_printf(&r.report, "  teardown: %s\n", err);
        free(err);
    }
    if (r.graph_id[0]) o->srv->graph = NULL;
    if (r.dir[0]) {
        if (rc && o->keep && !o->srv) og_buf_printf(&r.report, "  kept the graph at %s\n", r.uri);
        else rm_rf(r.dir);
    }
    og_buf_append(report, r.report.data, r.report.len);
    og_buf_free(&r.report);
    og_buf_append(skips, r.skips.data, r.skips.len);
    og_buf_free(&r.skips);
    *nskips = r.nskips;
    if (r.stopped && !rc) {
        og_buf w = OG_BUF_INIT;
        og_buf_printf(&w, "stopped before step %zu of %zu, which cannot run here: %s", r.step_no, c->nsteps, r.stopped);
        og_buf_append_byte(&w, 0);
        *stopped = (char *)w.data;
    }
    free(r.stopped);
    return rc ? 1 : 0;
}

static void test_file(const char *path, const opts *o, stats *s)
{
    for (size_t i = 0; i < o->nfilters; i++)
        if (!strstr(path, o->filters[i])) return;
    gqt_case c;
    memset(&c, 0, sizeof c);
    og_buf text = OG_BUF_INIT, err = OG_BUF_INIT, report = OG_BUF_INIT;
    double t0 = now_s();
    if (og_buf_read_file(&text, path) != OG_OK) {
        printf("FAIL %s: cannot read: %s\n", path, og_error_message());
        s->failed++;
        return;
    }
    og_buf_append_byte(&text, 0);
    c.path = strdup(path);
    c.len = text.len - 1;
    c.text = (char *)text.data;
    if (gqt_parse(&c, &err)) {
        og_buf_append_byte(&err, 0);
        printf("FAIL %s: invalid case: %s\n", path, (char *)err.data);
        s->failed++;
    } else if (c.skip) {
        printf("SKIP %s: %s\n", path, c.skip);
        s->skipped++;
    } else {
        size_t runnable = 0;
        for (size_t i = 0; i < c.nenvs; i++) {
            /* a served run is the server target's environment (its storage is the server's) */
            if (o->srv && !strcmp(c.envs[i].target, "omnigraph-server") && !strcmp(c.envs[i].storage, "local-filesystem"))
                c.envs[i].runnable = 1;
            runnable += c.envs[i].runnable;
        }
        if (!runnable) {
            printf("SKIP %s: %s / %s: %s\n", path, c.envs[0].target, c.envs[0].storage, c.envs[0].why_not);
            s->skipped++;
        } else {
            og_buf skips = OG_BUF_INIT;
            size_t nskips = 0;
            char *stopped = NULL;
            int failed = run_case(&c, o, &report, &skips, &nskips, &stopped);
            double dt = now_s() - t0;
            if (stopped) printf("SKIP %s: %s\n", path, stopped);
            else if (failed || !o->quiet) printf("%s %s %.2fs\n", failed ? "FAIL" : "ok  ", path, dt);
            for (size_t i = 0; i < c.nenvs; i++)
                if (!c.envs[i].runnable) {
                    if (!o->quiet) printf("     skipped environment %s / %s: %s\n", c.envs[i].target, c.envs[i].storage,
                                          c.envs[i].why_not);
                    s->env_skipped++;
                }
            if (skips.len && (!o->quiet || failed)) fwrite(skips.data, 1, skips.len, stdout);
            s->expect_skipped += nskips;
            og_buf_free(&skips);
            if (report.len) fwrite(report.data, 1, report.len, stdout);
            if (stopped) {
                s->skipped++;
                free(stopped);
            } else if (failed) {
                s->failed++;
            } else {
                s->passed++;
            }
        }
    }
    fflush(stdout);
    og_buf_free(&err);
    og_buf_free(&report);
    gqt_case_free(&c);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static void test_path(const char *path, const opts *o, stats *s, int top)
{
    struct stat sb;
    if (stat(path, &sb)) {
        printf("FAIL %s: no such file or directory\n", path);
        s->failed++;
        return;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (top || ends_with(path, ".gqt")) test_file(path, o, s);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        printf("FAIL %s: cannot list the directory\n", path);
        s->failed++;
        return;
    }
    strv names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') strv_push(&names, e->d_name, strlen(e->d_name));
    closedir(d);
    strv_sort(&names);
    for (size_t i = 0; i < names.n; i++) {
        size_t n = strlen(path) + strlen(names.v[i]) + 2;
        char *p = malloc(n);
        if (!p) abort();
        snprintf(p, n, "%s%s%s", path, ends_with(path, "/") ? "" : "/", names.v[i]);
        test_path(p, o, s, 0);
        free(p);
    }
    strv_free(&names);
}

int og_cmd_test(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(test_help, stdout);
        return OG_EXIT_OK;
    }
    opts o = {0};
    const char *server = NULL, *graph = NULL;
    int yes = 0;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    o.filters = calloc((size_t)argc, sizeof *o.filters);
    size_t np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bless")) o.bless = 1;
        else if (!strcmp(argv[i], "--keep")) o.keep = 1;
        else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) o.quiet = 1;
        else if (!strcmp(argv[i], "--yes")) yes = 1;
        else if ((!strcmp(argv[i], "--server") || !strcmp(argv[i], "--graph")) && i + 1 < argc) {
            if (argv[i][2] == 's') server = argv[++i];
            else graph = argv[++i];
        }
        else if (!strcmp(argv[i], "-k")) {
            if (i + 1 >= argc) {
                free(paths);
                free(o.filters);
                return og_cli_usage("test", "-k needs a TEXT");
            }
            o.filters[o.nfilters++] = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(paths);
            free(o.filters);
            return og_cli_usage("test", "unknown option '%s'", argv[i]);
        } else paths[np++] = argv[i];
    }
    if (!np) {
        free(paths);
        free(o.filters);
        return og_cli_usage("test", "give at least one .gqt file or directory");
    }
    og_remote srv;
    memset(&srv, 0, sizeof srv);
    int urc = 0;
    if (!server && graph) urc = og_cli_usage("test", "--graph selects a served graph: give --server URL|NAME too");
    else if (server && graph && !yes)
        urc = og_cli_usage("test", "refusing to run on graph '%s' of %s without --yes: every case deletes its other "
                                   "branches and replaces its schema and data",
                           graph, server);
    else if (server && o.bless)
        urc = og_cli_usage("test", "--bless is for embedded runs (a served answer has no column types)");
    else if (server && (urc = og_cli_remote_resolve(&srv, "test", server)) == 0) {
        srv.graph = graph;
        srv.quiet = 1;
        o.srv = &srv;
        o.fresh = !graph;
    }
    if (urc) {
        free(paths);
        free(o.filters);
        return urc;
    }
    stats s = {0};
    double t0 = now_s();
    for (size_t i = 0; i < np; i++) test_path(paths[i], &o, &s, 1);
    size_t total = s.passed + s.failed + s.skipped;
    printf("\n%zu case(s): %zu passed, %zu failed, %zu skipped", total, s.passed, s.failed, s.skipped);
    if (s.env_skipped) printf(" (%zu environment(s) skipped)", s.env_skipped);
    if (s.expect_skipped) printf(" (%zu step expectation(s) skipped)", s.expect_skipped);
    printf(" in %.1fs\n", now_s() - t0);
    free(paths);
    free(o.filters);
    if (!total) {
        fprintf(stderr, "omnigraph test: no case found\n");
        return OG_EXIT_FAIL;
    }
    return s.failed ? OG_EXIT_FAIL : OG_EXIT_OK;
}
