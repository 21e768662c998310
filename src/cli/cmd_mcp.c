/*
 * cmd_mcp.c — `omnigraph mcp`: one graph served to a local agent over the Model Context
 * Protocol's stdio transport (newline-delimited JSON-RPC on stdin/stdout; logs on stderr).
 * The protocol itself is src/mcp/ (transport-neutral); this file only frames lines.  The
 * notifications a tool call sends (progress, log messages) are lines of their own, written and
 * flushed as they happen, before the call's response line; the log level set by
 * logging/setLevel holds for the process.
 *
 * Why two handlers and a thread: a tool call may run for seconds, and an agent must still get
 * an answer to `ping`, list tools or read a resource meanwhile, and must be able to cancel the
 * call (notifications/cancelled, issue 38).  So tool calls (with initialize and
 * logging/setLevel, which they depend on) run in order on a worker thread with their own
 * og_mcp; every other request is answered at once by the reading thread's og_mcp.  Both share
 * the graph handle (thread-safe); lines reach stdout whole, under one lock.  A cancelled call
 * stops at its next budget check (og_db_set_cancel) and, as MCP asks, gets no response; a
 * cancelled call still queued is dropped.  A third thread checks the client's resource
 * subscriptions every WATCH_MS and writes notifications/resources/updated lines: stdio can
 * speak at any time, so this surface offers subscriptions (the HTTP endpoint does not).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cluster/cluster.h"
#include "cluster/stored.h"
#include "mcp/mcp.h"

static const char *mcp_help =
    "usage: omnigraph mcp (--store ROOT | ROOT) [--queries FILE.gq]... [--as ACTOR] [--agent-branch T]\n"
    "       omnigraph mcp --cluster DIR [--graph ID] [--as ACTOR] [--no-policy]\n"
    "\n"
    "Serves one graph over the Model Context Protocol on stdin/stdout (newline-delimited\n"
    "JSON-RPC 2.0), for an agent started by this process's parent (docs/mcp.md).  Tools: the\n"
    "operational set (query, mutate, load, branches, commits, snapshot, schema) and one tool per\n"
    "stored query: the applied stored queries of the cluster graph, or the queries of the\n"
    "--queries files (type-checked against the graph's schema at start).\n"
    "  --store ROOT       the graph (or $OMNIGRAPH_STORE)\n"
    "  --cluster DIR      a cluster directory or storage root; --graph picks the graph\n"
    "  --queries FILE     expose the queries of a .gq file as tools (repeatable)\n"
    "  --as ACTOR         recorded on every commit the agent's writes publish\n"
    "  --agent-branch TEMPLATE  where a write that names no branch goes: TEMPLATE with {actor}\n"
    "                     replaced by ACTOR (e.g. '{actor}/work'), created from main when missing;\n"
    "                     without it such a write is refused\n"
    "  --policy           enforce the policy bundle bound to the cluster graph for ACTOR: the\n"
    "                     agent sees and may call only what the policy allows ACTOR (the\n"
    "                     default when the graph has a bound bundle; then --as is required)\n"
    "  --no-policy        serve a graph with a bound bundle without it, as the cluster operator\n"
    "                     (every tool allowed; commits record the actor as named locally)\n";

/* The stdio session: the worker's queue, the running call and the output lock. */
typedef struct stdio_session {
    pthread_mutex_t out_mu; /* one whole line at a time on stdout */
    pthread_mutex_t mu;     /* the fields below */
    pthread_cond_t cv;
    char **lines;           /* queued worker messages, FIFO */
    json_t **ids;           /* their ids (NULL: a notification) */
    unsigned char *silent;  /* answered by the reader already (initialize): drop the worker's answer */
    size_t head, n, cap;
    json_t *running;        /* id of the tool call the worker runs, or NULL */
    int cancelled;          /* ... and it was cancelled: its answer is dropped */
    volatile int cancel;    /* og_db_set_cancel's flag */
    int eof;
    og_mcp *worker;
    const char *actor;
} stdio_session;

static void put_line(stdio_session *s, const char *json)
{
    pthread_mutex_lock(&s->out_mu);
    fputs(json, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&s->out_mu);
}

/* og_mcp_opts.notify: one line on stdout, flushed at once so the agent sees it live. */
static void notify_line(void *ctx, const char *json) { put_line(ctx, json); }

static int enqueue(stdio_session *s, const char *line, size_t n, json_t *id, int silent)
{
    pthread_mutex_lock(&s->mu);
    if (s->head + s->n == s->cap) {
        if (s->head) { /* slide the live part down before growing */
            memmove(s->lines, s->lines + s->head, s->n * sizeof *s->lines);
            memmove(s->ids, s->ids + s->head, s->n * sizeof *s->ids);
            memmove(s->silent, s->silent + s->head, s->n);
            s->head = 0;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 16;
            char **l = realloc(s->lines, cap * sizeof *l);
            if (l) s->lines = l;
            json_t **i = realloc(s->ids, cap * sizeof *i);
            if (i) s->ids = i;
            unsigned char *q = realloc(s->silent, cap);
            if (q) s->silent = q;
            if (!l || !i || !q) {
                pthread_mutex_unlock(&s->mu);
                return -1;
            }
            s->cap = cap;
        }
    }
    char *copy = strndup(line, n);
    if (!copy) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    size_t k = s->head + s->n++;
    s->lines[k] = copy;
    s->ids[k] = id ? json_incref(id) : NULL;
    s->silent[k] = (unsigned char)silent;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* notifications/cancelled: stop the running call, or drop a queued one, with that id. */
static void cancel_request(stdio_session *s, json_t *id)
{
    if (!id) return;
    pthread_mutex_lock(&s->mu);
    if (s->running && json_equal(s->running, id)) {
        s->cancelled = 1;
        s->cancel = 1;
    } else {
        for (size_t k = s->head; k < s->head + s->n; k++) {
            if (!s->ids[k] || !json_equal(s->ids[k], id)) continue;
            free(s->lines[k]);
            s->lines[k] = NULL; /* the worker skips it */
            json_decref(s->ids[k]);
            s->ids[k] = NULL;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* Resource subscriptions (docs/mcp.md "Subscriptions"): every WATCH_MS the reading thread's
 * og_mcp checks what its client subscribed to and sends notifications/resources/updated lines. */
#define WATCH_MS 500
typedef struct watcher {
    og_mcp *m;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
} watcher;

static void *watch_run(void *arg)
{
    watcher *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)WATCH_MS * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->stop) break;
        pthread_mutex_unlock(&w->mu);
        og_mcp_subscriptions_check(w->m);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void *worker_run(void *arg)
{
    stdio_session *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->n && !s->eof) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->n) {
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        char *line = s->lines[s->head];
        json_t *id = s->ids[s->head];
        int silent = s->silent[s->head];
        s->head++;
        s->n--;
        s->running = id;
        s->cancelled = 0;
        s->cancel = 0;
        pthread_mutex_unlock(&s->mu);
        char *out = NULL;
        og_status st = line ? og_mcp_handle(s->worker, s->actor, line, strlen(line), &out) : OG_OK;
        pthread_mutex_lock(&s->mu);
        int drop = silent || s->cancelled;
        s->running = NULL;
        s->cancel = 0;
        pthread_mutex_unlock(&s->mu);
        if (st != OG_OK) fprintf(stderr, "omnigraph mcp: out of memory\n");
        if (out && !drop) put_line(s, out);
        og_free(out);
        free(line);
        json_decref(id);
    }
}

int og_cmd_mcp(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(mcp_help, stdout);
        return OG_EXIT_OK;
    }
    const char *store = NULL, *root = NULL, *cluster = NULL, *graph = NULL, *actor = NULL, *agent_branch = NULL;
    const char *files[64];
    size_t nfiles = 0;
    int use_policy = 0, no_policy = 0;
    og_mcp_policy *pol = NULL;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--store") && store) || (!strcmp(argv[i], "--cluster") && cluster) ||
            (!strcmp(argv[i], "--graph") && graph) || (!strcmp(argv[i], "--as") && actor))
            return og_cli_usage("mcp", "%s given twice", argv[i]);
        if (!strcmp(argv[i], "--store") && i + 1 < argc) store = argv[++i];
        else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) cluster = argv[++i];
        else if (!strcmp(argv[i], "--graph") && i + 1 < argc) graph = argv[++i];
        else if (!strcmp(argv[i], "--as") && i + 1 < argc) actor = argv[++i];
        else if (!strcmp(argv[i], "--agent-branch") && i + 1 < argc) agent_branch = argv[++i];
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc && nfiles < 64) files[nfiles++] = argv[++i];
        else if (!strcmp(argv[i], "--policy")) use_policy = 1;
        else if (!strcmp(argv[i], "--no-policy")) no_policy = 1;
        else if (argv[i][0] != '-' && !root) root = argv[i]; /* a positional ROOT, as on the graph verbs */
        else if (argv[i][0] != '-') return og_cli_usage("mcp", "unexpected argument '%s'", argv[i]);
        else return og_cli_usage("mcp", "unknown or incomplete option '%s'", argv[i]);
    }
    if (root && (store || cluster))
        return og_cli_usage("mcp", "two graphs given: %s %s and %s", store ? "--store" : "--cluster", store ? store : cluster, root);
    if (agent_branch && !strstr(agent_branch, "{actor}"))
        return og_cli_usage("mcp", "--agent-branch needs {actor} in its template (e.g. '{actor}/work')");
    if (root) store = root;
    if (!store && !cluster) store = getenv("OMNIGRAPH_STORE");
    if (store && !*store) store = NULL;
    if (use_policy && no_policy) return og_cli_usage("mcp", "--policy and --no-policy contradict each other");
    if (use_policy && !actor) return og_cli_usage("mcp", "--policy needs --as ACTOR (the actor the policy decides for)");
    if (use_policy && !cluster) return og_cli_usage("mcp", "--policy needs --cluster (a graph with a bound policy bundle)");
    og_cluster *c = NULL;
    og_db *db = NULL;
    og_stored_set *set = NULL;
    og_mcp *m = NULL;
    og_status st = OG_OK;
    og_open_opts oo = {.actor = actor};
    if (cluster) {
        st = og_cluster_open(&c, cluster);
        if (st == OG_OK && !graph) {
            if (og_cluster_graph_count(c) == 1) graph = og_cluster_graph_id(c, 0);
            else st = OG_ERR_INVALID, fprintf(stderr, "omnigraph mcp: the cluster has %zu graphs: choose one with --graph\n",
                                              og_cluster_graph_count(c));
        }
        const char *uri = st == OG_OK ? og_cluster_graph_uri(c, graph) : NULL;
        if (st == OG_OK && !uri) st = OG_ERR_NOT_FOUND, fprintf(stderr, "omnigraph mcp: graph '%s' is not applied\n", graph);
        if (st == OG_OK) st = og_db_open(&db, uri, &oo);
        if (st == OG_OK) { /* the graph's providers.embedding profile for text `nearest` */
            og_db_embed_provider ep;
            char key[1024];
            int bound = 0;
            if (og_cluster_embedding_provider(c, graph, &ep, key, sizeof key, &bound) != OG_OK ||
                (bound && og_db_set_embed_provider(db, &ep) != OG_OK))
                fprintf(stderr, "omnigraph mcp: warning: %s; text queries use the environment's provider\n",
                        og_error_message());
            memset(key, 0, sizeof key);
        }
        if (st == OG_OK) st = og_cluster_stored_queries(&set, c, graph, db);
        /* The bundle the cluster binds to the graph governs this surface too (issue 37 item
         * 10): enforced unless the operator says --no-policy, so a local agent gets no more
         * than the server would give the same actor. */
        const char *bundle = st == OG_OK ? og_cluster_policy_text(c, graph) : NULL;
        if (st == OG_OK && use_policy && !bundle)
            st = OG_ERR_NOT_FOUND, fprintf(stderr, "omnigraph mcp: no policy bundle is bound to graph '%s'\n", graph);
        if (st == OG_OK && bundle && !no_policy && !actor) {
            fprintf(stderr, "omnigraph mcp: a policy bundle is bound to graph '%s': give --as ACTOR (the actor it "
                            "decides for), or --no-policy to serve as the cluster operator\n", graph);
            og_stored_set_free(set);
            og_db_close(db);
            og_cluster_close(c);
            return OG_EXIT_USAGE;
        }
        if (st == OG_OK && bundle && no_policy)
            fprintf(stderr, "omnigraph mcp: warning: serving graph '%s' without its policy bundle (--no-policy)\n", graph);
        if (st == OG_OK && bundle && !no_policy) st = og_mcp_policy_new(&pol, bundle, strlen(bundle), "policy", graph);
        if (st == OG_OK && pol) og_mcp_policy_set_db(pol, db); /* branch creators for `owned` scopes */
    } else if (store) {
        st = og_db_open(&db, store, &oo);
        if (st == OG_OK) st = og_stored_set_new(&set);
        char *schema = NULL;
        if (st == OG_OK && nfiles) st = og_db_schema_source(&schema, db, NULL);
        for (size_t i = 0; st == OG_OK && i < nfiles; i++) {
            og_buf b = OG_BUF_INIT;
            st = og_cli_read_file(files[i], &b);
            if (st == OG_OK)
                st = og_stored_set_add(set, files[i], (const char *)b.data, b.len, NULL, schema, strlen(schema));
            og_buf_free(&b);
        }
        og_free(schema);
    } else {
        return og_cli_usage("mcp", "--store ROOT or --cluster DIR is required");
    }
    stdio_session ss = {.out_mu = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER,
                        .cv = PTHREAD_COND_INITIALIZER, .actor = actor};
    if (st == OG_OK) {
        og_mcp_opts mo = {.db = db, .queries = set, .graph_id = graph, .schema_apply_disabled = cluster != NULL,
                          .authorize = pol ? og_mcp_policy_authorize : NULL, .authorize_ctx = pol,
                          .notify = notify_line, .notify_ctx = &ss, .agent_branch = agent_branch, .subscriptions = 1};
        st = og_mcp_new(&m, &mo);
        if (st == OG_OK) st = og_mcp_new(&ss.worker, &mo);
    }
    if (st != OG_OK) {
        if (og_error_message()[0]) fprintf(stderr, "omnigraph mcp: %s: %s\n", og_status_name(st), og_error_message());
        og_mcp_free(m);
        og_mcp_policy_free(pol);
        og_stored_set_free(set);
        og_db_close(db);
        og_cluster_close(c);
        return OG_EXIT_FAIL;
    }
    og_db_set_cancel(db, &ss.cancel);
    pthread_t worker, watch;
    int threaded = pthread_create(&worker, NULL, worker_run, &ss) == 0;
    watcher w = {.m = m, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    int watching = threaded && pthread_create(&watch, NULL, watch_run, &w) == 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n) continue;
        /* tool calls (and what they depend on) go to the worker; the rest is answered here */
        json_t *msg = json_loadb(line, (size_t)n, 0, NULL);
        const char *method = json_string_value(json_object_get(msg, "method"));
        json_t *id = json_object_get(msg, "id");
        int to_worker = threaded && method && (!strcmp(method, "tools/call") || !strcmp(method, "logging/setLevel"));
        if (threaded && method && !strcmp(method, "notifications/cancelled")) {
            cancel_request(&ss, json_object_get(json_object_get(msg, "params"), "requestId"));
            json_decref(msg);
            continue;
        }
        if (threaded && method && !strcmp(method, "initialize")) /* the worker negotiates the same version */
            enqueue(&ss, line, (size_t)n, NULL, 1);
        if (to_worker) {
            int rc = enqueue(&ss, line, (size_t)n, id, 0);
            json_decref(msg);
            if (rc) {
                fprintf(stderr, "omnigraph mcp: out of memory\n");
                break;
            }
            continue;
        }
        json_decref(msg);
        char *out = NULL;
        if (og_mcp_handle(threaded ? m : ss.worker, actor, line, (size_t)n, &out) != OG_OK) {
            fprintf(stderr, "omnigraph mcp: out of memory\n");
            break;
        }
        if (out) put_line(&ss, out);
        og_free(out);
    }
    free(line);
    if (watching) {
        pthread_mutex_lock(&w.mu);
        w.stop = 1;
        pthread_cond_signal(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(watch, NULL);
    }
    if (threaded) { /* answer what is queued, then stop */
        pthread_mutex_lock(&ss.mu);
        ss.eof = 1;
        pthread_cond_signal(&ss.cv);
        pthread_mutex_unlock(&ss.mu);
        pthread_join(worker, NULL);
    }
    og_db_set_cancel(db, NULL);
    free(ss.lines);
    free(ss.ids);
    free(ss.silent);
    og_mcp_free(ss.worker);
    og_mcp_free(m);
    og_mcp_policy_free(pol);
    og_stored_set_free(set);
    og_db_close(db);
    og_cluster_close(c);
    return OG_EXIT_OK;
}
