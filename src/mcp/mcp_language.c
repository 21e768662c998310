/*
 * mcp_language.c — the omnigraph://language resource: the query language in brief, with
 * examples written for this graph's own schema (docs/mcp.md "Resources").
 *
 * Why generated: an agent learns a language fastest from examples that name the types it is
 * about to query.  A fixed cheat sheet says `$a knows $b`; this one says `$p worksIn $t` for a
 * graph whose schema declares `edge WorksIn: Person -> Team`, with the key property each
 * lookup needs.  The examples are built from the catalog (og_db_catalog), and a test compiles
 * every one of them against the graph.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/buf.h"

static const char BRIEF[] =
    "# GQ, the query language, in brief\n\n"
    "A read query matches a pattern and returns columns:\n\n"
    "```gq\nquery name($p: String, $n: I32?) {\n"
    "    match { $x: Type { key: $p }  $x edgeName $y  $y.prop >= 3 }\n"
    "    return { $x.prop, $y, count($y) as n }\n"
    "    order { n desc, $x.prop }\n"
    "    limit 20\n}\n```\n\n"
    "- `$x: Type` binds nodes of a type; `{ prop: value }` filters them. A traversal is `$a edgeName $b` with the edge's "
    "declared name in lower camel case (`edge WorksIn` is `worksIn`); `$a $e:edgeName $b` also binds the edge; "
    "`$a edgeName{1,3} $b` follows 1 to 3 hops; `not { ... }` is negation.\n"
    "- Filters: `= != < <= > >=`, `in [..]`, `contains`, `starts_with`, `is null`, `is not null`, combined with "
    "`and`, `or`, `not`. System fields: `$x.@id` (the key), `$x.@type`.\n"
    "- `return { $x }` returns a node as an object; aggregates `count($x)`, `sum`, `avg`, `min`, `max` group by the "
    "other columns. `order { col desc }` and `limit N` page the rows.\n"
    "- Search: `search($d.text, $q)`, `fuzzy(...)`, `match_text(...)` in match; `bm25($d.text, $q)` and "
    "`nearest($d.vec, $v)` (with limit) in order; `rrf(r1, r2)` fuses two rankings.\n"
    "- Parameters are declared with types (`String`, `I32`, `I64`, `F64`, `Bool`, `Date`, `DateTime`, `[String]`, "
    "`T?` optional) and passed as a JSON object.\n"
    "- A mutation runs on a branch: `insert strict T { ... }` (refused with key_conflict when the key exists), "
    "`insert T { ... }` (an upsert: an existing key is replaced), "
    "`update T set { p: v } where key = $k`, `delete T where key = $k`; an edge insert names its endpoints by key "
    "with `from:` and `to:`. Inserts and updates cannot be mixed with deletes in one query.\n"
    "- Check a query without running it with the graph_explain tool.\n";

static void lower_camel(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s", name);
    if (out[0]) out[0] = (char)tolower((unsigned char)out[0]);
}

static void lower_all(char *out, size_t cap, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++) out[i] = (char)tolower((unsigned char)name[i]);
    out[i] = 0;
}

/* The type's key property (NULL = none), with its schema type. */
static json_t *key_of(json_t *type)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(type, "properties"), i, p) if (json_is_true(json_object_get(p, "key"))) return p;
    return NULL;
}

static json_t *find_type(json_t *nodes, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(nodes, i, t) if (!strcmp(json_string_value(json_object_get(t, "name")), name)) return t;
    return NULL;
}

/* Plain parameter types only: lists, enums and vectors are left out of generated examples. */
static int simple_type(const char *t)
{
    static const char *ok[] = {"String", "I32", "I64", "U32", "U64", "F32", "F64", "Bool", "Date", "DateTime"};
    char base[32];
    snprintf(base, sizeof base, "%s", t);
    size_t n = strlen(base);
    if (n && base[n - 1] == '?') base[n - 1] = 0;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(base, ok[i])) return 1;
    return 0;
}

static void type_line(og_buf *b, json_t *t, const char *kind)
{
    og_buf_printf(b, "- %s `%s`", kind, json_string_value(json_object_get(t, "name")));
    if (json_object_get(t, "from"))
        og_buf_printf(b, " (%s -> %s, traversed as `", json_string_value(json_object_get(t, "from")),
                      json_string_value(json_object_get(t, "to")));
    if (json_object_get(t, "from")) {
        char lc[128];
        lower_camel(lc, sizeof lc, json_string_value(json_object_get(t, "name")));
        og_buf_printf(b, "%s`)", lc);
    }
    size_t i;
    json_t *p;
    const char *sep = ": ";
    json_array_foreach(json_object_get(t, "properties"), i, p) {
        og_buf_printf(b, "%s%s %s%s", sep, json_string_value(json_object_get(p, "name")),
                      json_string_value(json_object_get(p, "type")), json_is_true(json_object_get(p, "key")) ? " (key)" : "");
        sep = ", ";
    }
    og_buf_append_str(b, "\n");
}

static void examples(og_buf *b, json_t *cat)
{
    json_t *nodes = json_object_get(cat, "nodes"), *edges = json_object_get(cat, "edges");
    json_t *node = NULL, *key = NULL;
    size_t i;
    json_t *t;
    json_array_foreach(nodes, i, t) {
        json_t *k = key_of(t);
        if (k && simple_type(json_string_value(json_object_get(k, "type")))) {
            node = t;
            key = k;
            break;
        }
    }
    if (!node) return;
    const char *tn = json_string_value(json_object_get(node, "name"));
    const char *kn = json_string_value(json_object_get(key, "name")), *kt = json_string_value(json_object_get(key, "type"));
    char lt[128];
    lower_all(lt, sizeof lt, tn);
    og_buf_printf(b, "\n## Examples for this graph\n\n```gq\nquery find_%s($key: %s) {\n    match { $x: %s { %s: $key } }\n"
                     "    return { $x }\n}\n```\n\n",
                  lt, kt, tn, kn);
    og_buf_printf(b, "```gq\nquery count_%s() {\n    match { $x: %s }\n    return { count($x) as n }\n}\n```\n\n", lt, tn);
    int shown = 0;
    json_array_foreach(edges, i, t) {
        json_t *from = find_type(nodes, json_string_value(json_object_get(t, "from")));
        json_t *fk = from ? key_of(from) : NULL;
        if (!fk || !simple_type(json_string_value(json_object_get(fk, "type"))) || shown == 2) continue;
        char ec[128], lf[128];
        lower_camel(ec, sizeof ec, json_string_value(json_object_get(t, "name")));
        lower_all(lf, sizeof lf, ec);
        og_buf_printf(b, "```gq\nquery %s_of($key: %s) {\n    match { $a: %s { %s: $key }  $a %s $b }\n"
                         "    return { $b.@id, $b.@type }\n    order { $b.@id }\n    limit 20\n}\n```\n\n",
                      lf, json_string_value(json_object_get(fk, "type")), json_string_value(json_object_get(from, "name")),
                      json_string_value(json_object_get(fk, "name")), ec);
        shown++;
    }
    /* mutations: an insert when the key is the only required property, and an update of an
     * optional property */
    int insertable = 1;
    json_t *opt = NULL, *p;
    json_array_foreach(json_object_get(node, "properties"), i, p) {
        const char *ptype = json_string_value(json_object_get(p, "type"));
        int nullable = json_is_true(json_object_get(p, "nullable"));
        if (!json_is_true(json_object_get(p, "key")) && !nullable) insertable = 0;
        if (!opt && nullable && simple_type(ptype)) opt = p;
    }
    og_buf_append_str(b, "Mutations, run with graph_mutate on a branch of your own:\n\n");
    if (insertable)
        og_buf_printf(b, "```gq\nquery add_%s($key: %s) {\n    insert strict %s { %s: $key }\n}\n```\n\n", lt, kt, tn, kn);
    if (opt) {
        char pt[32];
        snprintf(pt, sizeof pt, "%s", json_string_value(json_object_get(opt, "type")));
        og_buf_printf(b, "```gq\nquery set_%s_%s($key: %s, $value: %s) {\n    update %s set { %s: $value } where %s = $key\n}\n```\n\n",
                      lt, json_string_value(json_object_get(opt, "name")), kt, pt, tn,
                      json_string_value(json_object_get(opt, "name")), kn);
    }
    og_buf_printf(b, "```gq\nquery remove_%s($key: %s) {\n    delete %s where %s = $key\n}\n```\n", lt, kt, tn, kn);
}

og_status og_mcp_language(char **out, og_db *db)
{
    *out = NULL;
    char *text = NULL;
    og_status st = og_db_catalog(&text, db, NULL);
    if (st != OG_OK) return st;
    json_t *cat = json_loads(text, 0, NULL);
    og_free(text);
    og_buf b = OG_BUF_INIT;
    og_buf_append_str(&b, BRIEF);
    og_buf_append_str(&b, "\n## Types of this graph\n\n");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(cat, "nodes"), i, t) type_line(&b, t, "node");
    json_array_foreach(json_object_get(cat, "edges"), i, t) type_line(&b, t, "edge");
    examples(&b, cat);
    json_decref(cat);
    if (og_buf_append_byte(&b, 0) != OG_OK || b.failed) {
        og_buf_free(&b);
        return OG_ERR_NOMEM;
    }
    *out = (char *)b.data;
    return OG_OK;
}
