/*
 * registry.c — the index kinds `omnigraph index build|status` and optimize know (index.h),
 * and the naming of their files.
 *
 * Why a fixed array: the set of kinds is part of the build, not of a graph; the order fixes
 * the order `index status` reports them in.  A new kind adds one line here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ann.h"
#include "index/fts.h"
#include "index/index.h"
#include "index/scalar.h"
#include "util/error.h"

static const og_index_def *const defs[] = {
    &og_index_def_fts,
    &og_index_def_vector,
    &og_index_def_scalar,
};

size_t og_index_def_count(void) { return sizeof defs / sizeof defs[0]; }

const og_index_def *og_index_def_at(size_t i) { return i < og_index_def_count() ? defs[i] : NULL; }

const og_index_def *og_index_def_find(const char *name)
{
    for (size_t i = 0; name && i < og_index_def_count(); i++)
        if (!strcmp(defs[i]->name, name)) return defs[i];
    return NULL;
}

og_status og_index_file_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t field_id,
                            const og_index_def *d)
{
    for (size_t i = 0; i < f->nfiles; i++) {
        const og_data_file *df = &f->files[i];
        int holds = 0;
        for (size_t k = 0; k < df->nfields && !holds; k++) holds = df->fields[k] == field_id;
        if (!holds) continue;
        const char *name = strrchr(df->path, '/');
        name = name ? name + 1 : df->path;
        size_t nl = strlen(name);
        if (nl > 6 && !strcmp(name + nl - 6, ".lance")) nl -= 6;
        int w = snprintf(key, cap, "_index/%s/%.*s/%s-%d.v%u", dir, (int)nl, name, d->name, (int)field_id, d->format);
        if (w < 0 || (size_t)w >= cap) return og_err(OG_ERR_LIMIT, "index: store key too long");
        return OG_OK;
    }
    return og_err(OG_ERR_NOT_FOUND, "index: fragment %llu has no data file holding field %d",
                  (unsigned long long)f->id, (int)field_id);
}

void og_index_frags_free(og_index_frags *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].file) og_mapping_release(f->v[i].file);
        free(f->v[i].ident);
    }
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

uint32_t og_index_frag_row(const og_index_frag *fr, uint32_t offset)
{
    if (!fr->addrs) return offset < fr->live_rows ? (uint32_t)(fr->view_start + offset) : UINT32_MAX;
    uint64_t want = ((uint64_t)fr->fragment_id << 32) | offset;
    size_t lo = 0, hi = fr->live_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fr->addrs[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return lo < fr->live_rows && fr->addrs[lo] == want ? (uint32_t)(fr->view_start + lo) : UINT32_MAX;
}

og_status og_index_read_column(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field_id,
                               const char *what, og_vector *out)
{
    memset(out, 0, sizeof *out);
    if (f->physical_rows >= UINT32_MAX)
        return og_err(OG_ERR_LIMIT, "%s: fragment %llu has %llu rows", what, (unsigned long long)f->id,
                      (unsigned long long)f->physical_rows);
    size_t n = (size_t)f->physical_rows;
    uint32_t *offs = malloc((n ? n : 1) * sizeof *offs);
    if (!offs) return og_err(OG_ERR_NOMEM, "%s: out of memory", what);
    for (size_t i = 0; i < n; i++) offs[i] = (uint32_t)i;
    og_status st = og_table_take(t, m, f->id, offs, n, &field_id, 1, out);
    free(offs);
    if (st == OG_OK && out->len != n)
        st = og_err(OG_ERR_CORRUPT, "%s: fragment %llu gave %zu of %zu rows", what, (unsigned long long)f->id, out->len,
                    n);
    if (st != OG_OK) og_vector_free(out);
    return st;
}
