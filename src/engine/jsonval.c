/*
 * jsonval.c — strict JSON → column value conversion.  See jsonval.h.
 *
 * Two sources share one set of rules: a jansson value (query parameters) and a token of a
 * util/jsontok.h document (load).  Each is first seen through a `jv` — kind, string bytes,
 * integer, real — and arrays are walked with a jv_iter, so the conversions below never know
 * which parser made the value.
 *
 * Lists are converted into a scratch child first and only then appended, so a bad element
 * leaves the output vector exactly as it was.
 */
#include "engine/jsonval.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "util/datetime.h"
#include "util/error.h"
#include "util/jsonout.h"

#define JS_SAFE_MAX 9007199254740991LL /* 2^53 - 1 */

typedef struct jv {
    og_jkind kind;
    const char *s;      /* string bytes (NUL-terminated) */
    size_t len;         /* string bytes; array elements */
    int64_t i;
    uint64_t u;         /* OG_J_UINT: above INT64_MAX */
    double d;
    const json_t *j;    /* the source: one of these two */
    const og_jtok *t;
} jv;

static void jv_of_json(jv *v, const json_t *j)
{
    memset(v, 0, sizeof *v);
    v->j = j;
    switch (json_typeof(j)) {
    case JSON_OBJECT: v->kind = OG_J_OBJECT; break;
    case JSON_ARRAY: v->kind = OG_J_ARRAY; v->len = json_array_size(j); break;
    case JSON_STRING:
        if (og_json_bignum_digits(j)) { /* a U64 above 2^63-1 read by og_json_load_wide */
            v->kind = OG_J_UINT;
            v->u = strtoull(og_json_bignum_digits(j), NULL, 10);
            break;
        }
        v->kind = OG_J_STRING; v->s = json_string_value(j); v->len = json_string_length(j); break;
    case JSON_INTEGER: v->kind = OG_J_INT; v->i = json_integer_value(j); break;
    case JSON_REAL: v->kind = OG_J_REAL; v->d = json_real_value(j); break;
    case JSON_TRUE: v->kind = OG_J_TRUE; break;
    case JSON_FALSE: v->kind = OG_J_FALSE; break;
    default: v->kind = OG_J_NULL; break;
    }
}

static void jv_of_tok(jv *v, const og_jtok *t)
{
    memset(v, 0, sizeof *v);
    v->t = t;
    v->kind = (og_jkind)t->kind;
    switch (v->kind) {
    case OG_J_STRING: v->s = t->v.s; v->len = t->len; break;
    case OG_J_ARRAY: v->len = t->len; break;
    case OG_J_INT: v->i = t->v.i; break;
    case OG_J_UINT: v->u = t->v.u; break;
    case OG_J_REAL: v->d = t->v.d; break;
    default: break;
    }
}

/* Walks an array jv's elements in order. */
typedef struct jv_iter {
    const jv *arr;
    size_t i;
    const og_jtok *next;
} jv_iter;

static void jv_iter_init(jv_iter *it, const jv *arr)
{
    it->arr = arr;
    it->i = 0;
    it->next = arr->t ? arr->t + 1 : NULL;
}

static int jv_iter_next(jv_iter *it, jv *out)
{
    if (it->i >= it->arr->len) return 0;
    if (it->arr->t) {
        jv_of_tok(out, it->next);
        it->next = og_jtok_next(it->next);
    } else {
        jv_of_json(out, json_array_get(it->arr->j, it->i));
    }
    it->i++;
    return 1;
}

static int jv_is_number(const jv *v) { return v->kind == OG_J_INT || v->kind == OG_J_UINT || v->kind == OG_J_REAL; }
static double jv_number(const jv *v)
{
    return v->kind == OG_J_INT ? (double)v->i : v->kind == OG_J_UINT ? (double)v->u : v->d;
}

static og_status mismatch(const char *what, og_type t, const jv *v)
{
    char tn[32];
    int is_int = t.id == OG_T_I32 || t.id == OG_T_I64 || t.id == OG_T_U32 || t.id == OG_T_U64;
    int is_num = is_int || t.id == OG_T_F32 || t.id == OG_T_F64;
    int v_num = jv_is_number(v);
    const char *hint = is_int && v->kind == OG_J_REAL ? " with a fraction or exponent; write an integer (1818, not 1818.0)"
                       : is_num && v->kind == OG_J_STRING ? "; write the number without quotes"
                       : t.id == OG_T_BOOL && v->kind == OG_J_STRING ? "; write true or false without quotes"
                       : t.id == OG_T_DATE32 && v_num ? "; write the date as a string, \"YYYY-MM-DD\""
                       : t.id == OG_T_DATE64 && v_num ? "; write the date-time as an RFC 3339 string, \"YYYY-MM-DDTHH:MM:SSZ\""
                       : (t.id == OG_T_STRING || t.id == OG_T_BLOB) && (v_num || v->kind == OG_J_TRUE || v->kind == OG_J_FALSE)
                           ? "; write the value in quotes"
                           : "";
    return og_err(OG_ERR_INVALID, "%s: expected %s, got %s%s", what, og_type_name(t, tn, sizeof tn), og_jkind_name(v->kind),
                  hint);
}

static og_status parse_decimal(const char *s, int is_unsigned, int64_t *sv, uint64_t *uv)
{
    if (!*s) return OG_ERR_INVALID;
    char *end;
    errno = 0;
    if (is_unsigned) {
        if (*s == '-' || *s == '+' || *s == ' ') return OG_ERR_INVALID;
        *uv = strtoull(s, &end, 10);
    } else {
        if (*s == ' ' || *s == '+') return OG_ERR_INVALID;
        *sv = strtoll(s, &end, 10);
    }
    if (errno == ERANGE || *end) return OG_ERR_INVALID;
    return OG_OK;
}

static og_status append_int(og_vector *out, const jv *j, const char *what)
{
    int is_u = out->type.id == OG_T_U32 || out->type.id == OG_T_U64;
    int64_t sv = 0;
    uint64_t uv = 0;
    if (j->kind == OG_J_INT) {
        sv = j->i;
        if (is_u) {
            if (sv < 0) return og_err(OG_ERR_INVALID, "%s: %lld is negative, the column is unsigned", what, (long long)sv);
            uv = (uint64_t)sv;
        }
    } else if (j->kind == OG_J_UINT) {
        if (!is_u)
            return og_err(OG_ERR_INVALID, "%s: %llu is out of range for %s", what, (unsigned long long)j->u,
                          out->type.id == OG_T_I32 ? "I32" : "I64");
        uv = j->u;
    } else if (j->kind == OG_J_STRING) {
        /* The one exception to "a JSON value of the declared type" (docs/reference.md): a
         * 64-bit integer beyond +-(2^53-1) may be a decimal string, for a JavaScript client
         * whose numbers are doubles.  Any other quoted number is refused. */
        int wide = out->type.id == OG_T_I64 || out->type.id == OG_T_U64;
        if (!wide || parse_decimal(j->s, is_u, &sv, &uv) != OG_OK ||
            (is_u ? uv <= (uint64_t)JS_SAFE_MAX : (sv <= JS_SAFE_MAX && sv >= -JS_SAFE_MAX))) {
            char tn[32];
            int num = parse_decimal(j->s, is_u, &sv, &uv) == OG_OK;
            return og_err(OG_ERR_INVALID, "%s: expected %s, got a string (\"%.40s\")%s", what,
                          og_type_name(out->type, tn, sizeof tn), j->s,
                          num ? "; write the number without quotes"
                              : "; write an integer as a JSON number");
        }
    } else {
        return mismatch(what, out->type, j);
    }
    og_status st = is_u ? og_vector_append_u64(out, uv) : og_vector_append_i64(out, sv);
    if (st == OG_ERR_INVALID) return og_err_wrap(OG_ERR_INVALID, "%s", what);
    return st;
}

static og_status append_float(og_vector *out, const jv *j, const char *what)
{
    if (!jv_is_number(j)) return mismatch(what, out->type, j);
    double d = jv_number(j);
    if (!isfinite(d)) return og_err(OG_ERR_INVALID, "%s: non-finite number", what);
    if (out->type.id == OG_T_F32 && fabs(d) > 3.4028234663852886e38)
        return og_err(OG_ERR_INVALID, "%s: %g is out of range for F32", what, d);
    return og_vector_append_f64(out, d);
}

static og_status append_blob(og_vector *out, const jv *j, const char *what)
{
    if (j->kind != OG_J_STRING) return mismatch(what, out->type, j);
    const char *s = j->s;
    size_t n = j->len;
    if (n < 7 || memcmp(s, "base64:", 7) != 0)
        return og_err(OG_ERR_UNSUPPORTED, "%s: external blob references are not supported; send \"base64:<payload>\"", what);
    const char *p = s + 7;
    size_t pn = n - 7;
    if (pn % 4) return og_err(OG_ERR_INVALID, "%s: base64 payload length %zu is not a multiple of 4", what, pn);
    unsigned char *bytes = malloc(pn / 4 * 3 + 1);
    if (!bytes) return og_err(OG_ERR_NOMEM, "out of memory");
    int got = pn ? EVP_DecodeBlock(bytes, (const unsigned char *)p, (int)pn) : 0;
    if (got < 0) {
        free(bytes);
        return og_err(OG_ERR_INVALID, "%s: invalid base64 payload", what);
    }
    size_t pad = (pn && p[pn - 1] == '=') + (pn > 1 && p[pn - 2] == '=');
    og_status st = og_vector_append_bytes(out, bytes, (size_t)got - pad);
    free(bytes);
    return st;
}

static og_status append_vector(og_vector *out, const jv *j, const char *what)
{
    if (j->kind != OG_J_ARRAY) return mismatch(what, out->type, j);
    size_t n = j->len;
    if (n != out->type.dim)
        return og_err(OG_ERR_INVALID, "%s: vector has %zu values, Vector(%u) needs %u", what, n, out->type.dim, out->type.dim);
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return og_err(OG_ERR_NOMEM, "out of memory");
    jv_iter it;
    jv e;
    jv_iter_init(&it, j);
    for (size_t i = 0; jv_iter_next(&it, &e); i++) {
        double d = jv_is_number(&e) ? jv_number(&e) : NAN;
        if (!jv_is_number(&e) || !isfinite(d) || fabs(d) > 3.4028234663852886e38) {
            free(f);
            return og_err(OG_ERR_INVALID, "%s: vector element %zu is not a finite number", what, i);
        }
        f[i] = (float)d;
    }
    og_status st = og_vector_append_floats(out, f, n);
    free(f);
    return st;
}

static og_status append_scalar(og_vector *out, const jv *j, og_jsonval_mode mode, const char *what)
{
    (void)mode; /* params and load follow the same rules (docs/reference.md "Strict input") */
    switch (out->type.id) {
    case OG_T_BOOL:
        if (j->kind != OG_J_TRUE && j->kind != OG_J_FALSE) return mismatch(what, out->type, j);
        return og_vector_append_bool(out, j->kind == OG_J_TRUE);
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: return append_int(out, j, what);
    case OG_T_F32: case OG_T_F64: return append_float(out, j, what);
    case OG_T_STRING:
        if (j->kind != OG_J_STRING) return mismatch(what, out->type, j);
        return og_vector_append_bytes(out, j->s, j->len);
    case OG_T_BLOB: return append_blob(out, j, what);
    case OG_T_DATE32: {
        if (j->kind != OG_J_STRING) return mismatch(what, out->type, j);
        int32_t d;
        if (og_date_parse(j->s, j->len, &d) != OG_OK) return og_err_wrap(OG_ERR_INVALID, "%s", what);
        return og_vector_append_i64(out, d);
    }
    case OG_T_DATE64: {
        if (j->kind != OG_J_STRING) return mismatch(what, out->type, j);
        int64_t ms;
        if (og_datetime_parse(j->s, j->len, &ms) != OG_OK)
            return og_err_wrap(OG_ERR_INVALID, "%s", what);
        return og_vector_append_i64(out, ms);
    }
    case OG_T_VECTOR: return append_vector(out, j, what);
    default: return og_err(OG_ERR_INTERNAL, "%s: unsupported target type", what);
    }
}

/* v == NULL: the value is absent. */
static og_status append_jv(og_vector *out, const jv *v, int nullable, og_jsonval_mode mode, const char *what)
{
    if (!v || v->kind == OG_J_NULL) {
        if (!nullable) return og_err(OG_ERR_INVALID, "%s: null is not allowed (the value is required)", what);
        return og_vector_append_null(out);
    }
    if (out->type.id != OG_T_LIST) return append_scalar(out, v, mode, what);
    if (v->kind != OG_J_ARRAY) return mismatch(what, out->type, v);
    og_vector items;
    OG_TRY(og_vector_init(&items, (og_type){out->type.elem, OG_T_NULL, 0}));
    og_status st = OG_OK;
    jv_iter it;
    jv e;
    jv_iter_init(&it, v);
    for (size_t i = 0; st == OG_OK && jv_iter_next(&it, &e); i++) {
        if (e.kind == OG_J_NULL)
            st = og_err(OG_ERR_INVALID, "%s: list item %zu is null (list items must not be null)", what, i);
        else
            st = append_scalar(&items, &e, mode, what);
    }
    for (size_t i = 0; i < items.len && st == OG_OK; i++) st = og_vector_append_from(out->child, &items, i);
    if (st == OG_OK) st = og_vector_append_list_end(out);
    og_vector_free(&items);
    return st;
}

og_status og_jsonval_append(og_vector *out, const json_t *j, int nullable, og_jsonval_mode mode, const char *what)
{
    jv v;
    if (j) jv_of_json(&v, j);
    return append_jv(out, j ? &v : NULL, nullable, mode, what);
}

og_status og_jsonval_append_tok(og_vector *out, const og_jtok *t, int nullable, og_jsonval_mode mode, const char *what)
{
    jv v;
    if (t) jv_of_tok(&v, t);
    return append_jv(out, t ? &v : NULL, nullable, mode, what);
}

/* ---- column value -> JSON ----------------------------------------------------------------- */


/* A non-finite real (only a computed column holds one: a load refuses them) is null, as the
 * reference's Arrow JSON writer spells it. */
static json_t *real_json(double d) { return isfinite(d) ? json_real(d) : json_null(); }

static json_t *decimal_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *decimal_json(const char *fmt, ...)
{
    char b[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    return json_string(b);
}

json_t *og_jsonval_cell(const og_vector *v, size_t i, unsigned flags)
{
    if (og_vector_is_null(v, i)) return json_null();
    switch (v->type.id) {
    case OG_T_BOOL: return json_boolean(og_vector_get_bool(v, i));
    case OG_T_I32: case OG_T_I64: return json_integer((json_int_t)og_vector_get_i64(v, i));
    case OG_T_U32: case OG_T_U64: {
        uint64_t x = og_vector_get_u64(v, i);
        if (x > (uint64_t)INT64_MAX)
            return (flags & OG_CELL_BIG_U64) ? og_json_bignum(x) : decimal_json("%llu", (unsigned long long)x);
        return json_integer((json_int_t)x);
    }
    case OG_T_F32: return real_json(og_json_f32((float)og_vector_get_f64(v, i)));
    case OG_T_F64: return real_json(og_vector_get_f64(v, i));
    case OG_T_DATE32: {
        char b[11];
        og_date_format((int32_t)og_vector_get_i64(v, i), b);
        return json_string(b);
    }
    case OG_T_DATE64: {
        char b[25];
        og_datetime_format_value(og_vector_get_i64(v, i), b);
        return json_string(b);
    }
    case OG_T_STRING: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        return json_stringn((const char *)p, n);
    }
    case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        if (!(flags & OG_CELL_BLOB_BASE64)) return json_stringn((const char *)p, n);
        char *b = malloc(7 + 4 * ((n + 2) / 3) + 1);
        if (!b) return NULL;
        memcpy(b, "base64:", 7);
        int k = n ? EVP_EncodeBlock((unsigned char *)b + 7, p, (int)n) : 0;
        b[7 + k] = '\0';
        json_t *j = json_string(b);
        free(b);
        return j;
    }
    case OG_T_VECTOR: {
        json_t *a = json_array();
        const float *f = og_vector_get_floats(v, i);
        for (uint32_t k = 0; a && k < v->type.dim; k++)
            if (json_array_append_new(a, real_json(og_json_f32(f[k])))) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    case OG_T_LIST: {
        json_t *a = json_array();
        size_t b, e;
        og_vector_get_list(v, i, &b, &e);
        for (size_t k = b; a && k < e; k++)
            if (json_array_append_new(a, og_jsonval_cell(v->child, k, flags))) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    default: return json_null();
    }
}
