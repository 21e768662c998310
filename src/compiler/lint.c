/*
 * lint.c — the compiler half of `omnigraph lint` (lint.h): parse, check and lower every query
 * of a .gq file against a catalog and collect what the reference's lint reports (result
 * shapes, read/write sets, L201 update coverage, hardcoded-mutation warnings), plus the
 * parameter list.  Text rendering lives here; JSON rendering is the CLI's (cmd_lint.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lint.h"
#include "compiler/query_check.h"
#include "util/error.h"

static const char *const HARDCODED = "mutation declares no params; hardcoded mutations are easy to miss";

static char *dupstr(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

const char *og_lint_scalar_kind(og_type_id id)
{
    switch (id) {
    case OG_T_STRING: return "string";
    case OG_T_BOOL: return "bool";
    case OG_T_I32: case OG_T_U32: return "int";
    case OG_T_I64: case OG_T_U64: return "bigint";
    case OG_T_F32: case OG_T_F64: return "float";
    case OG_T_DATE32: return "date";
    case OG_T_DATE64: return "datetime";
    case OG_T_BLOB: return "blob";
    case OG_T_VECTOR: return "vector";
    case OG_T_LIST: return "list";
    default: return "object";
    }
}

const char *og_lint_kind(const og_qtype *t)
{
    if (t->node_type >= 0) return t->is_object ? "object" : "string";
    return og_lint_scalar_kind(t->t.id);
}

const char *og_lint_type_name(const og_qtype *t, char *buf, size_t cap)
{
    return og_qtype_name(t, buf, cap);
}

static int push_str(char ***arr, size_t *n, const char *s)
{
    char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na) return 0;
    *arr = na;
    if (!(na[*n] = dupstr(s))) return 0;
    (*n)++;
    return 1;
}

static og_lint_finding *new_finding(og_lint_report *r)
{
    og_lint_finding *nf = realloc(r->findings, (r->nfindings + 1) * sizeof *nf);
    if (!nf) return NULL;
    r->findings = nf;
    og_lint_finding *f = &nf[r->nfindings++];
    memset(f, 0, sizeof *f);
    return f;
}

static og_status lint_query(og_lint_report *r, const og_catalog *cat, size_t qi)
{
    og_query *q = &r->file->queries[qi];
    og_lint_query *lq = &r->queries[r->nqueries++];
    memset(lq, 0, sizeof *lq);
    if (!(lq->name = dupstr(q->name))) return OG_ERR_NOMEM;
    lq->is_mutation = q->is_mutation;
    if (q->is_mutation && q->nparams == 0 && !push_str(&lq->warnings, &lq->nwarnings, HARDCODED))
        return OG_ERR_NOMEM;
    og_status st = og_query_compile(&lq->ir, r->file, qi, cat, &r->src, &lq->diag);
    if (st == OG_ERR_NOMEM) return st;
    if (st != OG_OK) {
        char buf[600];
        snprintf(buf, sizeof buf, "type error: %s", lq->diag.message ? lq->diag.message : "?");
        if (!(lq->error = dupstr(buf))) return OG_ERR_NOMEM;
        og_query_diag_code(&lq->diag, lq->code, sizeof lq->code);
        return OG_OK;
    }
    lq->ok = 1;
    og_ir_query *ir = lq->ir;
    if (ir->ncolumns && !(lq->columns = calloc(ir->ncolumns, sizeof *lq->columns))) return OG_ERR_NOMEM;
    for (size_t i = 0; i < ir->ncolumns; i++) {
        const og_qtype *t = &ir->columns[i].type;
        og_lint_column *c = &lq->columns[lq->ncolumns++];
        c->name = ir->columns[i].name;
        c->kind = og_lint_kind(t);
        c->nullable = t->nullable;
        if (t->node_type < 0 && t->t.id == OG_T_LIST) c->item_kind = og_lint_scalar_kind(t->t.elem);
        if (t->node_type < 0 && t->t.id == OG_T_VECTOR) c->vector_dim = t->t.dim;
    }
    return OG_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* L201: per node type with update queries, nullable non-key non-embedded properties that no
 * update query assigns. */
static og_status update_coverage(og_lint_report *r, const og_catalog *cat)
{
    size_t nn = cat->nnodes;
    const char **names = malloc((nn ? nn : 1) * sizeof *names);
    if (!names) return OG_ERR_NOMEM;
    for (size_t i = 0; i < nn; i++) names[i] = cat->nodes[i].name;
    qsort(names, nn, sizeof *names, cmp_str);
    og_status st = OG_OK;
    for (size_t k = 0; k < nn && st == OG_OK; k++) {
        const og_cat_type *t = og_catalog_node(cat, names[k]);
        char **qnames = NULL;
        size_t nq = 0;
        for (size_t i = 0; i < r->nqueries; i++) {
            const og_lint_query *lq = &r->queries[i];
            if (!lq->ok || !lq->is_mutation) continue;
            for (size_t m = 0; m < lq->ir->nmutations; m++) {
                const og_ir_mutation *mu = &lq->ir->mutations[m];
                if (mu->kind != OG_QM_UPDATE || mu->is_edge || &cat->nodes[mu->type] != t) continue;
                int seen = 0;
                for (size_t j = 0; j < nq; j++) seen |= strcmp(qnames[j], lq->name) == 0;
                if (!seen && !push_str(&qnames, &nq, lq->name)) st = OG_ERR_NOMEM;
            }
        }
        if (nq) qsort(qnames, nq, sizeof *qnames, cmp_str);
        const char **props = malloc((t->nprops ? t->nprops : 1) * sizeof *props);
        if (!props) st = OG_ERR_NOMEM;
        size_t np = 0;
        for (size_t p = 0; nq && props && p < t->nprops; p++) {
            const og_cat_prop *pr = &t->props[p];
            if (!pr->nullable || pr->is_key || pr->embed_source) continue;
            int assigned = 0;
            for (size_t i = 0; i < r->nqueries && !assigned; i++) {
                const og_lint_query *lq = &r->queries[i];
                if (!lq->ok || !lq->is_mutation) continue;
                for (size_t m = 0; m < lq->ir->nmutations && !assigned; m++) {
                    const og_ir_mutation *mu = &lq->ir->mutations[m];
                    if (mu->kind != OG_QM_UPDATE || mu->is_edge || &cat->nodes[mu->type] != t) continue;
                    for (size_t a = 0; a < mu->nassigns; a++)
                        assigned |= mu->assigns[a].prop == (int)p;
                }
            }
            if (!assigned) props[np++] = pr->name;
        }
        if (np) qsort(props, np, sizeof *props, cmp_str);
        for (size_t p = 0; p < np && st == OG_OK; p++) {
            og_lint_finding *f = new_finding(r);
            char msg[512];
            snprintf(msg, sizeof msg, "%s.%s exists in schema but no update query sets it", t->name, props[p]);
            if (!f || !(f->message = dupstr(msg)) || !(f->type_name = dupstr(t->name)) ||
                !(f->property = dupstr(props[p]))) {
                st = OG_ERR_NOMEM;
                break;
            }
            f->warning = 1;
            strcpy(f->code, "L201");
            for (size_t j = 0; j < nq; j++)
                if (!push_str(&f->query_names, &f->nquery_names, qnames[j])) st = OG_ERR_NOMEM;
        }
        free(props);
        for (size_t j = 0; j < nq; j++) free(qnames[j]);
        free(qnames);
    }
    free(names);
    return st;
}

og_status og_lint_run(og_lint_report *r, const og_catalog *cat, const char *file,
                      const char *text, size_t len)
{
    memset(r, 0, sizeof *r);
    OG_TRY(og_source_init(&r->src, file, text, len));
    og_diag perr;
    memset(&perr, 0, sizeof perr);
    og_status st = og_query_parse(&r->file, &r->src, &perr);
    if (st == OG_ERR_NOMEM) return st;
    if (st != OG_OK) {
        og_lint_finding *f = new_finding(r);
        if (!f) return og_diag_free(&perr), OG_ERR_NOMEM;
        char msg[600];
        snprintf(msg, sizeof msg, "parse error: %s", perr.message ? perr.message : "?");
        f->diag = perr;
        strcpy(f->code, "Q000");
        if (!(f->message = dupstr(msg))) return OG_ERR_NOMEM;
        r->errors = 1;
        return OG_OK;
    }
    size_t n = r->file->nqueries;
    if (n && !(r->queries = calloc(n, sizeof *r->queries))) return OG_ERR_NOMEM;
    r->queries_processed = n;
    for (size_t i = 0; i < n; i++) OG_TRY(lint_query(r, cat, i));
    OG_TRY(update_coverage(r, cat));
    for (size_t i = 0; i < r->nqueries; i++) {
        r->errors += !r->queries[i].ok;
        r->warnings += r->queries[i].nwarnings;
    }
    for (size_t i = 0; i < r->nfindings; i++) {
        if (r->findings[i].warning) r->warnings++;
        else r->errors++;
    }
    r->ok = r->errors == 0;
    return OG_OK;
}

void og_lint_report_free(og_lint_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nqueries; i++) {
        og_lint_query *q = &r->queries[i];
        free(q->name);
        free(q->error);
        og_diag_free(&q->diag);
        for (size_t k = 0; k < q->nwarnings; k++) free(q->warnings[k]);
        free(q->warnings);
        og_ir_free(q->ir);
        free(q->columns);
    }
    free(r->queries);
    for (size_t i = 0; i < r->nfindings; i++) {
        og_lint_finding *f = &r->findings[i];
        free(f->message);
        free(f->type_name);
        free(f->property);
        for (size_t k = 0; k < f->nquery_names; k++) free(f->query_names[k]);
        free(f->query_names);
        og_diag_free(&f->diag);
    }
    free(r->findings);
    og_query_file_free(r->file);
    og_source_free(&r->src);
    memset(r, 0, sizeof *r);
}

static og_status render_access(og_buf *out, const char *label, const og_ir_access *a, size_t n)
{
    OG_TRY(og_buf_printf(out, "      %s:", label));
    if (!n) OG_TRY(og_buf_append_str(out, " -"));
    for (size_t i = 0; i < n; i++)
        OG_TRY(og_buf_printf(out, "%s %s %s", i ? "," : "", a[i].is_edge ? "edge" : "node", a[i].name));
    return og_buf_append_byte(out, '\n');
}

og_status og_lint_render_text(og_buf *out, const og_lint_report *r)
{
    char tb[64];
    for (size_t i = 0; i < r->nqueries; i++) {
        const og_lint_query *q = &r->queries[i];
        if (!q->ok) {
            OG_TRY(og_buf_printf(out, "ERROR query `%s`: %s", q->name, q->error));
            if (q->diag.line) OG_TRY(og_buf_printf(out, " (at %u:%u)", q->diag.line, q->diag.col));
            OG_TRY(og_buf_append_byte(out, '\n'));
        } else {
            const og_ir_query *ir = q->ir;
            OG_TRY(og_buf_printf(out, "OK    query `%s` (%s)\n", q->name, q->is_mutation ? "mutation" : "read"));
            OG_TRY(og_buf_append_str(out, "      params:"));
            if (!ir->nparams) OG_TRY(og_buf_append_str(out, " -"));
            for (size_t k = 0; k < ir->nparams; k++)
                OG_TRY(og_buf_printf(out, "%s $%s: %s", k ? "," : "", ir->params[k].name,
                                     og_lint_type_name(&ir->params[k].type, tb, sizeof tb)));
            OG_TRY(og_buf_append_byte(out, '\n'));
            if (!q->is_mutation) {
                OG_TRY(og_buf_append_str(out, "      result:"));
                for (size_t k = 0; k < q->ncolumns; k++) {
                    const og_lint_column *c = &q->columns[k];
                    OG_TRY(og_buf_printf(out, "%s %s: %s", k ? "," : "", c->name, c->kind));
                    if (c->item_kind) OG_TRY(og_buf_printf(out, "<%s>", c->item_kind));
                    if (c->vector_dim) OG_TRY(og_buf_printf(out, "(%u)", (unsigned)c->vector_dim));
                    if (c->nullable) OG_TRY(og_buf_append_byte(out, '?'));
                }
                OG_TRY(og_buf_append_byte(out, '\n'));
            }
            OG_TRY(render_access(out, "reads", ir->reads, ir->nreads));
            OG_TRY(render_access(out, "writes", ir->writes, ir->nwrites));
        }
        for (size_t k = 0; k < q->nwarnings; k++)
            OG_TRY(og_buf_printf(out, "WARN  query `%s`: %s\n", q->name, q->warnings[k]));
    }
    for (size_t i = 0; i < r->nfindings; i++) {
        const og_lint_finding *f = &r->findings[i];
        OG_TRY(og_buf_printf(out, "%s %s", f->warning ? "WARN " : "ERROR", f->message));
        if (f->diag.line) OG_TRY(og_buf_printf(out, " (at %u:%u)", f->diag.line, f->diag.col));
        OG_TRY(og_buf_append_byte(out, '\n'));
    }
    return og_buf_printf(out,
                         "INFO  Lint complete: %zu queries processed (%zu error(s), %zu warning(s), %zu info item(s))\n",
                         r->queries_processed, r->errors, r->warnings, r->infos);
}
