/*
 * lance_schema.c — Lance schema fields: building, lookups, structural validation, the og_type
 * mapping and the `lance.file.Field` protobuf codec.  See lance_schema.h; the field numbers
 * are tabled in docs/lance-format.md.
 */
#include "table/lance_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/pb.h"

/* lance.file.Field field numbers */
enum {
    F_TYPE = 1, F_NAME = 2, F_ID = 3, F_PARENT = 4, F_LOGICAL = 5, F_NULLABLE = 6,
    F_ENCODING = 7, F_METADATA = 10, F_PK = 12, F_PK_POS = 13
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = 0;
    return d;
}

/* ------------------------------------------------------------------------------------------ */
/* building                                                                                    */
/* ------------------------------------------------------------------------------------------ */

void og_lance_field_free(og_lance_field *f)
{
    if (!f) return;
    free(f->name);
    free(f->logical_type);
    for (size_t i = 0; i < f->metadata_count; i++) {
        free(f->metadata[i].key);
        free(f->metadata[i].value);
    }
    free(f->metadata);
    memset(f, 0, sizeof *f);
}

void og_lance_schema_free(og_lance_schema *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) og_lance_field_free(&s->fields[i]);
    free(s->fields);
    memset(s, 0, sizeof *s);
}

og_status og_lance_field_copy(og_lance_field *dst, const og_lance_field *src)
{
    memset(dst, 0, sizeof *dst);
    dst->id = src->id;
    dst->parent_id = src->parent_id;
    dst->nullable = src->nullable;
    dst->encoding = src->encoding;
    dst->type = src->type;
    dst->unenforced_primary_key = src->unenforced_primary_key;
    dst->unenforced_primary_key_position = src->unenforced_primary_key_position;
    dst->name = dup_str(src->name ? src->name : "");
    dst->logical_type = dup_str(src->logical_type ? src->logical_type : "");
    if (!dst->name || !dst->logical_type) goto nomem;
    if (src->metadata_count) {
        dst->metadata = calloc(src->metadata_count, sizeof *dst->metadata);
        if (!dst->metadata) goto nomem;
        for (size_t i = 0; i < src->metadata_count; i++) {
            dst->metadata[i].key = dup_str(src->metadata[i].key);
            dst->metadata[i].value = dup_bytes(src->metadata[i].value, src->metadata[i].value_len);
            dst->metadata[i].value_len = src->metadata[i].value_len;
            dst->metadata_count = i + 1;
            if (!dst->metadata[i].key || !dst->metadata[i].value) goto nomem;
        }
    }
    return OG_OK;
nomem:
    og_lance_field_free(dst);
    return og_err(OG_ERR_NOMEM, "out of memory copying a schema field");
}

/* Makes room for one more field and returns a zeroed slot (not yet counted). */
static og_lance_field *schema_slot(og_lance_schema *s)
{
    if (s->count == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 8;
        og_lance_field *f = realloc(s->fields, ncap * sizeof *f);
        if (!f) return NULL;
        s->fields = f;
        s->cap = ncap;
    }
    memset(&s->fields[s->count], 0, sizeof s->fields[0]);
    return &s->fields[s->count];
}

og_status og_lance_schema_add_field(og_lance_schema *s, const og_lance_field *f)
{
    og_lance_field *slot = schema_slot(s);
    if (!slot) return og_err(OG_ERR_NOMEM, "out of memory growing a schema");
    OG_TRY(og_lance_field_copy(slot, f));
    s->count++;
    return OG_OK;
}

og_status og_lance_field_set_metadata(og_lance_field *f, const char *key, const void *value,
                                      size_t value_len)
{
    uint8_t *v = dup_bytes(value, value_len);
    if (!v) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < f->metadata_count; i++) {
        if (strcmp(f->metadata[i].key, key) == 0) {
            free(f->metadata[i].value);
            f->metadata[i].value = v;
            f->metadata[i].value_len = value_len;
            return OG_OK;
        }
    }
    og_lance_kv *m = realloc(f->metadata, (f->metadata_count + 1) * sizeof *m);
    char *k = dup_str(key);
    if (!m || !k) {
        if (m) f->metadata = m;
        free(v);
        free(k);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    f->metadata = m;
    m[f->metadata_count].key = k;
    m[f->metadata_count].value = v;
    m[f->metadata_count].value_len = value_len;
    f->metadata_count++;
    return OG_OK;
}

const uint8_t *og_lance_field_metadata(const og_lance_field *f, const char *key, size_t *value_len)
{
    for (size_t i = 0; i < f->metadata_count; i++) {
        if (strcmp(f->metadata[i].key, key) == 0) {
            if (value_len) *value_len = f->metadata[i].value_len;
            return f->metadata[i].value;
        }
    }
    return NULL;
}

static int is_scalar(og_type_id id)
{
    switch (id) {
    case OG_T_BOOL: case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: case OG_T_F32:
    case OG_T_F64: case OG_T_DATE32: case OG_T_DATE64: case OG_T_STRING: case OG_T_BLOB:
        return 1;
    default:
        return 0;
    }
}

static int32_t legacy_encoding(const char *lt)
{
    if (!strcmp(lt, "string") || !strcmp(lt, "large_string") || !strcmp(lt, "binary") ||
        !strcmp(lt, "large_binary"))
        return OG_LANCE_ENC_VAR_BINARY;
    return OG_LANCE_ENC_PLAIN;
}

og_status og_lance_schema_add_column(og_lance_schema *s, const char *name, og_type type,
                                     int32_t id, int32_t child_id, int nullable, int primary_key)
{
    char lt[64];
    OG_TRY(og_lance_logical_type(type, lt, sizeof lt));
    if (type.id == OG_T_LIST && child_id == id)
        return og_err(OG_ERR_INVALID, "column %s: list child id %d equals the list's id", name, id);
    og_lance_field f = {0};
    f.name = (char *)name;
    f.id = id;
    f.parent_id = -1;
    f.logical_type = lt;
    f.nullable = primary_key ? 0 : (nullable != 0);
    f.encoding = legacy_encoding(lt);
    f.unenforced_primary_key = primary_key != 0;
    OG_TRY(og_lance_schema_add_field(s, &f));
    if (primary_key) {
        og_status st = og_lance_field_set_metadata(&s->fields[s->count - 1], OG_LANCE_PK_METADATA_KEY,
                                                   "true", 4);
        if (st) {
            og_lance_field_free(&s->fields[--s->count]);
            return st;
        }
    }
    if (type.id == OG_T_LIST) {
        char ilt[64];
        og_status st = og_lance_logical_type((og_type){type.elem, OG_T_NULL, 0}, ilt, sizeof ilt);
        og_lance_field item = {0};
        item.name = "item";
        item.id = child_id;
        item.parent_id = id;
        item.logical_type = ilt;
        item.nullable = 1;
        item.encoding = legacy_encoding(ilt);
        if (st == OG_OK) st = og_lance_schema_add_field(s, &item);
        if (st) {
            og_lance_field_free(&s->fields[--s->count]);
            return st;
        }
    }
    return OG_OK;
}

og_status og_lance_schema_copy(og_lance_schema *dst, const og_lance_schema *src)
{
    og_lance_schema out = OG_LANCE_SCHEMA_INIT;
    for (size_t i = 0; i < src->count; i++) {
        og_status st = og_lance_schema_add_field(&out, &src->fields[i]);
        if (st) {
            og_lance_schema_free(&out);
            return st;
        }
    }
    *dst = out;
    return OG_OK;
}

/* 1 when field index i descends from (or is) one of the top-level ids. */
static int selected(const og_lance_schema *s, size_t i, const int32_t *ids, size_t n)
{
    /* walk up the parent chain (bounded by count to survive cycles) */
    const og_lance_field *f = &s->fields[i];
    for (size_t hops = 0; hops <= s->count && f->parent_id != -1; hops++) {
        long p = og_lance_schema_find_id(s, f->parent_id);
        if (p < 0) return 0;
        f = &s->fields[p];
    }
    if (f->parent_id != -1) return 0;
    for (size_t k = 0; k < n; k++)
        if (ids[k] == f->id) return 1;
    return 0;
}

og_status og_lance_schema_select(og_lance_schema *dst, const og_lance_schema *src,
                                 const int32_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        long i = og_lance_schema_find_id(src, ids[k]);
        if (i < 0) return og_err(OG_ERR_NOT_FOUND, "schema has no field with id %d", ids[k]);
        if (src->fields[i].parent_id != -1)
            return og_err(OG_ERR_INVALID, "field id %d is not a top-level field", ids[k]);
    }
    og_lance_schema out = OG_LANCE_SCHEMA_INIT;
    for (size_t i = 0; i < src->count; i++) {
        if (!selected(src, i, ids, n)) continue;
        og_status st = og_lance_schema_add_field(&out, &src->fields[i]);
        if (st) {
            og_lance_schema_free(&out);
            return st;
        }
    }
    *dst = out;
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* lookups                                                                                     */
/* ------------------------------------------------------------------------------------------ */

long og_lance_schema_find_id(const og_lance_schema *s, int32_t id)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->fields[i].id == id) return (long)i;
    return -1;
}

long og_lance_schema_find_name(const og_lance_schema *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->fields[i].parent_id == -1 && s->fields[i].name && !strcmp(s->fields[i].name, name))
            return (long)i;
    return -1;
}

long og_lance_schema_child(const og_lance_schema *s, size_t index)
{
    if (index >= s->count) return -1;
    for (size_t i = index + 1; i < s->count; i++)
        if (s->fields[i].parent_id == s->fields[index].id) return (long)i;
    return -1;
}

size_t og_lance_schema_num_top(const og_lance_schema *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++) n += s->fields[i].parent_id == -1;
    return n;
}

long og_lance_schema_top(const og_lance_schema *s, size_t k)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->fields[i].parent_id == -1 && k-- == 0) return (long)i;
    return -1;
}

size_t og_lance_schema_num_columns(const og_lance_schema *s) { return s->count; }

long og_lance_schema_column_index(const og_lance_schema *s, size_t index)
{
    return index < s->count ? (long)index : -1;
}

static int is_list_type(const char *lt) { return !strcmp(lt, "list") || !strcmp(lt, "large_list"); }

og_status og_lance_schema_validate(const og_lance_schema *s)
{
    for (size_t i = 0; i < s->count; i++) {
        const og_lance_field *f = &s->fields[i];
        if (!f->name || !f->logical_type)
            return og_err(OG_ERR_CORRUPT, "schema field %zu has no name or logical type", i);
        for (size_t j = 0; j < i; j++)
            if (s->fields[j].id == f->id)
                return og_err(OG_ERR_CORRUPT, "schema: field id %d appears twice (%s, %s)", f->id,
                              s->fields[j].name, f->name);
        if (f->parent_id != -1) {
            long p = -1;
            for (size_t j = 0; j < i; j++)
                if (s->fields[j].id == f->parent_id) p = (long)j;
            if (p < 0)
                return og_err(OG_ERR_CORRUPT, "schema: field %s (id %d) names parent %d, which does not precede it",
                              f->name, f->id, f->parent_id);
            if (!is_list_type(s->fields[p].logical_type))
                return og_err(OG_ERR_CORRUPT, "schema: field %s has parent %s of type %s (only lists have children)",
                              f->name, s->fields[p].name, s->fields[p].logical_type);
        }
        if (is_list_type(f->logical_type)) {
            size_t kids = 0;
            for (size_t j = i + 1; j < s->count; j++) kids += s->fields[j].parent_id == f->id;
            if (kids != 1)
                return og_err(OG_ERR_CORRUPT, "schema: list field %s (id %d) has %zu children, expected 1",
                              f->name, f->id, kids);
        }
    }
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* og_type mapping                                                                             */
/* ------------------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    og_type_id id;
} scalar_names[] = {
    {"bool", OG_T_BOOL},       {"int32", OG_T_I32},          {"int64", OG_T_I64},
    {"uint32", OG_T_U32},      {"uint64", OG_T_U64},         {"float", OG_T_F32},
    {"double", OG_T_F64},      {"date32:day", OG_T_DATE32},  {"date64:ms", OG_T_DATE64},
    {"string", OG_T_STRING},   {"large_binary", OG_T_BLOB},
    /* aliases with the same byte layout (read only) */
    {"large_string", OG_T_STRING}, {"binary", OG_T_BLOB},
};

og_status og_lance_logical_type(og_type t, char *buf, size_t cap)
{
    int n;
    if (t.id == OG_T_VECTOR) {
        if (t.dim == 0) return og_err(OG_ERR_INVALID, "a Vector needs a dimension > 0");
        n = snprintf(buf, cap, "fixed_size_list:float:%u", t.dim);
    } else if (t.id == OG_T_LIST) {
        if (!is_scalar(t.elem)) return og_err(OG_ERR_INVALID, "a list's element must be a scalar type");
        n = snprintf(buf, cap, "list");
    } else {
        const char *name = NULL;
        for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
            if (scalar_names[i].id == t.id) {
                name = scalar_names[i].name;
                break;
            }
        if (!name) return og_err(OG_ERR_INVALID, "type id %d has no Lance logical type", (int)t.id);
        n = snprintf(buf, cap, "%s", name);
    }
    if (n < 0 || (size_t)n >= cap) return og_err(OG_ERR_INVALID, "logical type buffer too small");
    return OG_OK;
}

og_status og_lance_parse_logical_type(const char *lt, og_type *out)
{
    og_type t = {OG_T_NULL, OG_T_NULL, 0};
    for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
        if (!strcmp(scalar_names[i].name, lt)) {
            t.id = scalar_names[i].id;
            *out = t;
            return OG_OK;
        }
    static const char fsl[] = "fixed_size_list:float:";
    if (!strncmp(lt, fsl, sizeof fsl - 1)) {
        const char *d = lt + sizeof fsl - 1;
        char *end;
        errno = 0;
        unsigned long dim = strtoul(d, &end, 10);
        if (*d >= '0' && *d <= '9' && *end == 0 && errno == 0 && dim > 0 && dim <= (1u << 20)) {
            t.id = OG_T_VECTOR;
            t.dim = (uint32_t)dim;
            *out = t;
            return OG_OK;
        }
    }
    return og_err(OG_ERR_UNSUPPORTED, "Lance logical type \"%s\" has no OmniGraph type", lt);
}

og_status og_lance_schema_field_type(const og_lance_schema *s, size_t index, og_type *out)
{
    if (index >= s->count) return og_err(OG_ERR_INVALID, "field index %zu out of range", index);
    const og_lance_field *f = &s->fields[index];
    if (!strcmp(f->logical_type, "list")) {
        long c = og_lance_schema_child(s, index);
        if (c < 0) return og_err(OG_ERR_CORRUPT, "list field %s has no child", f->name);
        og_type et;
        OG_TRY(og_lance_parse_logical_type(s->fields[c].logical_type, &et));
        if (!is_scalar(et.id))
            return og_err(OG_ERR_UNSUPPORTED, "list field %s: element type %s is not a scalar", f->name,
                          s->fields[c].logical_type);
        if (og_lance_schema_child(s, (size_t)c) >= 0)
            return og_err(OG_ERR_UNSUPPORTED, "list field %s: nested children", f->name);
        *out = (og_type){OG_T_LIST, et.id, 0};
        return OG_OK;
    }
    og_status st = og_lance_parse_logical_type(f->logical_type, out);
    if (st) return og_err_wrap(st, "field %s (id %d)", f->name, f->id);
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* protobuf                                                                                    */
/* ------------------------------------------------------------------------------------------ */

og_status og_lance_field_encode(const og_lance_field *f, og_buf *out)
{
    const char *lt = f->logical_type ? f->logical_type : "";
    if (f->type) OG_TRY(og_pb_put_uint(out, F_TYPE, (uint64_t)f->type));
    OG_TRY(og_pb_put_str(out, F_NAME, f->name ? f->name : ""));
    if (f->id) OG_TRY(og_pb_put_int(out, F_ID, f->id));
    if (f->parent_id) OG_TRY(og_pb_put_int(out, F_PARENT, f->parent_id));
    OG_TRY(og_pb_put_str(out, F_LOGICAL, lt));
    if (f->nullable) OG_TRY(og_pb_put_uint(out, F_NULLABLE, 1));
    OG_TRY(og_pb_put_uint(out, F_ENCODING, (uint64_t)(f->encoding ? f->encoding : legacy_encoding(lt))));
    for (size_t i = 0; i < f->metadata_count; i++) {
        og_buf e = OG_BUF_INIT;
        og_status st = og_pb_put_str(&e, 1, f->metadata[i].key);
        if (st == OG_OK) st = og_pb_put_bytes(&e, 2, f->metadata[i].value, f->metadata[i].value_len);
        if (st == OG_OK) st = og_pb_put_msg(out, F_METADATA, &e);
        og_buf_free(&e);
        OG_TRY(st);
    }
    if (f->unenforced_primary_key) OG_TRY(og_pb_put_uint(out, F_PK, 1));
    if (f->unenforced_primary_key_position)
        OG_TRY(og_pb_put_uint(out, F_PK_POS, f->unenforced_primary_key_position));
    return OG_OK;
}

og_status og_lance_schema_encode_fields(const og_lance_schema *s, uint32_t field_no, og_buf *out)
{
    og_buf m = OG_BUF_INIT;
    for (size_t i = 0; i < s->count; i++) {
        og_buf_reset(&m);
        og_status st = og_lance_field_encode(&s->fields[i], &m);
        if (st == OG_OK) st = og_pb_put_msg(out, field_no, &m);
        if (st) {
            og_buf_free(&m);
            return st;
        }
    }
    og_buf_free(&m);
    return OG_OK;
}

static char *dup_n(const uint8_t *p, size_t n)
{
    if (memchr(p, 0, n)) return NULL;
    return (char *)dup_bytes(p, n);
}

static og_status decode_kv(og_lance_field *f, const og_pb_field *pf)
{
    og_pb_reader r = og_pb_reader_init(pf->data, pf->len);
    og_pb_field e;
    const uint8_t *k = NULL, *v = NULL;
    size_t kn = 0, vn = 0;
    int rc;
    while ((rc = og_pb_next(&r, &e)) == 1) {
        if (e.wire != OG_PB_LEN) continue;
        if (e.field == 1) k = e.data, kn = e.len;
        if (e.field == 2) v = e.data, vn = e.len;
    }
    if (rc < 0) return OG_ERR_CORRUPT;
    char *key = dup_n(k ? k : (const uint8_t *)"", kn);
    if (!key) return og_err(OG_ERR_CORRUPT, "field metadata key contains NUL");
    og_status st = og_lance_field_set_metadata(f, key, v ? v : (const uint8_t *)"", vn);
    free(key);
    return st;
}

og_status og_lance_field_decode(const uint8_t *p, size_t n, og_lance_field *out)
{
    memset(out, 0, sizeof *out);
    out->parent_id = 0;
    og_pb_reader r = og_pb_reader_init(p, n);
    og_pb_field pf;
    int rc;
    og_status st = OG_OK;
    while (st == OG_OK && (rc = og_pb_next(&r, &pf)) == 1) {
        int is_len = pf.wire == OG_PB_LEN, is_var = pf.wire == OG_PB_VARINT;
        switch (pf.field) {
        case F_TYPE: if (is_var) out->type = (int32_t)pf.u; break;
        case F_ID: if (is_var) out->id = (int32_t)(int64_t)pf.u; break;
        case F_PARENT: if (is_var) out->parent_id = (int32_t)(int64_t)pf.u; break;
        case F_NULLABLE: if (is_var) out->nullable = pf.u != 0; break;
        case F_ENCODING: if (is_var) out->encoding = (int32_t)pf.u; break;
        case F_PK: if (is_var) out->unenforced_primary_key = pf.u != 0; break;
        case F_PK_POS: if (is_var) out->unenforced_primary_key_position = (uint32_t)pf.u; break;
        case F_NAME:
        case F_LOGICAL:
            if (is_len) {
                char *s = dup_n(pf.data, pf.len);
                if (!s) {
                    st = og_err(OG_ERR_CORRUPT, "schema field: name or logical type contains NUL");
                    break;
                }
                char **dst = pf.field == F_NAME ? &out->name : &out->logical_type;
                free(*dst);
                *dst = s;
            }
            break;
        case F_METADATA:
            if (is_len) st = decode_kv(out, &pf);
            break;
        default: break;
        }
    }
    if (st == OG_OK && rc < 0) st = OG_ERR_CORRUPT;
    if (st == OG_OK && !out->name) st = og_err(OG_ERR_CORRUPT, "schema field (id %d) has no name", out->id);
    if (st == OG_OK && !out->logical_type) {
        out->logical_type = dup_str("");
        if (!out->logical_type) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st) og_lance_field_free(out);
    return st;
}

og_status og_lance_schema_add_decoded(og_lance_schema *s, const uint8_t *p, size_t n)
{
    og_lance_field *slot = schema_slot(s);
    if (!slot) return og_err(OG_ERR_NOMEM, "out of memory growing a schema");
    OG_TRY(og_lance_field_decode(p, n, slot));
    s->count++;
    return OG_OK;
}

og_status og_lance_schema_decode_fields(og_lance_schema *s, const uint8_t *msg, size_t n,
                                        uint32_t field_no)
{
    og_pb_reader r = og_pb_reader_init(msg, n);
    og_pb_field pf;
    int rc;
    while ((rc = og_pb_next(&r, &pf)) == 1) {
        if (pf.field != field_no || pf.wire != OG_PB_LEN) continue;
        OG_TRY(og_lance_schema_add_decoded(s, pf.data, pf.len));
    }
    return rc < 0 ? OG_ERR_CORRUPT : OG_OK;
}
