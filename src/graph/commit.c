/*
 * commit.c — immutable graph objects: commit objects (STORAGE.md §4) encoded and strictly
 * decoded with jansson, and schema objects named by the SHA-256 of their bytes.  Both are
 * cached by id in the handle's cache ("c:<ulid>", "s:<sha256>"): they never change, so a
 * cached copy never needs invalidating.
 */
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"

static const char *const op_names[] = {
    [OG_OP_INIT] = "init",       [OG_OP_LOAD] = "load",         [OG_OP_MUTATE] = "mutate",
    [OG_OP_MERGE] = "merge",     [OG_OP_SCHEMA_APPLY] = "schema_apply", [OG_OP_OPTIMIZE] = "optimize",
    [OG_OP_REVERT] = "revert",
};

const char *og_op_kind_name(og_op_kind k)
{
    if (k > OG_OP_NONE && k <= OG_OP_REVERT) return op_names[k];
    return NULL;
}

static og_op_kind op_from_name(const char *s)
{
    for (int k = OG_OP_INIT; k <= OG_OP_REVERT; k++)
        if (strcmp(op_names[k], s) == 0) return (og_op_kind)k;
    return OG_OP_NONE;
}

const og_table_ref *og_commit_table(const og_commit *c, const char *dir)
{
    size_t lo = 0, hi = c->ntables;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->tables[mid].dir, dir);
        if (r == 0) return &c->tables[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

void og_commit_clear(og_commit *c)
{
    for (size_t i = 0; i < c->ntables; i++) free(c->tables[i].dir);
    free(c->tables);
    for (size_t i = 0; i < c->nstats; i++) free(c->stats[i].name);
    free(c->stats);
    free(c->mode);
    free(c->actor);
    free(c->message);
    memset(c, 0, sizeof *c);
}

void og_commit_free(og_commit *c)
{
    if (!c) return;
    og_commit_clear(c);
    free(c);
}

og_status og_commit_copy_tables(og_commit *dst, const og_commit *src)
{
    if (!src->ntables) return OG_OK;
    dst->tables = calloc(src->ntables, sizeof *dst->tables);
    if (!dst->tables) return og_err(OG_ERR_NOMEM, "out of memory copying tables of commit %s", src->id);
    for (size_t i = 0; i < src->ntables; i++) {
        dst->tables[i] = src->tables[i];
        dst->tables[i].dir = strdup(src->tables[i].dir);
        if (!dst->tables[i].dir) {
            dst->ntables = i;
            return og_err(OG_ERR_NOMEM, "out of memory copying tables of commit %s", src->id);
        }
    }
    dst->ntables = src->ntables;
    return OG_OK;
}

/* ---- encoding ---------------------------------------------------------------------------- */

static int set_or_fail(json_t *obj, const char *k, json_t *v)
{
    return v ? json_object_set_new(obj, k, v) : -1;
}

og_status og_commit_encode(const og_commit *c, og_buf *out)
{
    json_t *o = json_object();
    json_t *parents = json_array(), *tables = json_object(), *op = json_object();
    int bad = !o || !parents || !tables || !op;
    for (size_t i = 0; !bad && i < c->nparents; i++) bad |= json_array_append_new(parents, json_string(c->parents[i]));
    for (size_t i = 0; !bad && i < c->ntables; i++) {
        json_t *t = json_object();
        bad |= !t;
        if (t) {
            bad |= set_or_fail(t, "version", json_integer((json_int_t)c->tables[i].version));
            bad |= set_or_fail(t, "rows", json_integer((json_int_t)c->tables[i].rows));
            bad |= json_object_set_new(tables, c->tables[i].dir, t);
        }
    }
    const char *kind = og_op_kind_name(c->kind);
    if (!kind) bad = 1;
    if (!bad) {
        bad |= set_or_fail(op, "kind", json_string(kind));
        if (c->mode) bad |= set_or_fail(op, "mode", json_string(c->mode));
        if (c->nstats) {
            json_t *st = json_object();
            bad |= !st;
            for (size_t i = 0; st && i < c->nstats; i++)
                bad |= set_or_fail(st, c->stats[i].name, json_integer((json_int_t)c->stats[i].value));
            if (st) bad |= json_object_set_new(op, "stats", st);
        }
    }
    if (!bad) {
        bad |= set_or_fail(o, "id", json_string(c->id));
        bad |= json_object_set_new(o, "parents", parents);
        parents = NULL;
        bad |= set_or_fail(o, "schema", json_string(c->schema));
        bad |= json_object_set_new(o, "tables", tables);
        tables = NULL;
        bad |= json_object_set_new(o, "operation", op);
        op = NULL;
        bad |= set_or_fail(o, "actor", json_string(c->actor ? c->actor : ""));
        if (c->actor_via[0]) bad |= set_or_fail(o, "actor_via", json_string(c->actor_via));
        bad |= set_or_fail(o, "message", c->message ? json_string(c->message) : json_null());
        bad |= set_or_fail(o, "created_at", json_string(c->created_at));
    }
    json_decref(parents);
    json_decref(tables);
    json_decref(op);
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return og_err(kind ? OG_ERR_NOMEM : OG_ERR_INVALID, "cannot encode commit %s%s", c->id,
                      kind ? "" : " (no operation kind)");
    og_status st = og_buf_append_str(out, text);
    free(text);
    return st;
}

/* ---- strict decoding --------------------------------------------------------------------- */

static og_status corrupt(const char *what, const char *why)
{
    return og_err(OG_ERR_CORRUPT, "%s is corrupt: %s", what, why);
}

static int u64_of(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0) return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static og_status decode_tables(json_t *tables, og_commit *c, const char *what)
{
    size_t n = json_object_size(tables);
    if (!n) return OG_OK;
    c->tables = calloc(n, sizeof *c->tables);
    if (!c->tables) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
    const char *dir;
    json_t *t;
    json_object_foreach(tables, dir, t)
    {
        og_table_ref *r = &c->tables[c->ntables];
        if (!og_table_dir_valid(dir)) return corrupt(what, "a table has an invalid directory name");
        if (!json_is_object(t)) return corrupt(what, "a \"tables\" value is not an object");
        if (!u64_of(json_object_get(t, "version"), &r->version))
            return corrupt(what, "a table's \"version\" is missing or not a non-negative integer");
        if (!u64_of(json_object_get(t, "rows"), &r->rows))
            return corrupt(what, "a table's \"rows\" is missing or not a non-negative integer");
        r->dir = strdup(dir);
        if (!r->dir) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
        c->ntables++;
    }
    /* Sort (stored order is whatever the writer used). */
    for (size_t i = 1; i < c->ntables; i++) {
        og_table_ref x = c->tables[i];
        size_t j = i;
        while (j > 0 && strcmp(c->tables[j - 1].dir, x.dir) > 0) {
            c->tables[j] = c->tables[j - 1];
            j--;
        }
        c->tables[j] = x;
    }
    return OG_OK;
}

static og_status decode_operation(json_t *op, og_commit *c, const char *what)
{
    if (!json_is_object(op)) return corrupt(what, "\"operation\" is missing or not an object");
    json_t *kind = json_object_get(op, "kind");
    if (!json_is_string(kind)) return corrupt(what, "\"operation.kind\" is missing or not a string");
    c->kind = op_from_name(json_string_value(kind));
    if (c->kind == OG_OP_NONE) return corrupt(what, "\"operation.kind\" is not a known operation");
    json_t *mode = json_object_get(op, "mode");
    if (mode && !json_is_null(mode)) {
        if (!json_is_string(mode)) return corrupt(what, "\"operation.mode\" is not a string");
        c->mode = strdup(json_string_value(mode));
        if (!c->mode) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
    }
    json_t *stats = json_object_get(op, "stats");
    if (stats && !json_is_null(stats)) {
        if (!json_is_object(stats)) return corrupt(what, "\"operation.stats\" is not an object");
        size_t n = json_object_size(stats);
        c->stats = n ? calloc(n, sizeof *c->stats) : NULL;
        if (n && !c->stats) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
        const char *name;
        json_t *v;
        json_object_foreach(stats, name, v)
        {
            if (!json_is_integer(v)) return corrupt(what, "an \"operation.stats\" value is not an integer");
            c->stats[c->nstats].name = strdup(name);
            if (!c->stats[c->nstats].name) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
            c->stats[c->nstats].value = (int64_t)json_integer_value(v);
            c->nstats++;
        }
    }
    return OG_OK;
}

static og_status decode_body(json_t *o, og_commit *c, const char *what)
{
    if (!json_is_object(o)) return corrupt(what, "not a JSON object");
    json_t *id = json_object_get(o, "id");
    if (!json_is_string(id) || !og_ulid_valid(json_string_value(id)))
        return corrupt(what, "\"id\" is missing or not a ULID");
    strcpy(c->id, json_string_value(id));
    json_t *parents = json_object_get(o, "parents");
    if (!json_is_array(parents)) return corrupt(what, "\"parents\" is missing or not an array");
    if (json_array_size(parents) > OG_GRAPH_MAX_PARENTS) return corrupt(what, "more than two parents");
    for (size_t i = 0; i < json_array_size(parents); i++) {
        json_t *p = json_array_get(parents, i);
        if (!json_is_string(p) || !og_ulid_valid(json_string_value(p)))
            return corrupt(what, "a parent is not a commit id");
        strcpy(c->parents[i], json_string_value(p));
        c->nparents++;
    }
    json_t *schema = json_object_get(o, "schema");
    if (!json_is_string(schema) || !og_sha256_hex_valid(json_string_value(schema)))
        return corrupt(what, "\"schema\" is missing or not a schema id");
    strcpy(c->schema, json_string_value(schema));
    json_t *tables = json_object_get(o, "tables");
    if (!json_is_object(tables)) return corrupt(what, "\"tables\" is missing or not an object");
    OG_TRY(decode_tables(tables, c, what));
    OG_TRY(decode_operation(json_object_get(o, "operation"), c, what));
    json_t *actor = json_object_get(o, "actor");
    if (!json_is_string(actor)) return corrupt(what, "\"actor\" is missing or not a string");
    c->actor = strdup(json_string_value(actor));
    json_t *via = json_object_get(o, "actor_via"); /* optional: older commits have none */
    if (via && (!json_is_string(via) || strlen(json_string_value(via)) >= sizeof c->actor_via))
        return corrupt(what, "\"actor_via\" is not a short string");
    if (via) strcpy(c->actor_via, json_string_value(via));
    json_t *msg = json_object_get(o, "message");
    if (!msg || !(json_is_null(msg) || json_is_string(msg)))
        return corrupt(what, "\"message\" is missing or not a string or null");
    if (json_is_string(msg)) c->message = strdup(json_string_value(msg));
    json_t *at = json_object_get(o, "created_at");
    if (!json_is_string(at) || !og_timestamp_valid(json_string_value(at)))
        return corrupt(what, "\"created_at\" is missing or not an RFC 3339 millisecond timestamp");
    strcpy(c->created_at, json_string_value(at));
    if (!c->actor || (json_is_string(msg) && !c->message)) return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
    return OG_OK;
}

og_status og_commit_decode(const void *data, size_t len, const char *what, og_commit **out)
{
    *out = NULL;
    json_error_t jerr;
    json_t *o = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o) return og_err(OG_ERR_CORRUPT, "%s is corrupt: not valid JSON (%s)", what, jerr.text);
    og_commit *c = calloc(1, sizeof *c);
    if (!c) {
        json_decref(o);
        return og_err(OG_ERR_NOMEM, "out of memory decoding %s", what);
    }
    og_status st = decode_body(o, c, what);
    json_decref(o);
    if (st != OG_OK) {
        og_commit_free(c);
        return st;
    }
    *out = c;
    return OG_OK;
}

/* ---- commit objects in the store --------------------------------------------------------- */

static size_t commit_charge(const og_commit *c)
{
    size_t n = sizeof *c + (c->actor ? strlen(c->actor) : 0) + (c->message ? strlen(c->message) : 0);
    for (size_t i = 0; i < c->ntables; i++) n += sizeof c->tables[i] + strlen(c->tables[i].dir) + 1;
    for (size_t i = 0; i < c->nstats; i++) n += sizeof c->stats[i] + strlen(c->stats[i].name) + 1;
    return n;
}

static void commit_free_fn(void *p) { og_commit_free(p); }

og_status og_graph_commit_get(og_graph *g, const char *id, const og_commit **out, og_cache_entry **hold)
{
    *out = NULL;
    *hold = NULL;
    if (!id || !og_ulid_valid(id)) return og_err(OG_ERR_INVALID, "\"%s\" is not a commit id (a ULID)", id ? id : "");
    char ckey[OG_ULID_LEN + 8];
    snprintf(ckey, sizeof ckey, "c:%s", id);
    og_cache_entry *e = og_cache_get(g->cache, ckey);
    if (!e) {
        char key[64];
        og_commit_key(id, key);
        og_bytes b = {0};
        og_status st = og_store_get(g->store, key, &b);
        if (st == OG_ERR_NOT_FOUND)
            return og_err(OG_ERR_NOT_FOUND, "commit %s not found (%s is missing: never written, or reclaimed by cleanup)",
                          id, key);
        if (st != OG_OK) return og_err_wrap(st, "reading commit %s", id);
        og_commit *c = NULL;
        st = og_commit_decode(b.data, b.len, key, &c);
        og_bytes_free(&b);
        if (st != OG_OK) return st;
        if (strcmp(c->id, id) != 0) {
            st = og_err(OG_ERR_CORRUPT, "%s is corrupt: it holds commit id %s", key, c->id);
            og_commit_free(c);
            return st;
        }
        OG_TRY(og_cache_put(g->cache, ckey, c, commit_charge(c), commit_free_fn, &e));
    }
    *out = og_cache_entry_value(e);
    *hold = e;
    return OG_OK;
}

void og_graph_commit_cache_written(og_graph *g, const og_commit *c, const void *bytes, size_t len)
{
    /* Cache it as a later read would decode it: the publish and the next capture need it,
     * and a ULID is never reused (an unpublished attempt's object is deleted, never rewritten). */
    og_commit *copy = NULL;
    if (og_commit_decode(bytes, len, "a written commit", &copy) == OG_OK) {
        char ckey[OG_ULID_LEN + 8];
        og_cache_entry *e;
        snprintf(ckey, sizeof ckey, "c:%s", c->id);
        if (og_cache_put(g->cache, ckey, copy, commit_charge(copy), commit_free_fn, &e) == OG_OK) og_cache_entry_release(e);
    }
    og_error_clear();
}

og_status og_graph_commit_write(og_graph *g, const og_commit *c)
{
    og_buf b = OG_BUF_INIT;
    og_status st = og_commit_encode(c, &b);
    if (st == OG_OK) {
        char key[64];
        og_commit_key(c->id, key);
        /* The id is a fresh ULID no one else can choose: a plain durable put. */
        st = og_store_put(g->store, key, b.data, b.len);
        if (st != OG_OK) og_err_wrap(st, "writing commit %s", c->id);
    }
    if (st == OG_OK) og_graph_commit_cache_written(g, c, b.data, b.len);
    og_buf_free(&b);
    return st;
}

/* ---- schema objects ---------------------------------------------------------------------- */

static void bytes_free_fn(void *p)
{
    og_bytes *b = p;
    og_bytes_free(b);
    free(b);
}

static og_status schema_cache_insert(og_graph *g, const char *id, og_bytes *b, og_cache_entry **out)
{
    char ckey[OG_SCHEMA_ID_LEN + 4];
    snprintf(ckey, sizeof ckey, "s:%s", id);
    og_bytes *copy = malloc(sizeof *copy);
    if (!copy) {
        og_bytes_free(b);
        return og_err(OG_ERR_NOMEM, "out of memory caching schema %s", id);
    }
    *copy = *b;
    b->data = NULL;
    b->len = 0;
    return og_cache_put(g->cache, ckey, copy, sizeof *copy + copy->len, bytes_free_fn, out);
}

og_status og_graph_schema_put(og_graph *g, const void *bytes, size_t len, char id_out[OG_SCHEMA_ID_LEN + 1])
{
    json_error_t jerr;
    json_t *doc = json_loadb(bytes, len, 0, &jerr);
    if (!doc) return og_err(OG_ERR_INVALID, "schema bytes are not a JSON document (%s)", jerr.text);
    json_decref(doc);
    OG_TRY(og_sha256_hex(bytes, len, id_out));
    char key[128];
    og_schema_key(id_out, key);
    og_status st = og_store_put_if_absent(g->store, key, bytes, len);
    if (st == OG_ERR_ALREADY_EXISTS) {
        og_bytes have = {0};
        st = og_store_get(g->store, key, &have);
        if (st != OG_OK) return og_err_wrap(st, "reading existing schema object %s", key);
        int same = have.len == len && memcmp(have.data, bytes, len) == 0;
        og_bytes_free(&have);
        if (!same) return og_err(OG_ERR_CORRUPT, "%s is corrupt: its bytes do not hash to its name", key);
        st = OG_OK;
    }
    if (st != OG_OK) return og_err_wrap(st, "writing schema object %s", key);
    return OG_OK;
}

og_status og_graph_schema_get(og_graph *g, const char *id, const og_bytes **out, og_cache_entry **hold)
{
    *out = NULL;
    *hold = NULL;
    if (!id || !og_sha256_hex_valid(id)) return og_err(OG_ERR_INVALID, "\"%s\" is not a schema id", id ? id : "");
    char ckey[OG_SCHEMA_ID_LEN + 4];
    snprintf(ckey, sizeof ckey, "s:%s", id);
    og_cache_entry *e = og_cache_get(g->cache, ckey);
    if (!e) {
        char key[128];
        og_schema_key(id, key);
        og_bytes b = {0};
        og_status st = og_store_get(g->store, key, &b);
        if (st == OG_ERR_NOT_FOUND) return og_err(OG_ERR_NOT_FOUND, "schema %s not found (%s is missing)", id, key);
        if (st != OG_OK) return og_err_wrap(st, "reading schema %s", id);
        char got[OG_SCHEMA_ID_LEN + 1];
        st = og_sha256_hex(b.data, b.len, got);
        if (st == OG_OK && strcmp(got, id) != 0)
            st = og_err(OG_ERR_CORRUPT, "%s is corrupt: its bytes hash to %s", key, got);
        if (st != OG_OK) {
            og_bytes_free(&b);
            return st;
        }
        OG_TRY(schema_cache_insert(g, id, &b, &e));
    }
    *out = og_cache_entry_value(e);
    *hold = e;
    return OG_OK;
}
