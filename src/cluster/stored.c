/*
 * stored.c — stored queries (stored.h): a set of named queries checked against one schema,
 * their parameter contracts as JSON Schema, and invocation by name through the public API.
 *
 * Why the compiler is used here: a stored query is type-checked when it is published and
 * again when it is served, against a schema that may not be any graph's yet (the desired
 * schema of a cluster); og_lint_run is exactly that offline check, and it also yields each
 * query's parameter types.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/stored.h"
#include "compiler/lint.h"
#include "compiler/schema.h"
#include "util/buf.h"
#include "util/error.h"

struct og_stored_set {
    og_stored_query *v;
    size_t len, cap;
};

static char *sdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

og_status og_stored_set_new(og_stored_set **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static void query_free(og_stored_query *q)
{
    free(q->name);
    free(q->tool_name);
    free(q->description);
    free(q->instruction);
    for (size_t i = 0; i < q->nparams; i++) {
        free(q->params[i].name);
        free(q->params[i].gq_type);
    }
    free(q->params);
    free(q->file);
    free(q->source);
}

void og_stored_set_free(og_stored_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->len; i++) query_free(&s->v[i]);
    free(s->v);
    free(s);
}

size_t og_stored_set_count(const og_stored_set *s) { return s ? s->len : 0; }
const og_stored_query *og_stored_set_at(const og_stored_set *s, size_t i) { return i < s->len ? &s->v[i] : NULL; }

const og_stored_query *og_stored_set_find(const og_stored_set *s, const char *name)
{
    for (size_t i = 0; s && i < s->len; i++)
        if (!strcmp(s->v[i].name, name)) return &s->v[i];
    return NULL;
}

const og_stored_query *og_stored_set_find_tool(const og_stored_set *s, const char *tool)
{
    for (size_t i = 0; s && i < s->len; i++)
        if (s->v[i].mcp_expose && !strcmp(s->v[i].tool_name, tool)) return &s->v[i];
    return NULL;
}

static int in_names(const char *const *names, const char *n)
{
    if (!names) return 1;
    for (; *names; names++)
        if (!strcmp(*names, n)) return 1;
    return 0;
}

static int cmp_query(const void *a, const void *b)
{
    return strcmp(((const og_stored_query *)a)->name, ((const og_stored_query *)b)->name);
}

/* Fills q from one checked query of the lint report. */
static og_status fill_query(og_stored_query *q, const og_lint_query *lq, const char *file, const char *text, size_t len)
{
    const og_ir_query *ir = lq->ir;
    q->name = sdup(lq->name);
    q->tool_name = sdup(ir->mcp_tool_name ? ir->mcp_tool_name : lq->name);
    q->description = sdup(ir->description);
    q->instruction = sdup(ir->instruction);
    q->mutation = lq->is_mutation;
    q->mcp_expose = !ir->mcp_hidden;
    q->file = sdup(file);
    q->source = malloc(len + 1);
    if (q->source) {
        memcpy(q->source, text, len);
        q->source[len] = 0;
    }
    if (!q->name || !q->tool_name || !q->file || !q->source) return og_err(OG_ERR_NOMEM, "out of memory");
    if (ir->nparams) {
        q->params = calloc(ir->nparams, sizeof *q->params);
        if (!q->params) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < ir->nparams; i++) {
        og_stored_param *p = &q->params[q->nparams++];
        og_qtype t = ir->params[i].type;
        char tb[64];
        p->nullable = t.nullable;
        t.nullable = 0;
        p->name = sdup(ir->params[i].name);
        p->gq_type = sdup(og_lint_type_name(&t, tb, sizeof tb));
        p->kind = og_lint_scalar_kind(t.t.id);
        if (t.t.id == OG_T_LIST) p->item_kind = og_lint_scalar_kind(t.t.elem);
        if (t.t.id == OG_T_VECTOR) p->vector_dim = t.t.dim;
        if (!p->name || !p->gq_type) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    return OG_OK;
}

og_status og_stored_set_add(og_stored_set *s, const char *file, const char *text, size_t len,
                            const char *const *names, const char *schema, size_t schema_len)
{
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, "schema.pg", schema, schema_len, &d);
    if (st != OG_OK) {
        og_buf b = OG_BUF_INIT;
        if (d.len) og_diag_format(&b, &d.v[0]);
        while (b.len && b.data[b.len - 1] == '\n') b.len--;
        st = og_err(st, "the schema does not compile: %.*s", (int)b.len, b.len ? (const char *)b.data : "");
        og_buf_free(&b);
        og_diags_free(&d);
        return st;
    }
    og_diags_free(&d);
    og_lint_report r;
    if (og_lint_run(&r, cat, file, text, len) != OG_OK) {
        og_catalog_free(cat);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    st = OG_OK;
    for (size_t i = 0; i < r.nfindings && st == OG_OK; i++)
        if (!r.findings[i].warning && !strcmp(r.findings[i].code, "Q000"))
            st = og_err(OG_ERR_PARSE, "%s:%u:%u: %s", file, r.findings[i].diag.line, r.findings[i].diag.col,
                        r.findings[i].message);
    /* every requested name must be declared, once */
    for (size_t k = 0; st == OG_OK && names && names[k]; k++) {
        int found = 0;
        for (size_t i = 0; i < r.nqueries; i++) found |= !strcmp(r.queries[i].name, names[k]);
        if (!found) st = og_err(OG_ERR_NOT_FOUND, "%s: no `query %s` declaration", file, names[k]);
    }
    for (size_t i = 0; st == OG_OK && i < r.nqueries; i++) {
        const og_lint_query *lq = &r.queries[i];
        if (!in_names(names, lq->name)) continue;
        if (og_stored_set_find(s, lq->name))
            st = og_err(OG_ERR_ALREADY_EXISTS, "stored query `%s` is declared twice (%s)", lq->name, file);
        else if (!lq->ok)
            st = og_err(OG_ERR_TYPE, "query `%s` does not type-check against the schema: %s", lq->name, lq->error);
    }
    for (size_t i = 0; st == OG_OK && i < r.nqueries; i++) {
        const og_lint_query *lq = &r.queries[i];
        if (!in_names(names, lq->name) || !lq->ir) continue;
        const char *tool = lq->ir->mcp_tool_name ? lq->ir->mcp_tool_name : lq->name;
        int valid = *tool && strlen(tool) <= 64;
        for (const char *c = tool; *c; c++)
            valid &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
        if (!valid) {
            st = og_err(OG_ERR_INVALID, "query `%s`: MCP tool name `%s` must be 1-64 letters, digits, `_` or `-`", lq->name, tool);
            break;
        }
        for (size_t k = 0; k < s->len && st == OG_OK; k++)
            if (!strcmp(s->v[k].tool_name, tool))
                st = og_err(OG_ERR_ALREADY_EXISTS, "duplicate MCP tool name `%s` (queries `%s` and `%s`)", tool, s->v[k].name, lq->name);
        for (size_t k = 0; k < i && st == OG_OK; k++) {
            const og_lint_query *o = &r.queries[k];
            if (!in_names(names, o->name) || !o->ir) continue;
            if (!strcmp(o->ir->mcp_tool_name ? o->ir->mcp_tool_name : o->name, tool))
                st = og_err(OG_ERR_ALREADY_EXISTS, "duplicate MCP tool name `%s` (queries `%s` and `%s`)", tool, o->name, lq->name);
        }
    }
    size_t base = s->len;
    for (size_t i = 0; st == OG_OK && i < r.nqueries; i++) {
        const og_lint_query *lq = &r.queries[i];
        if (!in_names(names, lq->name)) continue;
        if (s->len == s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 8;
            og_stored_query *nv = realloc(s->v, nc * sizeof *nv);
            if (!nv) {
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            s->v = nv;
            s->cap = nc;
        }
        og_stored_query *q = &s->v[s->len++];
        memset(q, 0, sizeof *q);
        st = fill_query(q, lq, file, text, len);
    }
    if (st != OG_OK) {
        while (s->len > base) query_free(&s->v[--s->len]);
    } else {
        qsort(s->v, s->len, sizeof *s->v, cmp_query);
    }
    og_lint_report_free(&r);
    og_catalog_free(cat);
    return st;
}

static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

static json_t *param_json(const og_stored_param *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "kind", json_string(p->kind));
    if (p->item_kind) json_object_set_new(o, "item_kind", json_string(p->item_kind));
    if (p->vector_dim) json_object_set_new(o, "vector_dim", json_integer(p->vector_dim));
    json_object_set_new(o, "nullable", json_boolean(p->nullable));
    return o;
}

og_status og_stored_set_list_json(char **out, const og_stored_set *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < og_stored_set_count(s); i++) {
        const og_stored_query *q = &s->v[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(q->name));
        json_object_set_new(o, "tool_name", json_string(q->tool_name));
        json_object_set_new(o, "mcp_expose", json_boolean(q->mcp_expose));
        if (q->description) json_object_set_new(o, "description", json_string(q->description));
        if (q->instruction) json_object_set_new(o, "instruction", json_string(q->instruction));
        json_object_set_new(o, "mutation", json_boolean(q->mutation));
        json_t *ps = json_array();
        for (size_t k = 0; k < q->nparams; k++) json_array_append_new(ps, param_json(&q->params[k]));
        json_object_set_new(o, "params", ps);
        json_array_append_new(arr, o);
    }
    json_t *root = json_object();
    json_object_set_new(root, "queries", arr);
    *out = dump(root);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static json_t *kind_schema(const char *kind, const char *item_kind, unsigned dim)
{
    json_t *o = json_object();
    if (!strcmp(kind, "string") || !strcmp(kind, "blob")) {
        json_object_set_new(o, "type", json_string("string"));
    } else if (!strcmp(kind, "bool")) {
        json_object_set_new(o, "type", json_string("boolean"));
    } else if (!strcmp(kind, "int")) {
        json_object_set_new(o, "type", json_string("integer"));
    } else if (!strcmp(kind, "bigint")) {
        /* 64-bit: beyond 2^53 a JSON number loses digits, so a decimal string is accepted too */
        json_object_set_new(o, "type", json_pack("[ss]", "integer", "string"));
        json_object_set_new(o, "pattern", json_string("^-?[0-9]+$"));
    } else if (!strcmp(kind, "float")) {
        json_object_set_new(o, "type", json_string("number"));
    } else if (!strcmp(kind, "date")) {
        json_object_set_new(o, "type", json_string("string"));
        json_object_set_new(o, "format", json_string("date"));
    } else if (!strcmp(kind, "datetime")) {
        json_object_set_new(o, "type", json_string("string"));
        json_object_set_new(o, "format", json_string("date-time"));
    } else if (!strcmp(kind, "vector")) {
        json_object_set_new(o, "type", json_string("array"));
        json_object_set_new(o, "items", json_pack("{ss}", "type", "number"));
        json_object_set_new(o, "minItems", json_integer(dim));
        json_object_set_new(o, "maxItems", json_integer(dim));
    } else if (!strcmp(kind, "list")) {
        json_object_set_new(o, "type", json_string("array"));
        json_object_set_new(o, "items", kind_schema(item_kind ? item_kind : "string", NULL, 0));
    }
    return o;
}

json_t *og_stored_params_schema_json(const og_stored_query *q)
{
    json_t *props = json_object(), *req = json_array();
    for (size_t i = 0; i < q->nparams; i++) {
        const og_stored_param *p = &q->params[i];
        json_t *ps = kind_schema(p->kind, p->item_kind, p->vector_dim);
        if (p->nullable) {
            json_t *t = json_object_get(ps, "type");
            json_t *nt = json_is_array(t) ? json_copy(t) : json_pack("[O]", t);
            json_array_append_new(nt, json_string("null"));
            json_object_set_new(ps, "type", nt);
        } else {
            json_array_append_new(req, json_string(p->name));
        }
        char desc[160];
        snprintf(desc, sizeof desc, "$%s: %s%s", p->name, p->gq_type, p->nullable ? "?" : "");
        json_object_set_new(ps, "description", json_string(desc));
        json_object_set_new(props, p->name, ps);
    }
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("object"));
    json_object_set_new(o, "properties", props);
    json_object_set_new(o, "required", req);
    json_object_set_new(o, "additionalProperties", json_false());
    return o;
}

og_status og_stored_query_params_schema(char **out, const og_stored_query *q)
{
    *out = dump(og_stored_params_schema_json(q));
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static const char *json_kind_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* 1 when v's JSON kind can carry a value of `kind` (the engine checks the value itself). */
static int kind_accepts(const char *kind, const json_t *v)
{
    if (!strcmp(kind, "string") || !strcmp(kind, "blob") || !strcmp(kind, "date") || !strcmp(kind, "datetime"))
        return json_is_string(v);
    if (!strcmp(kind, "bool")) return json_is_boolean(v);
    if (!strcmp(kind, "int")) return json_is_integer(v);
    if (!strcmp(kind, "bigint")) return json_is_integer(v) || json_is_string(v);
    if (!strcmp(kind, "float")) return json_is_number(v);
    if (!strcmp(kind, "vector") || !strcmp(kind, "list")) return json_is_array(v);
    return 1;
}

static og_status check_params(const og_stored_query *q, const json_t *params)
{
    if (!json_is_object(params)) return og_err(OG_ERR_INVALID, "params must be a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)params, key, v) {
        size_t i;
        for (i = 0; i < q->nparams && strcmp(q->params[i].name, key); i++) {}
        if (i == q->nparams)
            return og_err(OG_ERR_INVALID, "param `$%s`: query `%s` declares no such parameter", key, q->name);
    }
    for (size_t i = 0; i < q->nparams; i++) {
        const og_stored_param *p = &q->params[i];
        json_t *pv = json_object_get(params, p->name);
        if (!pv || json_is_null(pv)) {
            if (!p->nullable)
                return og_err(OG_ERR_INVALID, "param `$%s`: missing required parameter of type %s", p->name, p->gq_type);
            continue;
        }
        if (!kind_accepts(p->kind, pv))
            return og_err(OG_ERR_INVALID, "param `$%s`: expected %s (%s), got %s", p->name, p->gq_type, p->kind,
                          json_kind_name(pv));
        if (!strcmp(p->kind, "vector") && json_array_size(pv) != p->vector_dim)
            return og_err(OG_ERR_INVALID, "param `$%s`: expected %u numbers for %s, got %zu", p->name, p->vector_dim,
                          p->gq_type, json_array_size(pv));
        if (!strcmp(p->kind, "list") && p->item_kind) {
            size_t k;
            json_t *item;
            json_array_foreach(pv, k, item) {
                if (!kind_accepts(p->item_kind, item))
                    return og_err(OG_ERR_INVALID, "param `$%s`: item %zu: expected %s, got %s", p->name, k,
                                  p->item_kind, json_kind_name(item));
            }
        }
    }
    return OG_OK;
}

og_status og_stored_check_params(const og_stored_query *q, const char *params_json)
{
    if (!params_json || !*params_json) params_json = "{}";
    json_error_t je;
    json_t *params = json_loads(params_json, JSON_REJECT_DUPLICATES, &je);
    if (!params) return og_err(OG_ERR_INVALID, "params are not valid JSON: %s", je.text);
    og_status st = check_params(q, params);
    json_decref(params);
    return st;
}

static json_t *commit_json(og_db *db, const og_receipt *r)
{
    if (!r->published) return json_null();
    char *text = NULL;
    if (og_db_commit_show(&text, db, r->commit) != OG_OK) return json_pack("{ss}", "graph_commit_id", r->commit);
    json_t *c = json_loads(text, 0, NULL);
    og_free(text);
    if (!c) return json_pack("{ss}", "graph_commit_id", r->commit);
    json_t *o = json_object();
    json_object_set_new(o, "graph_commit_id", json_string(r->commit));
    json_object_set_new(o, "graph_branch", json_string(r->branch));
    json_t *parents = json_object_get(c, "parents");
    if (json_array_size(parents) > 0) json_object_set(o, "parent_commit_id", json_array_get(parents, 0));
    if (json_array_size(parents) > 1) json_object_set(o, "merged_parent_commit_id", json_array_get(parents, 1));
    json_t *actor = json_object_get(c, "actor");
    if (json_is_string(actor)) json_object_set(o, "actor_id", actor);
    json_t *at = json_object_get(c, "created_at");
    if (at) json_object_set(o, "created_at", at);
    json_decref(c);
    return o;
}

og_status og_stored_invoke(char **out, og_db *db, const og_stored_query *q, const og_stored_invoke_opts *o)
{
    *out = NULL;
    og_stored_invoke_opts dflt = {.expect_mutation = -1};
    if (!o) o = &dflt;
    if (o->expect_mutation >= 0 && o->expect_mutation != q->mutation)
        return og_err(OG_ERR_INVALID, "query `%s` is a %s, but expect_mutation is %s", q->name,
                      q->mutation ? "mutation" : "read", o->expect_mutation ? "true" : "false");
    if (q->mutation && o->snapshot)
        return og_err(OG_ERR_INVALID, "query `%s` is a mutation: a snapshot cannot be written (use branch)", q->name);
    if (o->branch && o->snapshot) return og_err(OG_ERR_INVALID, "give branch or snapshot, not both");
    const char *params = o->params_json && *o->params_json ? o->params_json : "{}";
    OG_TRY(og_stored_check_params(q, params));
    size_t len = strlen(q->source);
    if (!q->mutation) {
        og_rows *rows = NULL;
        og_read_opts at = {.branch = o->branch, .commit = o->snapshot};
        OG_TRY(og_db_query(&rows, db, q->source, len, q->name, params, &at));
        if (o->total_rows) *o->total_rows = og_rows_count(rows);
        if (o->row_limit) og_rows_slice(rows, o->row_offset, o->row_limit);
        size_t n = 0;
        og_status st = og_rows_render(out, &n, rows, OG_FORMAT_JSON, o->snapshot ? o->snapshot : (o->branch ? o->branch : "main"));
        og_rows_free(rows);
        return st;
    }
    og_receipt r;
    memset(&r, 0, sizeof r);
    og_db_mutate_opts mo = {.branch = o->branch, .expected_head = o->expected_head};
    OG_TRY(og_db_mutate_ex(&r, db, q->source, len, q->name, params, &mo));
    return og_stored_change_output(out, db, q->name, o->branch, &r, o->actor);
}

og_status og_stored_change_output(char **out, og_db *db, const char *query_name, const char *branch,
                                  const og_receipt *r, const char *actor)
{
    json_t *res = json_object();
    json_object_set_new(res, "query_name", json_string(query_name ? query_name : ""));
    json_object_set_new(res, "branch", json_string(branch ? branch : "main"));
    json_object_set_new(res, "affected_nodes", json_integer((json_int_t)r->affected_nodes));
    json_object_set_new(res, "affected_edges", json_integer((json_int_t)r->affected_edges));
    /* the same rows by what happened to them (an upsert is an update, not an insert) */
    json_object_set_new(res, "inserted", json_integer((json_int_t)r->inserted));
    json_object_set_new(res, "updated", json_integer((json_int_t)r->updated));
    json_object_set_new(res, "deleted", json_integer((json_int_t)r->deleted));
    if (actor) json_object_set_new(res, "actor_id", json_string(actor));
    json_object_set_new(res, "commit", commit_json(db, r));
    *out = dump(res);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}
