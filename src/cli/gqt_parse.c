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
        return "server targets are not run by `omnigraph test`";
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

static int parse_expect(gqt_case *c, gqt_step *st, section *s, og_buf *err)
{
    const char *r = s->rest;
    char *body = xstrndup(c->text + s->body_off, s->body_len);
    int body_blank = blank(body);
    int rc = 0;
    if (!strcmp(r, "shape")) {
        if (st->expect != GQT_EX_UNORDERED && st->expect != GQT_EX_ORDERED)
            rc = perr(err, s->line, "`--- expect shape` must follow an `expect unordered` or `expect ordered`%s", NULL);
        else if (st->has_shape) rc = perr(err, s->line, "a second `--- expect shape` for one step%s", NULL);
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
    if (st->expect != GQT_EX_NONE) {
        free(body);
        return perr(err, s->line, "a second expectation for one step (steps take exactly one)%s", NULL);
    }
    st->expect_line = s->line;
    if (!strcmp(r, "unordered") || !strcmp(r, "ordered")) {
        if (st->kind != GQT_QUERY) rc = perr(err, s->line, "rows are expected of a `--- query` step only%s", NULL);
        st->expect = !strcmp(r, "ordered") ? GQT_EX_ORDERED : GQT_EX_UNORDERED;
        st->rows = body;
        st->rows_span.off = s->body_off;
        st->rows_span.len = s->body_len;
        return rc;
    }
    if (!body_blank) rc = perr(err, s->line, "`--- expect %s` takes no body", r);
    free(body);
    if (rc) return rc;
    if (!strcmp(r, "ok")) {
        if (st->kind != GQT_MUTATE) return perr(err, s->line, "`expect ok` applies to `--- mutate` steps%s", NULL);
        st->expect = GQT_EX_OK;
    } else if (!strncmp(r, "error:", 6)) {
        char *sub = trim_dup(r + 6, strlen(r + 6));
        if (!*sub) {
            free(sub);
            return perr(err, s->line, "`expect error:` needs a message fragment (a bare any-error expectation hides the wrong error)%s", NULL);
        }
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
        if (st->kind != GQT_MUTATE) return perr(err, s->line, "`expect affected:` applies to `--- mutate` steps%s", NULL);
        st->expect = GQT_EX_AFFECTED;
    } else if (!strncmp(r, "outcome:", 8)) {
        char *w = trim_dup(r + 8, strlen(r + 8));
        if (strcmp(w, "already_up_to_date") && strcmp(w, "fast_forward") && strcmp(w, "merged")) {
            rc = perr(err, s->line, "outcome must be already_up_to_date, fast_forward or merged, got '%s'", w);
            free(w);
            return rc;
        }
        st->expect = GQT_EX_OUTCOME;
        st->expect_arg = w;
    } else {
        return perr(err, s->line,
                    "unknown expectation '%s' (unordered, ordered, shape, ok, error: ..., affected: nodes=N edges=M, "
                    "outcome: ...)", r);
    }
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
    if (st->expect == GQT_EX_NONE)
        return perr(err, st->line, "this step has no `--- expect` (a step whose outcome nobody asserts hides regressions)%s", NULL);
    if ((st->expect == GQT_EX_UNORDERED || st->expect == GQT_EX_ORDERED) && !st->has_shape)
        return perr(err, st->expect_line,
                    "a rows expectation needs an `--- expect shape` section: write it from the schema, or leave it "
                    "empty and run `omnigraph test --bless`%s", NULL);
    return 0;
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
    int phase = 0; /* 0 runner, 1 schema, 2 seed, 3 steps */
    gqt_step *cur = NULL;
    int in_loop = -1;
    int have_op = 0;
    for (size_t i = 0; i < ns && !rc; i++) {
        section *s = &sec[i];
        const char *nm = s->name;
        char *body = xstrndup(c->text + s->body_off, s->body_len);
        if (!strcmp(nm, "runner")) {
            if (phase != 0 || c->nenvs) rc = perr(err, s->line, "`--- runner` comes first, once%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- runner` takes no argument%s", NULL);
            else rc = parse_runner(c, body, s->line, err);
            phase = 1;
        } else if (!strcmp(nm, "known_failure")) {
            rc = perr(err, s->line, "`--- known_failure` is retired in the format (RFC 0067) and refused%s", NULL);
        } else if (!strcmp(nm, "schema")) {
            if (phase != 1) rc = perr(err, s->line, phase == 0 ? "`--- runner` must come before `--- schema`%s"
                                                               : "`--- schema` appears once, before `--- seed`%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- schema` takes no argument%s", NULL);
            else c->schema = xstrdup(body);
            phase = 2;
        } else if (!strcmp(nm, "seed")) {
            if (phase != 2) rc = perr(err, s->line, "`--- seed` appears once, right after `--- schema`%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- seed` takes no argument%s", NULL);
            else c->seed = xstrdup(body);
            phase = 3;
        } else if (phase < 3) {
            rc = perr(err, s->line, "`--- %s` before `--- runner`, `--- schema` and `--- seed`", nm);
        } else if (!strcmp(nm, "query") || !strcmp(nm, "mutate") || !strcmp(nm, "restart")) {
            if ((rc = step_done(cur, err))) {
                free(body);
                break;
            }
            c->steps = xrealloc(c->steps, (c->nsteps + 1) * sizeof *c->steps);
            cur = &c->steps[c->nsteps++];
            memset(cur, 0, sizeof *cur);
            cur->kind = nm[0] == 'q' ? GQT_QUERY : nm[0] == 'm' ? GQT_MUTATE : GQT_RESTART;
            cur->line = s->line;
            cur->loop = in_loop;
            if (cur->kind == GQT_RESTART) {
                if (*s->rest || !blank(body)) rc = perr(err, s->line, "`--- restart` takes no argument and no body%s", NULL);
            } else {
                have_op = 1;
                rc = step_branch(cur, s->rest, s->line, err);
                if (!rc && blank(body)) rc = perr(err, s->line, "an empty `--- %s` section", nm);
                if (!rc && strstr(body, "${"))
                    rc = perr(err, s->line, "`${` in a query or mutation body (loop values reach a step through `--- params`)%s", NULL);
                cur->body = xstrdup(body);
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
            if (!cur || cur->kind == GQT_RESTART || cur->params || cur->expect != GQT_EX_NONE)
                rc = perr(err, s->line, "`--- params` must directly follow a `--- query` or `--- mutate` section%s", NULL);
            else if (*s->rest) rc = perr(err, s->line, "`--- params` takes no argument%s", NULL);
            else {
                char *b = trim_dup(cur->body, strlen(cur->body));
                if (!strncmp(b, "branch ", 7)) rc = perr(err, s->line, "a branch statement takes no params%s", NULL);
                free(b);
                cur->params = xstrdup(body);
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
    if (!rc && phase < 3)
        rc = perr(err, 1, "a case needs `--- runner`, `--- schema` and `--- seed` sections, in that order%s", NULL);
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
