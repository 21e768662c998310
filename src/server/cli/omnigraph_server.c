/*
 * omnigraph_server.c — the `omnigraph-server` binary: parses the boot flags, reads the
 * bearer tokens from the environment, opens the graphs (given one by one, or the applied
 * state of a cluster: graphs, stored queries, policy bundles and their bindings), serves
 * until SIGINT or SIGTERM, then stops gracefully (in-flight requests finish).  Everything
 * else is src/server/.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cluster/cluster.h"
#include "cluster/stored.h"
#include "policy/policy.h"
#include "server/server.h"

static const char *usage =
    "usage: omnigraph-server (--cluster DIR | --graph ID=ROOT [--graph ID=ROOT]... [--graph-dir DIR]) [--bind HOST:PORT]\n"
    "                        [--unauthenticated]\n"
    "       omnigraph-server --version   (the release and the storage format it serves)\n"
    "\n"
    "Serves each graph ROOT (a directory or s3://bucket/prefix) under /graphs/ID/... over HTTP/1.1.\n"
    "  --cluster DIR                  serve the applied state of a cluster (docs/cluster.md): its graphs,\n"
    "                                 stored queries and bound policy bundles ($OMNIGRAPH_CLUSTER); DIR is\n"
    "                                 the config directory or the storage root (a directory or s3://)\n"
    "  --require-all-graphs           with --cluster: any graph that cannot be served stops the boot\n"
    "                                 (default: it is quarantined, the others are served)\n"
    "  --graph ID=ROOT                a graph to serve (repeatable); ID matches ^[a-zA-Z0-9-]{1,64}$\n"
    "  --graph-dir DIR                let clients create graphs under the local directory DIR (POST /graphs,\n"
    "                                 decided as `admin`) and delete those (DELETE /graphs/ID); off by default\n"
    "  --bind HOST:PORT               listen address (default 127.0.0.1:8080, or $OMNIGRAPH_BIND;\n"
    "                                 port 0 = any free port); prints OMNIGRAPH_LISTEN_ADDR=host:port\n"
    "  --allowed-host NAME[:PORT]     another name clients address the server by (repeatable; a reverse\n"
    "                                 proxy's public name): requests whose Host or Origin is none of the\n"
    "                                 server's names are refused 403 (DNS-rebinding protection)\n"
    "  --mcp-agent-branch TEMPLATE    where an MCP write that names no branch goes: TEMPLATE with {actor}\n"
    "                                 replaced by the caller (e.g. '{actor}/work'), created from main when\n"
    "                                 missing; without it such a write is refused (docs/mcp.md)\n"
    "  --unauthenticated              serve without bearer tokens (or $OMNIGRAPH_UNAUTHENTICATED=1);\n"
    "                                 loopback addresses only unless --allow-public-unauthenticated\n"
    "  --policy FILE                  policy bundle (YAML, docs/policy.md) for every served graph\n"
    "  --server-policy FILE           server bundle: who may list graphs (graph_list)\n"
    "  --threads N                    worker threads: requests running at once (default 8)\n"
    "  --max-queued N                 complete requests waiting for a worker (default 512); beyond,\n"
    "                                 503 with Retry-After: 1\n"
    "  --timeout SECONDS              idle connection timeout (default 30)\n"
    "  --header-timeout SECONDS       a request head must be complete, and a body must send its next KiB,\n"
    "                                 within this (default 10); a slower connection is closed\n"
    "  --max-connections N            open connections (default 1024)\n"
    "  --max-connections-per-address N  open connections from one client address (default 512)\n"
    "  --query-timeout DURATION       every read query's time budget (500ms, 30s, 2m; default 2m, or\n"
    "                                 $OMNIGRAPH_QUERY_TIMEOUT; `unlimited`): beyond it, 413 resource_limit\n"
    "  --query-max-memory SIZE        every read query's memory budget (512M, 2G; default --max-memory /\n"
    "                                 --threads, at most 4G, or $OMNIGRAPH_QUERY_MAX_MEMORY; `unlimited`)\n"
    "  --max-memory SIZE              what all running read queries may hold together (default half the\n"
    "                                 machine's memory; `unlimited`): a query that would pass it is 503\n"
    "Tokens (read once, kept only as SHA-256 digests): OMNIGRAPH_SERVER_BEARER_TOKEN (actor\n"
    "\"default\"), OMNIGRAPH_SERVER_BEARER_TOKENS_JSON or OMNIGRAPH_SERVER_BEARER_TOKENS_FILE\n"
    "({\"actor\": \"token\", ...}).  See docs/server.md.\n";

static int truthy(const char *v) { return v && *v && strcmp(v, "0") && strcasecmp(v, "false"); }

/* "500ms", "30s", "2m", "1h", a bare number of milliseconds, or "unlimited" (-1); 0 when
 * malformed or not positive. */
static int64_t duration_ms(const char *s)
{
    if (!strcasecmp(s, "unlimited")) return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0)) return 0;
    double mul = !*end || !strcmp(end, "ms") ? 1 : !strcmp(end, "s") ? 1e3 : !strcmp(end, "m") ? 6e4
                 : !strcmp(end, "h") ? 3.6e6 : 0;
    double ms = v * mul;
    return ms >= 1 && ms < 9e15 ? (int64_t)ms : 0;
}

/* "512M", "2G", "64K", a bare number of bytes (K/M/G/T are powers of 1024, "B" suffixes
 * allowed), or "unlimited" (-1); 0 when malformed or not positive. */
static int64_t size_bytes(const char *s)
{
    if (!strcasecmp(s, "unlimited")) return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0)) return 0;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0, end++; break;
    case 'm': case 'M': mul = 1048576.0, end++; break;
    case 'g': case 'G': mul = 1073741824.0, end++; break;
    case 't': case 'T': mul = 1099511627776.0, end++; break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return 0;
    double b = v * mul;
    return b >= 1 && b < 9e18 ? (int64_t)b : 0;
}

/* The cluster's applied state, loaded before the server exists (the bundles decide the
 * runtime state); freed at exit. */
typedef struct boot {
    og_cluster *c;
    size_t n;
    char **ids;
    og_policy **bundles;
    og_policy *server_bundle;
} boot;

static void boot_free(boot *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->ids[i]);
        og_policy_free(b->bundles[i]);
    }
    free(b->ids);
    free(b->bundles);
    og_policy_free(b->server_bundle);
    og_cluster_close(b->c);
}

/* Opens the applied state: cluster-global problems (no state, a tampered catalog blob, a
 * policy bundle that does not load, no graph) stop the boot. */
static int boot_load(boot *b, const char *dir)
{
    if (og_cluster_open(&b->c, dir)) {
        fprintf(stderr, "omnigraph-server: --cluster %s: %s\n", dir, og_error_message());
        return 1;
    }
    b->n = og_cluster_graph_count(b->c);
    if (!b->n) {
        fprintf(stderr, "omnigraph-server: --cluster %s: cluster_empty: the applied state has no graph; declare one in "
                        "cluster.yaml and run `omnigraph cluster apply`\n", dir);
        return 1;
    }
    b->ids = calloc(b->n, sizeof *b->ids);
    b->bundles = calloc(b->n, sizeof *b->bundles);
    if (!b->ids || !b->bundles) return 1;
    for (size_t i = 0; i < b->n; i++) {
        const char *id = og_cluster_graph_id(b->c, i);
        b->ids[i] = strdup(id);
        const char *text = og_cluster_policy_text(b->c, id);
        char name[160];
        snprintf(name, sizeof name, "policy bundle of graph '%.64s'", id);
        if (text && og_policy_parse(text, strlen(text), name, OG_POLICY_KIND_GRAPH, &b->bundles[i])) {
            fprintf(stderr, "omnigraph-server: --cluster %s: %s\n", dir, og_error_message());
            return 1;
        }
    }
    const char *st = og_cluster_policy_text(b->c, "cluster");
    if (st && og_policy_parse(st, strlen(st), "cluster policy bundle", OG_POLICY_KIND_SERVER, &b->server_bundle)) {
        fprintf(stderr, "omnigraph-server: --cluster %s: %s\n", dir, og_error_message());
        return 1;
    }
    return 0;
}

/* Opens each graph and type-checks its stored queries against the graph's live schema.  A
 * graph that cannot be served is quarantined (absent from /graphs, its routes 404) with the
 * reason on stderr, or stops the boot with --require-all-graphs. */
static int boot_graphs(boot *b, og_server *s, int require_all)
{
    size_t healthy = 0;
    for (size_t i = 0; i < b->n; i++) {
        const char *id = b->ids[i], *uri = og_cluster_graph_uri(b->c, id);
        if (og_server_add_graph(s, id, uri)) {
            fprintf(stderr, "omnigraph-server: graph '%s' quarantined: it cannot be opened at %s\n", id, uri);
            if (require_all) return 1;
            continue;
        }
        /* the graph's providers.embedding profile, its ${KEY} resolved now: a missing secret is
         * a deployment error that stops the boot (text queries would fail on every call) */
        og_db_embed_provider ep;
        char key[1024];
        int bound = 0;
        og_status est = og_cluster_embedding_provider(b->c, id, &ep, key, sizeof key, &bound);
        if (est == OG_OK && bound) est = og_db_set_embed_provider(og_server_graph_db(s, id), &ep);
        memset(key, 0, sizeof key);
        if (est) {
            fprintf(stderr, "omnigraph-server: --cluster: %s\n", og_error_message());
            return 1;
        }
        og_stored_set *set = NULL;
        if (og_cluster_stored_queries(&set, b->c, id, og_server_graph_db(s, id))) {
            fprintf(stderr, "omnigraph-server: graph '%s' quarantined: %s (a stored query is never served broken; fix "
                            "it and run `omnigraph cluster apply`)\n", id, og_error_message());
            og_server_remove_graph(s, id);
            if (require_all) return 1;
            continue;
        }
        fprintf(stderr, "omnigraph-server: graph '%s' at %s: %zu stored quer%s%s%s%s\n", id, uri,
                og_stored_set_count(set), og_stored_set_count(set) == 1 ? "y" : "ies",
                b->bundles[i] ? ", policy bundle bound" : "", bound ? ", embedding provider " : "",
                bound ? (ep.kind ? ep.kind : "openai-compatible") : "");
        og_server_set_queries(s, id, set);
        healthy++;
    }
    if (!healthy) {
        fprintf(stderr, "omnigraph-server: cluster_no_healthy_graphs: no graph of the cluster can be served (reasons "
                        "above)\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* SIGINT/SIGTERM are blocked before any thread exists (opening a graph may start helper
     * threads): every thread inherits the mask, so only sigwait below sees them, never a
     * helper thread whose default action would kill the process mid-request. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    const char *bind = getenv("OMNIGRAPH_BIND");
    const char *cluster = getenv("OMNIGRAPH_CLUSTER");
    if (cluster && !*cluster) cluster = NULL;
    int cluster_from_env = cluster != NULL;
    int unauth = truthy(getenv("OMNIGRAPH_UNAUTHENTICATED")), allow_public = 0;
    int require_all = truthy(getenv("OMNIGRAPH_REQUIRE_ALL_GRAPHS"));
    unsigned threads = 0, timeout = 0, header_timeout = 0, max_conns = 0, per_address = 0, max_queued = 0;
    const char *q_timeout = getenv("OMNIGRAPH_QUERY_TIMEOUT"), *q_memory = getenv("OMNIGRAPH_QUERY_MAX_MEMORY");
    const char *max_memory = NULL, *graph_dir = NULL;
    const char *graphs[64], *policy_path = NULL, *server_policy_path = NULL;
    size_t ngraphs = 0;
    const char *allowed[64];
    size_t nallowed = 0;
    const char *mcp_agent_branch = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) { /* what `omnigraph --version` says */
            printf("omnigraph-server %s\nstorage format: omnigraph storage version %d, tables in Lance file format 2.0\n",
                   OG_VERSION_STRING, og_storage_version());
            return 0;
        } else if (!strcmp(a, "--allowed-host") && v) {
            if (nallowed == 64) {
                fprintf(stderr, "omnigraph-server: at most 64 --allowed-host names\n");
                return 2;
            }
            allowed[nallowed++] = v;
            i++;
        } else if (!strcmp(a, "--graph") && v) {
            if (ngraphs == 64) {
                fprintf(stderr, "omnigraph-server: at most 64 graphs\n");
                return 2;
            }
            graphs[ngraphs++] = v;
            i++;
        } else if (!strcmp(a, "--mcp-agent-branch") && v) {
            if (!strstr(v, "{actor}")) { /* one branch for every agent would defeat the rule */
                fprintf(stderr, "omnigraph-server: --mcp-agent-branch needs {actor} in its template (e.g. '{actor}/work')\n");
                return 2;
            }
            mcp_agent_branch = v;
            i++;
        } else if (!strcmp(a, "--graph-dir") && v) {
            graph_dir = v;
            i++;
        } else if (!strcmp(a, "--bind") && v) {
            bind = v;
            i++;
        } else if (!strcmp(a, "--policy") && v) {
            policy_path = v;
            i++;
        } else if (!strcmp(a, "--server-policy") && v) {
            server_policy_path = v;
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            threads = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--timeout") && v) {
            timeout = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--header-timeout") && v) {
            header_timeout = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--max-connections") && v) {
            max_conns = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--max-connections-per-address") && v) {
            per_address = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--max-queued") && v) {
            max_queued = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--query-timeout") && v) {
            q_timeout = v;
            i++;
        } else if (!strcmp(a, "--query-max-memory") && v) {
            q_memory = v;
            i++;
        } else if (!strcmp(a, "--max-memory") && v) {
            max_memory = v;
            i++;
        } else if (!strcmp(a, "--unauthenticated")) {
            unauth = 1;
        } else if (!strcmp(a, "--allow-public-unauthenticated")) {
            allow_public = 1;
        } else if (!strcmp(a, "--cluster") && v) {
            cluster = v;
            cluster_from_env = 0;
            i++;
        } else if (!strcmp(a, "--require-all-graphs")) {
            require_all = 1;
        } else {
            fprintf(stderr, "omnigraph-server: unknown or incomplete argument '%s'\n\n%s", a, usage);
            return 2;
        }
    }
    if (cluster && cluster_from_env && ngraphs) cluster = NULL; /* explicit --graph wins over $OMNIGRAPH_CLUSTER */
    if (cluster && (ngraphs || policy_path || server_policy_path)) {
        fprintf(stderr, "omnigraph-server: --cluster serves the cluster's own graphs and policy bundles; drop --graph, "
                        "--policy and --server-policy\n");
        return 2;
    }
    og_budget budget = {0, 0}; /* docs/server.md "Query budgets" */
    if (q_timeout && *q_timeout && !(budget.time_ms = duration_ms(q_timeout))) {
        fprintf(stderr, "omnigraph-server: --query-timeout '%s': expected a duration such as 500ms, 30s or 2m, or "
                        "unlimited\n", q_timeout);
        return 2;
    }
    if (q_memory && *q_memory && !(budget.memory_bytes = size_bytes(q_memory))) {
        fprintf(stderr, "omnigraph-server: --query-max-memory '%s': expected a size such as 512M or 2G, or "
                        "unlimited\n", q_memory);
        return 2;
    }
    int64_t mem_bound = 0;
    if (max_memory && !(mem_bound = size_bytes(max_memory))) {
        fprintf(stderr, "omnigraph-server: --max-memory '%s': expected a size such as 4G, or unlimited\n", max_memory);
        return 2;
    }
    if (graph_dir && cluster) {
        fprintf(stderr, "omnigraph-server: --graph-dir creates graphs beside those given with --graph; a cluster's "
                        "graphs come from `omnigraph cluster apply`: drop --graph-dir\n");
        return 2;
    }
    struct stat gd;
    if (graph_dir && (strstr(graph_dir, "://") || stat(graph_dir, &gd) != 0 || !S_ISDIR(gd.st_mode))) {
        fprintf(stderr, "omnigraph-server: --graph-dir '%s': expected an existing local directory (create it first: "
                        "mkdir -p %s)\n", graph_dir, graph_dir);
        return 2;
    }
    if (!ngraphs && !cluster && !graph_dir) {
        fprintf(stderr, "omnigraph-server: no graph to serve\n\n%s", usage);
        return 2;
    }
    boot b = {0};
    og_policy *gp = NULL, *sp = NULL;
    og_authz *authz = NULL;
    int rc = 1;
    og_server *s = NULL;
    og_tokenset *tokens = NULL;
    if (cluster) {
        if (boot_load(&b, cluster)) goto out;
        int any = b.server_bundle != NULL;
        for (size_t i = 0; i < b.n; i++) any |= b.bundles[i] != NULL;
        if (any && og_authz_from_graph_policies(&authz, b.n, (const char *const *)b.ids,
                                                (const og_policy *const *)b.bundles, b.server_bundle))
            goto out;
    } else {
        if (policy_path && og_policy_load(policy_path, OG_POLICY_KIND_GRAPH, &gp)) {
            fprintf(stderr, "omnigraph-server: --policy: %s\n", og_error_message());
            goto out;
        }
        if (server_policy_path && og_policy_load(server_policy_path, OG_POLICY_KIND_SERVER, &sp)) {
            fprintf(stderr, "omnigraph-server: --server-policy: %s\n", og_error_message());
            goto out;
        }
        if ((gp || sp) && og_authz_from_policy(&authz, gp, sp)) goto out;
    }
    if (og_tokenset_new(&tokens)) goto out;
    if (og_tokenset_from_env(tokens)) {
        og_tokenset_free(tokens);
        goto out;
    }
    og_server_opts o = {.bind = bind,
                        .threads = threads,
                        .timeout_s = timeout,
                        .header_timeout_s = header_timeout,
                        .max_connections = max_conns,
                        .max_per_address = per_address,
                        .max_queued = max_queued,
                        .tokens = tokens, /* taken over, also when og_server_new fails */
                        .unauthenticated = unauth,
                        .allow_public_unauthenticated = allow_public,
                        .policy = authz,
                        .cluster = cluster != NULL,
                        .allowed_hosts = allowed,
                        .nallowed_hosts = nallowed,
                        .max_memory = mem_bound,
                        .budget = budget,
                        .graph_dir = graph_dir,
                        .mcp_agent_branch = mcp_agent_branch};
    if (og_server_new(&s, &o)) goto out;
    if (cluster) {
        if (boot_graphs(&b, s, require_all)) goto out;
    }
    for (size_t i = 0; i < ngraphs; i++) {
        const char *eq = strchr(graphs[i], '=');
        if (!eq || eq == graphs[i] || !eq[1]) {
            fprintf(stderr, "omnigraph-server: --graph '%s': expected ID=ROOT\n", graphs[i]);
            rc = 2;
            goto out;
        }
        char id[80];
        snprintf(id, sizeof id, "%.*s", (int)(eq - graphs[i]) < 79 ? (int)(eq - graphs[i]) : 79, graphs[i]);
        if (og_server_add_graph(s, id, eq + 1)) goto out;
    }
    char addr[64];
    if (og_server_start(s, addr, sizeof addr)) goto out;
    printf("OMNIGRAPH_LISTEN_ADDR=%s\n", addr);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "omnigraph-server: %s: finishing in-flight requests\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    og_server_stop(s, 30);
    rc = 0;
out:
    og_server_free(s);
    og_authz_free(authz);
    og_policy_free(gp);
    og_policy_free(sp);
    boot_free(&b);
    return rc;
}
