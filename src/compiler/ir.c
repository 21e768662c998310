/*
 * ir.c — the EXPLAIN-style text rendering of the query IR (ir.h).  The format is stable and
 * deterministic so tests (and `omnigraph lint --explain`) can assert on it:
 *
 *   query friends_of($name: String)
 *     scan $p: Person [$p.name = $name]
 *     expand $p -[Knows out 1..1]-> $f: Person [$f.age > 30]
 *     antijoin ($p)
 *       expand $p -[WorksAt out 1..1]-> $_: Company
 *     return f.name: String, f.age: I32?
 *     order $f.age desc
 *     limit 10
 *     reads: node Company, node Person, edge Knows, edge WorksAt
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir.h"
#include "util/error.h"

const char *og_ir_cmp_name(og_ir_cmp c)
{
    static const char *const n[] = {"=", "!=", "<", "<=", ">", ">=", "contains", "contains",
                                    "starts_with"};
    return (unsigned)c < 9 ? n[c] : "?";
}

static og_status put_string(og_buf *b, const char *s, size_t n)
{
    OG_TRY(og_buf_append_byte(b, '"'));
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : ch == '\n' ? "\\n"
                          : ch == '\r' ? "\\r" : ch == '\t' ? "\\t" : NULL;
        og_status st = esc ? og_buf_append_str(b, esc) : og_buf_append_byte(b, ch);
        if (st != OG_OK) return st;
    }
    return og_buf_append_byte(b, '"');
}

static og_status put_float(og_buf *b, double f)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f) break;
    }
    if (!strpbrk(tmp, ".eEni")) strcat(tmp, ".0");
    return og_buf_append_str(b, tmp);
}

static og_status put_lit(og_buf *b, const og_qlit *l)
{
    switch (l->kind) {
    case OG_QLIT_STRING: return put_string(b, l->s, l->slen);
    case OG_QLIT_INT: return og_buf_printf(b, "%lld", (long long)l->i);
    case OG_QLIT_FLOAT: return put_float(b, l->f);
    case OG_QLIT_BOOL: return og_buf_append_str(b, l->b ? "true" : "false");
    case OG_QLIT_DATE:
    case OG_QLIT_DATETIME:
        OG_TRY(og_buf_append_str(b, l->kind == OG_QLIT_DATE ? "date(" : "datetime("));
        OG_TRY(put_string(b, l->s, l->slen));
        return og_buf_append_byte(b, ')');
    case OG_QLIT_LIST:
        OG_TRY(og_buf_append_byte(b, '['));
        for (size_t i = 0; i < l->nitems; i++) {
            if (i) OG_TRY(og_buf_append_str(b, ", "));
            OG_TRY(put_lit(b, &l->items[i]));
        }
        return og_buf_append_byte(b, ']');
    }
    return OG_OK;
}

static const char *var_name(const og_ir_query *ir, int v) { return v >= 0 ? ir->vars[v].name : "_"; }

static const char *prop_name(const og_ir_query *ir, int var, int prop)
{
    const og_ir_var *v = &ir->vars[var];
    const og_cat_type *t = v->is_edge ? &ir->cat->edges[v->type] : &ir->cat->nodes[v->type];
    return t->props[prop].name;
}

static og_status put_text(og_buf *b, const og_ir_query *ir, const og_ir_text *t)
{
    static const char *const fn[] = {"search", "fuzzy", "match_text"};
    OG_TRY(og_buf_printf(b, "%s($%s.%s, ", fn[t->mode], var_name(ir, t->var),
                             prop_name(ir, t->var, t->prop)));
    OG_TRY(og_ir_dump_expr(b, ir, t->query));
    if (t->max_edits) {
        OG_TRY(og_buf_append_str(b, ", "));
        OG_TRY(og_ir_dump_expr(b, ir, t->max_edits));
    }
    return og_buf_append_byte(b, ')');
}

static og_status put_rank(og_buf *b, const og_ir_query *ir, int ri)
{
    const og_ir_rank *r = &ir->ranks[ri];
    if (r->kind == OG_IR_RANK_RRF) {
        OG_TRY(og_buf_append_str(b, "rrf("));
        OG_TRY(put_rank(b, ir, r->arm1));
        OG_TRY(og_buf_append_str(b, ", "));
        OG_TRY(put_rank(b, ir, r->arm2));
        OG_TRY(og_buf_append_str(b, ", k="));
        OG_TRY(og_ir_dump_expr(b, ir, r->k));
        return og_buf_append_byte(b, ')');
    }
    OG_TRY(og_buf_printf(b, "%s($%s.%s, ", r->kind == OG_IR_RANK_NEAREST ? "nearest" : "bm25",
                             var_name(ir, r->var), prop_name(ir, r->var, r->prop)));
    OG_TRY(og_ir_dump_expr(b, ir, r->query));
    return og_buf_append_byte(b, ')');
}

static og_status put_pred(og_buf *b, const og_ir_query *ir, const og_ir_pred *p);

og_status og_ir_dump_expr(og_buf *b, const og_ir_query *ir, const og_ir_expr *e)
{
    if (!e) return og_buf_append_str(b, "?");
    switch (e->kind) {
    case OG_IRX_PROP:
        return og_buf_printf(b, "$%s.%s", var_name(ir, e->var), prop_name(ir, e->var, e->prop));
    case OG_IRX_ID: return og_buf_printf(b, "id($%s)", var_name(ir, e->var));
    case OG_IRX_PARAM: return og_buf_printf(b, "$%s", ir->params[e->param].name);
    case OG_IRX_LIT: return put_lit(b, &e->lit);
    case OG_IRX_NOW: return og_buf_append_str(b, "now()");
    case OG_IRX_SCORE:
        OG_TRY(og_buf_printf(b, "score#%d:", e->rank));
        return put_rank(b, ir, e->rank);
    case OG_IRX_TEXT: return put_text(b, ir, e->text);
    case OG_IRX_AGG:
        OG_TRY(og_buf_printf(b, "%s(%s", og_qagg_name(e->agg), e->distinct ? "distinct " : ""));
        OG_TRY(og_ir_dump_expr(b, ir, e->arg));
        return og_buf_append_byte(b, ')');
    case OG_IRX_COLUMN:
        return og_buf_printf(b, "column(%s)", e->column >= 0 ? ir->columns[e->column].name : "?");
    case OG_IRX_PRED:
        OG_TRY(og_buf_append_str(b, "bool("));
        OG_TRY(put_pred(b, ir, e->pred));
        return og_buf_append_byte(b, ')');
    case OG_IRX_OBJECT: return og_buf_printf(b, "object($%s)", var_name(ir, e->var));
    case OG_IRX_META:
        return og_buf_printf(b, "$%s.@%s", var_name(ir, e->var), e->meta == OG_IR_META_SRC ? "src" : "dst");
    case OG_IRX_ARITH: {
        static const char *const ops[] = {" + ", " - ", " * ", " / ", " % ", "-"};
        if (e->arith == OG_QA_NEG) {
            OG_TRY(og_buf_append_str(b, "(-"));
            OG_TRY(og_ir_dump_expr(b, ir, e->arg));
            return og_buf_append_byte(b, ')');
        }
        OG_TRY(og_buf_append_byte(b, '('));
        OG_TRY(og_ir_dump_expr(b, ir, e->arg));
        OG_TRY(og_buf_append_str(b, ops[e->arith]));
        OG_TRY(og_ir_dump_expr(b, ir, e->arg2));
        return og_buf_append_byte(b, ')');
    }
    case OG_IRX_FUNC: {
        const og_ir_expr *args[3] = {e->arg, e->arg2, e->arg3};
        OG_TRY(og_buf_printf(b, "%s(", og_qfn_name(e->fn)));
        for (int i = 0; i < e->nargs && i < 3; i++) {
            OG_TRY(og_buf_append_str(b, i ? ", " : ""));
            OG_TRY(og_ir_dump_expr(b, ir, args[i]));
        }
        return og_buf_append_byte(b, ')');
    }
    case OG_IRX_PATH: return og_buf_printf(b, "%s($%s)", og_qfn_name(e->fn), var_name(ir, e->var));
    }
    return OG_OK;
}

static og_status put_pred(og_buf *b, const og_ir_query *ir, const og_ir_pred *p)
{
    switch (p->kind) {
    case OG_IRP_TEXT: return put_text(b, ir, &p->text);
    case OG_IRP_AND: case OG_IRP_OR: case OG_IRP_IFF:
        OG_TRY(og_buf_append_byte(b, '('));
        OG_TRY(put_pred(b, ir, p->a));
        OG_TRY(og_buf_append_str(b, p->kind == OG_IRP_AND ? " and " : p->kind == OG_IRP_OR ? " or "
                                    : p->negated ? " != " : " = "));
        OG_TRY(put_pred(b, ir, p->b));
        return og_buf_append_byte(b, ')');
    case OG_IRP_NOT:
        OG_TRY(og_buf_append_str(b, "not "));
        return put_pred(b, ir, p->a);
    case OG_IRP_TEST:
        return og_ir_dump_expr(b, ir, p->l);
    case OG_IRP_ISNULL:
        OG_TRY(og_ir_dump_expr(b, ir, p->l));
        return og_buf_append_str(b, p->negated ? " is not null" : " is null");
    case OG_IRP_CMP:
        break;
    }
    OG_TRY(og_ir_dump_expr(b, ir, p->l));
    OG_TRY(og_buf_printf(b, " %s%s ", og_ir_cmp_name(p->op),
                             p->op == OG_IR_LIST_CONTAINS ? "[list]" : ""));
    return og_ir_dump_expr(b, ir, p->r);
}

static og_status put_preds(og_buf *b, const og_ir_query *ir, const char *label, const og_ir_pred *p,
                           size_t n)
{
    if (!n) return OG_OK;
    OG_TRY(og_buf_printf(b, " %s[", label));
    for (size_t i = 0; i < n; i++) {
        if (i) OG_TRY(og_buf_append_str(b, ", "));
        OG_TRY(put_pred(b, ir, &p[i]));
    }
    return og_buf_append_byte(b, ']');
}

static og_status put_type(og_buf *b, const og_qtype *t)
{
    char tmp[64];
    if (t->node_type >= 0 && t->is_object) return og_buf_append_str(b, "Object");
    if (t->node_type >= 0) return og_buf_append_str(b, t->nullable ? "String?" : "String");
    return og_buf_append_str(b, og_qtype_name(t, tmp, sizeof tmp));
}

static og_status indent(og_buf *b, int depth)
{
    for (int i = 0; i < depth; i++) OG_TRY(og_buf_append_str(b, "  "));
    return OG_OK;
}

static og_status put_ops(og_buf *b, const og_ir_query *ir, const og_ir_op *ops, size_t n, int depth)
{
    static const char *const dirs[] = {"out", "in", "both"};
    const og_catalog *cat = ir->cat;
    for (size_t i = 0; i < n; i++) {
        const og_ir_op *op = &ops[i];
        OG_TRY(indent(b, depth));
        switch (op->kind) {
        case OG_IR_SCAN:
            OG_TRY(og_buf_printf(b, "scan $%s: %s", var_name(ir, op->var), cat->nodes[op->node_type].name));
            OG_TRY(put_preds(b, ir, "", op->preds, op->npreds));
            break;
        case OG_IR_EXPAND:
            OG_TRY(og_buf_printf(b, "expand $%s -[", var_name(ir, op->src)));
            if (op->edge_var >= 0) OG_TRY(og_buf_printf(b, "$%s: ", var_name(ir, op->edge_var)));
            OG_TRY(og_buf_printf(b, "%s %s %u..%u]-> %s$%s: %s", cat->edges[op->edge_type].name,
                                     dirs[op->dir], (unsigned)op->min_hops, (unsigned)op->max_hops,
                                     op->closing ? "=" : "", var_name(ir, op->dst),
                                     cat->nodes[op->node_type].name));
            OG_TRY(put_preds(b, ir, "", op->preds, op->npreds));
            OG_TRY(put_preds(b, ir, "edge", op->edge_preds, op->nedge_preds));
            break;
        case OG_IR_FILTER:
            OG_TRY(og_buf_append_str(b, "filter "));
            OG_TRY(put_pred(b, ir, &op->pred));
            break;
        case OG_IR_PATH:
            OG_TRY(og_buf_printf(b, "shortest $%s = $%s -[%s %s %u..%u]-> $%s: %s", var_name(ir, op->var),
                                 var_name(ir, op->src), cat->edges[op->edge_type].name, dirs[op->dir],
                                 (unsigned)op->min_hops, (unsigned)op->max_hops, var_name(ir, op->dst),
                                 cat->nodes[op->node_type].name));
            OG_TRY(put_preds(b, ir, "", op->preds, op->npreds));
            break;
        case OG_IR_ANTIJOIN:
            OG_TRY(og_buf_append_str(b, op->sub == OG_QSUB_EXISTS ? "semijoin (" : op->sub == OG_QSUB_COUNT ? "countjoin ("
                                        : op->sub == OG_QSUB_OPTIONAL ? "optional (" : "antijoin ("));
            for (size_t k = 0; k < op->nouter; k++)
                OG_TRY(og_buf_printf(b, "%s$%s", k ? ", " : "", var_name(ir, op->outer_vars[k])));
            OG_TRY(og_buf_append_str(b, ")"));
            if (op->sub == OG_QSUB_OPTIONAL) {
                OG_TRY(og_buf_append_str(b, " binds"));
                for (size_t k = 0; k < op->nopt; k++)
                    OG_TRY(og_buf_printf(b, " $%s", var_name(ir, op->opt_vars[k])));
            }
            if (op->sub == OG_QSUB_COUNT) {
                if (op->sub_arg) {
                    OG_TRY(og_buf_printf(b, " %s(", og_qagg_name((og_qagg)op->sub_agg)));
                    OG_TRY(og_ir_dump_expr(b, ir, op->sub_arg));
                    OG_TRY(og_buf_append_str(b, ")"));
                } else {
                    OG_TRY(og_buf_append_str(b, " count"));
                }
                OG_TRY(og_buf_printf(b, " %s ", og_ir_cmp_name(op->count_op)));
                OG_TRY(og_ir_dump_expr(b, ir, op->count_value));
            }
            OG_TRY(og_buf_append_str(b, "\n"));
            OG_TRY(put_ops(b, ir, op->inner, op->ninner, depth + 1));
            continue;
        }
        OG_TRY(og_buf_append_byte(b, '\n'));
    }
    return OG_OK;
}

static og_status put_access(og_buf *b, const char *label, const og_ir_access *a, size_t n)
{
    OG_TRY(og_buf_printf(b, "  %s:", label));
    if (!n) OG_TRY(og_buf_append_str(b, " -"));
    for (size_t i = 0; i < n; i++)
        OG_TRY(og_buf_printf(b, "%s %s %s", i ? "," : "", a[i].is_edge ? "edge" : "node", a[i].name));
    return og_buf_append_byte(b, '\n');
}

static og_status put_assign(og_buf *b, const og_ir_query *ir, const og_ir_assign *a)
{
    if (a->prop >= 0) OG_TRY(og_buf_printf(b, "%s#%llu", a->name, (unsigned long long)a->prop_id));
    else OG_TRY(og_buf_append_str(b, a->name));
    if (a->is_key) OG_TRY(og_buf_append_str(b, "(key)"));
    return OG_OK;
}

static og_status put_mcond(og_buf *b, const og_ir_query *ir, const og_ir_mcond *c)
{
    switch (c->kind) {
    case OG_QMC_AND: case OG_QMC_OR:
        OG_TRY(og_buf_append_byte(b, '('));
        OG_TRY(put_mcond(b, ir, c->a));
        OG_TRY(og_buf_append_str(b, c->kind == OG_QMC_AND ? " and " : " or "));
        OG_TRY(put_mcond(b, ir, c->b));
        return og_buf_append_byte(b, ')');
    case OG_QMC_NOT:
        OG_TRY(og_buf_append_str(b, "not "));
        return put_mcond(b, ir, c->a);
    case OG_QMC_BARE:
        return put_assign(b, ir, &c->leaf);
    case OG_QMC_ISNULL:
        OG_TRY(put_assign(b, ir, &c->leaf));
        return og_buf_append_str(b, c->negated ? " is not null" : " is null");
    case OG_QMC_CMP:
        if (c->swapped) {
            OG_TRY(og_ir_dump_expr(b, ir, c->leaf.value));
            OG_TRY(og_buf_printf(b, " %s ", og_ir_cmp_name(c->op)));
            return put_assign(b, ir, &c->leaf);
        }
        OG_TRY(put_assign(b, ir, &c->leaf));
        OG_TRY(og_buf_printf(b, " %s ", og_ir_cmp_name(c->op)));
        return og_ir_dump_expr(b, ir, c->leaf.value);
    }
    return OG_OK;
}

static og_status put_mutation(og_buf *b, const og_ir_query *ir, const og_ir_mutation *m)
{
    static const char *const kinds[] = {"insert", "update", "delete"};
    const og_cat_type *t = m->is_edge ? &ir->cat->edges[m->type] : &ir->cat->nodes[m->type];
    OG_TRY(og_buf_printf(b, "  %s %s %s", kinds[m->kind], m->is_edge ? "edge" : "node", t->name));
    if (m->nassigns) {
        OG_TRY(og_buf_append_str(b, m->kind == OG_QM_UPDATE ? " set {" : " {"));
        for (size_t i = 0; i < m->nassigns; i++) {
            OG_TRY(og_buf_append_str(b, i ? ", " : ""));
            OG_TRY(put_assign(b, ir, &m->assigns[i]));
            OG_TRY(og_buf_append_str(b, " = "));
            OG_TRY(og_ir_dump_expr(b, ir, m->assigns[i].value));
        }
        OG_TRY(og_buf_append_byte(b, '}'));
    }
    if (m->kind != OG_QM_INSERT && m->cond) {
        OG_TRY(og_buf_append_str(b, " where "));
        OG_TRY(put_mcond(b, ir, m->cond));
    } else if (m->kind != OG_QM_INSERT) {
        OG_TRY(og_buf_append_str(b, " where "));
        OG_TRY(put_assign(b, ir, &m->where));
        OG_TRY(og_buf_printf(b, " %s ", og_ir_cmp_name(m->where_op)));
        OG_TRY(og_ir_dump_expr(b, ir, m->where.value));
    }
    return og_buf_append_byte(b, '\n');
}

og_status og_ir_dump(og_buf *b, const og_ir_query *ir)
{
    OG_TRY(og_buf_printf(b, "%s %s(", ir->is_mutation ? "mutation" : "query", ir->name));
    for (size_t i = 0; i < ir->nparams; i++) {
        OG_TRY(og_buf_printf(b, "%s$%s: ", i ? ", " : "", ir->params[i].name));
        OG_TRY(put_type(b, &ir->params[i].type));
    }
    OG_TRY(og_buf_append_str(b, ")\n"));
    if (ir->is_mutation) {
        for (size_t i = 0; i < ir->nmutations; i++) OG_TRY(put_mutation(b, ir, &ir->mutations[i]));
    } else {
        OG_TRY(put_ops(b, ir, ir->ops, ir->nops, 1));
        OG_TRY(og_buf_append_str(b, ir->aggregate ? ir->distinct ? "  aggregate distinct " : "  aggregate " : "  return "));
        for (size_t i = 0; i < ir->ncolumns; i++) {
            const og_ir_column *c = &ir->columns[i];
            OG_TRY(og_buf_printf(b, "%s%s%s = ", i ? ", " : "", c->group_key ? "key " : "", c->name));
            OG_TRY(og_ir_dump_expr(b, ir, c->expr));
            OG_TRY(og_buf_append_str(b, ": "));
            OG_TRY(put_type(b, &c->type));
        }
        OG_TRY(og_buf_append_byte(b, '\n'));
        if (ir->rank_order >= 0) {
            OG_TRY(og_buf_printf(b, "  order by rank#%d ", ir->rank_order));
            OG_TRY(put_rank(b, ir, ir->rank_order));
            OG_TRY(og_buf_append_byte(b, '\n'));
        }
        if (ir->norders) {
            OG_TRY(og_buf_append_str(b, ir->rank_order >= 0 ? "  then order " : "  order "));
            for (size_t i = 0; i < ir->norders; i++) {
                OG_TRY(og_buf_append_str(b, i ? ", " : ""));
                OG_TRY(og_ir_dump_expr(b, ir, ir->orders[i].key));
                OG_TRY(og_buf_append_str(b, ir->orders[i].desc ? " desc" : " asc"));
            }
            OG_TRY(og_buf_append_byte(b, '\n'));
        }
        if (ir->has_limit && ir->limit_param >= 0)
            OG_TRY(og_buf_printf(b, "  limit $%s\n", ir->params[ir->limit_param].name));
        else if (ir->has_limit)
            OG_TRY(og_buf_printf(b, "  limit %llu\n", (unsigned long long)ir->limit));
        if (ir->has_offset && ir->offset_param >= 0)
            OG_TRY(og_buf_printf(b, "  offset $%s\n", ir->params[ir->offset_param].name));
        else if (ir->has_offset)
            OG_TRY(og_buf_printf(b, "  offset %llu\n", (unsigned long long)ir->offset));
    }
    OG_TRY(put_access(b, "reads", ir->reads, ir->nreads));
    return put_access(b, "writes", ir->writes, ir->nwrites);
}

og_status og_ir_dump_pred(og_buf *b, const og_ir_query *ir, const og_ir_pred *p) { return put_pred(b, ir, p); }
