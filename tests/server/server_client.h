/*
 * server_client.h — shared by the server tests: a scratch graph, an `omnigraph-server`
 * process started on an ephemeral 127.0.0.1 port and stopped with SIGTERM, and an HTTP
 * client (libcurl) that returns status, body and headers.  Header-only; include after
 * <cmocka.h>.
 */
#ifndef OG_TEST_SERVER_CLIENT_H
#define OG_TEST_SERVER_CLIENT_H

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "omnigraph.h"

static const char *TEST_SCHEMA = "node Person { name: String @key  age: I32? }\n"
                                 "node Note { title: String  body: String? }\n"
                                 "edge Knows: Person -> Person\n";

static const char *TEST_SEED = "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                               "{\"type\":\"Person\",\"data\":{\"name\":\"Alan\",\"age\":41}}\n"
                               "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Alan\"}\n";

/* Creates dir/name with the test schema, loaded with the seed, or — people > 0 — with that
 * many Person rows p0, p1, … (ages 0–89) and nothing else; returns 0 on success. */
static inline int make_graph_of(const char *dir, const char *name, int people)
{
    char uri[256], data[256];
    snprintf(uri, sizeof uri, "%s/%s", dir, name);
    snprintf(data, sizeof data, "%s/%s.seed.jsonl", dir, name);
    og_db *db;
    if (og_db_init(&db, uri, "test.pg", TEST_SCHEMA, strlen(TEST_SCHEMA), NULL)) return -1;
    FILE *f = fopen(data, "w");
    if (!f) {
        og_db_close(db);
        return -1;
    }
    if (people <= 0) fputs(TEST_SEED, f);
    for (int i = 0; i < people; i++) fprintf(f, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\",\"age\":%d}}\n", i, i % 90);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    og_status st = og_db_load(&r, db, data, &lo);
    og_db_close(db);
    return st ? -1 : 0;
}

/* Creates dir/name with the test schema and seed. */
static inline int make_graph(const char *dir, const char *name) { return make_graph_of(dir, name, 0); }

typedef struct srv {
    pid_t pid;
    char addr[64];
    char log[256];
} srv;

/* Starts omnigraph-server with `args` (a NULL-terminated list after the binary name) and
 * the environment as it is; waits for its OMNIGRAPH_LISTEN_ADDR line.  0 on success. */
static inline int srv_start(srv *s, const char *logpath, const char *const *args)
{
    const char *bindir = getenv("OG_BINARY_DIR");
    char bin[1024];
    snprintf(bin, sizeof bin, "%s/omnigraph-server", bindir ? bindir : OG_BINARY_DIR);
    int fds[2];
    if (pipe(fds)) return -1;
    snprintf(s->log, sizeof s->log, "%s", logpath);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        FILE *lf = fopen(logpath, "a");
        if (lf) dup2(fileno(lf), 2);
        const char *argv[64];
        size_t n = 0;
        argv[n++] = bin;
        for (size_t i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    s->pid = pid;
    FILE *out = fdopen(fds[0], "r");
    char line[256];
    int ok = 0;
    while (fgets(line, sizeof line, out)) {
        if (!strncmp(line, "OMNIGRAPH_LISTEN_ADDR=", 22)) {
            line[strcspn(line, "\r\n")] = 0;
            snprintf(s->addr, sizeof s->addr, "%s", line + 22);
            ok = 1;
            break;
        }
    }
    fclose(out); /* the server writes nothing more to stdout */
    if (!ok) {
        int st;
        waitpid(pid, &st, 0);
        s->pid = 0;
        return -1;
    }
    return 0;
}

/* Exit status of a started server that is expected to fail to start (no listen line). */
static inline int srv_start_fails(const char *logpath, const char *const *args)
{
    srv s;
    memset(&s, 0, sizeof s);
    return srv_start(&s, logpath, args) != 0;
}

static inline int srv_alive(const srv *s) { return s->pid > 0 && kill(s->pid, 0) == 0; }

/* SIGTERM, then wait; returns the exit status (or -1). */
static inline int srv_stop(srv *s)
{
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    int st = 0;
    waitpid(s->pid, &st, 0);
    s->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes `text` to `path` (a policy bundle, a token file); the test fails if it cannot. */
static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A policy test's server: graph "g" made in a fresh directory (mkdtemp of `tmpl`), served with
 * `bundle` as its --policy and the actors' tokens `tokens_json`
 * (OMNIGRAPH_SERVER_BEARER_TOKENS_JSON; the other token sources unset). */
typedef struct policy_server {
    srv s;
    char dir[64], graph[128], logpath[128], pol[128];
    const char *tokens_json;
} policy_server;

/* (Re)starts the server over the fixture's graph and bundle. */
static inline int policy_server_start(policy_server *p)
{
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", p->tokens_json, 1);
    const char *args[] = {"--graph", p->graph, "--bind", "127.0.0.1:0", "--policy", p->pol, NULL};
    int rc = srv_start(&p->s, p->logpath, args);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    return rc;
}

static inline int policy_server_setup(policy_server *p, const char *tmpl, const char *bundle, const char *tokens_json)
{
    snprintf(p->dir, sizeof p->dir, "%s", tmpl);
    if (!mkdtemp(p->dir) || make_graph(p->dir, "g")) return -1;
    snprintf(p->graph, sizeof p->graph, "g=%s/g", p->dir);
    snprintf(p->logpath, sizeof p->logpath, "%s/server.log", p->dir);
    snprintf(p->pol, sizeof p->pol, "%s/policy.yaml", p->dir);
    write_text(p->pol, bundle);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_UNAUTHENTICATED");
    p->tokens_json = tokens_json;
    return policy_server_start(p);
}

/* Stops the server and removes the directory: 0 when the server stopped cleanly. */
static inline int policy_server_teardown(policy_server *p)
{
    int rc = srv_stop(&p->s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p->dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

typedef struct http_resp {
    long status;
    char *body;
    size_t len;
    char *headers;
    size_t hlen;
    json_t *json;
} http_resp;

typedef struct sink {
    char *data;
    size_t len;
} sink;

static inline size_t collect(char *p, size_t sz, size_t n, void *arg)
{
    sink *k = arg;
    char *b = realloc(k->data, k->len + sz * n + 1);
    if (!b) return 0;
    memcpy(b + k->len, p, sz * n);
    k->len += sz * n;
    b[k->len] = 0;
    k->data = b;
    return sz * n;
}

static inline void http_free(http_resp *r)
{
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

/* One request.  `hdrs` is a NULL-terminated list of "Name: value" (may be NULL); body may
 * be NULL.  The body is parsed as JSON when it is. */
static inline http_resp http(const srv *s, const char *method, const char *path, const char *const *hdrs, const char *body,
                      size_t blen)
{
    http_resp r;
    memset(&r, 0, sizeof r);
    CURL *c = curl_easy_init();
    char url[2048];
    snprintf(url, sizeof url, "http://%s%s", s->addr, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    struct curl_slist *h = NULL;
    for (size_t i = 0; hdrs && hdrs[i]; i++) h = curl_slist_append(h, hdrs[i]);
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
    }
    sink b = {0}, hd = {0};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hd);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    else r.status = -(long)rc;
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    r.body = b.data;
    r.len = b.len;
    r.headers = hd.data;
    r.hlen = hd.len;
    if (r.body) r.json = json_loadb(r.body, r.len, 0, NULL);
    return r;
}

/* A JSON POST with an optional bearer token. */
static inline http_resp post_json(const srv *s, const char *token, const char *path, const char *body)
{
    char auth[256];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *h[] = {"Content-Type: application/json", token ? auth : NULL, NULL};
    return http(s, "POST", path, h, body, strlen(body));
}

static inline http_resp get(const srv *s, const char *token, const char *path)
{
    char auth[256];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *h[] = {token ? auth : NULL, NULL};
    return http(s, "GET", path, h, NULL, 0);
}

static inline const char *jstr(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

#endif
