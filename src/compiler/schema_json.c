/*
 * schema_json.c — the accepted schema IR as its JSON object (STORAGE.md §4, stored at
 * _graph/schemas/<id>.json): serialisation (hand-written, so the bytes are canonical:
 * compact, fixed key order, no floats — numbers are integers, range bounds keep their
 * source text) and parsing back with jansson.  Round trip is byte-stable:
 * to_json(from_json(to_json(c))) == to_json(c).  Source positions are not part of the IR.
 *
 * Layout (see docs/schema-language.md for the full description):
 *   {"format":"omnigraph-schema-ir","ir_version":1,"domain":...,"next_id":N,
 *    "interfaces":[T...],"nodes":[T...],"edges":[T...],"source":"<.pg text>"}
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/schema.h"
#include "compiler/schema_internal.h"
#include "util/error.h"

#define OG_SCHEMA_IR_FORMAT "omnigraph-schema-ir"
#define OG_SCHEMA_IR_VERSION 1

/* ---- writer --------------------------------------------------------------------------------- */

static og_status w_str(og_buf *b, const char *s)
{
    if (!s) return og_buf_append_str(b, "null");
    OG_TRY(og_buf_append_byte(b, '"'));
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': OG_TRY(og_buf_append_str(b, "\\\"")); break;
        case '\\': OG_TRY(og_buf_append_str(b, "\\\\")); break;
        case '\n': OG_TRY(og_buf_append_str(b, "\\n")); break;
        case '\r': OG_TRY(og_buf_append_str(b, "\\r")); break;
        case '\t': OG_TRY(og_buf_append_str(b, "\\t")); break;
        default:
            if (*c < 0x20) OG_TRY(og_buf_printf(b, "\\u%04x", *c));
            else OG_TRY(og_buf_append_byte(b, *c));
        }
    }
    return og_buf_append_byte(b, '"');
}

static og_status w_key(og_buf *b, int first, const char *k)
{
    if (!first) OG_TRY(og_buf_append_byte(b, ','));
    OG_TRY(w_str(b, k));
    return og_buf_append_byte(b, ':');
}

static const char *lit_kind_name(og_lit_kind k)
{
    switch (k) {
    case OG_LIT_STRING: return "string";
    case OG_LIT_INT: return "int";
    case OG_LIT_FLOAT: return "float";
    case OG_LIT_BOOL: return "bool";
    default: return "ident";
    }
}

static og_status w_annots(og_buf *b, const og_annotation *a, size_t n)
{
    OG_TRY(og_buf_append_byte(b, '['));
    for (size_t i = 0; i < n; i++) {
        if (i) OG_TRY(og_buf_append_byte(b, ','));
        OG_TRY(og_buf_append_str(b, "{\"name\":"));
        OG_TRY(w_str(b, a[i].name));
        OG_TRY(og_buf_printf(b, ",\"parens\":%s,\"args\":[", a[i].has_parens ? "true" : "false"));
        for (size_t j = 0; j < a[i].nargs; j++) {
            if (j) OG_TRY(og_buf_append_byte(b, ','));
            OG_TRY(og_buf_append_str(b, "{\"key\":"));
            OG_TRY(w_str(b, a[i].args[j].key));
            OG_TRY(og_buf_printf(b, ",\"kind\":\"%s\",\"text\":", lit_kind_name(a[i].args[j].kind)));
            OG_TRY(w_str(b, a[i].args[j].text));
            OG_TRY(og_buf_append_byte(b, '}'));
        }
        OG_TRY(og_buf_append_str(b, "]}"));
    }
    return og_buf_append_byte(b, ']');
}

static og_status w_prop(og_buf *b, const og_cat_prop *p)
{
    OG_TRY(og_buf_append_str(b, "{\"name\":"));
    OG_TRY(w_str(b, p->name));
    OG_TRY(og_buf_printf(b, ",\"property_id\":%llu,\"type\":", (unsigned long long)p->id));
    char tn[64];
    if (p->type.id == OG_T_LIST) snprintf(tn, sizeof tn, "[%s]", og_scalar_type_name(p->type.elem));
    else if (p->type.id == OG_T_VECTOR) snprintf(tn, sizeof tn, "Vector(%u)", p->type.dim);
    else snprintf(tn, sizeof tn, "%s", p->is_enum ? "enum" : og_scalar_type_name(p->type.id));
    OG_TRY(w_str(b, tn));
    OG_TRY(og_buf_printf(b, ",\"nullable\":%s", p->nullable ? "true" : "false"));
    if (p->is_enum) {
        OG_TRY(og_buf_append_str(b, ",\"enum\":["));
        for (size_t i = 0; i < p->n_enum; i++) {
            if (i) OG_TRY(og_buf_append_byte(b, ','));
            OG_TRY(w_str(b, p->enum_values[i]));
        }
        OG_TRY(og_buf_append_byte(b, ']'));
    }
    OG_TRY(og_buf_printf(b, ",\"index\":\"%s\",\"key\":%s", og_index_kind_name(p->index), p->is_key ? "true" : "false"));
    OG_TRY(w_key(b, 0, "embed"));
    if (p->embed_source) {
        OG_TRY(og_buf_append_str(b, "{\"source\":"));
        OG_TRY(w_str(b, p->embed_source));
        OG_TRY(og_buf_append_str(b, ",\"model\":"));
        OG_TRY(w_str(b, p->embed_model));
        OG_TRY(og_buf_append_byte(b, '}'));
    } else {
        OG_TRY(og_buf_append_str(b, "null"));
    }
    OG_TRY(w_key(b, 0, "description"));
    OG_TRY(w_str(b, p->description));
    OG_TRY(w_key(b, 0, "rename_from"));
    OG_TRY(w_str(b, p->rename_from));
    OG_TRY(w_key(b, 0, "interface"));
    OG_TRY(w_str(b, p->interface));
    OG_TRY(w_key(b, 0, "annotations"));
    OG_TRY(w_annots(b, p->annots, p->n_annots));
    return og_buf_append_byte(b, '}');
}

static og_status w_bound(og_buf *b, const og_range_bound *r)
{
    if (!r->present) return og_buf_append_str(b, "null");
    OG_TRY(og_buf_append_str(b, "{\"text\":"));
    OG_TRY(w_str(b, r->text));
    return og_buf_printf(b, ",\"float\":%s}", r->is_float ? "true" : "false");
}

static og_status w_cons(og_buf *b, const og_cat_constraint *c)
{
    OG_TRY(og_buf_printf(b, "{\"kind\":\"%s\",\"columns\":[", og_cons_kind_name(c->kind)));
    for (size_t i = 0; i < c->ncols; i++) {
        if (i) OG_TRY(og_buf_append_byte(b, ','));
        OG_TRY(w_str(b, c->cols[i]));
    }
    OG_TRY(og_buf_printf(b, "],\"from_property\":%s", c->from_property ? "true" : "false"));
    if (c->kind == OG_CONS_RANGE) {
        OG_TRY(og_buf_append_str(b, ",\"min\":"));
        OG_TRY(w_bound(b, &c->min));
        OG_TRY(og_buf_append_str(b, ",\"max\":"));
        OG_TRY(w_bound(b, &c->max));
    }
    if (c->kind == OG_CONS_CHECK) {
        OG_TRY(og_buf_append_str(b, ",\"pattern\":"));
        OG_TRY(w_str(b, c->pattern));
    }
    return og_buf_append_byte(b, '}');
}

static og_status w_type(og_buf *b, const og_cat_type *t)
{
    OG_TRY(og_buf_append_str(b, "{\"name\":"));
    OG_TRY(w_str(b, t->name));
    OG_TRY(og_buf_printf(b, ",\"type_id\":%llu", (unsigned long long)t->id));
    if (t->kind != OG_KIND_INTERFACE) {
        char dir[96];
        OG_TRY(og_buf_printf(b, ",\"table_incarnation_id\":%llu,\"table_dir\":", (unsigned long long)t->incarnation));
        OG_TRY(w_str(b, og_cat_type_table_dir(t, dir, sizeof dir)));
    }
    if (t->kind == OG_KIND_NODE) {
        OG_TRY(og_buf_append_str(b, ",\"implements\":["));
        for (size_t i = 0; i < t->nimplements; i++) {
            if (i) OG_TRY(og_buf_append_byte(b, ','));
            OG_TRY(w_str(b, t->implements[i]));
        }
        OG_TRY(og_buf_append_str(b, "],\"key\":["));
        for (size_t i = 0; i < t->nkey; i++) {
            if (i) OG_TRY(og_buf_append_byte(b, ','));
            OG_TRY(w_str(b, t->props[t->key_props[i]].name));
        }
        OG_TRY(og_buf_append_byte(b, ']'));
    }
    if (t->kind == OG_KIND_EDGE) {
        OG_TRY(og_buf_append_str(b, ",\"from\":"));
        OG_TRY(w_str(b, t->from));
        OG_TRY(og_buf_append_str(b, ",\"to\":"));
        OG_TRY(w_str(b, t->to));
        OG_TRY(og_buf_printf(b, ",\"card\":{\"min\":%u,\"max\":", t->card_min));
        if (t->card_max == OG_CARD_UNBOUNDED) OG_TRY(og_buf_append_str(b, "null"));
        else OG_TRY(og_buf_printf(b, "%u", t->card_max));
        OG_TRY(og_buf_printf(b, ",\"written\":%s}", t->card_written ? "true" : "false"));
    }
    if (t->kind != OG_KIND_INTERFACE) {
        OG_TRY(w_key(b, 0, "description"));
        OG_TRY(w_str(b, t->description));
        OG_TRY(w_key(b, 0, "instruction"));
        OG_TRY(w_str(b, t->instruction));
        OG_TRY(w_key(b, 0, "rename_from"));
        OG_TRY(w_str(b, t->rename_from));
        OG_TRY(w_key(b, 0, "annotations"));
        OG_TRY(w_annots(b, t->annots, t->n_annots));
    }
    OG_TRY(og_buf_append_str(b, ",\"properties\":["));
    for (size_t i = 0; i < t->nprops; i++) {
        if (i) OG_TRY(og_buf_append_byte(b, ','));
        OG_TRY(w_prop(b, &t->props[i]));
    }
    OG_TRY(og_buf_append_byte(b, ']'));
    if (t->kind != OG_KIND_INTERFACE) {
        OG_TRY(og_buf_append_str(b, ",\"constraints\":["));
        for (size_t i = 0; i < t->ncons; i++) {
            if (i) OG_TRY(og_buf_append_byte(b, ','));
            OG_TRY(w_cons(b, &t->cons[i]));
        }
        OG_TRY(og_buf_append_byte(b, ']'));
    }
    return og_buf_append_byte(b, '}');
}

og_status og_catalog_to_json(og_buf *out, const og_catalog *cat)
{
    OG_TRY(og_buf_printf(out, "{\"format\":\"%s\",\"ir_version\":%d,\"domain\":", OG_SCHEMA_IR_FORMAT, OG_SCHEMA_IR_VERSION));
    OG_TRY(w_str(out, cat->domain));
    OG_TRY(og_buf_printf(out, ",\"next_id\":%llu", (unsigned long long)cat->next_id));
    const char *names[3] = {"interfaces", "nodes", "edges"};
    const og_cat_type *v[3] = {cat->interfaces, cat->nodes, cat->edges};
    size_t n[3] = {cat->ninterfaces, cat->nnodes, cat->nedges};
    for (int k = 0; k < 3; k++) {
        OG_TRY(og_buf_printf(out, ",\"%s\":[", names[k]));
        for (size_t i = 0; i < n[k]; i++) {
            if (i) OG_TRY(og_buf_append_byte(out, ','));
            OG_TRY(w_type(out, &v[k][i]));
        }
        OG_TRY(og_buf_append_byte(out, ']'));
    }
    OG_TRY(og_buf_append_str(out, ",\"source\":"));
    OG_TRY(w_str(out, cat->source));
    OG_TRY(og_buf_append_byte(out, '}'));
    og_buf_cstr(out);
    return OG_OK;
}

/* ---- reader --------------------------------------------------------------------------------- */

typedef struct reader {
    og_status st;
    char what[200];
} reader;

static void bad(reader *r, const char *what)
{
    if (r->st == OG_OK) {
        r->st = OG_ERR_CORRUPT;
        snprintf(r->what, sizeof r->what, "%s", what);
    }
}

static char *r_str(reader *r, json_t *o, const char *key, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required) bad(r, key);
        return NULL;
    }
    if (!json_is_string(v)) {
        bad(r, key);
        return NULL;
    }
    char *s = og_sndup(json_string_value(v), json_string_length(v));
    if (!s) r->st = OG_ERR_NOMEM;
    return s;
}

static uint64_t r_u64(reader *r, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        bad(r, key);
        return 0;
    }
    return (uint64_t)json_integer_value(v);
}

static int r_bool(reader *r, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v)) {
        bad(r, key);
        return 0;
    }
    return json_is_true(v);
}

static json_t *r_arr(reader *r, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_array(v)) {
        bad(r, key);
        return NULL;
    }
    return v;
}

static void r_annots(reader *r, json_t *arr, og_annotation **out, size_t *n)
{
    size_t cnt = json_array_size(arr);
    if (!cnt) return;
    *out = calloc(cnt, sizeof **out);
    if (!*out) {
        r->st = OG_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < cnt && r->st == OG_OK; i++) {
        json_t *o = json_array_get(arr, i);
        og_annotation *a = &(*out)[i];
        *n = i + 1;
        a->name = r_str(r, o, "name", 1);
        a->has_parens = r_bool(r, o, "parens");
        json_t *args = r_arr(r, o, "args");
        size_t na = json_array_size(args);
        if (na) {
            a->args = calloc(na, sizeof *a->args);
            if (!a->args) {
                r->st = OG_ERR_NOMEM;
                return;
            }
        }
        for (size_t j = 0; j < na && r->st == OG_OK; j++) {
            json_t *ao = json_array_get(args, j);
            a->nargs = j + 1;
            a->args[j].key = r_str(r, ao, "key", 0);
            a->args[j].text = r_str(r, ao, "text", 1);
            char *k = r_str(r, ao, "kind", 1);
            if (!k) return;
            if (!strcmp(k, "string")) a->args[j].kind = OG_LIT_STRING;
            else if (!strcmp(k, "int")) a->args[j].kind = OG_LIT_INT;
            else if (!strcmp(k, "float")) a->args[j].kind = OG_LIT_FLOAT;
            else if (!strcmp(k, "bool")) a->args[j].kind = OG_LIT_BOOL;
            else if (!strcmp(k, "ident")) a->args[j].kind = OG_LIT_IDENT;
            else bad(r, "annotation argument kind");
            free(k);
        }
    }
}

static int parse_scalar(const char *s, og_type_id *out)
{
    static const struct { const char *n; og_type_id id; } m[] = {
        {"Bool", OG_T_BOOL}, {"I32", OG_T_I32}, {"I64", OG_T_I64}, {"U32", OG_T_U32}, {"U64", OG_T_U64},
        {"F32", OG_T_F32}, {"F64", OG_T_F64}, {"Date", OG_T_DATE32}, {"DateTime", OG_T_DATE64},
        {"String", OG_T_STRING}, {"Blob", OG_T_BLOB},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(s, m[i].n)) {
            *out = m[i].id;
            return 1;
        }
    return 0;
}

static void r_prop(reader *r, json_t *o, og_cat_prop *p)
{
    p->name = r_str(r, o, "name", 1);
    p->id = r_u64(r, o, "property_id");
    char *ty = r_str(r, o, "type", 1);
    if (!ty) return;
    size_t tl = strlen(ty);
    if (!strcmp(ty, "enum")) {
        p->type.id = OG_T_STRING;
        p->is_enum = 1;
    } else if (tl > 2 && ty[0] == '[' && ty[tl - 1] == ']') {
        ty[tl - 1] = 0;
        p->type.id = OG_T_LIST;
        if (!parse_scalar(ty + 1, &p->type.elem)) bad(r, "list element type");
    } else if (!strncmp(ty, "Vector(", 7)) {
        char *end = NULL;
        unsigned long d = strtoul(ty + 7, &end, 10);
        if (!end || strcmp(end, ")") || d == 0 || d > 2147483647ul) bad(r, "vector dimension");
        p->type.id = OG_T_VECTOR;
        p->type.dim = (uint32_t)d;
    } else if (!parse_scalar(ty, &p->type.id)) {
        bad(r, "property type");
    }
    free(ty);
    p->nullable = r_bool(r, o, "nullable");
    if (p->is_enum) {
        json_t *ev = r_arr(r, o, "enum");
        size_t n = json_array_size(ev);
        if (!n) bad(r, "enum values");
        p->enum_values = calloc(n + 1, sizeof(char *));
        if (!p->enum_values) {
            r->st = OG_ERR_NOMEM;
            return;
        }
        for (size_t i = 0; i < n && r->st == OG_OK; i++) {
            json_t *s = json_array_get(ev, i);
            if (!json_is_string(s)) {
                bad(r, "enum value");
                return;
            }
            p->enum_values[i] = og_sdup(json_string_value(s));
            p->n_enum = i + 1;
            if (!p->enum_values[i]) r->st = OG_ERR_NOMEM;
            else if (i && strcmp(p->enum_values[i - 1], p->enum_values[i]) >= 0) bad(r, "enum values not sorted");
        }
    }
    char *ix = r_str(r, o, "index", 1);
    if (ix) {
        if (!strcmp(ix, "none")) p->index = OG_INDEX_NONE;
        else if (!strcmp(ix, "btree")) p->index = OG_INDEX_BTREE;
        else if (!strcmp(ix, "inverted")) p->index = OG_INDEX_INVERTED;
        else if (!strcmp(ix, "vector")) p->index = OG_INDEX_VECTOR;
        else bad(r, "index kind");
        free(ix);
    }
    p->is_key = r_bool(r, o, "key");
    json_t *em = json_object_get(o, "embed");
    if (json_is_object(em)) {
        p->embed_source = r_str(r, em, "source", 1);
        p->embed_model = r_str(r, em, "model", 0);
    } else if (em && !json_is_null(em)) {
        bad(r, "embed");
    }
    p->description = r_str(r, o, "description", 0);
    p->rename_from = r_str(r, o, "rename_from", 0);
    p->interface = r_str(r, o, "interface", 0);
    json_t *an = r_arr(r, o, "annotations");
    if (an) r_annots(r, an, &p->annots, &p->n_annots);
}

static void r_bound(reader *r, json_t *v, og_range_bound *b)
{
    if (!v || json_is_null(v)) return;
    if (!json_is_object(v)) {
        bad(r, "range bound");
        return;
    }
    b->present = 1;
    b->text = r_str(r, v, "text", 1);
    b->is_float = r_bool(r, v, "float");
    if (!b->text) return;
    char *end = NULL;
    b->f = strtod(b->text, &end);
    if (!end || *end) bad(r, "range bound text");
    if (!b->is_float) {
        b->i = strtoll(b->text, &end, 10);
        if (!end || *end) bad(r, "range bound integer");
    }
}

static void r_cons(reader *r, json_t *o, og_cat_type *t, og_cat_constraint *c)
{
    char *k = r_str(r, o, "kind", 1);
    if (!k) return;
    if (!strcmp(k, "key")) c->kind = OG_CONS_KEY;
    else if (!strcmp(k, "unique")) c->kind = OG_CONS_UNIQUE;
    else if (!strcmp(k, "index")) c->kind = OG_CONS_INDEX;
    else if (!strcmp(k, "range")) c->kind = OG_CONS_RANGE;
    else if (!strcmp(k, "check")) c->kind = OG_CONS_CHECK;
    else bad(r, "constraint kind");
    free(k);
    json_t *cols = r_arr(r, o, "columns");
    size_t n = json_array_size(cols);
    if (!n) bad(r, "constraint columns");
    c->cols = calloc(n + 1, sizeof(char *));
    c->col_props = calloc(n + 1, sizeof(int));
    if (!c->cols || !c->col_props) {
        r->st = OG_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < n && r->st == OG_OK; i++) {
        json_t *s = json_array_get(cols, i);
        if (!json_is_string(s)) {
            bad(r, "constraint column");
            return;
        }
        c->cols[i] = og_sdup(json_string_value(s));
        c->ncols = i + 1;
        if (!c->cols[i]) {
            r->st = OG_ERR_NOMEM;
            return;
        }
        size_t pi;
        if (t->kind == OG_KIND_EDGE && !strcmp(c->cols[i], "@src")) c->col_props[i] = OG_COL_SRC;
        else if (t->kind == OG_KIND_EDGE && !strcmp(c->cols[i], "@dst")) c->col_props[i] = OG_COL_DST;
        else if (og_cat_type_prop(t, c->cols[i], &pi)) c->col_props[i] = (int)pi;
        else if (t->kind == OG_KIND_EDGE && !strcmp(c->cols[i], "src")) c->col_props[i] = OG_COL_SRC;
        else if (t->kind == OG_KIND_EDGE && !strcmp(c->cols[i], "dst")) c->col_props[i] = OG_COL_DST;
        else bad(r, "constraint column names no property");
    }
    c->from_property = r_bool(r, o, "from_property");
    if (c->kind == OG_CONS_RANGE) {
        r_bound(r, json_object_get(o, "min"), &c->min);
        r_bound(r, json_object_get(o, "max"), &c->max);
    }
    if (c->kind == OG_CONS_CHECK) {
        c->pattern = r_str(r, o, "pattern", 1);
        char msg[300];
        if (r->st == OG_OK && og_check_compile(c, msg, sizeof msg) != OG_OK) bad(r, "check pattern does not compile");
    }
}

static void r_type(reader *r, json_t *o, og_type_kind kind, og_cat_type *t)
{
    if (!json_is_object(o)) {
        bad(r, "type");
        return;
    }
    t->kind = kind;
    t->card_max = OG_CARD_UNBOUNDED;
    t->name = r_str(r, o, "name", 1);
    t->id = r_u64(r, o, "type_id");
    if (kind != OG_KIND_INTERFACE) t->incarnation = r_u64(r, o, "table_incarnation_id");
    json_t *props = r_arr(r, o, "properties");
    size_t np = json_array_size(props);
    if (np) {
        t->props = calloc(np, sizeof *t->props);
        if (!t->props) {
            r->st = OG_ERR_NOMEM;
            return;
        }
    }
    for (size_t i = 0; i < np && r->st == OG_OK; i++) {
        t->nprops = i + 1;
        r_prop(r, json_array_get(props, i), &t->props[i]);
    }
    if (kind == OG_KIND_NODE) {
        json_t *im = r_arr(r, o, "implements");
        size_t ni = json_array_size(im);
        if (ni) {
            t->implements = calloc(ni, sizeof(char *));
            if (!t->implements) {
                r->st = OG_ERR_NOMEM;
                return;
            }
        }
        for (size_t i = 0; i < ni && r->st == OG_OK; i++) {
            json_t *s = json_array_get(im, i);
            if (!json_is_string(s)) {
                bad(r, "implements");
                return;
            }
            t->implements[i] = og_sdup(json_string_value(s));
            t->nimplements = i + 1;
        }
    }
    if (kind == OG_KIND_EDGE) {
        t->from = r_str(r, o, "from", 1);
        t->to = r_str(r, o, "to", 1);
        json_t *card = json_object_get(o, "card");
        if (!json_is_object(card)) {
            bad(r, "card");
            return;
        }
        uint64_t mn = r_u64(r, card, "min");
        json_t *mx = json_object_get(card, "max");
        if (mn >= UINT32_MAX) bad(r, "card min");
        t->card_min = (uint32_t)mn;
        if (json_is_integer(mx)) {
            if (json_integer_value(mx) < (json_int_t)mn || json_integer_value(mx) >= (json_int_t)UINT32_MAX) bad(r, "card max");
            t->card_max = (uint32_t)json_integer_value(mx);
        } else if (!json_is_null(mx)) {
            bad(r, "card max");
        }
        t->card_written = r_bool(r, card, "written");
    }
    if (kind != OG_KIND_INTERFACE) {
        t->description = r_str(r, o, "description", 0);
        t->instruction = r_str(r, o, "instruction", 0);
        t->rename_from = r_str(r, o, "rename_from", 0);
        json_t *an = r_arr(r, o, "annotations");
        if (an) r_annots(r, an, &t->annots, &t->n_annots);
        json_t *cons = r_arr(r, o, "constraints");
        size_t nc = json_array_size(cons);
        if (nc) {
            t->cons = calloc(nc, sizeof *t->cons);
            if (!t->cons) {
                r->st = OG_ERR_NOMEM;
                return;
            }
        }
        for (size_t i = 0; i < nc && r->st == OG_OK; i++) {
            t->ncons = i + 1;
            r_cons(r, json_array_get(cons, i), t, &t->cons[i]);
        }
    }
    if (kind == OG_KIND_NODE && r->st == OG_OK) {
        json_t *key = r_arr(r, o, "key");
        size_t nk = json_array_size(key);
        if (nk) {
            t->key_props = calloc(nk, sizeof *t->key_props);
            if (!t->key_props) {
                r->st = OG_ERR_NOMEM;
                return;
            }
        }
        for (size_t i = 0; i < nk && r->st == OG_OK; i++) {
            json_t *s = json_array_get(key, i);
            size_t pi;
            if (!json_is_string(s) || !og_cat_type_prop(t, json_string_value(s), &pi)) {
                bad(r, "key property");
                return;
            }
            t->key_props[t->nkey++] = pi;
        }
    }
}

static void check_ids(reader *r, og_catalog *cat)
{
    /* every id unique, non-zero and below next_id */
    size_t n = 0;
    og_cat_type *kinds[3] = {cat->interfaces, cat->nodes, cat->edges};
    size_t counts[3] = {cat->ninterfaces, cat->nnodes, cat->nedges};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < counts[k]; i++) n += 2 + kinds[k][i].nprops;
    uint64_t *ids = calloc(n + 1, sizeof *ids);
    if (!ids) {
        r->st = OG_ERR_NOMEM;
        return;
    }
    size_t m = 0;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < counts[k]; i++) {
            og_cat_type *t = &kinds[k][i];
            ids[m++] = t->id;
            if (k) ids[m++] = t->incarnation;
            for (size_t j = 0; j < t->nprops; j++) ids[m++] = t->props[j].id;
        }
    for (size_t i = 0; i < m && r->st == OG_OK; i++) {
        if (!ids[i] || ids[i] >= cat->next_id) bad(r, "identity outside the allocator range");
        for (size_t j = 0; j < i; j++)
            if (ids[j] == ids[i]) {
                bad(r, "duplicate identity");
                break;
            }
    }
    free(ids);
    for (size_t i = 0; i < cat->nedges && r->st == OG_OK; i++) {
        og_cat_type *e = &cat->edges[i];
        const og_cat_type *f = og_catalog_node(cat, e->from), *t = og_catalog_node(cat, e->to);
        if (!f || !t) {
            bad(r, "edge endpoint names no node type");
            return;
        }
        e->from_node = (size_t)(f - cat->nodes);
        e->to_node = (size_t)(t - cat->nodes);
    }
}

og_status og_catalog_from_json(og_catalog **out, const char *text, size_t len)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) return og_err(OG_ERR_CORRUPT, "schema IR is not valid JSON: %s (line %d)", jerr.text, jerr.line);
    reader r = {OG_OK, ""};
    og_catalog *cat = calloc(1, sizeof *cat);
    if (!cat) {
        json_decref(root);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    char *fmt = json_is_object(root) ? r_str(&r, root, "format", 1) : NULL;
    if (!json_is_object(root) || !fmt || strcmp(fmt, OG_SCHEMA_IR_FORMAT)) bad(&r, "format");
    free(fmt);
    if (r.st == OG_OK && r_u64(&r, root, "ir_version") != OG_SCHEMA_IR_VERSION) {
        free(cat);
        json_decref(root);
        return og_err(OG_ERR_UNSUPPORTED_VERSION, "schema IR version is not %d", OG_SCHEMA_IR_VERSION);
    }
    if (r.st == OG_OK) {
        cat->domain = r_str(&r, root, "domain", 0);
        cat->next_id = r_u64(&r, root, "next_id");
        cat->source = r_str(&r, root, "source", 0);
    }
    const char *names[3] = {"interfaces", "nodes", "edges"};
    og_cat_type **slots[3] = {&cat->interfaces, &cat->nodes, &cat->edges};
    size_t *counts[3] = {&cat->ninterfaces, &cat->nnodes, &cat->nedges};
    for (int k = 0; k < 3 && r.st == OG_OK; k++) {
        json_t *arr = r_arr(&r, root, names[k]);
        size_t n = json_array_size(arr);
        if (!n) continue;
        *slots[k] = calloc(n, sizeof(og_cat_type));
        if (!*slots[k]) {
            r.st = OG_ERR_NOMEM;
            break;
        }
        for (size_t i = 0; i < n && r.st == OG_OK; i++) {
            *counts[k] = i + 1;
            r_type(&r, json_array_get(arr, i), (og_type_kind)k, &(*slots[k])[i]);
        }
    }
    if (r.st == OG_OK) check_ids(&r, cat);
    json_decref(root);
    if (r.st != OG_OK) {
        og_catalog_free(cat);
        if (r.st == OG_ERR_NOMEM) return og_err(OG_ERR_NOMEM, "out of memory");
        return og_err(OG_ERR_CORRUPT, "schema IR is malformed (%s)", r.what);
    }
    *out = cat;
    return OG_OK;
}
