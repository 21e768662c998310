/*
 * plan_spill.c — a load's compact endpoints in temp files (og_plan_table.ends_spilled).
 *
 * Why: at 10M nodes / 50M edges the compact endpoints (8 bytes an edge) were 400 MB of what a
 * load held at its last line, and all of what the topology written after the publish was made
 * from (docs/load.md "The memory bound").  Each batch's rows are final once the next batch is
 * flushed (its writer thread was joined), so they go to two unlinked files — page cache, not
 * the process's memory — and are read back a chunk at a time by validation and, as the
 * captured endpoint rows, by the topology's writer.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/plan.h"
#include "engine/plan_internal.h"
#include "util/error.h"
#include "util/wordcache.h" /* og_pread_full */

/* An unlinked temp file in dir (O_TMPFILE, else a ".tmp-" name unlinked at once: a store
 * lists no such name, so a crash in between leaves nothing visible), or -1. */
static int spill_file(const char *dir)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    char path[4096];
    if (snprintf(path, sizeof path, "%s/.tmp-load-spill-XXXXXX", dir) >= (int)sizeof path) return -1;
    int t = mkostemp(path, O_CLOEXEC);
    if (t < 0) return -1;
    unlink(path);
    return t;
}

static int pwrite_all(int fd, const void *data, size_t len, off_t at)
{
    const char *q = data;
    while (len) {
        ssize_t w = pwrite(fd, q, len, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        q += w, len -= (size_t)w, at += w;
    }
    return 0;
}

/* plan_internal.h.  Files that cannot be had leave the endpoints in memory (best effort). */
og_status og_plan_i_ends_spill(og_plan *p, og_plan_table *pt)
{
    if (!pt->ends_spilled) {
        if (!p->spill_dir || !pt->ends_compact) return OG_OK;
        int a = spill_file(p->spill_dir), b = a >= 0 ? spill_file(p->spill_dir) : -1;
        if (a < 0 || b < 0) { /* best effort: then they stay in memory */
            if (a >= 0) close(a);
            return OG_OK;
        }
        pt->ends_fd[0] = a, pt->ends_fd[1] = b;
        pt->ends_spilled = 1;
    }
    size_t n = pt->nends - pt->ends_lo;
    for (int k = 0; k < 2 && n; k++)
        if (pwrite_all(pt->ends_fd[k], pt->ends[k], n * sizeof(uint32_t), (off_t)(pt->ends_lo * sizeof(uint32_t))) != 0)
            return og_err_errno(errno, "%s: writing compact endpoints to a temp file", pt->t->name);
    pt->ends_lo = pt->nends;
    return OG_OK;
}

og_status og_plan_i_ends_spill_all(og_plan_table *pt)
{
    if (!pt->ends_spilled) return OG_OK;
    og_plan tmp; /* (og_plan_i_ends_spill opens nothing for a table that spills already) */
    memset(&tmp, 0, sizeof tmp);
    OG_TRY(og_plan_i_ends_spill(&tmp, pt));
    for (int k = 0; k < 2; k++) {
        free(pt->ends[k]);
        pt->ends[k] = NULL;
    }
    pt->ends_cap = 0;
    return OG_OK;
}

int og_plan_i_ends(og_plan *p, const og_plan_table *pt, int side, size_t r0, size_t n, uint32_t *out)
{
    size_t lo = pt->ends_spilled ? pt->ends_lo : 0;
    size_t in_file = r0 < lo ? (lo - r0 < n ? lo - r0 : n) : 0;
    if (in_file && !og_pread_full(pt->ends_fd[side], out, in_file * sizeof *out, (uint64_t)r0 * sizeof *out)) {
        og_plan_i_lookup_failed(p, og_err_errno(errno ? errno : EIO, "%s: reading compact endpoints from a temp file", pt->t->name));
        memset(out, 0, n * sizeof *out);
        return 0;
    }
    if (n > in_file) memcpy(out + in_file, pt->ends[side] + (r0 + in_file - lo), (n - in_file) * sizeof *out);
    return 1;
}

int og_plan_i_end_rows_put(og_plan *p, og_plan_table *pt, int side, size_t r0, size_t n, const uint32_t *rows)
{
    if (pwrite_all(pt->ends_fd[side], rows, n * sizeof *rows, (off_t)(r0 * sizeof *rows)) == 0) return 1;
    og_plan_i_lookup_failed(p, og_err_errno(errno ? errno : EIO, "%s: writing endpoint rows to a temp file", pt->t->name));
    return 0;
}

