/*
 * api_merge_base.c — og_db_merge_base (include/omnigraph.h): where two histories meet.
 *
 * Why in the API: "what did this branch change?" is the diff from the merge base of the
 * branch and its target to the branch head — not from the target's current head, which has
 * moved since the branch forked.  Agents and reviewers ask exactly that (docs/mcp.md
 * "branch_diff"); the engine already computes the base for merges (engine/history.h).
 */
#include <string.h>

#include "api/db.h"
#include "engine/history.h"
#include "util/error.h"

og_status og_db_merge_base(og_db *db, const char *a, const char *b, char *out_id, size_t cap)
{
    if (out_id && cap) out_id[0] = '\0';
    if (!out_id || cap < OG_ULID_LEN + 1) return og_err(OG_ERR_INVALID, "the commit id buffer needs %d bytes", OG_ULID_LEN + 1);
    char ia[OG_ULID_LEN + 1], ib[OG_ULID_LEN + 1];
    OG_TRY(og_db_resolve_commit(db, a, ia, sizeof ia));
    OG_TRY(og_db_resolve_commit(db, b, ib, sizeof ib));
    int found = 0;
    OG_TRY(og_history_merge_base(og_engine_graph(db->e), ia, ib, out_id, &found));
    if (!found) {
        out_id[0] = '\0';
        return og_err(OG_ERR_NOT_FOUND, "'%s' and '%s' share no history", a, b);
    }
    return OG_OK;
}
