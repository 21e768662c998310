/*
 * omnigraph_server.c — the `omnigraph-server` binary: parses the boot flags, reads the
 * bearer tokens from the environment, opens the graphs, serves until SIGINT or SIGTERM,
 * then stops gracefully (in-flight requests finish).  Everything else is src/server/.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "server/server.h"

static const char *usage =
    "usage: omnigraph-server --graph ID=ROOT [--graph ID=ROOT]... [--bind HOST:PORT] [--unauthenticated]\n"
    "\n"
    "Serves each graph ROOT (a directory or s3://bucket/prefix) under /graphs/ID/... over HTTP/1.1.\n"
    "  --graph ID=ROOT                a graph to serve (repeatable); ID matches ^[a-zA-Z0-9-]{1,64}$\n"
    "  --bind HOST:PORT               listen address (default 127.0.0.1:8080, or $OMNIGRAPH_BIND;\n"
    "                                 port 0 = any free port); prints OMNIGRAPH_LISTEN_ADDR=host:port\n"
    "  --unauthenticated              serve without bearer tokens (or $OMNIGRAPH_UNAUTHENTICATED=1);\n"
    "                                 loopback addresses only unless --allow-public-unauthenticated\n"
    "  --policy FILE                  policy bundle (YAML, docs/policy.md) for every served graph\n"
    "  --server-policy FILE           server bundle: who may list graphs (graph_list)\n"
    "  --threads N                    worker threads (default 8)\n"
    "  --timeout SECONDS              idle connection timeout (default 30)\n"
    "Tokens (read once, kept only as SHA-256 digests): OMNIGRAPH_SERVER_BEARER_TOKEN (actor\n"
    "\"default\"), OMNIGRAPH_SERVER_BEARER_TOKENS_JSON or OMNIGRAPH_SERVER_BEARER_TOKENS_FILE\n"
    "({\"actor\": \"token\", ...}).  See docs/server.md.\n";

static int truthy(const char *v) { return v && *v && strcmp(v, "0") && strcasecmp(v, "false"); }

int main(int argc, char **argv)
{
    const char *bind = getenv("OMNIGRAPH_BIND");
    int unauth = truthy(getenv("OMNIGRAPH_UNAUTHENTICATED")), allow_public = 0;
    unsigned threads = 0, timeout = 0;
    const char *graphs[64], *policy_path = NULL, *server_policy_path = NULL;
    size_t ngraphs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--graph") && v) {
            if (ngraphs == 64) {
                fprintf(stderr, "omnigraph-server: at most 64 graphs\n");
                return 2;
            }
            graphs[ngraphs++] = v;
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
        } else if (!strcmp(a, "--unauthenticated")) {
            unauth = 1;
        } else if (!strcmp(a, "--allow-public-unauthenticated")) {
            allow_public = 1;
        } else if (!strcmp(a, "--cluster")) {
            fprintf(stderr, "omnigraph-server: --cluster is not supported yet; serve graphs with --graph ID=ROOT\n");
            return 2;
        } else {
            fprintf(stderr, "omnigraph-server: unknown or incomplete argument '%s'\n\n%s", a, usage);
            return 2;
        }
    }
    if (!ngraphs) {
        fprintf(stderr, "omnigraph-server: no graph to serve\n\n%s", usage);
        return 2;
    }
    og_policy *gp = NULL, *sp = NULL;
    og_authz *authz = NULL;
    if (policy_path && og_policy_load(policy_path, OG_POLICY_KIND_GRAPH, &gp)) {
        fprintf(stderr, "omnigraph-server: --policy: %s\n", og_error_message());
        return 1;
    }
    if (server_policy_path && og_policy_load(server_policy_path, OG_POLICY_KIND_SERVER, &sp)) {
        fprintf(stderr, "omnigraph-server: --server-policy: %s\n", og_error_message());
        og_policy_free(gp);
        return 1;
    }
    if ((gp || sp) && og_authz_from_policy(&authz, gp, sp)) return 1;
    og_tokenset *tokens;
    if (og_tokenset_new(&tokens) || og_tokenset_from_env(tokens)) return 1;
    og_server_opts o = {.bind = bind,
                        .threads = threads,
                        .timeout_s = timeout,
                        .tokens = tokens,
                        .unauthenticated = unauth,
                        .allow_public_unauthenticated = allow_public,
                        .policy = authz};
    og_server *s;
    if (og_server_new(&s, &o)) return 1;
    for (size_t i = 0; i < ngraphs; i++) {
        const char *eq = strchr(graphs[i], '=');
        if (!eq || eq == graphs[i] || !eq[1]) {
            fprintf(stderr, "omnigraph-server: --graph '%s': expected ID=ROOT\n", graphs[i]);
            og_server_free(s);
            return 2;
        }
        char id[80];
        snprintf(id, sizeof id, "%.*s", (int)(eq - graphs[i]) < 79 ? (int)(eq - graphs[i]) : 79, graphs[i]);
        if (og_server_add_graph(s, id, eq + 1)) {
            og_server_free(s);
            return 1;
        }
    }
    /* the worker threads inherit a mask without SIGINT/SIGTERM: only sigwait below sees them */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    char addr[64];
    if (og_server_start(s, addr, sizeof addr)) {
        og_server_free(s);
        return 1;
    }
    printf("OMNIGRAPH_LISTEN_ADDR=%s\n", addr);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "omnigraph-server: %s: finishing in-flight requests\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    og_server_stop(s, 30);
    og_server_free(s);
    og_authz_free(authz);
    og_policy_free(gp);
    og_policy_free(sp);
    return 0;
}
