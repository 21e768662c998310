/*
 * gqt_parse.c — reads a `.gqt` logic-test file into a gqt_case (gqt.h).
 *
 * Fail-closed, as the reference's format is: a section starts at a line beginning "--- " and
 * runs to the next; unknown sections, sections out of place, a step without an expectation
 * and a rows expectation without its shape are refused with the line number, so a typo can
 * never turn into a silently passing case.  Sections this build cannot honour (fault seams,
 * deterministic-simulation environments) are parsed and recorded as reasons to skip.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli/gqt.h"

static char *xstrndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) abort();
    return q;
}

static int perr(og_buf *err, int line, const char *fmt, const char *arg)
{
    og_buf_printf(err, "line %d: ", line);
    og_buf_printf(err, fmt, arg ? arg : "");
    return -1;
}

static char *trim_dup(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return xstrndup(s, n);
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return 0;
    return 1;
}

/* ---- the runner section (YAML) ------------------------------------------------------------- */

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *env_reason(const char *target, const char *storage)
{
    int known_t = !strcmp(target, "omnigraph-engine") || !strcmp(target, "omnigraph-engine-dst") ||
                  !strcmp(target, "omnigraph-server") || !strcmp(target, "omnigraph-server-dst");
    int known_s = !strcmp(storage, "local-filesystem") || !strcmp(storage, "in-memory-object-store") ||
                  !strcmp(storage, "s3-compatible") || !strcmp(storage, "azure-blob-storage");
    if (!known_t || !known_s) return "unknown";
    if (!strcmp(target, "omnigraph-engine-dst") || !strcmp(target, "omnigraph-server-dst"))
        return "deterministic simulation (seeded DST) is not available in OmniGraph-C";
    if (!strcmp(target, "omnigraph-server"))
        return "a server target runs with `omnigraph test --server URL --graph ID --yes`";
    if (strcmp(storage, "local-filesystem"))
        return "`omnigraph test` runs the engine on local-filesystem storage only";
    return NULL;
}

static int parse_runner(gqt_case *c, const char *body, int line, og_buf *err)
{
    yaml_parser_t p;
    yaml_document_t d;
    if (!yaml_parser_initialize(&p)) return perr(err, line, "runner: cannot start the YAML parser%s", NULL);
    yaml_parser_set_input_string(&p, (const unsigned char *)body, strlen(body));
    int rc = 0;
    if (!yaml_parser_load(&p, &d)) {
        og_buf_printf(err, "line %d: runner: YAML: %s (section line %zu)", line,
                      p.problem ? p.problem : "malformed", p.problem_mark.line + 1);
        yaml_parser_delete(&p);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&d);
    int have_timeout = 0, have_envs = 0;
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = perr(err, line, "runner: a mapping with timeout_ms and environments is required%s", NULL);
        goto out;
    }
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top && !rc; pr++) {
        const char *k = scalar(&d, yaml_document_get_node(&d, pr->key));
        yaml_node_t *v = yaml_document_get_node(&d, pr->value);
        if (!k) {
            rc = perr(err, line, "runner: keys must be plain words%s", NULL);
        } else if (!strcmp(k, "timeout_ms")) {
            const char *s = scalar(&d, v);
            char *end = NULL;
            long t = s ? strtol(s, &end, 10) : 0;
            if (have_timeout++) rc = perr(err, line, "runner: duplicate key '%s'", k);
            else if (!s || !*s || *end || t < 1 || t > 600000)
                rc = perr(err, line, "runner: timeout_ms must be an integer in 1..600000%s", NULL);
            else c->timeout_ms = t;
        } else if (!strcmp(k, "environments")) {
            if (have_envs++) {
                rc = perr(err, line, "runner: duplicate key '%s'", k);
                break;
            }
            if (!v || v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start) {
                rc = perr(err, line, "runner: environments must be a list of 1..16 environments%s", NULL);
                break;
            }
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top && !rc; it++) {
                yaml_node_t *e = yaml_document_get_node(&d, *it);
                if (!e || e->type != YAML_MAPPING_NODE) {
                    rc = perr(err, line, "runner: an environment is a mapping (target, storage, ...)%s", NULL);
                    break;
                }
                const char *target = NULL, *storage = NULL, *profile = NULL;
                int seeds = 0;
                for (yaml_node_pair_t *q = e->data.mapping.pairs.start; q < e->data.mapping.pairs.top && !rc; q++) {
                    const char *ek = scalar(&d, yaml_document_get_node(&d, q->key));
                    yaml_node_t *ev = yaml_document_get_node(&d, q->value);
                    const char **slot = NULL;
                    if (!ek) rc = perr(err, line, "runner: environment keys must be plain words%s", NULL);
                    else if (!strcmp(ek, "target")) slot = &target;
                    else if (!strcmp(ek, "storage")) slot = &storage;
                    else if (!strcmp(ek, "profile")) slot = &profile;
                    else if (!strcmp(ek, "seeds")) {
                        if (seeds++) rc = perr(err, line, "runner: duplicate key '%s'", ek);
                        else if (!ev || ev->type != YAML_SEQUENCE_NODE)
                            rc = perr(err, line, "runner: seeds must be a list of unsigned integers%s", NULL);
                    } else rc = perr(err, line, "runner: unknown environment key '%s'", ek);
                    if (slot) {
                        if (*slot) rc = perr(err, line, "runner: duplicate key '%s'", ek);
                        else if (!(*slot = scalar(&d, ev)) || !**slot)
                            rc = perr(err, line, "runner: '%s' must be a word", ek);
                    }
                }
                if (rc) break;
                if (!target || !storage) {
                    rc = perr(err, line, "runner: an environment needs target and storage%s", NULL);
                    break;
                }
                const char *why = env_reason(target, storage);
                if (why && !strcmp(why, "unknown")) {
                    og_buf_printf(err, "line %d: runner: unknown environment %s / %s", line, target, storage);
                    rc = -1;
                    break;
                }
                int dst = strstr(target, "-dst") != NULL;
                if (dst && !seeds) rc = perr(err, line, "runner: target %s requires seeds", target);
                else if (!dst && seeds) rc = perr(err, line, "runner: target %s takes no seeds", target);
                if (rc) break;
                for (size_t x = 0; x < c->nenvs; x++)
                    if (!strcmp(c->envs[x].target, target) && !strcmp(c->envs[x].storage, storage) &&
                        !!c->envs[x].profile == !!profile && (!profile || !strcmp(profile, c->envs[x].profile)))
                        rc = perr(err, line, "runner: duplicate environment %s", target);
                if (rc) break;
                if (c->nenvs == 16) {
                    rc = perr(err, line, "runner: at most 16 environments%s", NULL);
                    break;
                }
                c->envs = xrealloc(c->envs, (c->nenvs + 1) * sizeof *c->envs);
                gqt_env *g = &c->envs[c->nenvs++];
                g->target = xstrdup(target);
                g->storage = xstrdup(storage);
                g->profile = profile ? xstrdup(profile) : NULL;
                g->runnable = why == NULL;
                g->why_not = why ? xstrdup(why) : NULL;
            }
        } else {
            rc = perr(err, line, "runner: unknown key '%s' (timeout_ms, environments)", k);
        }
    }
    if (!rc && (!have_timeout || !have_envs))
        rc = perr(err, line, "runner: timeout_ms and environments are both required%s", NULL);
out:
    yaml_document_delete(&d);
    yaml_parser_delete(&p);
    return rc;
}

/* ---- sections ------------------------------------------------------------------------------ */

typedef struct section {
    char *name;  /* first word after "--- " */
    char *rest;  /* the remainder, trimmed */
    int line;
    size_t body_off, body_len; /* byte range of the body in the file */
} section;

static int parse_u64(const char *s, uint64_t *out)
{
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    *out = v;
    return (int)(end - s);
}

/* "branch: B" (or nothing) after `--- query` / `--- mutate`. */
static int step_branch(gqt_step *st, const char *rest, int line, og_buf *err)
{
    if (!*rest) return 0;
    if (strncmp(rest, "branch:", 7)) return perr(err, line, "expected `branch: <name>` after the section name, got '%s'", rest);
    char *b = trim_dup(rest + 7, strlen(rest + 7));
    if (!*b) {
        free(b);
        return perr(err, line, "`branch:` needs a branch name%s", NULL);
    }
    st->branch = b;
    return 0;
}

static void add_note(gqt_step *st, int line, const char *why)
{
    st->notes = xrealloc(st->notes, (st->nnotes + 1) * sizeof *st->notes);
    st->notes[st->nnotes].line = line;
    st->notes[st->nnotes].why = xstrdup(why);
    st->nnotes++;
}

/* The bare `--- expect` after a `--- concurrent` block: one `label: ok` or `label: error: TEXT`
 * line per session. */
static int parse_session_expect(gqt_step *st, const char *body, int line, og_buf *err)
{
    int ln = line;
    for (const char *p = body; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        ln++;
        char *l = trim_dup(p, n);
        p += n + (e ? 1 : 0);
        if (!*l) {
            free(l);
            continue;
        }
        char *colon = strchr(l, ':');
        gqt_session *ss = NULL;
        if (colon) {
            *colon = 0;
            for (size_t i = 0; i < st->nsessions; i++)
                if (!strcmp(st->sessions[i].label, l)) ss = &st->sessions[i];
        }
        if (!ss) {
            int rc = perr(err, ln, "expected `<label>: ok` or `<label>: error: <fragment>` naming a session of the block, got '%s'", l);
            free(l);
            return rc;
        }
        if (ss->expect) {
            free(l);
            return perr(err, ln, "session `%s` has two expectations", ss->label);
        }
        char *v = trim_dup(colon + 1, strlen(colon + 1));
        if (!strcmp(v, "ok")) {
            ss->expect = GQT_EX_OK;
        } else if (!strncmp(v, "error:", 6)) {
            char *sub = trim_dup(v + 6, strlen(v + 6));
            if (!*sub) {
                free(sub);
                free(v);
                free(l);
                return perr(err, ln, "`error:` needs a message fragment%s", NULL);
            }
            ss->expect = GQT_EX_ERROR;
            ss->expect_arg = sub;
        } else {
            int rc = perr(err, ln, "a session expects `ok` or `error: <fragment>`, got '%s'", v);
            free(v);
            free(l);
            return rc;
        }
        free(v);
        free(l);
    }
    for (size_t i = 0; i < st->nsessions; i++)
        if (!st->sessions[i].expect)
            return perr(err, line, "session `%s` has no expectation in the block's `--- expect`", st->sessions[i].label);
    st->expect_line = line;
    st->has_ok = 1; /* the block's expectation is present */
    return 0;
}

static int parse_expect(gqt_case *c, gqt_step *st, section *s, og_buf *err)
{
    const char *r = s->rest;
    char *body = xstrndup(c->text + s->body_off, s->body_len);
    int body_blank = blank(body);
    int rc = 0;
    int is_query = st->kind == GQT_QUERY;
    int writes = st->kind == GQT_MUTATE || st->kind == GQT_LOAD;
    if (st->kind == GQT_CONCURRENT) {
        if (*r) rc = perr(err, s->line, "a `--- concurrent` block takes a bare `--- expect` with one line per session, got `--- expect %s`", r);
        else if (st->has_ok) rc = perr(err, s->line, "a second `--- expect` for one block%s", NULL);
        else rc = parse_session_expect(st, body, s->line, err);
        free(body);
        return rc;
    }
    if (!*r) {
        free(body);
        return perr(err, s->line, "a bare `--- expect` is refused; give a mode word%s", NULL);
    }
    if (!strcmp(r, "shape")) {
        if (!is_query) rc = perr(err, s->line, "`--- expect shape` applies to `--- query` steps%s", NULL);
        else if (st->has_shape) rc = perr(err, s->line, "a second `--- expect shape` for one step%s", NULL);
        else if (st->show) rc = perr(err, s->line, "a `show` step's shape is derived; it takes no `--- expect shape`%s", NULL);
        else {
            st->has_shape = 1;
            st->shape = body;
            st->shape_span.off = s->body_off;
            st->shape_span.len = s->body_len;
            return 0;
        }
        free(body);
        return rc;
    }
    if (!strcmp(r, "plan")) {
        if (!is_query) rc = perr(err, s->line, "`--- expect plan` applies to `--- query` steps%s", NULL);
        else
            add_note(st, s->line,
                     "`expect plan` asserts facts of the reference's v2 planner (scans, joins, passes), a "
                     "vocabulary with no counterpart in OmniGraph-C's plans");
        free(body);
        return rc;
    }
    if (!strncmp(r, "same as", 7)) {
        add_note(st, s->line, "`expect same as v1` compares the reference's two engines; OmniGraph-C has one");
        free(body);
        return 0;
    }
    if (!strcmp(r, "unordered") || !strcmp(r, "ordered")) {
        if (!is_query) rc = perr(err, s->line, "rows are expected of a `--- query` step only%s", NULL);
        else if (st->expect == GQT_EX_ERROR) rc = perr(err, s->line, "a step expects rows or an error, not both%s", NULL);
        else if (st->expect != GQT_EX_NONE) rc = perr(err, s->line, "a second rows expectation for one step%s", NULL);
        if (rc) {
            free(body);
            return rc;
        }
        st->expect_line = s->line;
        st->expect = !strcmp(r, "ordered") ? GQT_EX_ORDERED : GQT_EX_UNORDERED;
        st->rows = body;
        st->rows_span.off = s->body_off;
        st->rows_span.len = s->body_len;
        return 0;
    }
    if (!body_blank) rc = perr(err, s->line, "`--- expect %s` takes no body", r);
    free(body);
    if (rc) return rc;
    int success = st->has_ok || st->has_affected || st->has_outcome || st->expect == GQT_EX_UNORDERED ||
                  st->expect == GQT_EX_ORDERED;
    if (!strcmp(r, "ok")) {
        if (!writes) return perr(err, s->line, "`expect ok` applies to `--- mutate` and `--- load` steps%s", NULL);
        if (st->has_ok) return perr(err, s->line, "a second `expect ok` for one step%s", NULL);
        if (st->expect == GQT_EX_ERROR) return perr(err, s->line, "a step expects success or an error, not both%s", NULL);
        st->has_ok = 1;
    } else if (!strncmp(r, "error:", 6)) {
        char *sub = trim_dup(r + 6, strlen(r + 6));
        if (!*sub) {
            free(sub);
            return perr(err, s->line, "`expect error:` needs a message fragment (a bare any-error expectation hides the wrong error)%s", NULL);
        }
        if (st->expect == GQT_EX_ERROR) rc = perr(err, s->line, "a second `expect error:` for one step%s", NULL);
        else if (success) rc = perr(err, s->line, "a step expects success or an error, not both%s", NULL);
        if (rc) {
            free(sub);
            return rc;
        }
        st->expect_line = s->line;
        st->expect = GQT_EX_ERROR;
        st->expect_arg = sub;
    } else if (!strncmp(r, "affected:", 9)) {
        const char *p = r + 9;
        while (*p == ' ') p++;
        int k;
        if (strncmp(p, "nodes=", 6) || (k = parse_u64(p + 6, &st->nodes)) < 0) goto bad_affected;
        p += 6 + k;
        while (*p == ' ') p++;
        if (strncmp(p, "edges=", 6) || (k = parse_u64(p + 6, &st->edges)) < 0 || p[6 + k]) goto bad_affected;
        if (st->kind != GQT_MUTATE)
            return perr(err, s->line, "`expect affected:` applies to `--- mutate` steps (a load reports records, not node and edge counts)%s", NULL);
        if (st->has_affected) return perr(err, s->line, "a second `expect affected:` for one step%s", NULL);
        if (st->expect == GQT_EX_ERROR) return perr(err, s->line, "a step expects success or an error, not both%s", NULL);
        st->has_affected = 1;
    } else if (!strncmp(r, "outcome:", 8)) {
        char *w = trim_dup(r + 8, strlen(r + 8));
        if (strcmp(w, "already_up_to_date") && strcmp(w, "fast_forward") && strcmp(w, "merged")) {
            rc = perr(err, s->line, "outcome must be already_up_to_date, fast_forward or merged, got '%s'", w);
            free(w);
            return rc;
        }
        if (st->kind != GQT_MUTATE) rc = perr(err, s->line, "`expect outcome:` applies to a `branch merge` step%s", NULL);
        else if (st->has_outcome) rc = perr(err, s->line, "a second `expect outcome:` for one step%s", NULL);
        else if (st->expect == GQT_EX_ERROR) rc = perr(err, s->line, "a step expects success or an error, not both%s", NULL);
        if (rc) {
            free(w);
            return rc;
        }
        st->has_outcome = 1;
        st->outcome = w;
    } else {
        return perr(err, s->line,
                    "unknown expectation '%s' (unordered, ordered, shape, plan, ok, error: ..., affected: nodes=N "
                    "edges=M, outcome: ...)", r);
    }
    if (!st->expect_line) st->expect_line = s->line;
    return 0;
bad_affected:
    return perr(err, s->line, "expected `affected: nodes=<N> edges=<M>`, got '%s'", r);
}

/* Splits the file into sections; header lines before the first must be comments. */
static int split(gqt_case *c, section **out, size_t *nout, og_buf *err)
{
    section *v = NULL;
    size_t n = 0;
    int line = 1;
    size_t i = 0;
    while (i < c->len) {
        size_t e = i;
        while (e < c->len && c->text[e] != '\n') e++;
        const char *l = c->text + i;
        size_t ll = e - i;
        if (ll >= 4 && !memcmp(l, "--- ", 4)) {
            v = xrealloc(v, (n + 1) * sizeof *v);
            section *s = &v[n++];
            const char *p = l + 4;
            size_t k = 0;
            while (k < ll - 4 && !isspace((unsigned char)p[k])) k++;
            s->name = xstrndup(p, k);
            s->rest = trim_dup(p + k, ll - 4 - k);
            s->line = line;
            s->body_off = e < c->len ? e + 1 : e;
            s->body_len = 0;
        } else if (n == 0) {
            char *t = trim_dup(l, ll);
            int ok = !*t || t[0] == '#';
            free(t);
            if (!ok) {
                free(v);
                return perr(err, line, "before the first section only `#` header lines are allowed%s", NULL);
            }
        } else if (!strncmp(l, "---", 3) && ll == 3) {
            v[n - 1].body_len = 0; /* keep going: a bare `---` is refused below */
            *out = v;
            *nout = n;
            return perr(err, line, "a bare `---` line (sections are `--- <name>`)%s", NULL);
        }
        if (n) v[n - 1].body_len = (e < c->len ? e + 1 : e) - v[n - 1].body_off;
        i = e < c->len ? e + 1 : e;
        line++;
    }
    *out = v;
    *nout = n;
    return 0;
}

static int step_done(gqt_step *st, og_buf *err)
{
    if (!st || st->kind == GQT_RESTART) return 0;
    if (st->kind == GQT_CONCURRENT) {
        if (!st->has_ok)
            return perr(err, st->line, "this `--- concurrent` block has no `--- expect` naming each session's outcome%s", NULL);
        return 0;
    }
    int any = st->expect != GQT_EX_NONE || st->has_ok || st->has_affected || st->has_outcome;
    if (!any)
        return perr(err, st->line, "this step has no `--- expect` (a step whose outcome nobody asserts hides regressions)%s", NULL);
    if (st->kind == GQT_QUERY && st->expect == GQT_EX_NONE)
        return perr(err, st->line, "a `--- query` step expects rows or an error%s", NULL);
    if ((st->expect == GQT_EX_UNORDERED || st->expect == GQT_EX_ORDERED) && !st->has_shape && !st->show)
        return perr(err, st->expect_line,
                    "a rows expectation needs an `--- expect shape` section: write it from the schema, or leave it "
                    "empty and run `omnigraph test --bless`%s", NULL);
    if (st->has_shape && st->expect != GQT_EX_UNORDERED && st->expect != GQT_EX_ORDERED)
        return perr(err, st->line, "an `--- expect shape` without a rows expectation%s", NULL);
    return 0;
}

/* `key: value` words after a section name (`mode: merge branch: work`); the value of key, or
 * NULL.  `generate:` takes the rest of the line. */
static char *arg_value(const char *rest, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = rest; (p = strstr(p, key)); p += kl) {
        if ((p != rest && !isspace((unsigned char)p[-1])) || p[kl] != ':') continue;
        const char *v = p + kl + 1;
        while (*v == ' ') v++;
        size_t n = 0;
        while (v[n] && !isspace((unsigned char)v[n])) n++;
        return xstrndup(v, n);
    }
    return NULL;
}

/* Leading `set NAME = VALUE;` / `reset NAME;` lines (session settings), or a `show` statement. */
static int settings_prefix(const char *body, int *show)
{
    const char *p = body;
    *show = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!strncmp(p, "set ", 4) || !strncmp(p, "reset ", 6)) return 1;
        if (!strncmp(p, "show ", 5)) {
            *show = 1;
            return 1;
        }
        if (!strncmp(p, "//", 2) || *p == '#') {
            while (*p && *p != '\n') p++;
            continue;
        }
        return 0;
    }
    return 0;
}

static int is_label(const char *s, size_t n)
{
    if (!n || !(s[0] >= 'a' && s[0] <= 'z')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || isdigit((unsigned char)s[i]))) return 0;
    return 1;
}

/* The body of a `--- concurrent` block: `<label>[ on <branch>]: <statement>` lines at column 0
 * (other lines continue the open statement), then one `order:` line. */
static int parse_concurrent(gqt_step *st, const char *body, int line, og_buf *err)
{
    int ln = line;
    int have_order = 0;
    for (const char *p = body; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        ln++;
        char *l = xstrndup(p, n);
        p += n + (e ? 1 : 0);
        int rc = 0;
        if (blank(l)) {
            free(l);
            continue;
        }
        if (!strncmp(l, "order:", 6)) {
            if (have_order++) rc = perr(err, ln, "a block has one `order:` line%s", NULL);
            else st->order = trim_dup(l + 6, strlen(l + 6));
            free(l);
            if (rc) return rc;
            continue;
        }
        char *colon = strchr(l, ':');
        char *label = NULL, *branch = NULL;
        if (l[0] != ' ' && l[0] != '\t' && colon) {
            char *w[4];
            size_t nw = 0;
            char *head = xstrndup(l, (size_t)(colon - l));
            for (char *t = strtok(head, " \t"); t && nw < 4; t = strtok(NULL, " \t")) w[nw++] = t;
            if (nw == 1 && is_label(w[0], strlen(w[0]))) label = xstrdup(w[0]);
            else if (nw == 3 && !strcmp(w[1], "on") && is_label(w[0], strlen(w[0]))) {
                label = xstrdup(w[0]);
                branch = xstrdup(w[2]);
            }
            free(head);
        }
        if (label) {
            if (have_order) rc = perr(err, ln, "`order:` is the last line of a block; sessions come before it%s", NULL);
            for (size_t i = 0; i < st->nsessions && !rc; i++)
                if (!strcmp(st->sessions[i].label, label)) rc = perr(err, ln, "session `%s` is declared twice", label);
            if (!rc && st->nsessions == 4) rc = perr(err, ln, "a block declares at most 4 sessions%s", NULL);
            if (rc) {
                free(label);
                free(branch);
                free(l);
                return rc;
            }
            st->sessions = xrealloc(st->sessions, (st->nsessions + 1) * sizeof *st->sessions);
            gqt_session *ss = &st->sessions[st->nsessions++];
            memset(ss, 0, sizeof *ss);
            ss->label = label;
            ss->branch = branch;
            ss->body = trim_dup(colon + 1, strlen(colon + 1));
            ss->line = ln;
        } else if (have_order) {
            rc = perr(err, ln, "`order:` closes the sessions; a statement cannot continue after it%s", NULL);
        } else if (!st->nsessions) {
            rc = perr(err, ln, "a block opens with `<label>[ on <branch>]: <statement>` at column 0, got '%s'", l);
        } else {
            gqt_session *ss = &st->sessions[st->nsessions - 1];
            size_t a = strlen(ss->body), b = strlen(l);
            ss->body = xrealloc(ss->body, a + b + 2);
            ss->body[a] = '\n';
            memcpy(ss->body + a + 1, l, b + 1);
        }
        free(l);
        if (rc) return rc;
    }
    if (st->nsessions < 2) return perr(err, line, "a concurrent block declares at least two sessions%s", NULL);
    if (!have_order) return perr(err, line, "a concurrent block needs an `order:` line%s", NULL);
    /* order entries: `<label>`, `<label> start`, `<label> <verb> <key>`, `<label> park <verb> <key>` */
    char *o = xstrdup(st->order);
    int rc = 0, entries = 0;
    for (char *save = NULL, *it = strtok_r(o, ",", &save); it && !rc; it = strtok_r(NULL, ",", &save)) {
        char *w[5];
        size_t nw = 0;
        char *save2 = NULL;
        for (char *t = strtok_r(it, " \t", &save2); t && nw < 5; t = strtok_r(NULL, " \t", &save2)) w[nw++] = t;
        entries++;
        if (!nw || nw > 4 || (nw == 2 && strcmp(w[1], "start")) || (nw == 4 && strcmp(w[1], "park"))) {
            rc = perr(err, ln, "an `order:` entry is `<label>`, `<label> start`, `<label> <verb> <key>` or `<label> park <verb> <key>`%s", NULL);
            break;
        }
        int known = 0;
        for (size_t i = 0; i < st->nsessions; i++) known |= !strcmp(st->sessions[i].label, w[0]);
        if (!known) rc = perr(err, line, "`order:` names `%s`, which is not a session of the block", w[0]);
        if (nw >= 3) st->order_unenforceable = 1;
    }
    if (!rc && !entries) rc = perr(err, line, "an `order:` line names at least one entry%s", NULL);
    free(o);
    return rc;
}

static int loop_header(gqt_case *c, section *s, og_buf *err)
{
    const char *p = s->rest;
    if (*p != '$') return perr(err, s->line, "`--- %s` needs a `$variable`", s->name);
    p++;
    size_t k = 0;
    if (!(p[0] >= 'a' && p[0] <= 'z')) return perr(err, s->line, "loop variables are $[a-z][a-z0-9_]*%s", NULL);
    while (p[k] && ((p[k] >= 'a' && p[k] <= 'z') || isdigit((unsigned char)p[k]) || p[k] == '_')) k++;
    if (p[k] && !isspace((unsigned char)p[k])) return perr(err, s->line, "loop variables are $[a-z][a-z0-9_]*%s", NULL);
    c->loops = xrealloc(c->loops, (c->nloops + 1) * sizeof *c->loops);
    gqt_loop *L = &c->loops[c->nloops++];
    memset(L, 0, sizeof *L);
    L->var = xstrndup(p, k);
    L->first = c->nsteps;
    p += k;
    if (!strcmp(s->name, "loop")) {
        char *end;
        while (isspace((unsigned char)*p)) p++;
        if (!isdigit((unsigned char)*p)) return perr(err, s->line, "`--- loop $i <start> <end>` takes non-negative bounds%s", NULL);
        long a = strtol(p, &end, 10);
        p = end;
        while (isspace((unsigned char)*p)) p++;
        if (!isdigit((unsigned char)*p)) return perr(err, s->line, "`--- loop $i <start> <end>` takes non-negative bounds%s", NULL);
        long b = strtol(p, &end, 10);
        if (*end) return perr(err, s->line, "`--- loop $i <start> <end>` takes non-negative bounds%s", NULL);
        if (b <= a) return perr(err, s->line, "an empty loop asserts nothing%s", NULL);
        if (b - a > 10000) return perr(err, s->line, "a loop runs at most 10000 iterations%s", NULL);
        for (long v = a; v < b; v++) {
            char num[32];
            snprintf(num, sizeof num, "%ld", v);
            L->values = xrealloc(L->values, (L->nvalues + 1) * sizeof *L->values);
            L->values[L->nvalues++] = xstrdup(num);
        }
    } else {
        for (;;) {
            while (isspace((unsigned char)*p)) p++;
            if (!*p) break;
            size_t w = 0;
            while (p[w] && !isspace((unsigned char)p[w])) {
                char ch = p[w];
                if (!(isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '-'))
                    return perr(err, s->line, "foreach values are over [A-Za-z0-9_.-]%s", NULL);
                w++;
            }
            L->values = xrealloc(L->values, (L->nvalues + 1) * sizeof *L->values);
            L->values[L->nvalues++] = xstrndup(p, w);
            p += w;
        }
        if (!L->nvalues) return perr(err, s->line, "an empty foreach asserts nothing%s", NULL);
    }
    return 0;
}

int gqt_parse(gqt_case *c, og_buf *err)
{
    if (memchr(c->text, '\r', c->len)) return perr(err, 1, "the file holds a \\r (line endings must be \\n)%s", NULL);
    section *sec = NULL;
    size_t ns = 0;
    int rc = split(c, &sec, &ns, err);
    int have_runner = 0, have_schema = 0, have_seed = 0;
    gqt_step *cur = NULL;
    int in_loop = -1;
    int have_op = 0;
    for (size_t i = 0; i < ns && !rc; i++) {
        section *s = &sec[i];
        const char *nm = s->name;
        char *body = xstrndup(c->text + s->body_off, s->body_len);
        int is_step = !strcmp(nm, "query") || !strcmp(nm, "mutate") || !strcmp(nm, "restart") ||
                      !strcmp(nm, "load") || !strcmp(nm, "concurrent");
        if (!strcmp(nm, "runner")) {
            /* the reference accepts it anywhere before the first step */
            if (have_runner || c->nsteps) rc = perr(err, s->line, "`--- runner` appears once, before the first step%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- runner` takes no argument%s", NULL);
            else rc = parse_runner(c, body, s->line, err);
            have_runner = 1;
        } else if (!strcmp(nm, "known_failure")) {
            rc = perr(err, s->line, "`--- known_failure` is retired in the format (RFC 0067) and refused%s", NULL);
        } else if (!strcmp(nm, "schema")) {
            if (have_schema || c->nsteps) rc = perr(err, s->line, "`--- schema` appears once, before `--- seed` and the steps%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- schema` takes no argument%s", NULL);
            else c->schema = xstrdup(body);
            have_schema = 1;
        } else if (!strcmp(nm, "seed")) {
            if (!have_schema || have_seed || c->nsteps)
                rc = perr(err, s->line, "`--- seed` appears once, after `--- schema` and before the steps%s", NULL);
            if (!rc) c->seed = xstrdup(*s->rest ? "" : body);
            if (!rc && *s->rest && !c->skip) {
                og_buf w = OG_BUF_INIT;
                og_buf_printf(&w, "the seed `--- seed %s` is produced by the reference's data generator, whose "
                                  "recipes OmniGraph-C does not implement", s->rest);
                og_buf_append_byte(&w, 0);
                c->skip = (char *)w.data;
            }
            have_seed = 1;
        } else if (is_step && !(have_runner && have_schema && have_seed)) {
            rc = perr(err, s->line, "`--- %s` before `--- runner`, `--- schema` and `--- seed`", nm);
        } else if (is_step) {
            if ((rc = step_done(cur, err))) {
                free(body);
                break;
            }
            c->steps = xrealloc(c->steps, (c->nsteps + 1) * sizeof *c->steps);
            cur = &c->steps[c->nsteps++];
            memset(cur, 0, sizeof *cur);
            cur->kind = nm[0] == 'q' ? GQT_QUERY : nm[0] == 'm' ? GQT_MUTATE : nm[0] == 'l' ? GQT_LOAD
                      : nm[0] == 'c' ? GQT_CONCURRENT : GQT_RESTART;
            cur->line = s->line;
            cur->loop = in_loop;
            if (cur->kind == GQT_RESTART) {
                if (*s->rest || !blank(body)) rc = perr(err, s->line, "`--- restart` takes no argument and no body%s", NULL);
            } else if (cur->kind == GQT_CONCURRENT) {
                have_op = 1;
                if (*s->rest) rc = perr(err, s->line, "`--- concurrent` takes no argument%s", NULL);
                else if (strstr(body, "${"))
                    rc = perr(err, s->line, "`${` in a concurrent block (loop values reach a step through `--- params`)%s", NULL);
                else rc = parse_concurrent(cur, body, s->line, err);
            } else if (cur->kind == GQT_LOAD) {
                have_op = 1;
                cur->body = xstrdup(body);
                cur->branch = arg_value(s->rest, "branch");
                cur->load_mode = arg_value(s->rest, "mode");
                cur->load_from = arg_value(s->rest, "from");
                if (strstr(s->rest, "generate:")) {
                    og_buf w = OG_BUF_INIT;
                    og_buf_printf(&w, "`--- load %s` loads rows from the reference's data generator, whose recipes "
                                      "OmniGraph-C does not implement", s->rest);
                    og_buf_append_byte(&w, 0);
                    cur->skip_step = (char *)w.data;
                } else {
                    /* only mode/branch/from words */
                    char *t = xstrdup(s->rest);
                    for (char *save = NULL, *tok = strtok_r(t, " \t", &save); tok && !rc; tok = strtok_r(NULL, " \t", &save)) {
                        if (!strcmp(tok, "mode:") || !strcmp(tok, "branch:") || !strcmp(tok, "from:")) {
                            if (!strtok_r(NULL, " \t", &save)) rc = perr(err, s->line, "`%s` needs a value", tok);
                        } else {
                            rc = perr(err, s->line, "`--- load` takes `mode: M`, `branch: B` and `from: F`, got '%s'", tok);
                        }
                    }
                    free(t);
                    if (!rc && cur->load_mode && strcmp(cur->load_mode, "overwrite") && strcmp(cur->load_mode, "append") &&
                        strcmp(cur->load_mode, "merge"))
                        rc = perr(err, s->line, "a load mode is overwrite, append or merge, got '%s'", cur->load_mode);
                    if (!rc && blank(body)) rc = perr(err, s->line, "an empty `--- load` section%s", NULL);
                    if (!rc && strstr(body, "${"))
                        rc = perr(err, s->line, "`${` in a load body%s", NULL);
                }
            } else {
                have_op = 1;
                rc = step_branch(cur, s->rest, s->line, err);
                if (!rc && blank(body)) rc = perr(err, s->line, "an empty `--- %s` section", nm);
                if (!rc && strstr(body, "${"))
                    rc = perr(err, s->line, "`${` in a query or mutation body (loop values reach a step through `--- params`)%s", NULL);
                cur->body = xstrdup(body);
                cur->settings = settings_prefix(body, &cur->show);
                if (!rc && cur->show && cur->kind != GQT_QUERY)
                    rc = perr(err, s->line, "a `show` statement is a `--- query` step%s", NULL);
                if (!rc) {
                    char *t = trim_dup(body, strlen(body));
                    int stmt = !strncmp(t, "branch ", 7);
                    if (stmt && cur->branch)
                        rc = perr(err, s->line, "a branch statement names its branches itself; drop the `branch:` argument%s", NULL);
                    if (stmt && cur->kind == GQT_QUERY && strcmp(t, "branch list"))
                        rc = perr(err, s->line, "a branch write under `--- query` is refused; use `--- mutate`%s", NULL);
                    if (stmt && cur->kind == GQT_MUTATE && !strcmp(t, "branch list"))
                        rc = perr(err, s->line, "`branch list` under `--- mutate` is refused; use `--- query`%s", NULL);
                    free(t);
                }
            }
        } else if (!strcmp(nm, "params")) {
            if (!cur || (cur->kind != GQT_QUERY && cur->kind != GQT_MUTATE) || cur->params || cur->skip_step ||
                cur->expect != GQT_EX_NONE || cur->has_ok || cur->has_affected || cur->has_outcome)
                rc = perr(err, s->line, "`--- params` must directly follow a `--- query` or `--- mutate` section%s", NULL);
            else {
                char *b = trim_dup(cur->body, strlen(cur->body));
                if (!strncmp(b, "branch ", 7)) rc = perr(err, s->line, "a branch statement takes no params%s", NULL);
                free(b);
                if (*s->rest) {
                    /* `--- params generate: v1 seed: N` (a YAML recipe body) */
                    og_buf w = OG_BUF_INIT;
                    og_buf_printf(&w, "`--- params %s` draws the parameters from the reference's data generator, "
                                      "whose recipes OmniGraph-C does not implement", s->rest);
                    og_buf_append_byte(&w, 0);
                    cur->skip_step = (char *)w.data;
                    cur->params = xstrdup("");
                } else {
                    cur->params = xstrdup(body);
                }
            }
        } else if (!strcmp(nm, "expect")) {
            if (!cur || cur->kind == GQT_RESTART)
                rc = perr(err, s->line, "`--- expect` with no `--- query` or `--- mutate` step to bind to%s", NULL);
            else rc = parse_expect(c, cur, s, err);
        } else if (!strcmp(nm, "foreach") || !strcmp(nm, "loop")) {
            if ((rc = step_done(cur, err))) {
                free(body);
                break;
            }
            cur = NULL;
            if (in_loop >= 0) rc = perr(err, s->line, "loops do not nest%s", NULL);
            else if (!blank(body)) rc = perr(err, s->line, "a loop header takes no body%s", NULL);
            else if (!(rc = loop_header(c, s, err))) in_loop = (int)c->nloops - 1;
        } else if (!strcmp(nm, "endloop")) {
            if ((rc = step_done(cur, err))) {
                free(body);
                break;
            }
            cur = NULL;
            if (in_loop < 0) rc = perr(err, s->line, "`--- endloop` without a loop%s", NULL);
            else if (c->loops[in_loop].first == c->nsteps) rc = perr(err, s->line, "an empty loop%s", NULL);
            else {
                c->loops[in_loop].end = c->nsteps;
                in_loop = -1;
            }
        } else if (!strcmp(nm, "seam")) {
            if (!c->skip) c->skip = xstrdup("`--- seam` (fault injection at engine seams) is not available in OmniGraph-C");
        } else if (!strcmp(nm, "fault")) {
            rc = perr(err, s->line, "`--- fault` is reserved; fault injection is written `--- seam`%s", NULL);
        } else {
            rc = perr(err, s->line, "unknown section `--- %s`", nm);
        }
        free(body);
    }
    if (!rc) rc = step_done(cur, err);
    if (!rc && in_loop >= 0) rc = perr(err, sec[ns - 1].line, "a loop without `--- endloop`%s", NULL);
    if (!rc && !(have_runner && have_schema && have_seed))
        rc = perr(err, 1, "a case needs `--- runner`, `--- schema` and `--- seed` sections (schema before seed)%s", NULL);
    if (!rc && !have_op) rc = perr(err, 1, "a case needs at least one `--- query` or `--- mutate` step%s", NULL);
    if (!rc && c->seed && strstr(c->seed, "${")) rc = perr(err, 1, "`${` in the seed%s", NULL);
    if (!rc) {
        /* every ${...} in params / expect bodies names the enclosing loop's variable */
        for (size_t k = 0; k < c->nsteps && !rc; k++) {
            gqt_step *st = &c->steps[k];
            const char *bodies[3] = {st->params, st->rows, st->shape};
            for (int b = 0; b < 3 && !rc; b++) {
                for (const char *p = bodies[b] ? strstr(bodies[b], "${") : NULL; p && !rc; p = strstr(p + 2, "${")) {
                    const char *e = strchr(p, '}');
                    if (st->loop < 0) rc = perr(err, st->line, "`${` outside a loop%s", NULL);
                    else if (!e || (size_t)(e - p - 2) != strlen(c->loops[st->loop].var) ||
                             strncmp(p + 2, c->loops[st->loop].var, (size_t)(e - p - 2)))
                        rc = perr(err, st->line, "`${...}` must name the loop variable $%s", c->loops[st->loop].var);
                }
            }
        }
    }
    for (size_t i = 0; i < ns; i++) {
        free(sec[i].name);
        free(sec[i].rest);
    }
    free(sec);
    return rc;
}

void gqt_case_free(gqt_case *c)
{
    for (size_t i = 0; i < c->nsteps; i++) {
        gqt_step *s = &c->steps[i];
        free(s->branch);
        free(s->body);
        free(s->params);
        free(s->expect_arg);
        free(s->rows);
        free(s->shape);
        free(s->outcome);
        free(s->load_mode);
        free(s->load_from);
        for (size_t k = 0; k < s->nsessions; k++) {
            free(s->sessions[k].label);
            free(s->sessions[k].branch);
            free(s->sessions[k].body);
            free(s->sessions[k].expect_arg);
        }
        free(s->sessions);
        free(s->order);
        free(s->skip_step);
        for (size_t k = 0; k < s->nnotes; k++) free(s->notes[k].why);
        free(s->notes);
    }
    free(c->steps);
    for (size_t i = 0; i < c->nloops; i++) {
        for (size_t k = 0; k < c->loops[i].nvalues; k++) free(c->loops[i].values[k]);
        free(c->loops[i].values);
        free(c->loops[i].var);
    }
    free(c->loops);
    for (size_t i = 0; i < c->nenvs; i++) {
        free(c->envs[i].target);
        free(c->envs[i].storage);
        free(c->envs[i].profile);
        free(c->envs[i].why_not);
    }
    free(c->envs);
    free(c->schema);
    free(c->seed);
    free(c->skip);
    free(c->text);
    free(c->path);
    memset(c, 0, sizeof *c);
}
