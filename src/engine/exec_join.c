/*
 * exec_join.c — the hash join of the read executor (exec_read.c): a scan that starts a
 * separate component, joined to the rows before it by an equality.
 *
 * Why its own file: the join is a self-contained algorithm (key choice, a hash that agrees
 * with the filter kernel's equality across numeric types, the probe in scan order) that the
 * operators call in one place (the scan) and explain asks in one (which filter is its key);
 * a reader of either needs the rest of the executor no more than this needs theirs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec_internal.h"
#include "engine/filter.h"
#include "util/budget.h"
#include "util/error.h"
#include "util/hash.h"

/* ---- hash join ---------------------------------------------------------------------------
 * A separate component joined by an equality, `match { $a: A  $b: B  $a.k = $b.k }`: instead of
 * forming every (a, b) pair and filtering, the new scan's rows are hashed on their side of the
 * equality and each earlier row probes with its side, so only matching pairs are formed.  The
 * answer is the nested loop's, in the same order (each earlier row, then its matches in scan
 * order); null keys (and NaN) match nothing, as `=` never holds for them; equal values hash
 * alike across I32/I64/U32/U64/F32/F64 (an integral float hashes as its integer) and every
 * candidate is confirmed with og_value_compare, the filter kernel's own comparison. */

/* Which of fs[0..nf) keys a hash join with scan variable `var`: a CMP `=` with one side over
 * `var` alone and the other over earlier variables only (at least one).  -1 when none;
 * *scan_left = 1 when the left operand is the scan's side. */
int og_xr_hash_key_filter(const og_ir_query *ir, int var, const og_ir_op *const *fs, size_t nf, int *scan_left)
{
    if (var < 0 || !nf) return -1;
    size_t nv = ir->nvars ? ir->nvars : 1;
    unsigned char *vl = malloc(nv), *vr = malloc(nv);
    int found = -1;
    for (size_t f = 0; vl && vr && f < nf && found < 0; f++) {
        const og_ir_pred *pr = &fs[f]->pred;
        if (fs[f]->kind != OG_IR_FILTER || pr->kind != OG_IRP_CMP || pr->op != OG_IR_EQ || !pr->l || !pr->r) continue;
        int opaque = 0;
        memset(vl, 0, nv);
        memset(vr, 0, nv);
        og_xr_expr_vars(pr->l, vl, &opaque);
        og_xr_expr_vars(pr->r, vr, &opaque);
        if (opaque || pr->l->kind == OG_IRX_TEXT || pr->r->kind == OG_IRX_TEXT) continue;
        int l_only = vl[var], r_only = vr[var], l_other = 0, r_other = 0;
        for (size_t v = 0; v < ir->nvars; v++) {
            if ((int)v == var) continue;
            if (vl[v]) l_only = 0, l_other = 1;
            if (vr[v]) r_only = 0, r_other = 1;
        }
        if (l_only && r_other && !vr[var]) found = (int)f, *scan_left = 1;
        else if (r_only && l_other && !vl[var]) found = (int)f, *scan_left = 0;
    }
    free(vl);
    free(vr);
    return found;
}

static int is_num_type(og_type_id t)
{
    return t == OG_T_I32 || t == OG_T_I64 || t == OG_T_U32 || t == OG_T_U64 || t == OG_T_F32 || t == OG_T_F64;
}

/* Types whose equality the hash keys follow: numbers with numbers, else one scalar type. */
static int hash_compatible(og_type_id a, og_type_id b)
{
    if (is_num_type(a) && is_num_type(b)) return 1;
    return a == b && (a == OG_T_BOOL || a == OG_T_DATE32 || a == OG_T_DATE64 || a == OG_T_STRING);
}

/* Row i's hash: 0 when it can equal nothing (null, NaN), else 1 and *h. */
static int key_hash(const og_vector *v, size_t i, uint64_t *h)
{
    if (og_vector_is_null(v, i)) return 0;
    og_type_id t = v->type.id;
    if (t == OG_T_I32 || t == OG_T_I64) {
        *h = og_hash_mix64((uint64_t)og_vector_get_i64(v, i));
    } else if (t == OG_T_U32 || t == OG_T_U64) {
        uint64_t u = og_vector_get_u64(v, i);
        *h = og_hash_mix64(u) ^ (u > (uint64_t)INT64_MAX ? 0x9e3779b97f4a7c15ULL : 0);
    } else if (t == OG_T_F32 || t == OG_T_F64) {
        double d = og_vector_get_f64(v, i);
        if (isnan(d)) return 0;
        if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
            *h = og_hash_mix64((uint64_t)(int64_t)d); /* an integral float hashes as its integer */
        } else if (d == floor(d) && d >= 9223372036854775808.0 && d < 18446744073709551616.0) {
            *h = og_hash_mix64((uint64_t)d) ^ 0x9e3779b97f4a7c15ULL;
        } else {
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            *h = og_hash_mix64(bits ^ 0x5bd1e9955bd1e995ULL);
        }
    } else if (t == OG_T_BOOL) {
        *h = og_hash_mix64(0xb001 + (uint64_t)og_vector_get_bool(v, i));
    } else if (t == OG_T_DATE32 || t == OG_T_DATE64) {
        *h = og_hash_mix64((uint64_t)og_vector_get_i64(v, i) ^ 0xda7eULL);
    } else {
        size_t n;
        const uint8_t *b = og_vector_get_bytes(v, i, &n);
        uint64_t x = 0xcbf29ce484222325ULL; /* FNV-1a */
        for (size_t k = 0; k < n; k++) x = (x ^ b[k]) * 0x100000001b3ULL;
        *h = og_hash_mix64(x);
    }
    return 1;
}

/* Joins p's rows with scan pipe s (op->var bound in its column 0) on the equality among the
 * nf fused filters that og_xr_hash_key_filter picks, applying the other filters to the formed
 * pairs a block at a time.  *used = 0 (nothing changed) when no filter qualifies or the key
 * types are not hash_compatible: the caller then forms the cross join. */
og_status og_xr_hash_join(exec *x, pipe *p, const og_ir_op *op, const pipe *s, const og_ir_op *const *filters,
                          size_t nf, uint64_t *pairs, int *used)
{
    *used = 0;
    int scan_left = 0;
    int kf = og_xr_hash_key_filter(x->ir, op->var, filters, nf, &scan_left);
    if (kf < 0) return OG_OK;
    const og_ir_pred *key = &filters[kf]->pred;
    og_vector ks = {0}, kl = {0};
    og_status st = og_xr_eval(x, s, scan_left ? key->l : key->r, &ks);
    if (st == OG_OK) st = og_xr_eval(x, p, scan_left ? key->r : key->l, &kl);
    size_t n = s->b.n_rows, m = p->b.n_rows;
    if (st != OG_OK || ks.len != n || kl.len != m || !hash_compatible(ks.type.id, kl.type.id) || n >= UINT32_MAX) {
        og_vector_free(&ks);
        og_vector_free(&kl);
        return st;
    }
    size_t nb = 16;
    while (nb < 2 * n) nb *= 2;
    uint32_t *head = malloc(nb * sizeof *head), *next = malloc((n ? n : 1) * sizeof *next);
    uint64_t *hs = malloc((n ? n : 1) * sizeof *hs);
    size_t ncols = p->b.n_cols + 1;
    uint32_t *rowv = malloc(ncols * sizeof *rowv);
    pipe part = {0};
    part.identity_col = -1;
    part.started = 1;
    part.var_col = malloc((x->ir->nvars ? x->ir->nvars : 1) * sizeof *part.var_col);
    og_bindings joined;
    int joined_init = 0;
    if (!head || !next || !hs || !rowv || !part.var_col) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_bindings_init(&joined, ncols);
    if (st == OG_OK) joined_init = 1, st = og_bindings_init(&part.b, ncols);
    if (st == OG_OK) {
        memcpy(part.var_col, p->var_col, x->ir->nvars * sizeof *part.var_col);
        part.var_col[op->var] = (int)(ncols - 1);
        memset(head, 0xff, nb * sizeof *head);
        for (size_t j = n; j-- > 0;) { /* chains in scan order */
            if (!key_hash(&ks, j, &hs[j])) continue;
            size_t b = (size_t)(hs[j] & (nb - 1));
            next[j] = head[b];
            head[b] = (uint32_t)j;
        }
    }
    *pairs = 0;
    for (size_t r = 0; st == OG_OK && r < m; r++) {
        uint64_t h;
        int probe = key_hash(&kl, r, &h); /* a null key matches nothing, but may end the last block */
        for (uint32_t j = probe ? head[h & (nb - 1)] : UINT32_MAX; j != UINT32_MAX && st == OG_OK; j = next[j]) {
            if (hs[j] != h || og_value_compare(&kl, r, &ks, j) != 0) continue;
            for (size_t c = 0; c < p->b.n_cols; c++) rowv[c] = p->b.cols[c][r];
            rowv[ncols - 1] = s->b.cols[0][j];
            st = og_bindings_push(&part.b, rowv);
        }
        if (st == OG_OK && (part.b.n_rows >= 65536 || r + 1 == m)) { /* the other filters, a block at a time */
            *pairs += part.b.n_rows;
            for (size_t f = 0; f < nf && st == OG_OK; f++)
                if ((int)f != kf) st = og_xr_filter_rows(x, &part, &filters[f]->pred, 1);
            for (size_t k = 0; k < part.b.n_rows && st == OG_OK; k++) {
                for (size_t c = 0; c < ncols; c++) rowv[c] = part.b.cols[c][k];
                st = og_bindings_push(&joined, rowv);
            }
            part.b.n_rows = 0;
            if (st == OG_OK && (st = og_budget_check()) != OG_OK) break;
        }
    }
    og_bindings_free(&part.b);
    free(part.var_col);
    free(head);
    free(next);
    free(hs);
    free(rowv);
    og_vector_free(&ks);
    og_vector_free(&kl);
    if (st == OG_OK) {
        og_bindings_free(&p->b);
        p->b = joined;
        p->var_col[op->var] = (int)(p->b.n_cols - 1);
        *used = 1;
    } else if (joined_init) {
        og_bindings_free(&joined);
    }
    return st;
}
