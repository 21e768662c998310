/*
 * colscan.c — typed column kernels for filter and aggregate.  See colscan.h.
 *
 * Why ranges: every supported comparison of a column with one constant is a set of values
 * [lo, hi] of the column's own type (or its complement for `!=`), computed once per query with
 * the exact mixed-type rules of filter.c; the per-row work is then one unsigned subtraction and
 * compare for integers, two compares for floats, with no per-row type dispatch.
 */
#include "engine/colscan.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dictcol.h"
#include "util/error.h"
#include "util/hash.h"

int og_colscan_threads = 2;

static int int_col(og_type_id t)
{
    return t == OG_T_I32 || t == OG_T_I64 || t == OG_T_U32 || t == OG_T_DATE32 || t == OG_T_DATE64;
}
static int float_col(og_type_id t) { return t == OG_T_F32 || t == OG_T_F64; }
static int is_date(og_type_id t) { return t == OG_T_DATE32 || t == OG_T_DATE64; }

static og_cmp_op flip(og_cmp_op op)
{
    switch (op) {
    case OG_CMP_LT: return OG_CMP_GT;
    case OG_CMP_LE: return OG_CMP_GE;
    case OG_CMP_GT: return OG_CMP_LT;
    case OG_CMP_GE: return OG_CMP_LE;
    default: return op;
    }
}

/* Integer column against the exact integer c. */
static void int_range(og_colrange *r, og_cmp_op op, int64_t c)
{
    switch (op) {
    case OG_CMP_LT:
        if (c == INT64_MIN) r->empty = 1;
        else r->hi = c - 1;
        break;
    case OG_CMP_LE: r->hi = c; break;
    case OG_CMP_GT:
        if (c == INT64_MAX) r->empty = 1;
        else r->lo = c + 1;
        break;
    case OG_CMP_GE: r->lo = c; break;
    case OG_CMP_EQ: r->lo = r->hi = c; break;
    case OG_CMP_NE: r->lo = r->hi = c, r->negate = 1; break;
    default: break;
    }
}

/* Integer column against the float c: the integers x with x op c, exactly. */
static void int_range_f(og_colrange *r, og_cmp_op op, double c)
{
    const double two63 = 9223372036854775808.0;
    if (isnan(c)) { /* NaN: only `!=` matches, every non-null row */
        if (op != OG_CMP_NE) r->empty = 1;
        return;
    }
    if (c >= two63 || c < -two63) { /* beyond every int64 */
        int above = c > 0;           /* every x < c */
        int all = (op == OG_CMP_LT || op == OG_CMP_LE) ? above : (op == OG_CMP_GT || op == OG_CMP_GE) ? !above : 0;
        if (op == OG_CMP_NE) all = 1;
        if (!all) r->empty = 1;
        return;
    }
    double f = floor(c);
    int64_t fl = (int64_t)f;
    int integral = f == c;
    switch (op) {
    case OG_CMP_LT:
        if (integral) int_range(r, OG_CMP_LT, fl);
        else r->hi = fl;
        break;
    case OG_CMP_LE: r->hi = fl; break;
    case OG_CMP_GT: r->lo = fl + 1; break; /* fl < 2^63 - 1: c is below 2^63 */
    case OG_CMP_GE:
        if (integral) r->lo = fl;
        else r->lo = fl + 1;
        break;
    case OG_CMP_EQ:
        if (integral) r->lo = r->hi = fl;
        else r->empty = 1;
        break;
    case OG_CMP_NE:
        if (integral) r->lo = r->hi = fl, r->negate = 1;
        break; /* every non-null row */
    default: break;
    }
}

/* Float column against the float c. */
static void float_range(og_colrange *r, og_cmp_op op, double c)
{
    if (isnan(c)) { /* NaN: only `!=` matches, every non-null row (NaN ones too) */
        r->empty = 1;
        r->negate = op == OG_CMP_NE;
        return;
    }
    switch (op) {
    case OG_CMP_LT:
        if (c == -INFINITY) r->empty = 1;
        else r->fhi = nextafter(c, -INFINITY);
        break;
    case OG_CMP_LE: r->fhi = c; break;
    case OG_CMP_GT:
        if (c == INFINITY) r->empty = 1;
        else r->flo = nextafter(c, INFINITY);
        break;
    case OG_CMP_GE: r->flo = c; break;
    case OG_CMP_EQ: r->flo = r->fhi = c; break;
    case OG_CMP_NE: r->flo = r->fhi = c, r->negate = 1; break;
    default: break;
    }
}

int og_colrange_prepare(og_colrange *r, const og_vector *col, const uint32_t *rows, og_cmp_op op, const og_vector *k,
                        int k_left)
{
    memset(r, 0, sizeof *r);
    r->col = col;
    r->rows = rows;
    r->lo = INT64_MIN, r->hi = INT64_MAX;
    r->flo = -INFINITY, r->fhi = INFINITY;
    og_type_id ct = col->type.id, kt = k->type.id;
    if (op > OG_CMP_GE || (!int_col(ct) && !float_col(ct))) return 0;
    if (k_left) op = flip(op);
    int knull = k->len == 0 || og_vector_is_null(k, 0);
    if (is_date(ct) || is_date(kt)) { /* dates compare only with the same date type */
        if (ct != kt) return 0;
        if (knull) r->empty = 1;
        else int_range(r, op, og_vector_get_i64(k, 0));
        return 1;
    }
    if (kt == OG_T_NULL) knull = 1;
    else if (kt != OG_T_I32 && kt != OG_T_I64 && kt != OG_T_U32 && kt != OG_T_U64 && !float_col(kt)) return 0;
    if (knull) {
        r->empty = 1;
        return 1;
    }
    if (int_col(ct)) {
        if (float_col(kt)) {
            int_range_f(r, op, og_vector_get_f64(k, 0));
        } else if (kt == OG_T_U32 || kt == OG_T_U64) {
            uint64_t u = og_vector_get_u64(k, 0);
            if (u > (uint64_t)INT64_MAX) return 0;
            int_range(r, op, (int64_t)u);
        } else {
            int_range(r, op, og_vector_get_i64(k, 0));
        }
        return 1;
    }
    /* a float column */
    double c;
    if (float_col(kt)) {
        c = og_vector_get_f64(k, 0);
    } else { /* an integer constant: exact as a double only up to 2^53 */
        int64_t i;
        if (kt == OG_T_U32 || kt == OG_T_U64) {
            uint64_t u = og_vector_get_u64(k, 0);
            if (u > (1ull << 53)) return 0;
            i = (int64_t)u;
        } else {
            i = og_vector_get_i64(k, 0);
        }
        if (i > (1ll << 53) || i < -(1ll << 53)) return 0;
        c = (double)i;
    }
    float_range(r, op, c);
    return 1;
}

int og_colrange_prepare_dict(og_colrange *r, const og_dictcol *d, const uint32_t *rows, og_cmp_op op,
                             const og_vector *k, int k_left)
{
    memset(r, 0, sizeof *r);
    r->dict = d;
    r->rows = rows;
    r->lo = INT64_MIN, r->hi = INT64_MAX;
    r->flo = -INFINITY, r->fhi = INFINITY;
    if (op > OG_CMP_GE || (k->type.id != OG_T_STRING && k->type.id != OG_T_NULL)) return 0;
    if (k_left) op = flip(op);
    if (k->type.id == OG_T_NULL || k->len == 0 || og_vector_is_null(k, 0)) { /* a null never matches */
        r->empty = 1;
        return 1;
    }
    size_t klen;
    const uint8_t *kp = og_vector_get_bytes(k, 0, &klen);
    og_dictcol_range(d, op, kp, klen, &r->lo, &r->hi);
    if (op == OG_CMP_NE) {
        r->negate = 1;
        if (r->lo > r->hi) r->empty = 1; /* k is no value of the column: every non-null row */
    } else if (r->lo > r->hi) {
        r->empty = 1;
    }
    return 1;
}

size_t og_colrange_len(const og_colrange *r) { return r->dict ? r->dict->len : r->col->len; }

int og_colrange_merge(og_colrange *a, const og_colrange *b)
{
    if (a->col != b->col || a->dict != b->dict || a->rows != b->rows || a->negate || b->negate) return 0;
    a->empty |= b->empty;
    if (!a->zones) a->zones = b->zones;
    if (b->lo > a->lo) a->lo = b->lo;
    if (b->hi < a->hi) a->hi = b->hi;
    if (b->flo > a->flo) a->flo = b->flo;
    if (b->fhi < a->fhi) a->fhi = b->fhi;
    return 1;
}

static int64_t int_at(const og_vector *c, size_t r)
{
    switch (c->type.id) {
    case OG_T_I32: case OG_T_DATE32: return ((const int32_t *)c->values)[r];
    case OG_T_U32: return ((const uint32_t *)c->values)[r];
    default: return ((const int64_t *)c->values)[r];
    }
}

/* ---- filter ------------------------------------------------------------------------------- */

static uint64_t valid_word(const uint8_t *validity, const uint32_t *rows, size_t base, size_t cnt)
{
    uint64_t m = 0;
    if (rows) {
        for (size_t j = 0; j < cnt; j++) m |= (uint64_t)((validity[rows[base + j] >> 3] >> (rows[base + j] & 7)) & 1) << j;
        return m;
    }
    size_t b0 = base >> 3, nb = (cnt + 7) >> 3;
    for (size_t j = 0; j < nb; j++) m |= (uint64_t)validity[b0 + j] << (8 * j);
    return m;
}

#define RANGE_LOOP(T, LOAD) RANGE_LOOP_OF(T, LOAD, c->values)
#define RANGE_LOOP_OF(T, LOAD, VALUES)                                                                      \
    do {                                                                                                    \
        const T *v = (const T *)(VALUES);                                                                   \
        if (rows) {                                                                                         \
            for (size_t j = 0; j < cnt; j++) {                                                              \
                LOAD(v[rows[base + j]]);                                                                    \
            }                                                                                               \
        } else {                                                                                            \
            const T *w = v + base;                                                                          \
            for (size_t j = 0; j < cnt; j++) {                                                              \
                LOAD(w[j]);                                                                                 \
            }                                                                                               \
        }                                                                                                   \
    } while (0)

#define IN_INT(x) m |= (uint64_t)((uint64_t)(int64_t)(x) - lo <= span) << j
#define IN_FLOAT(x) m |= (uint64_t)(((double)(x) >= flo) & ((double)(x) <= fhi)) << j

/* The rows base..base+cnt of range r as bits. */
static uint64_t range_word(const og_colrange *r, size_t base, size_t cnt)
{
    const og_vector *c = r->col;
    const uint32_t *rows = r->rows;
    uint64_t m = 0;
    if (r->dict) { /* codes: the same range test on 1- or 2-byte integers */
        const og_dictcol *d = r->dict;
        if (!r->empty && r->lo <= r->hi) {
            uint64_t lo = (uint64_t)r->lo, span = (uint64_t)r->hi - lo;
            if (d->width == 1) RANGE_LOOP_OF(uint8_t, IN_INT, d->codes);
            else RANGE_LOOP_OF(uint16_t, IN_INT, d->codes);
        }
        if (r->negate) m = ~m;
        if (cnt < 64) m &= (1ull << cnt) - 1;
        if (d->validity && m) m &= valid_word(d->validity, rows, base, cnt);
        return m;
    }
    if (!r->empty && (r->lo <= r->hi && r->flo <= r->fhi)) {
        uint64_t lo = (uint64_t)r->lo, span = (uint64_t)r->hi - lo;
        double flo = r->flo, fhi = r->fhi;
        switch (c->type.id) {
        case OG_T_I64: case OG_T_DATE64: RANGE_LOOP(int64_t, IN_INT); break;
        case OG_T_I32: case OG_T_DATE32: RANGE_LOOP(int32_t, IN_INT); break;
        case OG_T_U32: RANGE_LOOP(uint32_t, IN_INT); break;
        case OG_T_F64: RANGE_LOOP(double, IN_FLOAT); break;
        case OG_T_F32: RANGE_LOOP(float, IN_FLOAT); break;
        default: break;
        }
    }
    if (r->negate) m = ~m;
    if (cnt < 64) m &= (1ull << cnt) - 1;
    if (c->validity && m) m &= valid_word(c->validity, rows, base, cnt);
    return m;
}

/* 1 when zone z of r's column holds no value r matches. */
static int zone_excluded(const og_colrange *r, size_t z)
{
    const og_colzones *zs = r->zones;
    if (r->negate || z >= zs->nzones) return 0;
    if (r->empty || !zs->any[z]) return 1;
    if (zs->imin) return zs->imax[z] < r->lo || zs->imin[z] > r->hi;
    return zs->fmax[z] < r->flo || zs->fmin[z] > r->fhi;
}

typedef struct filter_job {
    const og_colrange *rs;
    size_t nr, n, w0, w1;
    uint64_t *sel;
    size_t skipped; /* rows zone maps ruled out */
} filter_job;

static void filter_words(filter_job *j)
{
    const size_t zw = OG_COLZONE_ROWS / 64; /* words per zone */
    for (size_t w = j->w0; w < j->w1; w++) {
        uint64_t m = j->sel[w];
        size_t base = w * 64, cnt = j->n - base < 64 ? j->n - base : 64;
        if (m && w % zw == 0) { /* the start of a zone: can a range rule it out? */
            int out = 0;
            for (size_t k = 0; k < j->nr && !out; k++) out = j->rs[k].zones && zone_excluded(&j->rs[k], w / zw);
            if (out) {
                size_t end = w + zw < j->w1 ? w + zw : j->w1;
                for (; w < end; w++) j->sel[w] = 0;
                j->skipped += (end * 64 < j->n ? end * 64 : j->n) - base;
                w--;
                continue;
            }
        }
        for (size_t k = 0; k < j->nr && m; k++) m &= range_word(&j->rs[k], base, cnt);
        j->sel[w] = m;
    }
}

static void *filter_thread(void *arg)
{
    filter_words(arg);
    return NULL;
}

size_t og_colscan_filter(const og_colrange *rs, size_t nr, size_t n, uint64_t *sel)
{
    size_t words = (n + 63) / 64;
    filter_job all = {rs, nr, n, 0, words, sel, 0};
    if (og_colscan_threads < 2 || n < OG_COLSCAN_PAR_MIN) {
        filter_words(&all);
        return all.skipped;
    }
    /* split at a zone boundary, so each zone is judged once */
    filter_job a = all, b = all;
    const size_t zw = OG_COLZONE_ROWS / 64;
    a.w1 = b.w0 = (words / 2 + zw - 1) / zw * zw;
    pthread_t t;
    if (b.w0 >= words || pthread_create(&t, NULL, filter_thread, &b) != 0) {
        filter_words(&all);
        return all.skipped;
    }
    filter_words(&a);
    pthread_join(t, NULL);
    return a.skipped + b.skipped;
}

/* ---- zone maps ---------------------------------------------------------------------------- */

void og_colzones_free(og_colzones *z)
{
    if (!z) return;
    free(z->any), free(z->imin), free(z->imax), free(z->fmin), free(z->fmax);
    free(z);
}

static og_status zones_plain64(const og_vector *col, og_colzones **out);

og_status og_colzones_build(const og_vector *col, og_colzones **out)
{
    *out = NULL;
    og_type_id t = col->type.id;
    if ((t == OG_T_I64 || t == OG_T_DATE64) && !col->validity) return zones_plain64(col, out);
    if (!int_col(t) && !float_col(t)) return OG_OK;
    og_colzones *z = calloc(1, sizeof *z);
    size_t nz = (col->len + OG_COLZONE_ROWS - 1) / OG_COLZONE_ROWS, m = nz ? nz : 1;
    int fl = float_col(t);
    if (z) {
        z->nzones = nz;
        z->any = calloc(m, 1);
        if (fl) z->fmin = malloc(m * sizeof *z->fmin), z->fmax = malloc(m * sizeof *z->fmax);
        else z->imin = malloc(m * sizeof *z->imin), z->imax = malloc(m * sizeof *z->imax);
    }
    if (!z || !z->any || (fl ? !z->fmin || !z->fmax : !z->imin || !z->imax)) {
        og_colzones_free(z);
        return og_err(OG_ERR_NOMEM, "out of memory building zone maps");
    }
    for (size_t k = 0; k < nz; k++) {
        size_t r0 = k * OG_COLZONE_ROWS, r1 = r0 + OG_COLZONE_ROWS < col->len ? r0 + OG_COLZONE_ROWS : col->len;
        int any = 0;
        int64_t lo = 0, hi = 0;
        double flo = 0, fhi = 0;
        for (size_t r = r0; r < r1; r++) {
            if (og_vector_is_null(col, r)) continue;
            if (fl) {
                double x = t == OG_T_F64 ? ((const double *)col->values)[r] : ((const float *)col->values)[r];
                if (isnan(x)) continue;
                if (!any || x < flo) flo = x;
                if (!any || x > fhi) fhi = x;
            } else {
                int64_t x = int_at(col, r);
                if (!any || x < lo) lo = x;
                if (!any || x > hi) hi = x;
            }
            any = 1;
        }
        z->any[k] = (uint8_t)any;
        if (fl) z->fmin[k] = flo, z->fmax[k] = fhi;
        else z->imin[k] = lo, z->imax[k] = hi;
    }
    *out = z;
    return OG_OK;
}

/* ---- aggregate ---------------------------------------------------------------------------- */

int og_colscan_key_ok(og_type_id t) { return t == OG_T_STRING || int_col(t); }

int og_colscan_agg_ok(og_agg_fn fn, og_type_id t)
{
    if (fn == OG_AGG_COUNT) return 1; /* counts non-null values of any type */
    if (fn == OG_AGG_SUM || fn == OG_AGG_AVG) return (int_col(t) && !is_date(t)) || float_col(t);
    return int_col(t) || float_col(t);
}

static inline uint32_t rowof(const og_colref *r, size_t i) { return r->rows ? r->rows[i] : (uint32_t)i; }

/* Group ids of the binding rows by key: gid[i]; the groups' first key rows in *first. */
typedef struct groups {
    size_t n, cap;       /* groups */
    uint32_t *first;     /* column row of each group's first binding row */
    int64_t *ikey;       /* integer keys */
    uint64_t *hash;
    size_t nslots;
    uint32_t *slots;     /* group + 1; 0 = empty */
    uint32_t null_group; /* UINT32_MAX = none yet */
} groups;

static og_status groups_add(groups *g, uint32_t row, int64_t ikey, uint64_t h, uint32_t *out)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 16;
        uint32_t *f = realloc(g->first, nc * sizeof *f);
        if (f) g->first = f;
        int64_t *k = f ? realloc(g->ikey, nc * sizeof *k) : NULL;
        if (k) g->ikey = k;
        uint64_t *hh = k ? realloc(g->hash, nc * sizeof *hh) : NULL;
        if (!hh) return og_err(OG_ERR_NOMEM, "out of memory grouping");
        g->hash = hh;
        g->cap = nc;
    }
    g->first[g->n] = row;
    g->ikey[g->n] = ikey;
    g->hash[g->n] = h;
    *out = (uint32_t)g->n++;
    return OG_OK;
}

static og_status groups_rehash(groups *g)
{
    size_t ns = g->nslots ? g->nslots * 2 : 64;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory grouping");
    for (size_t i = 0; i < g->n; i++) {
        if ((uint32_t)i == g->null_group) continue;
        size_t p = g->hash[i] & (ns - 1);
        while (s[p]) p = (p + 1) & (ns - 1);
        s[p] = (uint32_t)i + 1;
    }
    free(g->slots);
    g->slots = s;
    g->nslots = ns;
    return OG_OK;
}

/* The first min(len, 8) bytes of p as a little-endian word, zero-padded; `end` bounds reads. */
static inline uint64_t load_short(const uint8_t *p, size_t len, const uint8_t *end)
{
    uint64_t w = 0;
    if (len >= 8) {
        memcpy(&w, p, 8);
    } else if (p + 8 <= end) {
        memcpy(&w, p, 8);
        w &= (1ull << (8 * len)) - 1;
    } else {
        for (size_t k = 0; k < len; k++) w |= (uint64_t)p[k] << (8 * k);
    }
    return w;
}

static og_status group_ids(const og_colref *key, size_t n, groups *g, uint32_t *gid)
{
    const og_vector *c = key->col;
    int str = c->type.id == OG_T_STRING;
    const int64_t *off = c->offsets;
    /* (values may be NULL when every row is null or empty) */
    const uint8_t *bytes = c->values ? c->values : (const uint8_t *)"", *end = str && c->values ? bytes + off[c->len] : bytes;
    OG_TRY(groups_rehash(g));
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rowof(key, i);
        if (og_vector_is_null(c, r)) {
            if (g->null_group == UINT32_MAX) OG_TRY(groups_add(g, r, 0, 0, &g->null_group));
            gid[i] = g->null_group;
            continue;
        }
        /* ikey: an integer key, or a String's first 8 bytes (with its length in `len`:
         * strings of at most 8 bytes compare by these two alone) */
        int64_t ik;
        const uint8_t *p = NULL;
        size_t len = 0;
        uint64_t h;
        if (str) {
            p = bytes + off[r];
            len = (size_t)(off[r + 1] - off[r]);
            ik = (int64_t)load_short(p, len, end);
            h = len <= 8 ? og_hash_mix64((uint64_t)ik ^ ((uint64_t)len << 59)) : og_hash_bytes(p, len);
        } else {
            ik = int_at(c, r);
            h = og_hash_mix64((uint64_t)ik);
        }
        size_t s = h & (g->nslots - 1);
        uint32_t found = UINT32_MAX;
        for (;;) {
            uint32_t e = g->slots[s];
            if (!e) break;
            uint32_t cand = e - 1;
            if (g->hash[cand] == h && g->ikey[cand] == ik) {
                if (!str || len <= 8) {
                    found = cand;
                    break;
                }
                uint32_t fr = g->first[cand];
                if ((size_t)(off[fr + 1] - off[fr]) == len && memcmp(bytes + off[fr], p, len) == 0) {
                    found = cand;
                    break;
                }
            }
            s = (s + 1) & (g->nslots - 1);
        }
        if (found == UINT32_MAX) {
            OG_TRY(groups_add(g, r, ik, h, &found));
            g->slots[s] = found + 1;
            if (g->n * 2 > g->nslots) OG_TRY(groups_rehash(g));
        }
        gid[i] = found;
    }
    return OG_OK;
}

/* group_ids for a coded key: a group per code met (and one for nulls), by array lookup. */
static og_status group_ids_dict(const og_colref *key, size_t n, groups *g, uint32_t *gid, uint32_t **code_of_group)
{
    const og_dictcol *d = key->dict;
    size_t nv = d->dict.len;
    uint32_t *slot = malloc((nv + 1) * sizeof *slot); /* code -> group + 1 (nv: the null rows) */
    *code_of_group = malloc((nv + 1) * sizeof **code_of_group);
    if (!slot || !*code_of_group) {
        free(slot);
        return og_err(OG_ERR_NOMEM, "out of memory grouping");
    }
    memset(slot, 0, (nv + 1) * sizeof *slot);
    const uint32_t *rows = key->rows;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rows ? rows[i] : (uint32_t)i;
        uint32_t c = og_dictcol_is_null(d, r) ? (uint32_t)nv : og_dictcol_code(d, r);
        if (!slot[c]) {
            (*code_of_group)[g->n] = c;
            slot[c] = (uint32_t)++g->n;
        }
        gid[i] = slot[c] - 1;
    }
    free(slot);
    return OG_OK;
}

/* Per-group accumulators of one aggregate over one slice of rows. */
typedef struct acc {
    int64_t *cnt;
    __int128 *isum;
    double *fsum;
    int64_t *ibest;
    double *fbest;
} acc;

static void acc_free(acc *a)
{
    free(a->cnt), free(a->isum), free(a->fsum), free(a->ibest), free(a->fbest);
    memset(a, 0, sizeof *a);
}

static og_status acc_init(acc *a, size_t ng)
{
    size_t m = ng ? ng : 1;
    memset(a, 0, sizeof *a);
    a->cnt = calloc(m, sizeof *a->cnt);
    a->isum = calloc(m, sizeof *a->isum);
    a->fsum = calloc(m, sizeof *a->fsum);
    a->ibest = calloc(m, sizeof *a->ibest);
    a->fbest = calloc(m, sizeof *a->fbest);
    if (!a->cnt || !a->isum || !a->fsum || !a->ibest || !a->fbest) {
        acc_free(a);
        return og_err(OG_ERR_NOMEM, "out of memory aggregating");
    }
    return OG_OK;
}

/* og_vector_row_cmp's order of floats: NaN after every other value. */
static int cmp_f(double x, double y)
{
    int nx = isnan(x), ny = isnan(y);
    if (nx || ny) return nx - ny;
    return (x > y) - (x < y);
}

typedef struct agg_job {
    const og_colagg *ag;
    const uint32_t *gid;
    size_t i0, i1;
    acc *a;
} agg_job;

#define AGG_LOOP(T, BODY)                                                                                   \
    do {                                                                                                    \
        const T *v = (const T *)c->values;                                                                  \
        for (size_t i = j->i0; i < j->i1; i++) {                                                            \
            uint32_t r = rows ? rows[i] : (uint32_t)i, g = gid[i];                                          \
            if (nullable && og_vector_is_null(c, r)) continue;                                              \
            T x = v[r];                                                                                     \
            BODY;                                                                                           \
            a->cnt[g]++;                                                                                    \
        }                                                                                                   \
    } while (0)

#define ISUM a->isum[g] += (int64_t)x
#define IMAX if (!a->cnt[g] || (int64_t)x > a->ibest[g]) a->ibest[g] = (int64_t)x
#define IMIN if (!a->cnt[g] || (int64_t)x < a->ibest[g]) a->ibest[g] = (int64_t)x
#define FSUM a->fsum[g] += (double)x
#define FMAX if (!a->cnt[g] || cmp_f((double)x, a->fbest[g]) > 0) a->fbest[g] = (double)x
#define FMIN if (!a->cnt[g] || cmp_f((double)x, a->fbest[g]) < 0) a->fbest[g] = (double)x

#define AGG_INT(T)                                                                                          \
    do {                                                                                                    \
        if (ag->fn == OG_AGG_SUM || ag->fn == OG_AGG_AVG) AGG_LOOP(T, ISUM);                                \
        else if (ag->fn == OG_AGG_MAX) AGG_LOOP(T, IMAX);                                                   \
        else AGG_LOOP(T, IMIN);                                                                             \
    } while (0)

#define AGG_FLOAT(T)                                                                                        \
    do {                                                                                                    \
        if (ag->fn == OG_AGG_SUM || ag->fn == OG_AGG_AVG) AGG_LOOP(T, FSUM);                                \
        else if (ag->fn == OG_AGG_MAX) AGG_LOOP(T, FMAX);                                                   \
        else AGG_LOOP(T, FMIN);                                                                             \
    } while (0)

static void agg_rows(const agg_job *j)
{
    const og_colagg *ag = j->ag;
    const og_vector *c = ag->arg.col;
    const uint32_t *gid = j->gid, *rows = ag->arg.rows;
    acc *a = j->a;
    if (ag->arg.dict) { /* count of a coded column: its non-null rows */
        const og_dictcol *d = ag->arg.dict;
        for (size_t i = j->i0; i < j->i1; i++)
            if (!og_dictcol_is_null(d, rows ? rows[i] : i)) a->cnt[gid[i]]++;
        return;
    }
    if (!c) { /* count(rows) */
        for (size_t i = j->i0; i < j->i1; i++) a->cnt[gid[i]]++;
        return;
    }
    int nullable = c->validity != NULL;
    if (ag->fn == OG_AGG_COUNT) {
        for (size_t i = j->i0; i < j->i1; i++)
            if (!nullable || !og_vector_is_null(c, rows ? rows[i] : i)) a->cnt[gid[i]]++;
        return;
    }
    switch (c->type.id) {
    case OG_T_I64: case OG_T_DATE64: AGG_INT(int64_t); break;
    case OG_T_I32: case OG_T_DATE32: AGG_INT(int32_t); break;
    case OG_T_U32: AGG_INT(uint32_t); break;
    case OG_T_F64: AGG_FLOAT(double); break;
    case OG_T_F32: AGG_FLOAT(float); break;
    default: break; /* og_colscan_agg_ok rules the rest out */
    }
}

static void *agg_thread(void *arg)
{
    agg_rows(arg);
    return NULL;
}

/* Folds b (a later slice of rows) into a. */
static void acc_merge(const og_colagg *ag, acc *a, const acc *b, size_t ng)
{
    int fl = ag->arg.col && float_col(ag->arg.col->type.id), is_max = ag->fn == OG_AGG_MAX;
    for (size_t g = 0; g < ng; g++) {
        if (!b->cnt[g]) continue;
        if (ag->fn == OG_AGG_MIN || ag->fn == OG_AGG_MAX) {
            if (!a->cnt[g]) a->ibest[g] = b->ibest[g], a->fbest[g] = b->fbest[g];
            else if (fl ? (is_max ? cmp_f(b->fbest[g], a->fbest[g]) > 0 : cmp_f(b->fbest[g], a->fbest[g]) < 0)
                        : (is_max ? b->ibest[g] > a->ibest[g] : b->ibest[g] < a->ibest[g])) {
                a->ibest[g] = b->ibest[g], a->fbest[g] = b->fbest[g];
            }
        }
        a->isum[g] += b->isum[g];
        a->fsum[g] += b->fsum[g];
        a->cnt[g] += b->cnt[g];
    }
}

static og_status acc_out(const og_colagg *ag, const acc *a, const uint32_t *which, size_t ng, og_vector *out);

static og_status agg_one(const og_colagg *ag, const uint32_t *gid, size_t n, size_t ng, og_vector *out)
{
    const og_vector *c = ag->arg.col;
    acc a, b;
    OG_TRY(acc_init(&a, ng));
    agg_job ja = {ag, gid, 0, n, &a};
    /* a float sum depends on the order of additions: one thread, in row order */
    int split = og_colscan_threads > 1 && n >= OG_COLSCAN_PAR_MIN &&
                !(c && float_col(c->type.id) && (ag->fn == OG_AGG_SUM || ag->fn == OG_AGG_AVG));
    if (split && acc_init(&b, ng) != OG_OK) {
        og_error_clear(); /* no memory for a second slice: one thread does it all */
        split = 0;
    }
    if (split) {
        agg_job jb = ja;
        jb.a = &b;
        ja.i1 = jb.i0 = n / 2;
        pthread_t t;
        if (pthread_create(&t, NULL, agg_thread, &jb) == 0) {
            agg_rows(&ja);
            pthread_join(t, NULL);
            acc_merge(ag, &a, &b, ng);
        } else {
            ja.i1 = n;
            agg_rows(&ja);
        }
        acc_free(&b);
    } else {
        agg_rows(&ja);
    }
    og_status st = acc_out(ag, &a, NULL, ng, out);
    acc_free(&a);
    return st;
}

/* The results of aggregate ag per group from its accumulators: group k of the output is
 * accumulator slot which[k] (which NULL: slot k). */
static og_status acc_out(const og_colagg *ag, const acc *ap, const uint32_t *which, size_t ng, og_vector *out)
{
    og_type rt;
    const og_vector *c = ag->arg.col;
    if (ag->fn == OG_AGG_COUNT) rt = (og_type){OG_T_I64, 0, 0};
    else OG_TRY(og_aggregate_type(ag->fn, c->type, &rt));
    const acc a = *ap;
    og_status st = og_vector_init(out, rt);
    int fl = c && float_col(c->type.id);
    for (size_t k = 0; k < ng && st == OG_OK; k++) {
        size_t g = which ? which[k] : k;
        switch (ag->fn) {
        case OG_AGG_COUNT: st = og_vector_append_i64(out, a.cnt[g]); break;
        case OG_AGG_SUM: case OG_AGG_AVG: {
            if (!a.cnt[g]) {
                st = og_vector_append_null(out);
                break;
            }
            double s = fl ? a.fsum[g] : (double)a.isum[g];
            st = og_vector_append_f64(out, ag->fn == OG_AGG_SUM ? s : s / (double)a.cnt[g]);
            break;
        }
        default:
            if (!a.cnt[g]) st = og_vector_append_null(out);
            else if (fl) st = og_vector_append_f64(out, a.fbest[g]);
            else if (rt.id == OG_T_U32) st = og_vector_append_u64(out, (uint64_t)a.ibest[g]);
            else st = og_vector_append_i64(out, a.ibest[g]);
            break;
        }
    }
    if (st) og_vector_free(out);
    return st;
}

/* The group keys of a coded String column: code k's value, the null group at code dict.len. */
static og_status dict_keys(const og_dictcol *d, const uint32_t *codes, size_t ng, og_vector *out)
{
    OG_TRY(og_vector_init(out, (og_type){OG_T_STRING, 0, 0}));
    og_status st = OG_OK;
    for (size_t k = 0; k < ng && st == OG_OK; k++) {
        if (codes[k] == d->dict.len) {
            st = og_vector_append_null(out);
            continue;
        }
        size_t len;
        const uint8_t *p = og_vector_get_bytes(&d->dict, codes[k], &len);
        st = og_vector_append_bytes(out, p, len);
    }
    if (st) og_vector_free(out);
    return st;
}

og_status og_colscan_aggregate(const og_colref *key, const og_colagg *aggs, size_t naggs, size_t n, og_vector *outs,
                               og_vector *key_out, size_t *ngroups)
{
    uint32_t *gid = calloc(n ? n : 1, sizeof *gid);
    if (!gid) return og_err(OG_ERR_NOMEM, "out of memory aggregating %zu rows", n);
    groups g = {0};
    g.null_group = UINT32_MAX;
    og_status st = OG_OK;
    size_t ng = 1; /* no key: one group, rows or not */
    uint32_t *codes = NULL; /* a coded key: each group's code (the dictionary's length = null) */
    if (key->dict) {
        st = group_ids_dict(key, n, &g, gid, &codes);
        ng = g.n;
    } else if (key->col) {
        st = group_ids(key, n, &g, gid);
        ng = g.n;
    }
    size_t done = 0; /* outs[0..done) hold results */
    while (done < naggs && st == OG_OK) {
        st = agg_one(&aggs[done], gid, n, ng, &outs[done]);
        if (st == OG_OK) done++;
    }
    if (st == OG_OK && key->col) st = og_vector_gather(key_out, key->col, g.first, ng);
    if (st == OG_OK && key->dict) st = dict_keys(key->dict, codes, ng, key_out);
    if (st) {
        for (size_t k = 0; k < done; k++) og_vector_free(&outs[k]);
    } else {
        *ngroups = ng;
    }
    free(gid);
    free(codes);
    free(g.first), free(g.ikey), free(g.hash), free(g.slots);
    return st;
}

/* ---- streaming aggregation ----------------------------------------------------------------- */

struct og_colstream {
    const og_dictcol *key; /* NULL: one group */
    size_t naggs;
    og_colagg *aggs;       /* arg.col: an empty vector of the argument's type (NULL: count(rows)) */
    og_vector *types;      /*   those vectors */
    acc *accs;             /* per aggregate, one slot per group */
    size_t nslots;         /* key: its values + 1 (the last: null rows); else 1 */
    uint64_t *seen;        /* binding rows per slot */
    uint32_t *gid;         /* scratch of one batch */
    size_t gid_cap;
};

void og_colstream_free(og_colstream *s)
{
    if (!s) return;
    for (size_t a = 0; a < s->naggs; a++) {
        acc_free(&s->accs[a]);
        og_vector_free(&s->types[a]);
    }
    free(s->accs), free(s->aggs), free(s->types), free(s->seen), free(s->gid);
    free(s);
}

og_status og_colstream_new(og_colstream **out, const og_dictcol *key, const og_agg_fn *fns, const og_type *types,
                           size_t naggs)
{
    *out = NULL;
    og_colstream *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory aggregating");
    s->key = key;
    s->nslots = key ? key->dict.len + 1 : 1;
    s->aggs = calloc(naggs ? naggs : 1, sizeof *s->aggs);
    s->types = calloc(naggs ? naggs : 1, sizeof *s->types);
    s->accs = calloc(naggs ? naggs : 1, sizeof *s->accs);
    s->seen = calloc(s->nslots, sizeof *s->seen);
    og_status st =
        s->aggs && s->types && s->accs && s->seen ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory aggregating");
    for (size_t a = 0; a < naggs && st == OG_OK; a++) {
        s->aggs[a].fn = fns[a];
        if (types[a].id != OG_T_NULL) {
            st = og_vector_init(&s->types[a], types[a]);
            if (st != OG_OK) break;
            s->aggs[a].arg.col = &s->types[a];
        }
        s->naggs = a + 1; /* (what og_colstream_free frees) */
        st = acc_init(&s->accs[a], s->nslots);
    }
    if (st != OG_OK) {
        og_colstream_free(s);
        return st;
    }
    s->naggs = naggs;
    *out = s;
    return OG_OK;
}

og_status og_colstream_add(og_colstream *s, size_t row0, const uint32_t *rows, size_t k, const og_vector *const *args)
{
    if (!k) return OG_OK;
    if (k > s->gid_cap) {
        uint32_t *g = realloc(s->gid, k * sizeof *g);
        if (!g) return og_err(OG_ERR_NOMEM, "out of memory aggregating");
        s->gid = g;
        s->gid_cap = k;
    }
    const og_dictcol *d = s->key;
    if (!d) {
        memset(s->gid, 0, k * sizeof *s->gid);
        s->seen[0] += k;
    } else if (!d->validity && d->width == 1) { /* (the common case, without a test a row) */
        const uint8_t *codes = (const uint8_t *)d->codes + row0;
        for (size_t i = 0; i < k; i++) {
            uint32_t c = codes[rows[i]];
            s->gid[i] = c;
            s->seen[c]++;
        }
    } else {
        uint32_t nv = (uint32_t)d->dict.len;
        for (size_t i = 0; i < k; i++) {
            size_t r = row0 + rows[i];
            uint32_t c = og_dictcol_is_null(d, r) ? nv : og_dictcol_code(d, r);
            s->gid[i] = c;
            s->seen[c]++;
        }
    }
    for (size_t a = 0; a < s->naggs; a++) {
        og_colagg ag = s->aggs[a];
        if (!ag.arg.col) continue; /* count(rows): the slots' rows (og_colstream_finish) */
        ag.arg.col = args[a];
        ag.arg.rows = rows;
        agg_job j = {&ag, s->gid, 0, k, &s->accs[a]};
        agg_rows(&j);
    }
    return OG_OK;
}

void og_colstream_merge(og_colstream *a, const og_colstream *b)
{
    for (size_t g = 0; g < a->nslots; g++) a->seen[g] += b->seen[g];
    for (size_t k = 0; k < a->naggs; k++) acc_merge(&a->aggs[k], &a->accs[k], &b->accs[k], a->nslots);
}

og_status og_colstream_finish(og_colstream *s, og_vector *outs, og_vector *key_out, size_t *ngroups)
{
    for (size_t a = 0; a < s->naggs; a++)
        if (!s->aggs[a].arg.col)
            for (size_t g = 0; g < s->nslots; g++) s->accs[a].cnt[g] = (int64_t)s->seen[g];
    uint32_t *which = malloc(s->nslots * sizeof *which);
    if (!which) return og_err(OG_ERR_NOMEM, "out of memory aggregating");
    size_t ng = 0;
    for (size_t g = 0; g < s->nslots; g++)
        if (!s->key || s->seen[g]) which[ng++] = (uint32_t)g;
    og_status st = OG_OK;
    size_t done = 0;
    for (; done < s->naggs && st == OG_OK; done++) st = acc_out(&s->aggs[done], &s->accs[done], which, ng, &outs[done]);
    if (st != OG_OK) done--;
    if (st == OG_OK && s->key) st = dict_keys(s->key, which, ng, key_out);
    if (st) {
        for (size_t k = 0; k < done; k++) og_vector_free(&outs[k]);
    } else {
        *ngroups = ng;
    }
    free(which);
    return st;
}

/* ---- zone maps of a plain 64-bit column ------------------------------------------------- */

/* Zones [k0, k1) of a 64-bit column without nulls. */
typedef struct zones_job {
    const int64_t *x;
    size_t len;
    og_colzones *z;
    size_t k0, k1;
} zones_job;

static void zones_fill(const zones_job *j)
{
    for (size_t k = j->k0; k < j->k1; k++) {
        size_t r0 = k * OG_COLZONE_ROWS, r1 = r0 + OG_COLZONE_ROWS < j->len ? r0 + OG_COLZONE_ROWS : j->len;
        int64_t lo = j->x[r0], hi = j->x[r0];
        for (size_t r = r0 + 1; r < r1; r++) {
            lo = j->x[r] < lo ? j->x[r] : lo;
            hi = j->x[r] > hi ? j->x[r] : hi;
        }
        j->z->any[k] = 1, j->z->imin[k] = lo, j->z->imax[k] = hi;
    }
}

static void *zones_thread(void *arg)
{
    zones_fill(arg);
    return NULL;
}

/* The common case of og_colzones_build, a plain 64-bit column without nulls: no per-row type
 * switch or null test, and over OG_COLSCAN_PAR_MIN rows the zones split between two threads
 * as the filter's words are (a first aggregate over 5M rows spent ~12 ms building them:
 * docs/benchmarks.md "Scaling").  (Kept at the end of the file: placed before the aggregate,
 * it moved that function's hot loop and its warm time by ~7%.) */
static og_status zones_plain64(const og_vector *col, og_colzones **out)
{
    og_colzones *z = calloc(1, sizeof *z);
    size_t nz = (col->len + OG_COLZONE_ROWS - 1) / OG_COLZONE_ROWS, m = nz ? nz : 1;
    if (z) {
        z->nzones = nz;
        z->any = calloc(m, 1);
        z->imin = malloc(m * sizeof *z->imin), z->imax = malloc(m * sizeof *z->imax);
    }
    if (!z || !z->any || !z->imin || !z->imax) {
        og_colzones_free(z);
        return og_err(OG_ERR_NOMEM, "out of memory building zone maps");
    }
    zones_job all = {(const int64_t *)col->values, col->len, z, 0, nz}, a = all, b = all;
    a.k1 = b.k0 = nz / 2;
    pthread_t th;
    if (og_colscan_threads < 2 || col->len < OG_COLSCAN_PAR_MIN || pthread_create(&th, NULL, zones_thread, &b) != 0) {
        zones_fill(&all);
    } else {
        zones_fill(&a);
        pthread_join(th, NULL);
    }
    *out = z;
    return OG_OK;
}
