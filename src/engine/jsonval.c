/*
 * jsonval.c — strict JSON → column value conversion.  See jsonval.h.
 *
 * Lists are converted into a scratch child first and only then appended, so a bad element
 * leaves the output vector exactly as it was.
 */
#include "engine/jsonval.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "util/datetime.h"
#include "util/error.h"

static const char *json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static og_status mismatch(const char *what, og_type t, const json_t *j)
{
    char tn[32];
    return og_err(OG_ERR_INVALID, "%s: expected %s, got %s", what, og_type_name(t, tn, sizeof tn), json_kind(j));
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

static og_status append_int(og_vector *out, const json_t *j, const char *what)
{
    int is_u = out->type.id == OG_T_U32 || out->type.id == OG_T_U64;
    int64_t sv = 0;
    uint64_t uv = 0;
    if (json_is_integer(j)) {
        sv = json_integer_value(j);
        if (is_u) {
            if (sv < 0) return og_err(OG_ERR_INVALID, "%s: %lld is negative, the column is unsigned", what, (long long)sv);
            uv = (uint64_t)sv;
        }
    } else if (json_is_string(j)) {
        if (parse_decimal(json_string_value(j), is_u, &sv, &uv) != OG_OK)
            return og_err(OG_ERR_INVALID, "%s: \"%s\" is not a decimal integer in range", what, json_string_value(j));
    } else {
        return mismatch(what, out->type, j);
    }
    og_status st = is_u ? og_vector_append_u64(out, uv) : og_vector_append_i64(out, sv);
    if (st == OG_ERR_INVALID) return og_err_wrap(OG_ERR_INVALID, "%s", what);
    return st;
}

static og_status append_float(og_vector *out, const json_t *j, const char *what)
{
    if (!json_is_number(j)) return mismatch(what, out->type, j);
    double d = json_number_value(j);
    if (!isfinite(d)) return og_err(OG_ERR_INVALID, "%s: non-finite number", what);
    if (out->type.id == OG_T_F32 && fabs(d) > 3.4028234663852886e38)
        return og_err(OG_ERR_INVALID, "%s: %g is out of range for F32", what, d);
    return og_vector_append_f64(out, d);
}

static og_status append_blob(og_vector *out, const json_t *j, const char *what)
{
    if (!json_is_string(j)) return mismatch(what, out->type, j);
    const char *s = json_string_value(j);
    size_t n = json_string_length(j);
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

static og_status append_vector(og_vector *out, const json_t *j, const char *what)
{
    if (!json_is_array(j)) return mismatch(what, out->type, j);
    size_t n = json_array_size(j);
    if (n != out->type.dim)
        return og_err(OG_ERR_INVALID, "%s: vector has %zu values, Vector(%u) needs %u", what, n, out->type.dim, out->type.dim);
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(j, i);
        double d = json_is_number(e) ? json_number_value(e) : NAN;
        if (!json_is_number(e) || !isfinite(d) || fabs(d) > 3.4028234663852886e38) {
            free(f);
            return og_err(OG_ERR_INVALID, "%s: vector element %zu is not a finite number", what, i);
        }
        f[i] = (float)d;
    }
    og_status st = og_vector_append_floats(out, f, n);
    free(f);
    return st;
}

static og_status append_scalar(og_vector *out, const json_t *j, og_jsonval_mode mode, const char *what)
{
    switch (out->type.id) {
    case OG_T_BOOL:
        if (!json_is_boolean(j)) return mismatch(what, out->type, j);
        return og_vector_append_bool(out, json_is_true(j));
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: return append_int(out, j, what);
    case OG_T_F32: case OG_T_F64: return append_float(out, j, what);
    case OG_T_STRING:
        if (!json_is_string(j)) return mismatch(what, out->type, j);
        return og_vector_append_bytes(out, json_string_value(j), json_string_length(j));
    case OG_T_BLOB: return append_blob(out, j, what);
    case OG_T_DATE32: {
        if (mode == OG_JSONVAL_LOAD && json_is_integer(j)) return og_vector_append_i64(out, json_integer_value(j));
        if (!json_is_string(j)) return mismatch(what, out->type, j);
        int32_t d;
        if (og_date_parse(json_string_value(j), json_string_length(j), &d) != OG_OK) return og_err_wrap(OG_ERR_INVALID, "%s", what);
        return og_vector_append_i64(out, d);
    }
    case OG_T_DATE64: {
        if (mode == OG_JSONVAL_LOAD && json_is_integer(j)) return og_vector_append_i64(out, json_integer_value(j));
        if (!json_is_string(j)) return mismatch(what, out->type, j);
        int64_t ms;
        if (og_datetime_parse(json_string_value(j), json_string_length(j), &ms) != OG_OK)
            return og_err_wrap(OG_ERR_INVALID, "%s", what);
        return og_vector_append_i64(out, ms);
    }
    case OG_T_VECTOR: return append_vector(out, j, what);
    default: return og_err(OG_ERR_INTERNAL, "%s: unsupported target type", what);
    }
}

og_status og_jsonval_append(og_vector *out, const json_t *j, int nullable, og_jsonval_mode mode, const char *what)
{
    if (!j || json_is_null(j)) {
        if (!nullable) return og_err(OG_ERR_INVALID, "%s: null is not allowed (the value is required)", what);
        return og_vector_append_null(out);
    }
    if (out->type.id != OG_T_LIST) return append_scalar(out, j, mode, what);
    if (!json_is_array(j)) return mismatch(what, out->type, j);
    og_vector items;
    OG_TRY(og_vector_init(&items, (og_type){out->type.elem, OG_T_NULL, 0}));
    og_status st = OG_OK;
    for (size_t i = 0; i < json_array_size(j) && st == OG_OK; i++) {
        const json_t *e = json_array_get(j, i);
        if (json_is_null(e))
            st = og_err(OG_ERR_INVALID, "%s: list item %zu is null (list items must not be null)", what, i);
        else
            st = append_scalar(&items, e, mode, what);
    }
    for (size_t i = 0; i < items.len && st == OG_OK; i++) st = og_vector_append_from(out->child, &items, i);
    if (st == OG_OK) st = og_vector_append_list_end(out);
    og_vector_free(&items);
    return st;
}
