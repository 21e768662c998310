/*
 * branch.c — branch control (STORAGE.md §7): create, delete, list.  Each is one
 * put_if_absent of a log entry, so a branch costs O(1) to create (it names a commit; no data
 * is copied), a delete is a tombstone (data stays until cleanup), and a name re-created after
 * a delete starts a new incarnation further down the same log — which is what makes the ABA
 * case impossible for writers that captured the old incarnation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"
#include "util/utf8.h"

#define BRANCH_CONTROL_ATTEMPTS 8

/* The new name's log lookup, run beside the source's (og_branch_create). */
typedef struct name_lookup {
    og_graph *g;
    const char *name;
    og_ref_entry head;
    int found;
    og_status st;
    char msg[512]; /* the error message: it is per thread */
} name_lookup;

static void *name_lookup_run(void *arg)
{
    name_lookup *nl = arg;
    nl->st = og_graph_head_lookup_new(nl->g, nl->name, &nl->head, &nl->found);
    if (nl->st != OG_OK) snprintf(nl->msg, sizeof nl->msg, "%s", og_error_message());
    return NULL;
}

/* A branch message is text for people: bounded, UTF-8, no control characters but newline
 * and tab (as a commit message). */
static og_status message_check(const char *name, const char *message)
{
    size_t n = strlen(message);
    if (n > OG_BRANCH_MESSAGE_MAX)
        return og_err(OG_ERR_INVALID, "branch create \"%s\": a branch message holds at most %d bytes (got %zu)", name,
                      OG_BRANCH_MESSAGE_MAX, n);
    if (!og_utf8_valid((const uint8_t *)message, n))
        return og_err(OG_ERR_INVALID, "branch create \"%s\": the branch message is not valid UTF-8", name);
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)message[i] < 0x20 && message[i] != '\n' && message[i] != '\t') || message[i] == 0x7f)
            return og_err(OG_ERR_INVALID,
                          "branch create \"%s\": a branch message holds no control characters (other than newline and tab)",
                          name);
    return OG_OK;
}

og_status og_branch_create(og_graph *g, const char *name, const char *from_branch, const char *from_commit,
                           const char *actor, og_ref_entry *out)
{
    return og_branch_create_msg(g, name, from_branch, from_commit, actor, NULL, out);
}

og_status og_branch_create_msg(og_graph *g, const char *name, const char *from_branch, const char *from_commit,
                               const char *actor, const char *message, og_ref_entry *out)
{
    OG_TRY(og_branch_name_check_new(name));
    if (message) OG_TRY(message_check(name, message));
    if (!actor) actor = "omnigraph";
    if (!og_actor_valid(actor)) return og_err(OG_ERR_INVALID, "branch create \"%s\": invalid actor", name);
    if ((from_branch == NULL) == (from_commit == NULL))
        return og_err(OG_ERR_INVALID, "branch create \"%s\": give exactly one of a source branch or a commit", name);
    char commit[OG_ULID_LEN + 1];
    /* The new name's log and the source head do not depend on each other: look them up at
     * once (a second thread), so a create waits for one round trip before its publish. */
    name_lookup nl = {g, name, {0}, 0, OG_OK, ""};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, name_lookup_run, &nl) == 0;
    if (!threaded) name_lookup_run(&nl);
    if (from_branch) {
        og_ref_entry src;
        og_status st = og_graph_head_entry(g, from_branch, &src);
        if (threaded) {
            pthread_join(th, NULL);
            threaded = 0;
        }
        if (st == OG_OK && src.kind == OG_REF_DELETE)
            st = og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found (it was deleted)", from_branch);
        if (st != OG_OK) return og_err_wrap(st, "branch create \"%s\" from branch \"%s\"", name, from_branch);
        memcpy(commit, src.commit, sizeof commit);
    } else {
        const og_commit *c;
        og_cache_entry *hold;
        og_status st = og_graph_commit_get(g, from_commit, &c, &hold);
        if (threaded) pthread_join(th, NULL);
        if (st != OG_OK) return og_err_wrap(st, "branch create \"%s\"", name);
        memcpy(commit, c->id, sizeof commit);
        og_cache_entry_release(hold);
    }
    for (int attempt = 0; attempt < BRANCH_CONTROL_ATTEMPTS; attempt++) {
        og_ref_entry head = nl.head, e;
        int found = nl.found;
        if (attempt > 0) OG_TRY(og_graph_head_lookup(g, name, &head, &found));
        else if (nl.st != OG_OK) return og_err(nl.st, "%s", nl.msg);
        if (found && head.kind != OG_REF_DELETE)
            return og_err(OG_ERR_ALREADY_EXISTS, "branch \"%s\" already exists (at commit %s)", name, head.commit);
        memset(&e, 0, sizeof e);
        e.seq = found ? head.seq + 1 : 1;
        snprintf(e.branch, sizeof e.branch, "%s", name);
        OG_TRY(og_ulid_new(e.incarnation));
        e.kind = OG_REF_CREATE;
        memcpy(e.commit, commit, sizeof e.commit);
        snprintf(e.actor, sizeof e.actor, "%s", actor);
        if (message) snprintf(e.message, sizeof e.message, "%s", message);
        og_format_time_ms(og_now_ms(), e.at);
        og_status st = og_graph_publish_entry(g, &e);
        if (st == OG_OK) {
            if (out) *out = e;
            return OG_OK;
        }
        if (st != OG_ERR_ALREADY_EXISTS) return st;
        /* Someone else appended to this name's log: look again. */
    }
    return og_err(OG_ERR_CONFLICT, "branch create \"%s\": its log kept moving", name);
}

og_status og_branch_delete(og_graph *g, const char *name, const char *actor)
{
    return og_branch_delete_if(g, name, actor, NULL);
}

og_status og_branch_delete_if(og_graph *g, const char *name, const char *actor, const char *expected_head)
{
    OG_TRY(og_branch_name_check(name));
    if (strcmp(name, "main") == 0) return og_err(OG_ERR_INVALID, "branch main cannot be deleted");
    if (!actor) actor = "omnigraph";
    if (!og_actor_valid(actor)) return og_err(OG_ERR_INVALID, "branch delete \"%s\": invalid actor", name);
    for (int attempt = 0; attempt < BRANCH_CONTROL_ATTEMPTS; attempt++) {
        og_ref_entry head, e;
        int found;
        OG_TRY(og_graph_head_lookup(g, name, &head, &found));
        if (!found || head.kind == OG_REF_DELETE) return og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found", name);
        if (expected_head && strcmp(head.commit, expected_head) != 0)
            return og_err(OG_ERR_PRECONDITION_FAILED, "branch delete \"%s\": the head is %s, not %s", name, head.commit,
                          expected_head);
        memset(&e, 0, sizeof e);
        e.seq = head.seq + 1;
        memcpy(e.branch, head.branch, sizeof e.branch);
        memcpy(e.incarnation, head.incarnation, sizeof e.incarnation);
        e.kind = OG_REF_DELETE;
        memcpy(e.previous, head.commit, sizeof e.previous);
        snprintf(e.actor, sizeof e.actor, "%s", actor);
        og_format_time_ms(og_now_ms(), e.at);
        og_status st = og_graph_publish_entry(g, &e);
        if (st == OG_OK) return OG_OK;
        if (st != OG_ERR_ALREADY_EXISTS) return st;
    }
    return og_err(OG_ERR_CONFLICT, "branch delete \"%s\": its log kept moving", name);
}

/* Branch listing is a skip-scan: one list(limit 1) finds the next branch's newest entry
 * (inverted names sort newest first), then the cursor jumps past that branch's entries. */
og_status og_branch_list_all(og_graph *g, og_branch_list *out)
{
    memset(out, 0, sizeof *out);
    static const char prefix[] = "_graph/refs/";
    char cursor[OG_KEY_MAX] = "";
    size_t cap = 0;
    for (;;) {
        og_keylist kl = {0};
        og_status st = og_store_list(g->store, prefix, cursor[0] ? cursor : NULL, 1, &kl);
        if (st != OG_OK) {
            og_branch_list_free(out);
            return og_err_wrap(st, "listing branches");
        }
        if (kl.count == 0) {
            og_keylist_free(&kl);
            return OG_OK;
        }
        const char *rest = kl.keys[0] + sizeof prefix - 1;
        const char *slash = strchr(rest, '/');
        char enc[OG_BRANCH_ENC_MAX + 1], name[OG_BRANCH_MAX + 1];
        if (!slash) {
            /* A stray object beside the logs (not a branch directory): step past it. */
            snprintf(cursor, sizeof cursor, "%s", kl.keys[0]);
            og_keylist_free(&kl);
            continue;
        }
        size_t enc_len = (size_t)(slash - rest);
        if (enc_len > OG_BRANCH_ENC_MAX) { /* not one of ours: skip past it */
            snprintf(cursor, sizeof cursor, "%.*s~", (int)(slash - kl.keys[0]), kl.keys[0]);
            og_keylist_free(&kl);
            continue;
        }
        memcpy(enc, rest, enc_len);
        enc[enc_len] = '\0';
        og_keylist_free(&kl);
        snprintf(cursor, sizeof cursor, "%s%s/~", prefix, enc); /* '~' sorts after every digit */
        if (og_branch_decode(enc, name, sizeof name) != OG_OK || og_branch_name_check(name) != OG_OK) {
            og_error_clear();
            continue; /* not a branch log (a foreign directory): ignore */
        }
        og_ref_entry head;
        int found;
        st = og_graph_head_lookup(g, name, &head, &found);
        if (st != OG_OK) {
            og_branch_list_free(out);
            return og_err_wrap(st, "listing branches");
        }
        if (!found || head.kind == OG_REF_DELETE) continue;
        if (out->count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            og_ref_entry *items = realloc(out->items, ncap * sizeof *items);
            if (!items) {
                og_branch_list_free(out);
                return og_err(OG_ERR_NOMEM, "out of memory listing branches");
            }
            out->items = items;
            cap = ncap;
        }
        out->items[out->count++] = head;
    }
}

void og_branch_list_free(og_branch_list *l)
{
    free(l->items);
    l->items = NULL;
    l->count = 0;
}
