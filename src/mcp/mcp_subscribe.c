/*
 * mcp_subscribe.c — resource subscriptions (docs/mcp.md "Subscriptions"): resources/subscribe
 * and resources/unsubscribe, and the check that sends notifications/resources/updated when a
 * subscribed resource changed — a branch's head moved (omnigraph://branches/{branch}/diff, a
 * commit reference such as omnigraph://commits/main), the branch list, the schema, a node.
 *
 * Why polling: the graph changes under other processes too (the server, other agents' MCP
 * processes, the CLI), so no in-process hook sees every commit; the surface calls
 * og_mcp_subscriptions_check on a timer, and each check costs one head lookup per branch
 * resource (a re-read and a hash for the others).  Only a surface that can send a
 * notification at any time (stdio) offers the capability (og_mcp_opts.subscriptions); the
 * HTTP endpoint has no standalone stream to carry one, so it does not, and agents there follow
 * a branch with the change_feed tool.
 *
 * The check runs on the surface's timer thread while the handler answers requests on another,
 * so the subscription table has a lock of its own and the check touches nothing else of the
 * og_mcp but its options.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"

#define SUBS_MAX 64

typedef struct og_mcp_sub {
    char *uri, *actor;
    uint64_t print; /* the resource's fingerprint when last seen */
} og_mcp_sub;

struct og_mcp_subs {
    pthread_mutex_t mu;
    og_mcp_sub s[SUBS_MAX];
    size_t n;
};

static uint64_t fnv(const char *s, uint64_t h)
{
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The fingerprint of `uri` as `actor` reads it: the head commits a branch resource depends on,
 * else a hash of the resource's text.  0 = unreadable (gone, or no longer allowed). */
static uint64_t fingerprint(og_mcp *m, const char *actor, const char *uri)
{
    const char *b = "omnigraph://branches/", *c = "omnigraph://commits/", *d = "/diff";
    size_t n = strlen(uri);
    char ref[512], head[32], base[32];
    uint64_t h = 1469598103934665603u;
    if (!strncmp(uri, b, strlen(b)) && n > strlen(b) + strlen(d) && !strcmp(uri + n - strlen(d), d)) {
        /* what the branch changed since its merge base with main: moves with either head */
        snprintf(ref, sizeof ref, "%.*s", (int)(n - strlen(b) - strlen(d)), uri + strlen(b));
        if (og_db_resolve_commit(m->o.db, ref, head, sizeof head) != OG_OK ||
            og_db_resolve_commit(m->o.db, "main", base, sizeof base) != OG_OK)
            return 0;
        return fnv(base, fnv(head, h)) | 1;
    }
    if (!strncmp(uri, c, strlen(c))) {
        if (og_db_resolve_commit(m->o.db, uri + strlen(c), head, sizeof head) != OG_OK) return 0;
        return fnv(head, h) | 1;
    }
    int code;
    char msg[256];
    json_t *r = og_mcp_resources_read(m, actor, uri, &code, msg, sizeof msg);
    if (!r) return 0;
    h = fnv(json_string_value(json_object_get(json_array_get(json_object_get(r, "contents"), 0), "text")), h) | 1;
    json_decref(r);
    return h;
}

og_status og_mcp_subs_new(og_mcp_subs **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return OG_ERR_NOMEM;
    pthread_mutex_init(&(*out)->mu, NULL);
    return OG_OK;
}

void og_mcp_subs_free(og_mcp_subs *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->s[i].uri);
        free(t->s[i].actor);
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

json_t *og_mcp_subscribe(og_mcp *m, const char *actor, const char *uri, int on, int *code, char *msg, size_t cap)
{
    og_mcp_subs *t = m->subs;
    *code = 0;
    if (!uri) {
        *code = -32602;
        snprintf(msg, cap, "Invalid params: uri is required");
        return NULL;
    }
    uint64_t print = 0;
    if (on) { /* only a resource the caller can read now (an unknown or masked one is -32002) */
        json_t *r = og_mcp_resources_read(m, actor, uri, code, msg, cap);
        if (!r) return NULL;
        json_decref(r);
        print = fingerprint(m, actor, uri);
    }
    pthread_mutex_lock(&t->mu);
    size_t i = 0;
    while (i < t->n && (strcmp(t->s[i].uri, uri) || strcmp(t->s[i].actor, actor ? actor : ""))) i++;
    if (!on && i < t->n) { /* unsubscribe: forget it (an unknown one is no error) */
        free(t->s[i].uri);
        free(t->s[i].actor);
        t->s[i] = t->s[--t->n];
    } else if (on && i < t->n) {
        t->s[i].print = print; /* subscribed again: from now */
    } else if (on && t->n == SUBS_MAX) {
        pthread_mutex_unlock(&t->mu);
        *code = -32602;
        snprintf(msg, cap, "Invalid params: at most %d subscriptions", SUBS_MAX);
        return NULL;
    } else if (on) {
        og_mcp_sub *s = &t->s[t->n];
        s->uri = strdup(uri);
        s->actor = strdup(actor ? actor : "");
        s->print = print;
        if (s->uri && s->actor) t->n++;
        else {
            free(s->uri);
            free(s->actor);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return json_object();
}

size_t og_mcp_subscriptions_check(og_mcp *m)
{
    og_mcp_subs *t = m ? m->subs : NULL;
    if (!t || !m->o.notify) return 0;
    size_t sent = 0;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) {
        og_mcp_sub *s = &t->s[i];
        uint64_t p = fingerprint(m, s->actor[0] ? s->actor : NULL, s->uri);
        if (p == s->print) continue;
        s->print = p;
        json_t *n = json_pack("{ss ss s{ss}}", "jsonrpc", "2.0", "method", "notifications/resources/updated", "params", "uri",
                              s->uri);
        char *text = n ? og_mcp_dump(n) : NULL;
        json_decref(n);
        if (text) {
            m->o.notify(m->o.notify_ctx, text);
            sent++;
        }
        free(text);
    }
    pthread_mutex_unlock(&t->mu);
    return sent;
}
