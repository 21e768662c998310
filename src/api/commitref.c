/*
 * commitref.c — commit references (docs/versioning.md "Commit references"): every API entry
 * that takes a commit accepts a full id, a unique id prefix, its short form (the id's last 8
 * to 16 characters, unique in practice), a branch name (its head) or REF~N (the N-th
 * first-parent ancestor).  Resolved here once so the CLI, the server and
 * embedders all read the same spellings the same way.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "engine/engine.h"
#include "engine/history.h"
#include "store/store.h"
#include "util/error.h"
#include "util/id.h"

#define PREFIX_MIN 4   /* shorter prefixes are too likely to be ambiguous to be meant */
/* The short form: an id's last characters.  A ULID's first ten characters are its time, so
 * commits written seconds apart share a long prefix; its last sixteen are random, so eight of
 * them (40 bits) tell commits apart in practice (docs/cli.md "Commit references"). */
#define SUFFIX_MIN 8
#define SUFFIX_MAX 16
#define CANDIDATES_SHOWN 8

static int crockford(int c) { return c && strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) != NULL; }

/* A full id or a unique prefix of one (case-insensitive). */
static og_status resolve_id(og_graph *g, const char *ref, size_t len, char out[OG_ULID_LEN + 1])
{
    char up[OG_ULID_LEN + 1];
    if (len < PREFIX_MIN || len > OG_ULID_LEN)
        return og_err(OG_ERR_NOT_FOUND,
                      "no branch or commit '%.*s' (a commit id prefix needs %d to %d characters, its short form the "
                      "last %d)",
                      (int)len, ref, PREFIX_MIN, OG_ULID_LEN, SUFFIX_MIN);
    for (size_t i = 0; i < len; i++) {
        up[i] = (char)toupper((unsigned char)ref[i]);
        if (!crockford(up[i])) return og_err(OG_ERR_NOT_FOUND, "no branch or commit '%.*s'", (int)len, ref);
    }
    up[len] = '\0';
    char prefix[64];
    snprintf(prefix, sizeof prefix, "_graph/commits/%s", up);
    og_keylist kl = {0};
    OG_TRY(og_store_list(og_graph_store(g), prefix, NULL, CANDIDATES_SHOWN + 1, &kl));
    size_t n = 0;
    char ids[CANDIDATES_SHOWN + 1][OG_ULID_LEN + 1];
    for (size_t i = 0; i < kl.count; i++) {
        const char *base = kl.keys[i] + strlen("_graph/commits/");
        if (strlen(base) != OG_ULID_LEN + 5 || strcmp(base + OG_ULID_LEN, ".json") != 0) continue;
        snprintf(ids[n++], OG_ULID_LEN + 1, "%.*s", OG_ULID_LEN, base);
    }
    og_keylist_free(&kl);
    int by_suffix = 0;
    if (n == 0 && len >= SUFFIX_MIN && len <= SUFFIX_MAX) { /* no id starts so: one that ends so */
        by_suffix = 1;
        OG_TRY(og_store_list(og_graph_store(g), "_graph/commits/", NULL, 0, &kl));
        for (size_t i = 0; i < kl.count; i++) {
            const char *base = kl.keys[i] + strlen("_graph/commits/");
            if (strlen(base) != OG_ULID_LEN + 5 || strcmp(base + OG_ULID_LEN, ".json") != 0) continue;
            if (memcmp(base + OG_ULID_LEN - len, up, len) != 0) continue;
            if (n <= CANDIDATES_SHOWN) snprintf(ids[n], OG_ULID_LEN + 1, "%.*s", OG_ULID_LEN, base);
            n++;
        }
        og_keylist_free(&kl);
    }
    if (n == 0 && len == OG_ULID_LEN)
        return og_err(OG_ERR_NOT_FOUND, "no branch or commit '%.*s' (never written, or reclaimed by cleanup)",
                      (int)len, ref);
    if (n == 0) return og_err(OG_ERR_NOT_FOUND, "no branch or commit '%.*s'", (int)len, ref);
    if (n > 1) {
        char list[CANDIDATES_SHOWN * (OG_ULID_LEN + 2) + 16] = "";
        for (size_t i = 0; i < n && i < CANDIDATES_SHOWN; i++) {
            strcat(list, i ? ", " : "");
            strcat(list, ids[i]);
        }
        if (n > CANDIDATES_SHOWN) strcat(list, ", ...");
        return og_err(OG_ERR_INVALID, "commit %s '%.*s' is ambiguous: it matches %s (give more characters)",
                      by_suffix ? "suffix" : "prefix", (int)len, ref, list);
    }
    memcpy(out, ids[0], OG_ULID_LEN + 1);
    return OG_OK;
}

og_status og_db_resolve_commit(og_db *db, const char *ref, char *out_id, size_t cap)
{
    if (out_id && cap) out_id[0] = '\0';
    if (!ref || !*ref) return og_err(OG_ERR_INVALID, "a commit reference is required");
    if (!out_id || cap < OG_ULID_LEN + 1) return og_err(OG_ERR_INVALID, "the commit id buffer needs %d bytes", OG_ULID_LEN + 1);
    og_graph *g = og_engine_graph(db->e);
    size_t len = strlen(ref);
    unsigned long steps = 0;
    const char *tilde = strrchr(ref, '~');
    if (tilde) {
        const char *d = tilde + 1;
        if (*d == '\0') steps = 1;
        else {
            for (const char *p = d; *p; p++)
                if (!isdigit((unsigned char)*p)) return og_err(OG_ERR_INVALID, "bad commit reference '%s': ~ takes a number", ref);
            if (strlen(d) > 6) return og_err(OG_ERR_INVALID, "bad commit reference '%s': ~%s is too far", ref, d);
            steps = strtoul(d, NULL, 10);
        }
        len = (size_t)(tilde - ref);
        if (len == 0) return og_err(OG_ERR_INVALID, "bad commit reference '%s': nothing before ~", ref);
    }
    char base[OG_BRANCH_MAX + OG_ULID_LEN + 2];
    if (len >= sizeof base) return og_err(OG_ERR_NOT_FOUND, "no branch or commit '%.*s'", (int)len, ref);
    memcpy(base, ref, len);
    base[len] = '\0';

    char id[OG_ULID_LEN + 1] = "";
    /* A full id first (its object is the proof), then a live branch, then a prefix. */
    if (len == OG_ULID_LEN && og_ulid_valid(base)) {
        const og_commit *c;
        og_cache_entry *hold;
        og_status st = og_graph_commit_get(g, base, &c, &hold);
        if (st == OG_OK) {
            memcpy(id, c->id, OG_ULID_LEN + 1);
            og_cache_entry_release(hold);
        } else if (st != OG_ERR_NOT_FOUND) return st;
    }
    if (!id[0]) {
        og_ref_entry head;
        og_status st = og_graph_head_entry(g, base, &head);
        if (st == OG_OK && head.kind != OG_REF_DELETE) memcpy(id, head.commit, OG_ULID_LEN + 1);
        else if (st != OG_OK && st != OG_ERR_NOT_FOUND && st != OG_ERR_INVALID) return st;
        og_error_clear();
    }
    if (!id[0]) OG_TRY(resolve_id(g, base, len, id));
    if (steps) {
        og_commit_id *ids;
        size_t n;
        OG_TRY(og_history_first_parent(g, id, steps + 1, &ids, &n));
        if (n <= steps) {
            free(ids);
            return og_err(OG_ERR_NOT_FOUND, "%s is beyond the root: %.*s has %zu commit%s of first-parent history",
                          ref, (int)len, ref, n, n == 1 ? "" : "s");
        }
        memcpy(id, ids[steps].id, OG_ULID_LEN + 1);
        free(ids);
    }
    snprintf(out_id, cap, "%s", id);
    return OG_OK;
}

og_status og_api_resolve_opt(og_db *db, const char *ref, char buf[OG_ULID_LEN + 1], const char **out)
{
    *out = NULL;
    if (!ref) return OG_OK;
    OG_TRY(og_db_resolve_commit(db, ref, buf, OG_ULID_LEN + 1));
    *out = buf;
    return OG_OK;
}
