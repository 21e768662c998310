/*
 * proposal.c — the store keys of merge proposals (proposal.h): append one event with
 * put-if-absent, read a proposal's events, list the proposals.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "graph/proposal.h"
#include "store/store.h"
#include "util/error.h"

#define PREFIX "_graph/proposals/"

/* A proposal id is a ULID: 26 characters of Crockford base 32 (nothing else may name a key). */
static og_status check_id(const char *id)
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    size_t n = id ? strlen(id) : 0;
    int ok = n == OG_ULID_LEN;
    for (size_t i = 0; ok && i < n; i++) ok = strchr(alphabet, id[i]) != NULL;
    return ok ? OG_OK : og_err(OG_ERR_NOT_FOUND, "merge proposal '%s' not found", id ? id : "");
}

og_status og_proposal_append(og_graph *g, const char *id, uint64_t seq, const char *json, size_t len)
{
    OG_TRY(check_id(id));
    char key[128];
    snprintf(key, sizeof key, PREFIX "%s/%020" PRIu64 ".json", id, seq);
    return og_store_put_if_absent(og_graph_store(g), key, json, len);
}

void og_proposal_texts_free(char **texts, size_t n)
{
    for (size_t i = 0; texts && i < n; i++) free(texts[i]);
    free(texts);
}

og_status og_proposal_events(og_graph *g, const char *id, char ***texts, size_t *n)
{
    *texts = NULL;
    *n = 0;
    OG_TRY(check_id(id));
    char prefix[64];
    snprintf(prefix, sizeof prefix, PREFIX "%s/", id);
    og_keylist kl = {0};
    OG_TRY(og_store_list(og_graph_store(g), prefix, NULL, 0, &kl));
    og_status st = OG_OK;
    char **out = kl.count ? calloc(kl.count, sizeof *out) : NULL;
    if (kl.count && !out) st = og_err(OG_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; st == OG_OK && i < kl.count; i++) {
        /* keys sort by seq (20 digits); a gap would mean a torn log: stop at it */
        char want[96];
        snprintf(want, sizeof want, "%s%020zu.json", prefix, i + 1);
        if (strcmp(kl.keys[i], want)) break;
        og_bytes b = {0};
        st = og_store_get(og_graph_store(g), kl.keys[i], &b);
        if (st != OG_OK) break;
        out[k] = malloc(b.len + 1);
        if (!out[k]) st = og_err(OG_ERR_NOMEM, "out of memory");
        else {
            memcpy(out[k], b.data, b.len);
            out[k++][b.len] = 0;
        }
        og_bytes_free(&b);
    }
    og_keylist_free(&kl);
    if (st != OG_OK) {
        og_proposal_texts_free(out, k);
        return st;
    }
    *texts = out;
    *n = k;
    return OG_OK;
}

og_status og_proposal_ids(og_graph *g, char ***ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    og_keylist kl = {0};
    OG_TRY(og_store_list(og_graph_store(g), PREFIX, NULL, 0, &kl));
    og_status st = OG_OK;
    char **out = kl.count ? calloc(kl.count, sizeof *out) : NULL;
    if (kl.count && !out) st = og_err(OG_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; st == OG_OK && i < kl.count; i++) {
        const char *rest = kl.keys[i] + strlen(PREFIX), *slash = strchr(rest, '/');
        if (!slash || slash - rest != OG_ULID_LEN || strcmp(slash + 1, "00000000000000000001.json")) continue;
        if (!(out[k] = strndup(rest, OG_ULID_LEN))) st = og_err(OG_ERR_NOMEM, "out of memory");
        else k++;
    }
    og_keylist_free(&kl);
    if (st != OG_OK) {
        og_proposal_texts_free(out, k);
        return st;
    }
    *ids = out;
    *n = k;
    return OG_OK;
}
