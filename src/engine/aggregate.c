/*
 * aggregate.c — hash grouping (open addressing over group ids) and aggregate kernels.
 * See aggregate.h.
 */
#include "engine/aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n)
{
    uint64_t f = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) f = (f ^ p[i]) * 1099511628211ull;
    return mix(h, f ^ n);
}

uint64_t og_vector_row_hash(const og_vector *v, size_t i, uint64_t h)
{
    if (og_vector_is_null(v, i)) return mix(h, 0x6e756c6cull);
    switch (v->type.id) {
    case OG_T_BOOL: return mix(h, (uint64_t)og_vector_get_bool(v, i) + 1);
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: return mix(h, (uint64_t)og_vector_get_i64(v, i));
    case OG_T_U32: case OG_T_U64: return mix(h, og_vector_get_u64(v, i));
    case OG_T_F32: case OG_T_F64: {
        double d = og_vector_get_f64(v, i);
        if (d == 0) d = 0; /* -0 and 0 are equal */
        if (isnan(d)) return mix(h, 0x7ff8ull);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return mix(h, bits);
    }
    case OG_T_STRING: case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        return hash_bytes(h, p, n);
    }
    case OG_T_VECTOR: return hash_bytes(h, (const uint8_t *)og_vector_get_floats(v, i), 4u * v->type.dim);
    case OG_T_LIST: {
        size_t b, e;
        og_vector_get_list(v, i, &b, &e);
        h = mix(h, e - b);
        for (size_t k = b; k < e; k++) h = og_vector_row_hash(v->child, k, h);
        return h;
    }
    default: return h;
    }
}

static int keys_equal(const og_vector *const *keys, size_t n_keys, uint32_t a, uint32_t b)
{
    for (size_t k = 0; k < n_keys; k++)
        if (!og_vector_row_eq(keys[k], a, keys[k], b)) return 0;
    return 1;
}

og_status og_group_rows(const og_vector *const *keys, size_t n_keys, size_t n, uint32_t *group_of_row,
                        size_t *n_groups, uint32_t **first_row)
{
    *first_row = NULL;
    *n_groups = 0;
    if (n_keys == 0) {
        for (size_t i = 0; i < n; i++) group_of_row[i] = 0;
        *first_row = malloc(sizeof(uint32_t));
        if (!*first_row) return og_err(OG_ERR_NOMEM, "out of memory");
        (*first_row)[0] = n ? 0 : UINT32_MAX;
        *n_groups = 1;
        return OG_OK;
    }
    size_t cap = 16;
    while (cap < n * 2) cap *= 2;
    uint32_t *slots = malloc(cap * sizeof *slots); /* group id + 1; 0 = empty */
    uint32_t *firsts = malloc((n ? n : 1) * sizeof *firsts);
    if (!slots || !firsts) {
        free(slots), free(firsts);
        return og_err(OG_ERR_NOMEM, "out of memory grouping %zu rows", n);
    }
    memset(slots, 0, cap * sizeof *slots);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = 0;
        for (size_t k = 0; k < n_keys; k++) h = og_vector_row_hash(keys[k], i, h);
        size_t s = (size_t)h & (cap - 1);
        for (;;) {
            if (!slots[s]) {
                slots[s] = (uint32_t)groups + 1;
                firsts[groups] = (uint32_t)i;
                group_of_row[i] = (uint32_t)groups++;
                break;
            }
            uint32_t g = slots[s] - 1;
            if (keys_equal(keys, n_keys, firsts[g], (uint32_t)i)) {
                group_of_row[i] = g;
                break;
            }
            s = (s + 1) & (cap - 1);
        }
    }
    free(slots);
    *first_row = firsts;
    *n_groups = groups;
    return OG_OK;
}

static int is_numeric(og_type_id t)
{
    return t == OG_T_I32 || t == OG_T_I64 || t == OG_T_U32 || t == OG_T_U64 || t == OG_T_F32 || t == OG_T_F64;
}

og_status og_aggregate_type(og_agg_fn fn, og_type in, og_type *out)
{
    char name[32];
    switch (fn) {
    case OG_AGG_COUNT: *out = (og_type){OG_T_I64, 0, 0}; return OG_OK;
    case OG_AGG_SUM: case OG_AGG_AVG:
        if (!is_numeric(in.id)) return og_err(OG_ERR_TYPE, "%s needs a numeric input, got %s", fn == OG_AGG_SUM ? "sum" : "avg", og_type_name(in, name, sizeof name));
        *out = (og_type){OG_T_F64, 0, 0};
        return OG_OK;
    case OG_AGG_MIN: case OG_AGG_MAX:
        if (!is_numeric(in.id) && in.id != OG_T_STRING && in.id != OG_T_BOOL && in.id != OG_T_DATE32 &&
            in.id != OG_T_DATE64)
            return og_err(OG_ERR_TYPE, "%s needs a numeric, String, Bool, Date or DateTime input, got %s", fn == OG_AGG_MIN ? "min" : "max", og_type_name(in, name, sizeof name));
        *out = in;
        return OG_OK;
    }
    return og_err(OG_ERR_INTERNAL, "unknown aggregate %d", (int)fn);
}

static double num_at(const og_vector *v, size_t i)
{
    switch (v->type.id) {
    case OG_T_I32: case OG_T_I64: return (double)og_vector_get_i64(v, i);
    case OG_T_U32: case OG_T_U64: return (double)og_vector_get_u64(v, i);
    default: return og_vector_get_f64(v, i);
    }
}

og_status og_aggregate(og_agg_fn fn, const og_vector *input, const uint32_t *group_of_row, size_t n, size_t n_groups,
                       og_vector *out)
{
    og_type rt;
    if (fn == OG_AGG_COUNT && !input)
        rt = (og_type){OG_T_I64, 0, 0};
    else
        OG_TRY(og_aggregate_type(fn, input->type, &rt));
    OG_TRY(og_vector_init(out, rt));
    og_status st = OG_OK;
    if (fn == OG_AGG_COUNT) {
        int64_t *cnt = calloc(n_groups ? n_groups : 1, sizeof *cnt);
        if (!cnt) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            if (!input || !og_vector_is_null(input, i)) cnt[group_of_row[i]]++;
        for (size_t g = 0; g < n_groups && st == OG_OK; g++) st = og_vector_append_i64(out, cnt[g]);
        free(cnt);
    } else if (fn == OG_AGG_SUM || fn == OG_AGG_AVG) {
        /* integers add exactly (128 bits) and round once; floats add in row order */
        int exact = input->type.id != OG_T_F32 && input->type.id != OG_T_F64;
        double *sum = calloc(n_groups ? n_groups : 1, sizeof *sum);
        __int128 *isum = calloc(n_groups ? n_groups : 1, sizeof *isum);
        int64_t *cnt = calloc(n_groups ? n_groups : 1, sizeof *cnt);
        if (!sum || !isum || !cnt) {
            free(sum), free(isum), free(cnt);
            return og_err(OG_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            if (og_vector_is_null(input, i)) continue;
            if (!exact) sum[group_of_row[i]] += num_at(input, i);
            else if (input->type.id == OG_T_U32 || input->type.id == OG_T_U64)
                isum[group_of_row[i]] += (__int128)og_vector_get_u64(input, i);
            else
                isum[group_of_row[i]] += og_vector_get_i64(input, i);
            cnt[group_of_row[i]]++;
        }
        for (size_t g = 0; g < n_groups && st == OG_OK; g++) {
            double s = exact ? (double)isum[g] : sum[g];
            st = cnt[g] ? og_vector_append_f64(out, fn == OG_AGG_SUM ? s : s / (double)cnt[g])
                        : og_vector_append_null(out);
        }
        free(sum), free(isum), free(cnt);
    } else {
        uint32_t *best = malloc((n_groups ? n_groups : 1) * sizeof *best);
        if (!best) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t g = 0; g < n_groups; g++) best[g] = UINT32_MAX;
        for (size_t i = 0; i < n; i++) {
            if (og_vector_is_null(input, i)) continue;
            uint32_t g = group_of_row[i];
            if (best[g] == UINT32_MAX) {
                best[g] = (uint32_t)i;
                continue;
            }
            int c = og_vector_row_cmp(input, i, input, best[g]);
            if (fn == OG_AGG_MIN ? c < 0 : c > 0) best[g] = (uint32_t)i;
        }
        og_vector_free(out);
        st = og_vector_gather(out, input, best, n_groups);
        free(best);
    }
    if (st != OG_OK) og_vector_free(out);
    return st;
}
