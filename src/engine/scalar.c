/*
 * scalar.c — computed values, one row at a time (scalar.h): arithmetic with I64 / F64
 * promotion, string functions over UTF-8 code points (utf8proc for case mapping, the same
 * library the text analyzer uses), and calendar fields of Date / DateTime values.
 *
 * Why row loops and not typed column kernels: these values feed projections, order keys and
 * filters that the checker has already typed, and their cost is dwarfed by gathering the
 * columns they read; the typed fast paths (colscan.h) stay for plain property comparisons.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "engine/scalar.h"
#include "util/buf.h"
#include "util/error.h"

/* The length of the result: the longest input (each is 1 or n long). */
static size_t out_len(const og_vector *const *v, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        if (v[i] && v[i]->len > len) len = v[i]->len;
    return len;
}

static size_t at(const og_vector *v, size_t i) { return v->len == 1 ? 0 : i; }

static int is_null(const og_vector *v, size_t i) { return v->len == 0 || og_vector_is_null(v, at(v, i)); }

/* A number of row i: 0 = null, 1 = integer (*iv), 2 = float (*fv), -1 = a U64 beyond I64. */
static int num_at(const og_vector *v, size_t i, int64_t *iv, double *fv)
{
    if (is_null(v, i)) return 0;
    size_t k = at(v, i);
    switch (v->type.id) {
    case OG_T_I32: case OG_T_I64:
        *iv = og_vector_get_i64(v, k);
        *fv = (double)*iv;
        return 1;
    case OG_T_U32: case OG_T_U64: {
        uint64_t u = og_vector_get_u64(v, k);
        *fv = (double)u;
        if (u > (uint64_t)INT64_MAX) return -1;
        *iv = (int64_t)u;
        return 1;
    }
    case OG_T_F32: case OG_T_F64:
        *fv = og_vector_get_f64(v, k);
        return 2;
    default:
        return -2;
    }
}

static const char *arith_word(og_qarith op)
{
    static const char *const w[] = {"+", "-", "*", "/", "%", "-"};
    return (unsigned)op <= OG_QA_NEG ? w[op] : "?";
}

/* One integer operation; *null for a zero divisor.  OG_ERR_INVALID on overflow. */
static og_status int_op(og_qarith op, int64_t x, int64_t y, int64_t *r, int *null)
{
    int over = 0;
    *null = 0;
    switch (op) {
    case OG_QA_ADD: over = __builtin_add_overflow(x, y, r); break;
    case OG_QA_SUB: over = __builtin_sub_overflow(x, y, r); break;
    case OG_QA_MUL: over = __builtin_mul_overflow(x, y, r); break;
    case OG_QA_DIV:
        if (y == 0) return *null = 1, OG_OK;
        over = x == INT64_MIN && y == -1;
        if (!over) *r = x / y;
        break;
    case OG_QA_MOD:
        if (y == 0) return *null = 1, OG_OK;
        *r = y == -1 ? 0 : x % y;
        break;
    case OG_QA_NEG: over = __builtin_sub_overflow((int64_t)0, x, r); break;
    }
    if (over) return og_err(OG_ERR_INVALID, "integer overflow in `%s` (I64 arithmetic)", arith_word(op));
    return OG_OK;
}

static double float_op(og_qarith op, double x, double y, int *null)
{
    *null = 0;
    switch (op) {
    case OG_QA_ADD: return x + y;
    case OG_QA_SUB: return x - y;
    case OG_QA_MUL: return x * y;
    case OG_QA_DIV:
        if (y == 0) *null = 1;
        return *null ? 0 : x / y;
    case OG_QA_MOD:
        if (y == 0) *null = 1;
        return *null ? 0 : fmod(x, y);
    case OG_QA_NEG: return -x;
    }
    return 0;
}

og_status og_scalar_arith(og_qarith op, const og_vector *a, const og_vector *b, og_type out_type, og_vector *out)
{
    const og_vector *in[2] = {a, b};
    size_t n = out_len(in, b ? 2 : 1);
    int as_float = out_type.id == OG_T_F64;
    OG_TRY(og_vector_init(out, out_type));
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        int64_t xi = 0, yi = 0, ri = 0;
        double xf = 0, yf = 0;
        int ka = num_at(a, i, &xi, &xf), kb = b ? num_at(b, i, &yi, &yf) : 1, null = 0;
        if (ka == -2 || kb == -2) {
            st = og_err(OG_ERR_INTERNAL, "arithmetic over a non-numeric column");
        } else if (ka == 0 || kb == 0) {
            st = og_vector_append_null(out);
        } else if (as_float) {
            double r = float_op(op, xf, yf, &null);
            st = null ? og_vector_append_null(out) : og_vector_append_f64(out, r);
        } else if (ka < 0 || kb < 0) {
            st = og_err(OG_ERR_INVALID, "a U64 value above 9223372036854775807 in `%s` (I64 arithmetic)",
                        arith_word(op));
        } else {
            st = int_op(op, xi, yi, &ri, &null);
            if (st == OG_OK) st = null ? og_vector_append_null(out) : og_vector_append_i64(out, ri);
        }
    }
    if (st) og_vector_free(out);
    return st;
}

/* ---- strings ------------------------------------------------------------------------------- */

static const char *str_at(const og_vector *v, size_t i, size_t *len)
{
    return (const char *)og_vector_get_bytes(v, at(v, i), len);
}

/* Code points of s[0..n) (stored strings are valid UTF-8: count the non-continuation bytes). */
static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Byte offset of code point k of s[0..n) (n when k is past the end). */
static size_t cp_offset(const char *s, size_t n, uint64_t k)
{
    size_t i = 0;
    for (; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && k-- == 0) return i;
    return n;
}

static og_status append_case(og_vector *out, const char *s, size_t n, int upper, og_buf *tmp)
{
    og_buf_reset(tmp);
    utf8proc_ssize_t i = 0;
    while ((size_t)i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)n - i, &cp);
        if (k <= 0) { /* not UTF-8 after all: keep the byte */
            OG_TRY(og_buf_append(tmp, s + i, 1));
            i++;
            continue;
        }
        utf8proc_uint8_t enc[4];
        utf8proc_ssize_t m = utf8proc_encode_char(upper ? utf8proc_toupper(cp) : utf8proc_tolower(cp), enc);
        OG_TRY(og_buf_append(tmp, enc, (size_t)m));
        i += k;
    }
    return og_vector_append_bytes(out, tmp->data ? (const void *)tmp->data : "", tmp->len);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static og_status fn_string(og_qfn fn, const og_vector *const *args, int nargs, size_t n, og_vector *out)
{
    og_buf tmp = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        int null = 0;
        for (int k = 0; k < nargs && fn != OG_QF_CONCAT; k++) null |= is_null(args[k], i);
        if (null) {
            st = og_vector_append_null(out);
            continue;
        }
        size_t len = 0;
        const char *s = fn == OG_QF_CONCAT ? NULL : str_at(args[0], i, &len);
        switch (fn) {
        case OG_QF_LOWER: case OG_QF_UPPER:
            st = append_case(out, s, len, fn == OG_QF_UPPER, &tmp);
            break;
        case OG_QF_TRIM: {
            size_t b = 0, e = len;
            while (b < e && is_space(s[b])) b++;
            while (e > b && is_space(s[e - 1])) e--;
            st = og_vector_append_bytes(out, s + b, e - b);
            break;
        }
        case OG_QF_SUBSTRING: {
            int64_t start = og_vector_get_i64(args[1], at(args[1], i));
            int64_t count = nargs > 2 ? og_vector_get_i64(args[2], at(args[2], i)) : INT64_MAX;
            if (start < 0 || count < 0) {
                st = og_err(OG_ERR_INVALID, "substring() start and length must be 0 or more, got %lld and %lld",
                            (long long)start, (long long)count);
                break;
            }
            size_t b = cp_offset(s, len, (uint64_t)start);
            size_t e = (uint64_t)count >= len ? len : cp_offset(s + b, len - b, (uint64_t)count) + b;
            st = og_vector_append_bytes(out, s + b, e - b);
            break;
        }
        case OG_QF_CONCAT:
            og_buf_reset(&tmp);
            for (int k = 0; k < nargs && st == OG_OK; k++) {
                if (is_null(args[k], i)) continue; /* a null argument is skipped */
                const char *p = str_at(args[k], i, &len);
                st = og_buf_append(&tmp, p, len);
            }
            if (st == OG_OK) st = og_vector_append_bytes(out, tmp.data ? (const void *)tmp.data : "", tmp.len);
            break;
        default:
            st = og_err(OG_ERR_INTERNAL, "not a string function");
        }
    }
    og_buf_free(&tmp);
    return st;
}

/* ---- numbers, dates, coalesce ---------------------------------------------------------------- */

static og_status fn_number(og_qfn fn, const og_vector *a, size_t n, og_vector *out)
{
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        int64_t iv = 0;
        double fv = 0;
        int k = num_at(a, i, &iv, &fv);
        if (k == -2) {
            st = og_err(OG_ERR_INTERNAL, "%s() over a non-numeric column", og_qfn_name(fn));
        } else if (k == 0) {
            st = og_vector_append_null(out);
        } else if (k == 2) {
            double r = fn == OG_QF_ABS ? fabs(fv) : fn == OG_QF_ROUND ? round(fv) : fn == OG_QF_FLOOR ? floor(fv) : ceil(fv);
            st = og_vector_append_f64(out, r);
        } else if (k < 0) {
            st = og_err(OG_ERR_INVALID, "a U64 value above 9223372036854775807 in %s() (I64 arithmetic)",
                        og_qfn_name(fn));
        } else if (fn == OG_QF_ABS && iv == INT64_MIN) {
            st = og_err(OG_ERR_INVALID, "integer overflow in abs() (I64 arithmetic)");
        } else {
            st = og_vector_append_i64(out, fn == OG_QF_ABS && iv < 0 ? -iv : iv);
        }
    }
    return st;
}

/* Civil date of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm). */
static void civil(int64_t days, int64_t *y, int64_t *m, int64_t *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static og_status fn_date(og_qfn fn, const og_vector *a, size_t n, og_vector *out)
{
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        if (is_null(a, i)) {
            st = og_vector_append_null(out);
            continue;
        }
        int64_t v = og_vector_get_i64(a, at(a, i)), y, m, d;
        if (a->type.id == OG_T_DATE64) v = v >= 0 ? v / 86400000 : -((-v + 86399999) / 86400000);
        civil(v, &y, &m, &d);
        st = og_vector_append_i64(out, fn == OG_QF_YEAR ? y : fn == OG_QF_MONTH ? m : d);
    }
    return st;
}

/* Appends row i of v converted to out's type (numbers promote; other types are equal). */
static og_status append_as(og_vector *out, const og_vector *v, size_t i)
{
    if (og_type_eq(out->type, v->type)) return og_vector_append_from(out, v, at(v, i));
    int64_t iv;
    double fv;
    int k = num_at(v, i, &iv, &fv);
    if (out->type.id == OG_T_F64 && k > 0) return og_vector_append_f64(out, fv);
    if (out->type.id == OG_T_I64 && k == 1) return og_vector_append_i64(out, iv);
    if (out->type.id == OG_T_I64 && k == -1)
        return og_err(OG_ERR_INVALID, "a U64 value above 9223372036854775807 in coalesce() with signed integers");
    return og_err(OG_ERR_INTERNAL, "coalesce() over values of different types");
}

static og_status fn_coalesce(const og_vector *const *args, int nargs, size_t n, og_vector *out)
{
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        int k = 0;
        while (k < nargs && is_null(args[k], i)) k++;
        st = k < nargs ? append_as(out, args[k], i) : og_vector_append_null(out);
    }
    return st;
}

static og_status fn_length(const og_vector *a, size_t n, og_vector *out)
{
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        if (is_null(a, i)) {
            st = og_vector_append_null(out);
        } else if (a->type.id == OG_T_LIST) {
            size_t b, e;
            og_vector_get_list(a, at(a, i), &b, &e);
            st = og_vector_append_i64(out, (int64_t)(e - b));
        } else {
            size_t len;
            const char *s = str_at(a, i, &len);
            st = og_vector_append_i64(out, (int64_t)cp_count(s, len));
        }
    }
    return st;
}

og_status og_scalar_func(og_qfn fn, const og_vector *const *args, int nargs, og_type out_type, og_vector *out)
{
    size_t n = out_len(args, nargs);
    OG_TRY(og_vector_init(out, out_type));
    og_status st;
    switch (fn) {
    case OG_QF_LOWER: case OG_QF_UPPER: case OG_QF_TRIM: case OG_QF_SUBSTRING: case OG_QF_CONCAT:
        st = fn_string(fn, args, nargs, n, out);
        break;
    case OG_QF_LENGTH: case OG_QF_SIZE: st = fn_length(args[0], n, out); break;
    case OG_QF_COALESCE: st = fn_coalesce(args, nargs, n, out); break;
    case OG_QF_ABS: case OG_QF_ROUND: case OG_QF_FLOOR: case OG_QF_CEIL: st = fn_number(fn, args[0], n, out); break;
    case OG_QF_YEAR: case OG_QF_MONTH: case OG_QF_DAY: st = fn_date(fn, args[0], n, out); break;
    default: st = og_err(OG_ERR_INTERNAL, "unknown function %d", (int)fn); break;
    }
    if (st) og_vector_free(out);
    return st;
}
