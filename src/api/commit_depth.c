/*
 * commit_depth.c — the first-parent depth of a commit (the reference's graph_manifest_version),
 * remembered per handle.
 *
 * Why: the receipt of every write and every snapshot shows the depth, and finding it by walking
 * the history to the root made each of those cost time that grows with the history (one commit
 * read per ancestor; a store GET each on S3).  A commit never changes, so a depth once known is
 * kept: the walk for a new commit stops at its parent, and a server answering writes pays one
 * step per commit.  The table is bounded (OG_DEPTH_MEMO_MAX entries, then it starts afresh), so a
 * handle's memory does not grow with history either.
 *
 * Depth counts the history that exists when it is first computed: after `cleanup` reclaims old
 * commits, a fresh handle sees smaller depths than one that remembered them (docs/versioning.md).
 */
#include "api/db.h"
#include "engine/engine.h"
#include "engine/history.h"
#include "graph/graph.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define OG_DEPTH_MEMO_MAX 65536 /* entries; a power of two */

typedef struct depth_slot {
    char id[OG_ULID_LEN + 1]; /* "" = empty */
    size_t depth;
} depth_slot;

static uint64_t id_hash(const char *id)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *id; id++) h = (h ^ (unsigned char)*id) * 1099511628211ull;
    return h;
}

/* The slot holding `id`, or the empty slot where it would go (NULL when there is no table). */
static depth_slot *memo_slot(og_api_depth_memo *m, const char *id)
{
    if (!m->slots) return NULL;
    size_t mask = OG_DEPTH_MEMO_MAX - 1;
    for (size_t i = id_hash(id) & mask;; i = (i + 1) & mask)
        if (!m->slots[i].id[0] || !strcmp(m->slots[i].id, id)) return &m->slots[i];
}

static void memo_put(og_api_depth_memo *m, const char *id, size_t depth)
{
    if (!m->slots) {
        m->slots = calloc(OG_DEPTH_MEMO_MAX, sizeof *m->slots);
        if (!m->slots) return; /* remembering is an optimisation only */
    }
    if (m->n >= OG_DEPTH_MEMO_MAX / 2) { /* keep probes short: start afresh */
        memset(m->slots, 0, OG_DEPTH_MEMO_MAX * sizeof *m->slots);
        m->n = 0;
    }
    depth_slot *s = memo_slot(m, id);
    if (!s->id[0]) {
        snprintf(s->id, sizeof s->id, "%s", id);
        m->n++;
    }
    s->depth = depth;
}

void og_api_depth_memo_init(og_api_depth_memo *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
}

void og_api_depth_memo_free(og_api_depth_memo *m)
{
    free(m->slots);
    pthread_mutex_destroy(&m->mu);
}

typedef struct known_ctx {
    og_api_depth_memo *m;
    size_t depth; /* of the remembered commit the walk stopped at; 0 = none */
} known_ctx;

static int known_depth(void *ud, const char *id)
{
    known_ctx *k = ud;
    pthread_mutex_lock(&k->m->mu);
    depth_slot *s = memo_slot(k->m, id);
    if (s && s->id[0]) k->depth = s->depth;
    pthread_mutex_unlock(&k->m->mu);
    return k->depth != 0;
}

og_status og_api_commit_depth(og_db *db, const char *commit, size_t *depth)
{
    known_ctx k = {&db->depth, 0};
    og_commit_id *walked; /* from `commit` back to (not including) a remembered one */
    size_t n;
    OG_TRY(og_history_first_parent_until(og_engine_graph(db->e), commit, 0, known_depth, &k, &walked, &n));
    *depth = k.depth + n;
    pthread_mutex_lock(&k.m->mu);
    for (size_t i = 0; i < n; i++) memo_put(k.m, walked[i].id, k.depth + n - i);
    pthread_mutex_unlock(&k.m->mu);
    free(walked);
    return OG_OK;
}
