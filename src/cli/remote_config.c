/*
 * remote_config.c — the operator's config and credentials, and the scope of a graph verb
 * (docs/cli.md "Remote mode and operator config").
 *
 * Why here and not in each verb: the scope rules are the same for every graph verb (which
 * flags address which graph, which verb may run served, which write needs --yes), so main()
 * resolves them once before dispatching.  A command with no --server/--graph/--profile/--yes
 * and no config file costs one stat(2) here and runs exactly as before.
 *
 * Files under $OMNIGRAPH_HOME (default ~/.omnigraph):
 *   config.yaml   operator.actor, servers, clusters, defaults, profiles, aliases — endpoints
 *                 and names, never a token;
 *   credentials   one `[NAME]` section per server with `token = …` (mode 0600, written by
 *                 `omnigraph login`; a group/world-readable file is refused, never read).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "cluster/cluster.h"

/* ---- paths and config.yaml -------------------------------------------------------------------- */

static const char *home_dir(void)
{
    static char dir[1024];
    const char *h = getenv("OMNIGRAPH_HOME");
    if (h && *h) snprintf(dir, sizeof dir, "%s", h);
    else snprintf(dir, sizeof dir, "%s/.omnigraph", getenv("HOME") ? getenv("HOME") : ".");
    return dir;
}

static const char *home_file(const char *name)
{
    static char path[2][1100];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", home_dir(), name);
    return path[k];
}

static json_t *yaml_to_json(yaml_document_t *d, yaml_node_t *n, int depth)
{
    if (!n || depth > 32) return json_null();
    if (n->type == YAML_SCALAR_NODE) {
        const char *s = (const char *)n->data.scalar.value;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) { /* numbers and booleans of plain scalars */
            char *end;
            long long v = strtoll(s, &end, 10);
            if (*s && !*end) return json_integer(v);
            if (!strcmp(s, "true")) return json_true();
            if (!strcmp(s, "false")) return json_false();
            if (!strcmp(s, "null") || !strcmp(s, "~") || !*s) return json_null();
        }
        return json_stringn(s, n->data.scalar.length);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
            json_array_append_new(a, yaml_to_json(d, yaml_document_get_node(d, *it), depth + 1));
        return a;
    }
    json_t *o = json_object();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE)
            json_object_set_new(o, (const char *)k->data.scalar.value,
                                yaml_to_json(d, yaml_document_get_node(d, p->value), depth + 1));
    }
    return o;
}

static json_t *g_config;  /* the parsed config.yaml, {} when there is none */
static int g_config_state; /* 0 not read, 1 read, -1 invalid (reported) */

/* The config (an object; {} when the file does not exist), or NULL after printing why it is
 * unreadable. */
static json_t *config(void)
{
    if (g_config_state) return g_config_state > 0 ? g_config : NULL;
    const char *path = home_file("config.yaml");
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) {
            fprintf(stderr, "omnigraph: cannot read %s: %s\n", path, strerror(errno));
            g_config_state = -1;
            return NULL;
        }
        g_config = json_object();
        g_config_state = 1;
        return g_config;
    }
    yaml_parser_t p;
    yaml_document_t d;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int ok = yaml_parser_load(&p, &d);
    if (!ok) {
        fprintf(stderr, "omnigraph: %s:%zu:%zu: %s\n", path, p.problem_mark.line + 1, p.problem_mark.column + 1,
                p.problem ? p.problem : "invalid YAML");
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&d);
        g_config = root ? yaml_to_json(&d, root, 0) : json_object();
        yaml_document_delete(&d);
        if (!json_is_object(g_config)) {
            fprintf(stderr, "omnigraph: %s: the config must be a mapping (operator, servers, defaults, profiles, ...)\n",
                    path);
            json_decref(g_config);
            g_config = NULL;
            ok = 0;
        }
    }
    yaml_parser_delete(&p);
    fclose(f);
    g_config_state = ok ? 1 : -1;
    return ok ? g_config : NULL;
}

static const char *cfg_str(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_string_value(v);
}

/* ---- credentials -------------------------------------------------------------------------- */

/* Reads the credentials file into *text (NULL when there is none).  Refuses (message printed,
 * -1) a file that group or others can read: a token there is no longer the operator's. */
static int credentials_read(char **text)
{
    *text = NULL;
    const char *path = home_file("credentials");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        fprintf(stderr, "omnigraph: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_mode & 077)) {
        fprintf(stderr,
                "omnigraph: refusing %s: it is readable by group or others (mode %04o); run `chmod 600 %s`, "
                "then log in again if the token may have leaked\n",
                path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return -1;
    }
    og_buf b = OG_BUF_INIT;
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) og_buf_append(&b, chunk, (size_t)n);
    close(fd);
    og_buf_cstr(&b);
    *text = (char *)b.data;
    return 0;
}

/* The token of section [name] of text, copied into out (cap bytes); 1 when found. */
static int credentials_find(const char *text, const char *name, char *out, size_t cap)
{
    int in = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) len--;
        if (len && line[0] == '[') {
            in = len == strlen(name) + 2 && line[len - 1] == ']' && !strncmp(line + 1, name, len - 2);
        } else if (in && len > 5 && !strncmp(line, "token", 5)) {
            const char *v = line + 5;
            while (*v == ' ') v++;
            if (*v == '=') {
                v++;
                while (*v == ' ') v++;
                size_t vl = len - (size_t)(v - line);
                if (vl && vl < cap) {
                    memcpy(out, v, vl);
                    out[vl] = 0;
                    return 1;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* text without section [name]; `token` non-NULL: with [name] holding it, at the end. */
static char *credentials_edit(const char *text, const char *name, const char *token)
{
    og_buf b = OG_BUF_INIT;
    int in = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len && line[0] == '[') {
            size_t l = len;
            while (l && (line[l - 1] == '\r' || line[l - 1] == ' ')) l--;
            in = l == strlen(name) + 2 && line[l - 1] == ']' && !strncmp(line + 1, name, l - 2);
        }
        if (!in) {
            og_buf_append(&b, line, len);
            og_buf_append_byte(&b, '\n');
        }
        line = nl ? nl + 1 : NULL;
    }
    if (token) og_buf_printf(&b, "[%s]\ntoken = %s\n", name, token);
    og_buf_cstr(&b);
    return (char *)b.data;
}

/* Writes the credentials file atomically, mode 0600 (its directory 0700 when created). */
static int credentials_write(const char *text)
{
    mkdir(home_dir(), 0700);
    const char *path = home_file("credentials");
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "omnigraph: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "omnigraph: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- resolving a server ------------------------------------------------------------------------ */

static char g_token[4096];

static int is_url(const char *s) { return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8); }

static void list_keys(FILE *f, json_t *o)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(o, k, v)
    {
        fprintf(f, "%s%s", first ? "" : ", ", k);
        first = 0;
    }
    if (first) fputs("none", f);
}

int og_cli_remote_resolve(og_remote *r, const char *verb, const char *server)
{
    const char *url = server;
    r->name = NULL;
    if (!is_url(server)) {
        json_t *cfg = config();
        if (!cfg) return OG_EXIT_USAGE;
        url = cfg_str(json_object_get(cfg, "servers"), server, "url");
        if (!url) {
            fprintf(stderr, "omnigraph %s: unknown server '%s': %s has no servers.%s.url (known: ", verb, server,
                    home_file("config.yaml"), server);
            list_keys(stderr, json_object_get(cfg, "servers"));
            fprintf(stderr, "); give --server http(s)://HOST:PORT, or add it under `servers:`\n");
            return OG_EXIT_USAGE;
        }
        if (!is_url(url)) {
            fprintf(stderr, "omnigraph %s: servers.%s.url must be an http:// or https:// URL (got '%s')\n", verb, server,
                    url);
            return OG_EXIT_USAGE;
        }
        r->name = server;
    }
    size_t n = strlen(url);
    while (n && url[n - 1] == '/') n--;
    if (n >= sizeof r->url) return og_cli_usage(verb, "the server URL is too long");
    memcpy(r->url, url, n);
    r->url[n] = 0;
    /* the token: OMNIGRAPH_TOKEN_<NAME>, then the credentials file, then OMNIGRAPH_BEARER_TOKEN */
    r->token = NULL;
    const char *key = r->name ? r->name : r->url;
    if (r->name) {
        char env[256] = "OMNIGRAPH_TOKEN_";
        size_t k = strlen(env);
        for (const char *p = r->name; *p && k + 1 < sizeof env; p++)
            env[k++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
        env[k] = 0;
        const char *t = getenv(env);
        if (t && *t) r->token = t;
    }
    if (!r->token) {
        char *text;
        if (credentials_read(&text) != 0) return OG_EXIT_FAIL;
        if (text && credentials_find(text, key, g_token, sizeof g_token)) r->token = g_token;
        free(text);
    }
    if (!r->token) {
        const char *t = getenv("OMNIGRAPH_BEARER_TOKEN");
        if (t && *t) r->token = t;
    }
    return 0;
}

/* ---- the scope of a graph verb ---------------------------------------------------------------- */

/* What a verb (and subcommand) may do: served or embedded, direct only, or not a graph verb. */
enum { SCOPE_NONE, SCOPE_DIRECT, SCOPE_SERVED };

static int verb_scope(const char *verb, const char *sub)
{
    static const char *served[] = {"query", "read", "mutate", "change", "load", "branch", "snapshot",
                                   "export", "commit", "changes", "blob"};
    static const char *direct[] = {"init", "optimize", "cleanup", "index", "embed"};
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
        if (!strcmp(verb, served[i])) return SCOPE_SERVED;
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++)
        if (!strcmp(verb, direct[i])) return SCOPE_DIRECT;
    if (!strcmp(verb, "schema") && sub)
        return !strcmp(sub, "show") || !strcmp(sub, "get") || !strcmp(sub, "apply") ? SCOPE_SERVED
               : !strcmp(sub, "plan")                                               ? SCOPE_DIRECT
                                                                                    : SCOPE_NONE;
    return SCOPE_NONE;
}

/* A word that names a graph root rather than a query name, branch or id. */
static int looks_like_root(const char *s)
{
    struct stat st;
    return s[0] == '/' || !strncmp(s, "./", 2) || !strncmp(s, "../", 3) || s[0] == '~' || !strncmp(s, "s3://", 5) ||
           !strncmp(s, "file://", 7) || (stat(s, &st) == 0 && S_ISDIR(st.st_mode));
}

static int is_tty(void) { return isatty(0) && isatty(2); }

/* Consent for a destructive write to a non-local target: --yes, or a "y" typed at a terminal.
 * Without a terminal (or under --json) it fails closed.  0 = go ahead, else the exit status. */
static int consent(const char *verb, const char *what, const char *target, int yes, int json)
{
    if (yes) return 0;
    if (!is_tty() || json) {
        fprintf(stderr,
                "omnigraph %s: refusing to %s on %s without --yes: it is destructive and the target is not local "
                "storage (no terminal to ask; add --yes to consent)\n",
                verb, what, target);
        return OG_EXIT_USAGE;
    }
    fprintf(stderr, "omnigraph %s: %s on %s? [y/N] ", verb, what, target);
    char line[16] = "";
    if (!fgets(line, sizeof line, stdin) || (line[0] != 'y' && line[0] != 'Y')) {
        fprintf(stderr, "omnigraph %s: not confirmed; nothing done\n", verb);
        return OG_EXIT_FAIL;
    }
    return 0;
}

/* The destructive operation the arguments ask for, or NULL. */
static const char *destructive(const char *verb, const char *sub, int argc, char **argv, const char **what_arg)
{
    *what_arg = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(verb, "load") && !strcmp(argv[i], "--mode") && i + 1 < argc && !strcmp(argv[i + 1], "overwrite"))
            return "overwrite-load";
        if (!strcmp(verb, "load") && !strcmp(argv[i], "--mode=overwrite")) return "overwrite-load";
        if (!strcmp(verb, "cleanup") && !strcmp(argv[i], "--confirm")) return "reclaim history (cleanup --confirm)";
        if ((!strcmp(verb, "mutate") || !strcmp(verb, "change")) && (!strcmp(argv[i], "-e") || !strcmp(argv[i], "--query-string")) &&
            i + 1 < argc) {
            const char *s = argv[i + 1];
            while (isspace((unsigned char)*s)) s++;
            if (!strncmp(s, "branch", 6) && isspace((unsigned char)s[6])) {
                s += 6;
                while (isspace((unsigned char)*s)) s++;
                if (!strncmp(s, "delete", 6)) return "delete a branch";
            }
        }
    }
    if (!strcmp(verb, "branch") && sub && !strcmp(sub, "delete")) {
        for (int i = 3; i < argc; i++)
            if (argv[i][0] != '-') {
                *what_arg = argv[i];
                break;
            }
        return "delete a branch";
    }
    return NULL;
}

static int is_write(const char *verb, const char *sub)
{
    if (!strcmp(verb, "mutate") || !strcmp(verb, "change") || !strcmp(verb, "load") || !strcmp(verb, "init")) return 1;
    if (!strcmp(verb, "branch")) return sub && strcmp(sub, "list") != 0;
    if (!strcmp(verb, "schema")) return sub && !strcmp(sub, "apply");
    return 0;
}

/* The graph of a served command when none was named: the server's only graph, else a refusal
 * listing the candidates.  0, or the exit status after printing why. */
static int pick_graph(og_remote *r, const char *verb)
{
    og_http_resp resp;
    if (og_http_request(r, "GET", "/graphs", NULL, NULL, NULL, NULL, &resp) != 0) {
        fprintf(stderr, "omnigraph %s: io: %s\n", verb, resp.error);
        og_http_resp_free(&resp);
        return OG_EXIT_FAIL;
    }
    json_t *j = resp.status == 200 ? json_loads((const char *)resp.body.data, 0, NULL) : NULL;
    json_t *gs = json_object_get(j, "graphs");
    int rc = OG_EXIT_USAGE;
    static char only[128];
    if (json_array_size(gs) == 1 && json_is_string(json_object_get(json_array_get(gs, 0), "graph_id"))) {
        snprintf(only, sizeof only, "%s", json_string_value(json_object_get(json_array_get(gs, 0), "graph_id")));
        r->graph = only;
        rc = 0;
    } else if (json_array_size(gs) > 1) {
        fprintf(stderr, "omnigraph %s: no graph selected: %s serves %zu graphs; pass --graph ID, one of:", verb, r->url,
                json_array_size(gs));
        for (size_t i = 0; i < json_array_size(gs); i++)
            fprintf(stderr, " %s", json_string_value(json_object_get(json_array_get(gs, i), "graph_id")));
        fprintf(stderr, "\n(or set default_graph in a profile or in defaults of %s)\n", home_file("config.yaml"));
    } else {
        fprintf(stderr,
                "omnigraph %s: no graph selected: pass --graph ID (%s does not list its graphs to this caller: HTTP %ld)\n",
                verb, r->url, resp.status);
    }
    json_decref(j);
    og_http_resp_free(&resp);
    return rc;
}

static char *g_argv[512];

/* The storage root of graph `graph` in the applied state of the cluster at `dir` (config
 * directory or storage root; docs/cluster.md), or NULL with the refusal printed and *rc set.
 * `graph` may be NULL when the cluster has one graph. */
static const char *cluster_root(const char *verb, const char *dir, const char *graph, int *rc)
{
    static char root[2048];
    /* a name under `clusters:` of config.yaml stands for its root */
    struct stat sb;
    if (strncmp(dir, "s3://", 5) && stat(dir, &sb) != 0 && stat(home_file("config.yaml"), &sb) == 0) {
        json_t *cfg = config();
        const char *named = cfg ? cfg_str(json_object_get(cfg, "clusters"), dir, "root") : NULL;
        if (named) dir = !strncmp(named, "file://", 7) ? named + 7 : named;
    }
    og_cluster *c = NULL;
    og_status st = og_cluster_open(&c, dir);
    if (st != OG_OK) {
        fprintf(stderr, "omnigraph %s: %s: cluster %s: %s\n", verb, og_status_name(st), dir, og_error_message());
        *rc = OG_EXIT_FAIL;
        return NULL;
    }
    size_t n = og_cluster_graph_count(c);
    if (!graph && n == 1) graph = og_cluster_graph_id(c, 0);
    const char *uri = graph ? og_cluster_graph_uri(c, graph) : NULL;
    if (!uri) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < n; i++) og_buf_printf(&b, "%s%s", i ? ", " : "", og_cluster_graph_id(c, i));
        if (graph)
            fprintf(stderr, "omnigraph %s: not_found: graph '%s' is not in the applied state of cluster %s (applied "
                            "graphs: %s)\n", verb, graph, dir, b.len ? og_buf_cstr(&b) : "none");
        else
            fprintf(stderr, "omnigraph %s: choose a graph of cluster %s with --graph ID (applied graphs: %s)\n", verb,
                    dir, b.len ? og_buf_cstr(&b) : "none");
        og_buf_free(&b);
        og_cluster_close(c);
        *rc = graph ? OG_EXIT_FAIL : OG_EXIT_USAGE;
        return NULL;
    }
    snprintf(root, sizeof root, "%s", uri);
    og_cluster_close(c);
    return root;
}

int og_cli_scope_dispatch(int *argcp, char ***argvp, int *rc)
{
    int argc = *argcp;
    char **argv = *argvp;
    if (argc < 2) return 0;
    const char *verb = argv[1];
    const char *sub = argc > 2 && argv[2][0] != '-' ? argv[2] : NULL;
    int scope = verb_scope(verb, sub);
    if (scope == SCOPE_NONE || argc >= (int)(sizeof g_argv / sizeof g_argv[0]) - 4) return 0;
    const char *server = NULL, *graph = NULL, *profile = NULL, *store = NULL, *actor = NULL, *http_pos = NULL,
               *cluster = NULL;
    int yes = 0, quiet = 0, json = 0, explicit_root = 0, s3 = 0, n = 0;
    g_argv[n++] = argv[0];
    g_argv[n++] = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--server") ? &server : !strcmp(a, "--graph") ? &graph : !strcmp(a, "--profile") ? &profile
                            : !strcmp(a, "--cluster") ? &cluster
                                                      : NULL;
        if (!strcmp(a, "--")) { /* the rest is the verb's, as given */
            while (i < argc) g_argv[n++] = argv[i++];
            break;
        }
        if (slot) {
            if (i + 1 >= argc) {
                *rc = og_cli_usage(verb, "%s needs a value", a);
                return 1;
            }
            if (*slot) {
                *rc = og_cli_usage(verb, "%s given twice", a);
                return 1;
            }
            *slot = argv[++i];
            continue;
        }
        if (!strncmp(a, "--server=", 9) || !strncmp(a, "--graph=", 8) || !strncmp(a, "--profile=", 10) ||
            !strncmp(a, "--cluster=", 10)) {
            const char **s2 = a[2] == 's' ? &server : a[2] == 'g' ? &graph : a[2] == 'c' ? &cluster : &profile;
            *s2 = strchr(a, '=') + 1;
            continue;
        }
        if (!strcmp(a, "--yes")) {
            yes = 1;
            continue;
        }
        if (!strcmp(a, "--quiet")) quiet = 1;
        if (!strcmp(a, "--json") || !strcmp(a, "--format=json") ||
            (!strcmp(a, "--format") && i + 1 < argc && !strcmp(argv[i + 1], "json")))
            json = 1;
        if (!strcmp(a, "--store") && i + 1 < argc) store = argv[i + 1];
        if (!strncmp(a, "--store=", 8)) store = a + 8;
        if (!strcmp(a, "--as") && i + 1 < argc) actor = argv[i + 1];
        if (!strncmp(a, "--as=", 5)) actor = a + 5;
        static const char *const switches[] = {"--json", "--quiet", "--exact", "--explain", "--analyze", "--progress",
                                               "--delete-branch", "--allow-data-loss", "--confirm", "--yes"};
        int prev_is_flag = i > 2 && argv[i - 1][0] == '-' && argv[i - 1][1] == '-' && !strchr(argv[i - 1], '=');
        for (size_t k = 0; prev_is_flag && k < sizeof switches / sizeof switches[0]; k++)
            if (!strcmp(argv[i - 1], switches[k])) prev_is_flag = 0; /* a switch takes no value */
        if (!strncmp(a, "s3://", 5) || !strncmp(a, "--store=s3://", 13)) s3 = 1;
        if (a[0] != '-' && !prev_is_flag) {
            if (is_url(a) && !http_pos) http_pos = a;
            if (looks_like_root(a)) explicit_root = 1;
        }
        g_argv[n++] = argv[i];
    }
    g_argv[n] = NULL;
    const char *env_store0 = getenv("OMNIGRAPH_STORE");
    if (env_store0 && !strncmp(env_store0, "s3://", 5)) s3 = 1;
    if (!server && !graph && !profile && !yes && !http_pos && !s3 && !cluster) {
        /* the common case: no remote flag, local storage; only the config's defaults can change anything */
        const char *env_profile = getenv("OMNIGRAPH_PROFILE");
        struct stat st;
        if (!(env_profile && *env_profile) && stat(home_file("config.yaml"), &st) != 0) return 0;
    }
    const char *server_flag = server, *graph_flag = graph;
    if (http_pos) {
        *rc = og_cli_usage(verb, "'%s' is a server address, not a graph root: address a served graph with --server %s "
                                 "--graph ID",
                           http_pos, http_pos);
        return 1;
    }
    if (cluster && (server || store || explicit_root)) {
        *rc = og_cli_usage(verb, "--cluster addresses a graph of the cluster by --graph ID; it excludes %s",
                           server ? "--server" : store ? "--store" : "a graph ROOT");
        return 1;
    }
    if (server && store) {
        *rc = og_cli_usage(verb, "--server and --store are mutually exclusive: give one (a served graph, or storage "
                                 "opened directly)");
        return 1;
    }
    if (store && graph) {
        *rc = og_cli_usage(verb, "--graph selects a graph on a server (--server) or in a cluster; a --store already is "
                                 "one graph: drop --graph");
        return 1;
    }
    /* fill what the flags left open: --profile / $OMNIGRAPH_PROFILE, then defaults */
    const char *env_store = getenv("OMNIGRAPH_STORE");
    int explicit_scope = server || store || explicit_root || cluster;
    const char *pstore = NULL;
    json_t *cfg = NULL;
    if (!profile && getenv("OMNIGRAPH_PROFILE") && *getenv("OMNIGRAPH_PROFILE")) profile = getenv("OMNIGRAPH_PROFILE");
    if (profile || !explicit_scope) {
        cfg = config();
        if (!cfg) {
            *rc = OG_EXIT_USAGE;
            return 1;
        }
    }
    if (profile) {
        json_t *p = json_object_get(json_object_get(cfg, "profiles"), profile);
        if (!json_is_object(p)) {
            fprintf(stderr, "omnigraph %s: unknown profile '%s' (profiles in %s: ", verb, profile, home_file("config.yaml"));
            list_keys(stderr, json_object_get(cfg, "profiles"));
            fprintf(stderr, "); see `omnigraph profile list`\n");
            *rc = OG_EXIT_USAGE;
            return 1;
        }
        const char *ps = cfg_str(p, "server", NULL), *pc = cfg_str(p, "cluster", NULL), *pst = cfg_str(p, "store", NULL);
        if (!!ps + !!pc + !!pst != 1) {
            fprintf(stderr, "omnigraph %s: profile '%s' must bind exactly one of server, cluster or store\n", verb, profile);
            *rc = OG_EXIT_USAGE;
            return 1;
        }
        if (!explicit_scope) {
            if (ps) server = ps;
            if (pst) pstore = pst;
            if (pc) cluster = pc;
        }
        if (!graph && cfg_str(p, "default_graph", NULL) && (server || !explicit_scope)) graph = cfg_str(p, "default_graph", NULL);
    } else if (!explicit_scope && !(env_store && *env_store)) {
        if (cfg_str(cfg, "defaults", "server")) server = cfg_str(cfg, "defaults", "server");
        else if (cfg_str(cfg, "defaults", "store")) pstore = cfg_str(cfg, "defaults", "store");
    }
    if (server && !graph && cfg) graph = cfg_str(cfg, "defaults", "default_graph");
    /* defaults.output: the format of a query given none */
    int has_format = json;
    for (int i = 2; i < n; i++)
        if (!strncmp(g_argv[i], "--format", 8)) has_format = 1;
    json_t *any_cfg = cfg ? cfg : g_config_state > 0 ? g_config : NULL;
    if (!any_cfg && stat(home_file("config.yaml"), &(struct stat){0}) == 0) any_cfg = config();
    const char *dout = cfg_str(any_cfg, "defaults", "output");
    if (dout && !has_format && (!strcmp(verb, "query") || !strcmp(verb, "read"))) {
        g_argv[n++] = "--format";
        g_argv[n++] = (char *)dout;
        g_argv[n] = NULL;
    }
    /* operator.actor: the actor of a direct write given no --as (a served write's is the token's) */
    const char *op_actor = cfg_str(any_cfg, "operator", "actor");
    if (!server && op_actor && !actor && is_write(verb, sub)) {
        g_argv[n++] = "--as";
        g_argv[n++] = (char *)op_actor;
        g_argv[n] = NULL;
    }
    if (server && !graph && !cfg && config()) graph = cfg_str(config(), "defaults", "default_graph");
    if (scope == SCOPE_DIRECT && !server_flag) { /* a profile's or defaults' server never claims a direct-only verb */
        server = NULL;
        graph = graph_flag;
    }
    if (cluster) { /* a cluster's graph: its applied storage root, opened directly */
        const char *root = cluster_root(verb, cluster, graph, rc);
        if (!root) return 1;
        g_argv[n++] = "--store";
        g_argv[n++] = (char *)root;
        g_argv[n] = NULL;
        store = root;
        server = NULL;
        graph = NULL;
    }
    if (!server) { /* direct */
        if (graph) {
            *rc = og_cli_usage(verb, "--graph selects a graph on a server: add --server NAME|URL (a store is one graph "
                                     "already; give it as --store ROOT)");
            return 1;
        }
        if (pstore && !(env_store && *env_store)) {
            if (!strncmp(pstore, "file://", 7)) pstore += 7;
            g_argv[n++] = "--store";
            g_argv[n++] = (char *)pstore;
            g_argv[n] = NULL;
            store = pstore;
        }
        const char *root = store ? store : NULL;
        for (int i = 2; !root && i < n; i++)
            if (g_argv[i][0] != '-' && looks_like_root(g_argv[i])) root = g_argv[i];
        if (!root && env_store && *env_store) root = env_store;
        const char *what_arg;
        const char *what = destructive(verb, sub, n, g_argv, &what_arg);
        if (what && root && !strncmp(root, "s3://", 5)) {
            int c = consent(verb, !strcmp(what, "overwrite-load") ? "replace every type of the file (load --mode overwrite)" : what,
                            root, yes, json);
            if (c) {
                *rc = c;
                return 1;
            }
        }
        *argcp = n;
        *argvp = g_argv;
        return 0;
    }
    /* served */
    if (scope == SCOPE_DIRECT) {
        *rc = og_cli_usage(verb, "%s%s%s opens storage directly and does not run through a server: drop --server and "
                                 "address the graph with --store ROOT",
                           verb, sub && !strcmp(verb, "schema") ? " " : "", sub && !strcmp(verb, "schema") ? sub : "");
        return 1;
    }
    if (actor && is_write(verb, sub)) {
        *rc = og_cli_usage(verb, "`--as` is not allowed on a served write: the server resolves the actor from the bearer "
                                 "token; drop it, or use --store ROOT");
        return 1;
    }
    static og_remote r;
    memset(&r, 0, sizeof r);
    int rr = og_cli_remote_resolve(&r, verb, server);
    if (rr) {
        *rc = rr;
        return 1;
    }
    r.quiet = quiet;
    r.yes = yes;
    r.graph = graph;
    if (!r.graph && (rr = pick_graph(&r, verb))) {
        *rc = rr;
        return 1;
    }
    const char *what_arg;
    const char *what = destructive(verb, sub, n, g_argv, &what_arg);
    char named[300];
    if (what && what_arg) {
        snprintf(named, sizeof named, "delete branch %s", what_arg);
        what = named;
    }
    if (what) {
        char target[1400];
        snprintf(target, sizeof target, "graph %s on %s", r.graph, r.name ? r.name : r.url);
        int c = consent(verb, !strcmp(what, "overwrite-load") ? "replace every type of the file (load --mode overwrite)" : what,
                        target, yes, json);
        if (c) {
            *rc = c;
            return 1;
        }
    }
    *rc = og_cli_remote_run(&r, n - 1, g_argv + 1);
    return 1;
}

/* ---- login / logout ---------------------------------------------------------------------------- */

static int valid_name(const char *s)
{
    if (is_url(s)) return strlen(s) < 1000 && !strpbrk(s, " \t\r\n[]");
    if (!*s || strlen(s) > 128) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.') return 0;
    return 1;
}

static const char *login_help =
    "usage: omnigraph login NAME [--token TOKEN]\n"
    "\n"
    "Stores a bearer token for server NAME (a name under `servers:` of config.yaml, or a URL) in\n"
    "$OMNIGRAPH_HOME/credentials (default ~/.omnigraph/credentials; created mode 0600, a file others\n"
    "can read is refused).  The token is one line read from stdin, or --token (which a shell history\n"
    "keeps: prefer stdin, `printf '%s' \"$TOKEN\" | omnigraph login prod`).  It is never printed.\n"
    "A command addressing --server NAME sends it, after $OMNIGRAPH_TOKEN_<NAME> and before\n"
    "$OMNIGRAPH_BEARER_TOKEN.\n"
    "  --token TOKEN      the token instead of stdin\n";

int og_cmd_login(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(login_help, stdout);
        return OG_EXIT_OK;
    }
    const char *name = NULL, *token = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--token") && i + 1 < argc) token = argv[++i];
        else if (!strncmp(argv[i], "--token=", 8)) token = argv[i] + 8;
        else if (argv[i][0] == '-') return og_cli_usage("login", "unknown option '%s'", argv[i]);
        else if (!name) name = argv[i];
        else return og_cli_usage("login", "unexpected argument '%s'", argv[i]);
    }
    if (!name) return og_cli_usage("login", "name the server: omnigraph login NAME");
    if (!valid_name(name)) return og_cli_usage("login", "'%s' is not a server name (letters, digits, - _ .) or URL", name);
    char line[4096];
    if (!token) {
        if (isatty(0)) fprintf(stderr, "token for %s: ", name);
        if (!fgets(line, sizeof line, stdin)) return og_cli_usage("login", "no token: pipe one line on stdin, or give --token");
        line[strcspn(line, "\r\n")] = 0;
        token = line;
    }
    for (const char *p = token; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return og_cli_usage("login", "the token holds a space or control character; give it as one word");
    if (!*token) return og_cli_usage("login", "the token is empty");
    if (strlen(token) > 4000) return og_cli_usage("login", "the token is longer than 4000 bytes");
    char *text;
    if (credentials_read(&text) != 0) return OG_EXIT_FAIL;
    char *next = credentials_edit(text ? text : "", name, token);
    free(text);
    memset(line, 0, sizeof line);
    int rc = next ? credentials_write(next) : -1;
    if (next) memset(next, 0, strlen(next));
    free(next);
    if (rc) return OG_EXIT_FAIL;
    json_t *cfg = is_url(name) ? NULL : config();
    fprintf(stderr, "stored a token for %s in %s\n", name, home_file("credentials"));
    if (cfg && !cfg_str(json_object_get(cfg, "servers"), name, "url"))
        fprintf(stderr, "note: %s has no servers.%s.url yet; add it before `--server %s`\n", home_file("config.yaml"), name,
                name);
    return OG_EXIT_OK;
}

static const char *logout_help =
    "usage: omnigraph logout NAME\n"
    "\n"
    "Removes the token stored for server NAME by `omnigraph login`.  Idempotent: logging out of a\n"
    "server with no stored token succeeds and says so.\n";

int og_cmd_logout(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(logout_help, stdout);
        return OG_EXIT_OK;
    }
    if (argc != 2 || argv[1][0] == '-') return og_cli_usage("logout", "name the server: omnigraph logout NAME");
    const char *name = argv[1];
    char *text;
    if (credentials_read(&text) != 0) return OG_EXIT_FAIL;
    char tok[8];
    char big[4096];
    int had = text && credentials_find(text, name, big, sizeof big);
    memset(big, 0, sizeof big);
    (void)tok;
    if (!had) {
        free(text);
        fprintf(stderr, "no token stored for %s; nothing to do\n", name);
        return OG_EXIT_OK;
    }
    char *next = credentials_edit(text, name, NULL);
    free(text);
    int rc = next ? credentials_write(next) : -1;
    free(next);
    if (rc) return OG_EXIT_FAIL;
    fprintf(stderr, "removed the token for %s from %s\n", name, home_file("credentials"));
    return OG_EXIT_OK;
}

/* ---- profile list|show --------------------------------------------------------------------------- */

static const char *profile_help =
    "usage: omnigraph profile list [--json]\n"
    "       omnigraph profile show [NAME] [--json]\n"
    "\n"
    "Lists the profiles of $OMNIGRAPH_HOME/config.yaml (default ~/.omnigraph/config.yaml), or shows\n"
    "one (default: $OMNIGRAPH_PROFILE): the server, cluster or store it binds and its default graph.\n"
    "A graph verb given --profile NAME (or run with $OMNIGRAPH_PROFILE set) fills what its flags\n"
    "leave open from the profile; an explicit --server, --store or ROOT wins.\n"
    "Remote flags every served-or-embedded graph verb takes (query, mutate, load, branch, snapshot,\n"
    "export, commit, changes, schema show|apply, blob):\n"
    "  --server NAME|URL  run the command on a server (a name under `servers:`, or its URL)\n"
    "  --graph ID         the graph on that server (default: the profile's or defaults'\n"
    "                     default_graph, or the server's only graph)\n"
    "  --profile NAME     a named scope of config.yaml\n"
    "  --yes              consent to a destructive write on a non-local target (overwrite load,\n"
    "                     branch delete, cleanup --confirm on s3://); without a terminal it is required\n"
    "  --json             JSON output\n";

static json_t *profile_doc(const char *name, json_t *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    static const char *keys[] = {"server", "cluster", "store", "default_graph"};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get(p, keys[i]);
        json_object_set_new(o, keys[i], json_is_string(v) ? json_incref(v) : json_null());
    }
    const char *srv = json_string_value(json_object_get(p, "server"));
    const char *url = srv ? cfg_str(json_object_get(config(), "servers"), srv, "url") : NULL;
    json_object_set_new(o, "server_url", url ? json_string(url) : json_null());
    return o;
}

static void print_doc(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    free(s);
}

int og_cmd_profile(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(profile_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1], *name = NULL;
    int json = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-') return og_cli_usage("profile", "unknown option '%s'", argv[i]);
        else if (!name && !strcmp(sub, "show")) name = argv[i];
        else return og_cli_usage("profile", "unexpected argument '%s'", argv[i]);
    }
    json_t *cfg = config();
    if (!cfg) return OG_EXIT_USAGE;
    json_t *profiles = json_object_get(cfg, "profiles");
    const char *active = getenv("OMNIGRAPH_PROFILE");
    if (!strcmp(sub, "list")) {
        const char *k;
        json_t *p;
        json_t *arr = json_array();
        json_object_foreach(profiles, k, p) json_array_append_new(arr, profile_doc(k, p));
        if (json) {
            json_t *o = json_pack("{s:o,s:s?}", "profiles", arr, "active", active && *active ? active : NULL);
            print_doc(o);
            json_decref(o);
            return OG_EXIT_OK;
        }
        if (!json_array_size(arr)) printf("no profiles in %s\n", home_file("config.yaml"));
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t *o = json_array_get(arr, i);
            const char *pn = json_string_value(json_object_get(o, "name"));
            const char *kind = json_string_value(json_object_get(o, "server")) ? "server"
                               : json_string_value(json_object_get(o, "cluster")) ? "cluster"
                                                                                   : "store";
            const char *g = json_string_value(json_object_get(o, "default_graph"));
            printf("%s %-20s %s=%s%s%s\n", active && !strcmp(active, pn) ? "*" : " ", pn, kind,
                   json_string_value(json_object_get(o, kind)) ? json_string_value(json_object_get(o, kind)) : "?",
                   g ? " graph=" : "", g ? g : "");
        }
        json_decref(arr);
        return OG_EXIT_OK;
    }
    if (!strcmp(sub, "show")) {
        if (!name) name = active && *active ? active : NULL;
        if (!name) return og_cli_usage("profile show", "name a profile (or set OMNIGRAPH_PROFILE)");
        json_t *p = json_object_get(profiles, name);
        if (!json_is_object(p)) {
            fprintf(stderr, "omnigraph profile show: unknown profile '%s' (profiles: ", name);
            list_keys(stderr, profiles);
            fprintf(stderr, ")\n");
            return OG_EXIT_FAIL;
        }
        json_t *o = profile_doc(name, p);
        if (json) {
            print_doc(o);
        } else {
            static const char *keys[] = {"server", "server_url", "cluster", "store", "default_graph"};
            printf("profile %s\n", name);
            for (size_t i = 0; i < 5; i++)
                if (json_string_value(json_object_get(o, keys[i])))
                    printf("  %-14s %s\n", keys[i], json_string_value(json_object_get(o, keys[i])));
        }
        json_decref(o);
        return OG_EXIT_OK;
    }
    return og_cli_usage("profile", "unknown subcommand '%s' (list, show)", sub);
}

/* ---- graphs list --------------------------------------------------------------------------------- */

static const char *graphs_help =
    "usage: omnigraph graphs list [--server NAME|URL] [--profile NAME] [--json]\n"
    "\n"
    "Lists the graphs a server serves (GET /graphs): one `ID URI` line each, or --json\n"
    "{\"graphs\": [{\"graph_id\",\"uri\"}]}.  The server decides whether the caller may list them\n"
    "(its server policy's graph_list).  Without --server: the profile's or defaults' server.\n";

int og_cmd_graphs(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(graphs_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    if (strcmp(argv[1], "list")) return og_cli_usage("graphs", "unknown subcommand '%s' (list)", argv[1]);
    const char *server = NULL, *profile = NULL;
    int json = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--server") && i + 1 < argc) server = argv[++i];
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else return og_cli_usage("graphs list", "unexpected argument '%s'", argv[i]);
    }
    if (!profile && getenv("OMNIGRAPH_PROFILE") && *getenv("OMNIGRAPH_PROFILE")) profile = getenv("OMNIGRAPH_PROFILE");
    if (!server) {
        json_t *cfg = config();
        if (!cfg) return OG_EXIT_USAGE;
        if (profile) server = cfg_str(json_object_get(json_object_get(cfg, "profiles"), profile), "server", NULL);
        if (!server) server = cfg_str(cfg, "defaults", "server");
        if (!server)
            return og_cli_usage("graphs list", "no server: pass --server NAME|URL (graphs list is served only), or set "
                                               "defaults.server");
    }
    og_remote r;
    memset(&r, 0, sizeof r);
    int rc = og_cli_remote_resolve(&r, "graphs list", server);
    if (rc) return rc;
    og_http_resp resp;
    if (og_http_request(&r, "GET", "/graphs", NULL, NULL, NULL, NULL, &resp) != 0) {
        fprintf(stderr, "omnigraph graphs list: io: %s\n", resp.error);
        og_http_resp_free(&resp);
        return OG_EXIT_FAIL;
    }
    if (resp.status != 200) {
        rc = og_cli_remote_fail("graphs list", &resp);
        og_http_resp_free(&resp);
        return rc;
    }
    json_t *j = json_loads((const char *)resp.body.data, 0, NULL);
    og_http_resp_free(&resp);
    if (json) {
        print_doc(j);
    } else {
        json_t *g;
        size_t i;
        json_array_foreach(json_object_get(j, "graphs"), i, g)
            printf("%s %s\n", json_string_value(json_object_get(g, "graph_id")), json_string_value(json_object_get(g, "uri")));
    }
    json_decref(j);
    return OG_EXIT_OK;
}

/* ---- alias ------------------------------------------------------------------------------------------ */

static const char *alias_help =
    "usage: omnigraph alias NAME [ARG]... [--format json|jsonl|csv|table] [--json]\n"
    "       omnigraph alias list [--json]\n"
    "\n"
    "Runs an operator alias of config.yaml: a stored query on a named server, bound as\n"
    "  aliases:\n"
    "    experts: {server: prod, graph: knowledge, query: find_experts, args: [topic],\n"
    "              params: {limit: 20}, format: table}\n"
    "Each ARG fills the parameter `args` names at its position (a number, true/false or null as\n"
    "that JSON value, else a string); `params` are fixed values.  It runs as\n"
    "`omnigraph query QUERY --server SERVER --graph GRAPH --params {...}`.\n"
    "  --format F, --json  the output format (default: the alias's format, else json)\n";

int og_cmd_alias(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(alias_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    json_t *cfg = config();
    if (!cfg) return OG_EXIT_USAGE;
    json_t *aliases = json_object_get(cfg, "aliases");
    const char *name = argv[1];
    if (!strcmp(name, "list")) {
        int json = argc > 2 && !strcmp(argv[2], "--json");
        if (json) {
            json_t *o = json_object();
            json_object_set_new(o, "aliases", aliases ? json_incref(aliases) : json_object());
            print_doc(o);
            json_decref(o);
            return OG_EXIT_OK;
        }
        const char *k;
        json_t *a;
        if (!json_object_size(aliases)) printf("no aliases in %s\n", home_file("config.yaml"));
        json_object_foreach(aliases, k, a) printf("%s -> %s on %s/%s\n", k, cfg_str(a, "query", NULL) ? cfg_str(a, "query", NULL) : "?",
                                                  cfg_str(a, "server", NULL) ? cfg_str(a, "server", NULL) : "?",
                                                  cfg_str(a, "graph", NULL) ? cfg_str(a, "graph", NULL) : "?");
        return OG_EXIT_OK;
    }
    json_t *a = json_object_get(aliases, name);
    if (!json_is_object(a)) {
        fprintf(stderr, "omnigraph alias: unknown alias '%s' (aliases in %s: ", name, home_file("config.yaml"));
        list_keys(stderr, aliases);
        fprintf(stderr, ")\n");
        return OG_EXIT_USAGE;
    }
    const char *server = cfg_str(a, "server", NULL), *query = cfg_str(a, "query", NULL);
    if (!server || !query) return og_cli_usage("alias", "alias '%s' needs `server` and `query`", name);
    json_t *params = json_is_object(json_object_get(a, "params")) ? json_deep_copy(json_object_get(a, "params")) : json_object();
    json_t *names = json_object_get(a, "args");
    const char *format = cfg_str(a, "format", NULL);
    int json = 0;
    size_t k = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) format = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] == '-') {
            json_decref(params);
            return og_cli_usage("alias", "unknown option '%s'", argv[i]);
        } else if (k >= json_array_size(names)) {
            json_decref(params);
            return og_cli_usage("alias", "alias '%s' takes %zu argument(s); '%s' is one too many", name, json_array_size(names),
                                argv[i]);
        } else {
            json_t *v = json_loads(argv[i], JSON_DECODE_ANY, NULL);
            if (!v || json_is_object(v) || json_is_array(v) || json_is_string(v)) {
                json_decref(v);
                v = json_string(argv[i]);
            }
            json_object_set_new(params, json_string_value(json_array_get(names, k++)), v);
        }
    }
    if (k < json_array_size(names)) {
        json_decref(params);
        return og_cli_usage("alias", "alias '%s' needs its argument '%s'", name, json_string_value(json_array_get(names, k)));
    }
    og_remote r;
    memset(&r, 0, sizeof r);
    int rc = og_cli_remote_resolve(&r, "alias", server);
    if (rc) {
        json_decref(params);
        return rc;
    }
    r.graph = cfg_str(a, "graph", NULL);
    if (!r.graph && (rc = pick_graph(&r, "alias"))) {
        json_decref(params);
        return rc;
    }
    char *ptext = json_dumps(params, JSON_COMPACT);
    json_decref(params);
    char *qv[10] = {"query", (char *)query, "--params", ptext};
    int qn = 4;
    const char *branch = cfg_str(a, "branch", NULL);
    if (branch) qv[qn++] = "--branch", qv[qn++] = (char *)branch;
    if (json) qv[qn++] = "--json";
    else if (format) qv[qn++] = "--format", qv[qn++] = (char *)format;
    qv[qn] = NULL;
    rc = og_cli_remote_run(&r, qn, qv);
    free(ptext);
    return rc;
}
