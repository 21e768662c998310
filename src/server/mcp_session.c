/*
 * mcp_session.c — the optional sessions of the MCP endpoint's Streamable HTTP transport
 * (docs/mcp.md "Sessions").
 *
 * Why sessions, on a transport that works without them: MCP state that belongs to a
 * conversation — the log level a client set with logging/setLevel, the negotiated protocol
 * version — has no home between stateless POSTs (the server falls back on one level per
 * graph and actor), and clients that keep an Mcp-Session-Id (the official SDKs, the
 * conformance suite) expect one.  So the answer to `initialize` carries a fresh id, and a
 * request naming it is in that session; a request naming none is exactly as before.
 *
 * Why a bounded table with an idle expiry rather than state kept until DELETE: clients
 * routinely forget to end sessions, and a remote client must not be able to grow the
 * server's memory by initializing in a loop.  The table holds at most mcp_sessions_max
 * entries (OMNIGRAPH_MCP_SESSIONS_MAX, default 4,096, ~270 bytes each), an entry unused for
 * mcp_session_idle_s seconds (OMNIGRAPH_MCP_SESSION_IDLE_S, default 1 h) is gone, and when
 * full the least recently used one is forgotten.  And one actor holds at most
 * mcp_sessions_per_actor of them (OMNIGRAPH_MCP_SESSIONS_PER_ACTOR, default 64): an actor at
 * its quota that initializes again replaces its *own* least recently used session, so one
 * token initializing in a loop cannot evict anybody else's (issue 37 item 7); filling the
 * table takes as many actors as table / quota.  A forgotten id is answered 404, upon which
 * MCP says the client starts a new session.  The table is scanned linearly under the
 * server's mutex: a few thousand fixed-size compares per MCP request, far below the cost of
 * the request's JSON-RPC parse.
 *
 * Why an id is bound to its graph and actor: the id is a bearer of state, not a credential
 * (every request still authenticates), but a session of another actor or graph must not be
 * usable — or even distinguishable from an unknown one — so both answer 404.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server_int.h"
#include "util/id.h"

static int64_t mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

/* Limits, read once (under mu). */
static void limits(og_server *s)
{
    if (s->mcp_sessions_max) return;
    const char *v = getenv("OMNIGRAPH_MCP_SESSIONS_MAX");
    unsigned long n = v && *v ? strtoul(v, NULL, 10) : 0;
    s->mcp_sessions_max = n && n <= 1000000 ? (size_t)n : OG_MCP_SESSIONS_MAX;
    v = getenv("OMNIGRAPH_MCP_SESSION_IDLE_S");
    n = v && *v ? strtoul(v, NULL, 10) : 0;
    s->mcp_session_idle_s = n && n <= 30u * 86400u ? (unsigned)n : OG_MCP_SESSION_IDLE_S;
    v = getenv("OMNIGRAPH_MCP_SESSIONS_PER_ACTOR");
    n = v && *v ? strtoul(v, NULL, 10) : 0;
    s->mcp_sessions_per_actor = n && n <= s->mcp_sessions_max ? (size_t)n : OG_MCP_SESSIONS_PER_ACTOR;
    if (s->mcp_sessions_per_actor > s->mcp_sessions_max) s->mcp_sessions_per_actor = s->mcp_sessions_max;
}

static void forget(og_server *s, og_mcp_session *e)
{
    *e = s->mcp_sessions[--s->nmcp_sessions]; /* order does not matter */
}

/* The live entry with this id (expired ones are forgotten on the way), or NULL.  Under mu. */
static og_mcp_session *find(og_server *s, const char *id)
{
    if (!id || strlen(id) != OG_MCP_SESSION_ID_LEN || !s->mcp_sessions) return NULL;
    for (size_t i = 0; i < s->nmcp_sessions; i++) {
        og_mcp_session *e = &s->mcp_sessions[i];
        if (memcmp(e->id, id, OG_MCP_SESSION_ID_LEN)) continue;
        if (mono_s() - e->last_s > (int64_t)s->mcp_session_idle_s) {
            forget(s, e);
            return NULL;
        }
        return e;
    }
    return NULL;
}

static int owned(const og_mcp_session *e, const char *graph, const char *actor)
{
    return !strcmp(e->graph, graph) && !strcmp(e->actor, actor ? actor : "");
}

int og_mcp_session_new(og_server *s, const char *graph, const char *actor, const char *version, char *id)
{
    if ((actor && strlen(actor) >= sizeof s->mcp_sessions[0].actor) || strlen(graph) >= sizeof s->mcp_sessions[0].graph)
        return -1;
    unsigned char rnd[OG_MCP_SESSION_ID_LEN / 2];
    if (og_random_bytes(rnd, sizeof rnd) != OG_OK) return -1;
    for (size_t i = 0; i < sizeof rnd; i++) snprintf(id + 2 * i, 3, "%02x", rnd[i]);
    pthread_mutex_lock(&s->mu);
    limits(s);
    if (!s->mcp_sessions) s->mcp_sessions = calloc(s->mcp_sessions_max, sizeof *s->mcp_sessions);
    if (!s->mcp_sessions) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    og_mcp_session *e, *mine_lru = NULL;
    size_t mine = 0;
    for (size_t i = 0; i < s->nmcp_sessions; i++) {
        og_mcp_session *m = &s->mcp_sessions[i];
        if (strcmp(m->actor, actor ? actor : "")) continue;
        mine++;
        if (!mine_lru || m->used < mine_lru->used) mine_lru = m;
    }
    if (mine >= s->mcp_sessions_per_actor) {
        e = mine_lru; /* at its quota: the actor's own oldest session makes room */
    } else if (s->nmcp_sessions < s->mcp_sessions_max) {
        e = &s->mcp_sessions[s->nmcp_sessions++];
    } else { /* full: the least recently used one is forgotten (an expired one is older still) */
        e = &s->mcp_sessions[0];
        for (size_t i = 1; i < s->nmcp_sessions; i++)
            if (s->mcp_sessions[i].used < e->used) e = &s->mcp_sessions[i];
    }
    memset(e, 0, sizeof *e);
    memcpy(e->id, id, OG_MCP_SESSION_ID_LEN + 1);
    snprintf(e->graph, sizeof e->graph, "%s", graph);
    snprintf(e->actor, sizeof e->actor, "%s", actor ? actor : "");
    snprintf(e->version, sizeof e->version, "%s", version ? version : "");
    e->level = OG_MCP_LOG_OFF; /* a new session has set no level */
    e->used = ++s->mcp_session_clock;
    e->last_s = mono_s();
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int og_mcp_session_get(og_server *s, const char *id, const char *graph, const char *actor, og_mcp_log_level *lv)
{
    pthread_mutex_lock(&s->mu);
    og_mcp_session *e = find(s, id);
    int ok = e && owned(e, graph, actor);
    if (ok) {
        e->used = ++s->mcp_session_clock;
        e->last_s = mono_s();
        *lv = e->level;
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

int og_mcp_session_end(og_server *s, const char *id, const char *graph, const char *actor)
{
    pthread_mutex_lock(&s->mu);
    og_mcp_session *e = find(s, id);
    int ok = e && owned(e, graph, actor);
    if (ok) forget(s, e);
    pthread_mutex_unlock(&s->mu);
    return ok;
}

void og_mcp_session_set_level(og_server *s, const char *id, og_mcp_log_level lv)
{
    pthread_mutex_lock(&s->mu);
    og_mcp_session *e = find(s, id);
    if (e) e->level = lv;
    pthread_mutex_unlock(&s->mu);
}
