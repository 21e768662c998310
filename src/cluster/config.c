/*
 * config.c — reads a cluster directory's cluster.yaml and the files it names, and validates
 * them (reference-surfaces.md §5 "validate"): supported fields, reserved and removed fields,
 * resource ids, schema files that compile, stored queries that parse and type-check against
 * the desired schema, policy bundles and their bindings, embedding providers, external blob
 * bases.  Every problem is a diagnostic {code, severity, path, message}; the result is the
 * desired state with a digest per resource address, which plan and apply diff against the
 * ledger.
 */
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster/internal.h"
#include "cluster/stored.h"
#include "compiler/lint.h"
#include "compiler/schema.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/sha256.h"
#ifdef OG_HAVE_POLICY
#include "policy/policy.h"
#endif

void og_cluster_digest(char out[65], const void *p, size_t n)
{
    if (og_sha256_hex(p, n, out) != OG_OK) out[0] = 0;
}

static int valid_id(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

static void check_id(json_t *diags, const char *kind, const char *path, const char *v)
{
    if (!valid_id(v))
        og_diag_add(diags, "error", "invalid_resource_id", path,
                    "%s `%s` must start with a letter or `_` and contain only ASCII letters, digits, `_`, or `-`", kind,
                    v);
}

/* Reads a file under dir (rel may be absolute).  0 on success. */
static int read_rel(og_buf *out, const char *dir, const char *rel, char *full, size_t cap, char *why, size_t whycap)
{
    if (rel[0] == '/')
        snprintf(full, cap, "%s", rel);
    else
        snprintf(full, cap, "%s/%s", dir, rel);
    struct stat sb;
    if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(why, whycap, "is a directory");
        return -1;
    }
    if (og_buf_read_file(out, full) != OG_OK) {
        const char *m = og_error_message();
        const char *colon = strrchr(m, ':');
        snprintf(why, whycap, "%s", colon ? colon + 2 : m);
        return -1;
    }
    return 0;
}

/* Unknown keys of a mapping become diagnostics. */
static void only_keys(json_t *diags, json_t *obj, const char *path, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++) ok |= !strcmp(*a, k);
        if (!ok) {
            char p[512];
            snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", k);
            og_diag_add(diags, "error", "invalid_cluster_yaml", p, "unknown field `%s`", k);
        }
    }
}

static int want_type(json_t *diags, json_t *v, json_type type, const char *path, const char *expected)
{
    if (v && json_typeof(v) == type) return 1;
    if (type == JSON_STRING && v && json_is_integer(v)) return 0;
    og_diag_add(diags, "error", "invalid_cluster_yaml", path, "`%s` must be %s", path, expected);
    return 0;
}

static void resource(json_t *resources, const char *addr, const char *kind, const char *digest, const char *path)
{
    json_t *r = json_object();
    json_object_set_new(r, "kind", json_string(kind));
    json_object_set_new(r, "digest", json_string(digest));
    if (path) json_object_set_new(r, "path", json_string(path));
    json_object_set_new(resources, addr, r);
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One declared .gq file (relative to the config dir) of graph g: read, parse, register each
 * declared query (name -> file); `only` restricts to one name (the explicit map form). */
static void add_query_file(json_t *diags, const char *dir, const char *g, const char *rel, const char *only,
                           json_t *queries, json_t *files, json_t *origin, const char *path)
{
    og_buf b = OG_BUF_INIT;
    char full[PATH_MAX + 256], why[256];
    if (read_rel(&b, dir, rel, full, sizeof full, why, sizeof why) != 0) {
        og_diag_add(diags, "error", "query_file_missing", path, "could not read query file '%s': %s", rel, why);
        og_buf_free(&b);
        return;
    }
    /* parse only: names come from the declarations; the type check is against the schema */
    og_catalog *empty = NULL;
    og_status cst = og_schema_compile(&empty, "<empty>", "", 0, NULL);
    og_lint_report r;
    memset(&r, 0, sizeof r);
    if (cst != OG_OK || og_lint_run(&r, empty, rel, (const char *)b.data, b.len) != OG_OK) {
        og_diag_add(diags, "error", "query_parse_error", path, "out of memory");
        og_catalog_free(empty);
        og_buf_free(&b);
        return;
    }
    int parsed = 1;
    for (size_t i = 0; i < r.nfindings; i++)
        if (!strcmp(r.findings[i].code, "Q000")) {
            og_diag_add(diags, "error", "query_parse_error", path, "'%s' does not parse: %u:%u: %s", rel,
                        r.findings[i].diag.line, r.findings[i].diag.col, r.findings[i].message);
            parsed = 0;
        }
    if (parsed) {
        int found = 0;
        for (size_t i = 0; i < r.nqueries; i++) {
            const char *name = r.queries[i].name;
            if (only && strcmp(only, name)) continue;
            found = 1;
            char qp[512];
            snprintf(qp, sizeof qp, "graphs.%s.queries.%s", g, name);
            json_t *prev = json_object_get(origin, name);
            if (prev) {
                og_diag_add(diags, "error", "duplicate_query_name", qp, "query '%s' is declared in both '%s' and '%s'",
                            name, json_string_value(prev), rel);
                continue;
            }
            check_id(diags, "query name", qp, name);
            json_object_set_new(origin, name, json_string(rel));
            char digest[65];
            og_cluster_digest(digest, b.data, b.len);
            json_object_set_new(queries, name, json_pack("{ss ss}", "file", rel, "digest", digest));
        }
        if (only && !found) {
            char qp[512];
            snprintf(qp, sizeof qp, "graphs.%s.queries.%s", g, only);
            og_diag_add(diags, "error", "query_key_mismatch", qp,
                        "no `query %s` declaration found in the referenced .gq file", only);
        }
        json_object_set_new(files, rel, json_stringn((const char *)b.data, b.len));
    }
    og_lint_report_free(&r);
    og_catalog_free(empty);
    og_buf_free(&b);
}

static void add_query_path(json_t *diags, const char *dir, const char *g, const char *rel, json_t *queries,
                           json_t *files, json_t *origin)
{
    char full[PATH_MAX + 256], path[512];
    snprintf(path, sizeof path, "graphs.%s.queries", g);
    if (rel[0] == '/')
        snprintf(full, sizeof full, "%s", rel);
    else
        snprintf(full, sizeof full, "%s/%s", dir, rel);
    struct stat sb;
    if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(full);
        if (!d) {
            og_diag_add(diags, "error", "query_dir_unreadable", path, "could not list query directory '%s'", rel);
            return;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.' || !ends_with(e->d_name, ".gq")) continue;
            char **nn = realloc(names, (n + 1) * sizeof *nn);
            if (!nn) break;
            names = nn;
            names[n++] = strdup(e->d_name);
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_cstr);
        if (!n) og_diag_add(diags, "warning", "query_dir_empty", path, "query directory '%s' contains no .gq files", rel);
        for (size_t i = 0; i < n; i++) {
            char r[PATH_MAX];
            size_t rl = strlen(rel);
            snprintf(r, sizeof r, "%s%s%s", rel, rl && rel[rl - 1] == '/' ? "" : "/", names[i]);
            add_query_file(diags, dir, g, r, NULL, queries, files, origin, path);
            free(names[i]);
        }
        free(names);
        return;
    }
    add_query_file(diags, dir, g, rel, NULL, queries, files, origin, path);
}

/* Type-checks every declared query of graph g against its desired schema. */
static void typecheck_queries(json_t *diags, const char *g, json_t *graph)
{
    json_t *queries = json_object_get(graph, "queries"), *files = json_object_get(graph, "files");
    const char *schema = json_string_value(json_object_get(graph, "schema_text"));
    int schema_ok = json_is_true(json_object_get(graph, "schema_ok"));
    const char *name;
    json_t *q;
    json_object_foreach(queries, name, q) {
        char qp[512];
        snprintf(qp, sizeof qp, "graphs.%s.queries.%s", g, name);
        if (!schema_ok) {
            og_diag_add(diags, "warning", "query_typecheck_skipped", qp,
                        "query parsed, but type-check was skipped because the graph schema is invalid");
            continue;
        }
        const char *file = json_string_value(json_object_get(q, "file"));
        json_t *text = json_object_get(files, file);
        og_stored_set *set = NULL;
        if (og_stored_set_new(&set) != OG_OK) return;
        const char *names[2] = {name, NULL};
        og_status st = og_stored_set_add(set, file, json_string_value(text), json_string_length(text), names, schema,
                                         strlen(schema));
        if (st == OG_ERR_TYPE) og_diag_add(diags, "error", "query_typecheck_error", qp, "%s", og_error_message());
        else if (st != OG_OK) og_diag_add(diags, "error", "query_parse_error", qp, "%s", og_error_message());
        og_stored_set_free(set);
    }
}

static void load_graph(json_t *diags, const char *dir, const char *g, json_t *decl, json_t *out_graphs,
                       json_t *resources, json_t *providers)
{
    char path[512];
    snprintf(path, sizeof path, "graphs.%s", g);
    check_id(diags, "graph id", path, g);
    if (!json_is_object(decl)) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", path, "`%s` must be a mapping", path);
        return;
    }
    if (json_object_get(decl, "streaming")) {
        char p[512];
        snprintf(p, sizeof p, "%s.streaming", path);
        og_diag_add(diags, "error", "removed_streaming_declaration", p,
                    "`streaming` was removed: graphs no longer carry a stream profile. Delete this key.");
        return;
    }
    static const char *const keys[] = {"schema", "queries", "embedding_provider", "external_blobs", NULL};
    only_keys(diags, decl, path, keys);
    json_t *graph = json_object();
    json_object_set_new(graph, "queries", json_object());
    json_object_set_new(graph, "files", json_object());
    json_object_set_new(out_graphs, g, graph);

    /* schema */
    json_t *schema = json_object_get(decl, "schema");
    char sp[512];
    snprintf(sp, sizeof sp, "%s.schema", path);
    if (!schema) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", path, "missing field `schema`");
    } else if (want_type(diags, schema, JSON_STRING, sp, "a path to a .pg file")) {
        og_buf b = OG_BUF_INIT;
        char full[PATH_MAX + 256], why[256];
        const char *rel = json_string_value(schema);
        if (read_rel(&b, dir, rel, full, sizeof full, why, sizeof why) != 0) {
            og_diag_add(diags, "error", "schema_file_missing", sp, "could not read schema file '%s': %s", rel, why);
        } else {
            char digest[65];
            og_cluster_digest(digest, b.data, b.len);
            char addr[300];
            snprintf(addr, sizeof addr, "schema.%s", g);
            resource(resources, addr, "schema", digest, rel);
            json_object_set_new(graph, "schema_path", json_string(rel));
            json_object_set_new(graph, "schema_text", json_stringn((const char *)b.data, b.len));
            json_object_set_new(graph, "schema_digest", json_string(digest));
            og_catalog *cat = NULL;
            og_diags d = OG_DIAGS_INIT;
            og_status st = og_schema_compile(&cat, rel, (const char *)b.data, b.len, &d);
            if (st != OG_OK) {
                og_buf m = OG_BUF_INIT;
                for (size_t i = 0; i < d.len; i++)
                    if (!d.v[i].warning) {
                        og_diag_format(&m, &d.v[i]);
                        break;
                    }
                for (size_t k = 0; k < m.len; k++)
                    if (m.data[k] == '\n') m.len = k; /* the first line: the hint stays in the compiler's own output */
                og_diag_add(diags, "error", st == OG_ERR_PARSE ? "schema_parse_error" : "schema_catalog_error", sp,
                            "%.*s", (int)m.len, m.len ? (const char *)m.data : "invalid schema");
                og_buf_free(&m);
            } else {
                json_object_set_new(graph, "schema_ok", json_true());
            }
            og_diags_free(&d);
            og_catalog_free(cat);
        }
        og_buf_free(&b);
    }

    /* queries: a path (dir or file) | [paths] | {name: {file}} */
    json_t *queries = json_object_get(decl, "queries");
    json_t *origin = json_object();
    json_t *qs = json_object_get(graph, "queries"), *files = json_object_get(graph, "files");
    char qp[512];
    snprintf(qp, sizeof qp, "%s.queries", path);
    if (json_is_string(queries)) {
        add_query_path(diags, dir, g, json_string_value(queries), qs, files, origin);
    } else if (json_is_array(queries)) {
        size_t i;
        json_t *v;
        json_array_foreach(queries, i, v) {
            char ip[512];
            snprintf(ip, sizeof ip, "%s[%zu]", qp, i);
            if (want_type(diags, v, JSON_STRING, ip, "a path to a .gq file or directory"))
                add_query_path(diags, dir, g, json_string_value(v), qs, files, origin);
        }
    } else if (json_is_object(queries)) {
        const char *name;
        json_t *v;
        json_object_foreach(queries, name, v) {
            char np[512];
            snprintf(np, sizeof np, "%s.%s", qp, name);
            static const char *const qkeys[] = {"file", NULL};
            if (!json_is_object(v)) {
                og_diag_add(diags, "error", "invalid_cluster_yaml", np, "`%s` must be a mapping with `file`", np);
                continue;
            }
            only_keys(diags, v, np, qkeys);
            json_t *f = json_object_get(v, "file");
            char fp[512];
            snprintf(fp, sizeof fp, "%s.file", np);
            if (!f) og_diag_add(diags, "error", "invalid_cluster_yaml", np, "missing field `file`");
            else if (want_type(diags, f, JSON_STRING, fp, "a path to a .gq file"))
                add_query_file(diags, dir, g, json_string_value(f), name, qs, files, origin, fp);
        }
    } else if (queries && !json_is_null(queries)) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", qp,
                    "`%s` must be a directory or file path, a list of paths, or a map of name -> {file}", qp);
    }
    json_decref(origin);
    const char *qn;
    json_t *qv;
    json_object_foreach(qs, qn, qv) {
        char addr[600];
        snprintf(addr, sizeof addr, "query.%s.%s", g, qn);
        resource(resources, addr, "query", json_string_value(json_object_get(qv, "digest")),
                 json_string_value(json_object_get(qv, "file")));
    }
    typecheck_queries(diags, g, graph);

    /* embedding provider reference */
    json_t *ep = json_object_get(decl, "embedding_provider");
    if (ep) {
        char epp[512];
        snprintf(epp, sizeof epp, "%s.embedding_provider", path);
        if (want_type(diags, ep, JSON_STRING, epp, "a provider name")) {
            const char *ref = json_string_value(ep);
            const char *name = ref;
            if (!strncmp(ref, "provider.embedding.", 19)) name = ref + 19;
            else if (strchr(ref, '.')) {
                og_diag_add(diags, "error", "wrong_kind_reference", epp,
                            "embedding_provider expects a providers.embedding ref or bare provider name, got `%s`", ref);
                name = NULL;
            }
            if (name && !json_object_get(providers, name))
                og_diag_add(diags, "error", "dangling_embedding_provider_reference", epp,
                            "graph references embedding provider `%s`, but no providers.embedding.%s profile is declared",
                            name, name);
            else if (name)
                json_object_set_new(graph, "embedding_provider", json_sprintf("provider.embedding.%s", name));
        }
    }

    /* external blobs */
    json_t *eb = json_object_get(decl, "external_blobs");
    if (eb && !json_is_null(eb)) {
        char ebp[512];
        snprintf(ebp, sizeof ebp, "%s.external_blobs", path);
        static const char *const ekeys[] = {"allow", NULL};
        if (!json_is_object(eb)) {
            og_diag_add(diags, "error", "invalid_cluster_yaml", ebp, "`%s` must be a mapping with `allow`", ebp);
        } else {
            only_keys(diags, eb, ebp, ekeys);
            json_t *allow = json_object_get(eb, "allow");
            size_t i;
            json_t *a;
            char **bases = NULL;
            size_t nb = 0;
            json_array_foreach(allow, i, a) {
                char ap[600];
                snprintf(ap, sizeof ap, "%s.allow[%zu].base", ebp, i);
                const char *base = json_string_value(json_object_get(a, "base"));
                const char *scope = json_string_value(json_object_get(a, "scope"));
                if (!base) {
                    og_diag_add(diags, "error", "invalid_external_blob_base", ap, "missing `base`");
                    continue;
                }
                const char *why = NULL;
                int s3 = !strncmp(base, "s3://", 5), file = !strncmp(base, "file://", 7);
                if (!s3 && !file) why = "base must be an s3:// or file:// URI";
                else if (strchr(base, '?') || strchr(base, '#')) why = "base must not carry a query or fragment";
                else if (strchr(base, '@')) why = "base must not carry credentials";
                else if (strstr(base, "/../") || strstr(base, "/./") || ends_with(base, "/..")) why = "base must not contain `.` or `..` segments";
                else if (!scope || (strcmp(scope, "server_safe") && strcmp(scope, "embedded_only")))
                    why = "scope must be `server_safe` or `embedded_only`";
                else if (!strcmp(scope, "server_safe") && !s3) why = "a server_safe base must be an s3:// URI";
                else if (!strcmp(scope, "embedded_only") && !file) why = "an embedded_only base must be a file:// URI";
                if (why) {
                    og_diag_add(diags, "error", "invalid_external_blob_base", ap, "%s: `%s`", why, base);
                    continue;
                }
                char *canon = malloc(strlen(base) + 2);
                sprintf(canon, "%s%s", base, ends_with(base, "/") ? "" : "/");
                for (size_t k = 0; k < nb; k++)
                    if (!strncmp(bases[k], canon, strlen(bases[k])) || !strncmp(canon, bases[k], strlen(canon)))
                        og_diag_add(diags, "error", "invalid_external_blob_policy", ebp,
                                    "external blob bases `%s` and `%s` overlap", bases[k], canon);
                bases = realloc(bases, (nb + 1) * sizeof *bases);
                bases[nb++] = canon;
            }
            for (size_t k = 0; k < nb; k++) free(bases[k]);
            free(bases);
        }
    }

    /* graph resource: identity of the root (create/delete only) and its embedding provider
     * binding (a changed binding is a derived update the ledger records) */
    const char *epref = json_string_value(json_object_get(graph, "embedding_provider"));
    char digest[65], addr[300], seed[700];
    if (epref) snprintf(seed, sizeof seed, "graph:%s\nembedding_provider:%s", g, epref);
    else snprintf(seed, sizeof seed, "graph:%s", g);
    og_cluster_digest(digest, seed, strlen(seed));
    snprintf(addr, sizeof addr, "graph.%s", g);
    resource(resources, addr, "graph", digest, NULL);
    if (epref) json_object_set_new(json_object_get(resources, addr), "embedding_provider", json_string(epref));
}

static void load_provider(json_t *diags, const char *name, json_t *p, json_t *resources, json_t *providers)
{
    char path[512];
    snprintf(path, sizeof path, "providers.embedding.%s", name);
    check_id(diags, "embedding provider name", path, name);
    if (!json_is_object(p)) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", path, "`%s` must be a mapping", path);
        return;
    }
    static const char *const keys[] = {"kind", "provider", "base_url", "model", "api_key", NULL};
    only_keys(diags, p, path, keys);
    const char *kind = json_string_value(json_object_get(p, "kind"));
    if (!kind) kind = json_string_value(json_object_get(p, "provider"));
    if (!kind) kind = "openai-compatible";
    if (strcmp(kind, "openai-compatible") && strcmp(kind, "openai") && strcmp(kind, "gemini") && strcmp(kind, "mock")) {
        og_diag_add(diags, "error", "invalid_embedding_provider", path,
                    "unsupported embedding provider kind `%s` (openai-compatible, openai, gemini or mock)", kind);
    }
    const char *key = json_string_value(json_object_get(p, "api_key"));
    if (strcmp(kind, "mock")) {
        size_t kl = key ? strlen(key) : 0;
        if (!key)
            og_diag_add(diags, "error", "invalid_embedding_provider", path,
                        "provider `%s` needs `api_key: ${ENV_VAR}`", name);
        else if (!(kl > 3 && key[0] == '$' && key[1] == '{' && key[kl - 1] == '}'))
            og_diag_add(diags, "error", "invalid_embedding_provider", path,
                        "inline api_key rejected: write `api_key: ${ENV_VAR}` (secrets never live in cluster.yaml)");
    }
    char *text = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    char digest[65];
    og_cluster_digest(digest, text, strlen(text));
    free(text);
    char addr[300];
    snprintf(addr, sizeof addr, "provider.embedding.%s", name);
    resource(resources, addr, "embedding_provider", digest, NULL);
    /* the profile as written (the key only as its ${ENV} reference): what a server resolves */
    json_object_set(json_object_get(resources, addr), "embedding_profile", p);
    json_object_set(providers, name, p);
}

static void load_policy(json_t *diags, const char *dir, const char *name, json_t *p, json_t *graphs_decl,
                        json_t *resources, json_t *out_policies, json_t *owners)
{
    char path[512];
    snprintf(path, sizeof path, "policies.%s", name);
    check_id(diags, "policy name", path, name);
    if (!json_is_object(p)) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", path, "`%s` must be a mapping with `file` and `applies_to`", path);
        return;
    }
    static const char *const keys[] = {"file", "applies_to", NULL};
    only_keys(diags, p, path, keys);
    json_t *applies = json_object_get(p, "applies_to");
    char ap[600];
    snprintf(ap, sizeof ap, "%s.applies_to", path);
    json_t *bindings = json_array();
    int binds_cluster = 0;
    const char *graph_binding = NULL;
    if (!json_array_size(applies)) {
        og_diag_add(diags, "error", "policy_missing_applies_to", ap, "policy.applies_to must name `cluster` or at least one graph");
    } else {
        size_t i;
        json_t *t;
        json_array_foreach(applies, i, t) {
            char ip[640];
            snprintf(ip, sizeof ip, "%s[%zu]", ap, i);
            const char *v = json_string_value(t);
            if (!v) {
                og_diag_add(diags, "error", "invalid_cluster_yaml", ip, "`%s` must be a graph id or `cluster`", ip);
                continue;
            }
            if (!strcmp(v, "cluster")) {
                binds_cluster = 1;
                json_array_append_new(bindings, json_string("cluster"));
                continue;
            }
            const char *g = !strncmp(v, "graph.", 6) ? v + 6 : v;
            if (g == v && strchr(v, '.')) {
                og_diag_add(diags, "error", "wrong_kind_reference", ip, "policy applies_to expects graph refs or `cluster`, got `%s`", v);
                continue;
            }
            if (!graph_binding) graph_binding = g;
            if (!json_object_get(graphs_decl, g))
                og_diag_add(diags, "error", "dangling_graph_reference", ip,
                            "policy references graph `%s`, but no graph with that id is declared", g);
            json_array_append_new(bindings, json_sprintf("graph.%s", g));
        }
    }
    if (binds_cluster && graph_binding)
        og_diag_add(diags, "error", "policy_mixed_binding_kinds", ap,
                    "one policy bundle cannot bind both `cluster` and graph scopes; split server and graph rules into separate bundles");
    size_t i;
    json_t *b;
    json_array_foreach(bindings, i, b) {
        const char *bs = json_string_value(b);
        json_t *owner = json_object_get(owners, bs);
        if (owner && strcmp(json_string_value(owner), name))
            og_diag_add(diags, "error", "duplicate_policy_binding", ap,
                        "policy bundles `%s` and `%s` both bind `%s`; merge them or leave exactly one bundle for that scope",
                        json_string_value(owner), name, bs);
        else
            json_object_set_new(owners, bs, json_string(name));
    }
    json_t *file = json_object_get(p, "file");
    char fp[600];
    snprintf(fp, sizeof fp, "%s.file", path);
    json_t *pol = json_object();
    json_object_set_new(pol, "applies_to", bindings);
    json_object_set_new(out_policies, name, pol);
    if (!file) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", path, "missing field `file`");
        return;
    }
    if (!want_type(diags, file, JSON_STRING, fp, "a path to a policy bundle")) return;
    const char *rel = json_string_value(file);
    og_buf t = OG_BUF_INIT;
    char full[PATH_MAX + 256], why[256];
    if (read_rel(&t, dir, rel, full, sizeof full, why, sizeof why) != 0) {
        og_diag_add(diags, "error", "policy_file_missing", fp, "could not read policy file '%s': %s", rel, why);
        og_buf_free(&t);
        return;
    }
    char digest[65];
    og_cluster_digest(digest, t.data, t.len);
    json_object_set_new(pol, "file", json_string(rel));
    json_object_set_new(pol, "text", json_stringn((const char *)t.data, t.len));
    json_object_set_new(pol, "digest", json_string(digest));
    char addr[300];
    snprintf(addr, sizeof addr, "policy.%s", name);
    resource(resources, addr, "policy", digest, rel);
    json_object_set(json_object_get(resources, addr), "applies_to", bindings);
#ifdef OG_HAVE_POLICY
    if (binds_cluster != (graph_binding != NULL)) {
        og_policy *pl = NULL;
        if (og_policy_parse((const char *)t.data, t.len, rel, binds_cluster ? OG_POLICY_KIND_SERVER : OG_POLICY_KIND_GRAPH,
                            &pl) != OG_OK)
            og_diag_add(diags, "error", "policy_invalid", fp, "policy file '%s' is invalid: %s", rel, og_error_message());
        og_policy_free(pl);
    }
#else
    /* without the policy engine a bundle is an opaque file: it must still be a YAML mapping
     * declaring `version: 1` */
    json_t *pd = json_array(), *doc = NULL;
    if (og_yaml_load(&doc, pd, (const char *)t.data, t.len, rel) != OG_OK) {
        og_diag_add(diags, "error", "policy_invalid", fp, "policy file '%s' is invalid: %s", rel,
                    json_string_value(json_object_get(json_array_get(pd, 0), "message")));
    } else if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "version")) != 1) {
        og_diag_add(diags, "error", "policy_invalid", fp, "policy file '%s' is invalid: `version: 1` is required", rel);
    }
    json_decref(doc);
    json_decref(pd);
#endif
    og_buf_free(&t);
}

void og_cluster_load_desired(json_t **desired, json_t *diags, const char *dir_in)
{
    *desired = NULL;
    char dir[PATH_MAX];
    struct stat sb;
    if (!dir_in || stat(dir_in, &sb) != 0 || !S_ISDIR(sb.st_mode) || !realpath(dir_in, dir)) {
        og_diag_add(diags, "error", "config_dir_not_found", dir_in ? dir_in : "",
                    "`--config` must point at a directory containing cluster.yaml");
        return;
    }
    char file[PATH_MAX + 16];
    snprintf(file, sizeof file, "%s/cluster.yaml", dir);
    og_buf text = OG_BUF_INIT;
    if (og_buf_read_file(&text, file) != OG_OK) {
        og_diag_add(diags, "error", "cluster_config_read_error", "cluster.yaml", "could not read cluster.yaml: %s",
                    og_error_message());
        og_buf_free(&text);
        return;
    }
    json_t *cfg = NULL;
    og_status st = og_yaml_load(&cfg, diags, (const char *)text.data, text.len, "cluster.yaml");
    if (st != OG_OK) {
        og_buf_free(&text);
        return;
    }
    if (!json_is_object(cfg)) {
        og_diag_add(diags, "error", "invalid_cluster_yaml", "cluster.yaml", "cluster.yaml must be a mapping");
        json_decref(cfg);
        og_buf_free(&text);
        return;
    }
    static const char *const future[] = {"apply", "env_file", "pipelines", "embeddings", "ui", "aliases", "bindings", NULL};
    for (const char *const *f = future; *f; f++)
        if (json_object_get(cfg, *f))
            og_diag_add(diags, "error", "future_phase_field", *f, "`%s` is reserved for a later cluster-control phase", *f);
    json_t *graphs_decl = json_object_get(cfg, "graphs");
    if (json_is_object(graphs_decl)) {
        const char *g;
        json_t *gd;
        json_object_foreach(graphs_decl, g, gd) {
            if (json_is_object(gd) && json_object_get(gd, "streaming")) {
                char p[512];
                snprintf(p, sizeof p, "graphs.%s.streaming", g);
                og_diag_add(diags, "error", "removed_streaming_declaration", p,
                            "`streaming` was removed: graphs no longer carry a stream profile. Delete this key.");
            }
        }
    }
    if (og_diag_errors(diags)) {
        json_decref(cfg);
        og_buf_free(&text);
        return;
    }
    static const char *const top[] = {"version", "metadata", "storage", "state", "providers", "graphs", "policies",
                                      "apply", "env_file", "pipelines", "embeddings", "ui", "aliases", "bindings", NULL};
    only_keys(diags, cfg, "", top);

    json_t *d = json_object();
    json_t *resources = json_object(), *graphs = json_object(), *policies = json_object(), *providers = json_object();
    json_object_set_new(d, "config_dir", json_string(dir));

    json_t *version = json_object_get(cfg, "version");
    if (!version) og_diag_add(diags, "error", "invalid_cluster_yaml", "version", "missing field `version`");
    else if (!json_is_integer(version) || json_integer_value(version) != 1) {
        char *v = json_dumps(version, JSON_ENCODE_ANY);
        og_diag_add(diags, "error", "unsupported_cluster_config_version", "version",
                    "unsupported cluster config version %s; this build supports version 1", v ? v : "?");
        free(v);
    }
    json_t *meta = json_object_get(cfg, "metadata");
    if (meta && !json_is_null(meta)) {
        static const char *const mk[] = {"name", NULL};
        if (!json_is_object(meta)) og_diag_add(diags, "error", "invalid_cluster_yaml", "metadata", "`metadata` must be a mapping");
        else {
            only_keys(diags, meta, "metadata", mk);
            json_t *n = json_object_get(meta, "name");
            if (n) {
                const char *s = json_string_value(n);
                int blank = 1;
                for (const char *c = s ? s : ""; *c; c++) blank &= (*c == ' ' || *c == '\t');
                if (!json_is_string(n)) og_diag_add(diags, "error", "invalid_cluster_yaml", "metadata.name", "`metadata.name` must be a string");
                else if (blank) og_diag_add(diags, "error", "empty_metadata_name", "metadata.name", "metadata.name must not be empty when provided");
                else json_object_set(d, "name", n);
            }
        }
    }
    json_t *state = json_object_get(cfg, "state");
    int lock = 1;
    if (state && !json_is_null(state)) {
        static const char *const sk[] = {"backend", "lock", NULL};
        if (!json_is_object(state)) og_diag_add(diags, "error", "invalid_cluster_yaml", "state", "`state` must be a mapping");
        else {
            only_keys(diags, state, "state", sk);
            json_t *be = json_object_get(state, "backend");
            if (be && !(json_is_string(be) && !strcmp(json_string_value(be), "cluster")))
                og_diag_add(diags, "error", "unsupported_state_backend", "state.backend",
                            "only `cluster` (or no state.backend) is supported");
            json_t *lk = json_object_get(state, "lock");
            if (lk && !json_is_boolean(lk)) og_diag_add(diags, "error", "invalid_cluster_yaml", "state.lock", "`state.lock` must be true or false");
            else if (lk) lock = json_is_true(lk);
        }
    }
    json_object_set_new(d, "state_lock", json_boolean(lock));
    json_t *storage = json_object_get(cfg, "storage");
    if (storage) {
        const char *s = json_string_value(storage);
        const char *t = s;
        while (t && (*t == ' ' || *t == '\t')) t++;
        if (!t || !*t)
            og_diag_add(diags, "error", "invalid_storage_root", "storage", "storage must be a non-empty path or URI (for example s3://bucket/prefix) when provided");
        else if (!strncmp(t, "s3://", 5)) {
            const char *b = t + 5;
            while (*b == '/') b++;
            if (!*b) og_diag_add(diags, "error", "invalid_storage_root", "storage", "storage s3:// URI must name a bucket");
            else {
                char *norm = strdup(t);
                size_t nl = strlen(norm);
                while (nl > 5 && norm[nl - 1] == '/') norm[--nl] = 0;
                json_object_set_new(d, "storage_root", json_string(norm));
                free(norm);
            }
        } else if (strstr(t, "://") && strncmp(t, "file://", 7)) {
            og_diag_add(diags, "error", "invalid_storage_root", "storage",
                        "invalid storage root '%s': only local paths, file:// and s3:// are supported", t);
        } else {
            const char *p = !strncmp(t, "file://", 7) ? t + 7 : t;
            char root[PATH_MAX + 8];
            if (p[0] == '/') snprintf(root, sizeof root, "%s", p);
            else snprintf(root, sizeof root, "%s/%s", dir, p);
            json_object_set_new(d, "storage_root", json_string(root));
        }
    } else {
        json_object_set_new(d, "storage_root", json_string(dir));
    }

    json_t *prov = json_object_get(cfg, "providers");
    if (prov && !json_is_null(prov)) {
        if (!json_is_object(prov)) og_diag_add(diags, "error", "invalid_cluster_yaml", "providers", "`providers` must be a mapping");
        else {
            const char *ns;
            json_t *nv;
            json_object_foreach(prov, ns, nv) {
                char np[300];
                snprintf(np, sizeof np, "providers.%s", ns);
                if (strcmp(ns, "embedding")) {
                    og_diag_add(diags, "error", "unsupported_provider_namespace", np,
                                "provider namespace `%s` is not supported (only `embedding`)", ns);
                    continue;
                }
                if (!json_is_object(nv)) {
                    og_diag_add(diags, "error", "invalid_cluster_yaml", np, "`%s` must be a mapping", np);
                    continue;
                }
                const char *pn;
                json_t *pv;
                json_object_foreach(nv, pn, pv) load_provider(diags, pn, pv, resources, providers);
            }
        }
    }
    if (graphs_decl && !json_is_object(graphs_decl) && !json_is_null(graphs_decl))
        og_diag_add(diags, "error", "invalid_cluster_yaml", "graphs", "`graphs` must be a mapping of graph id -> declaration");
    if (json_is_object(graphs_decl)) {
        const char *g;
        json_t *gd;
        json_object_foreach(graphs_decl, g, gd) load_graph(diags, dir, g, gd, graphs, resources, providers);
    }
    json_t *pols = json_object_get(cfg, "policies"), *owners = json_object();
    if (pols && !json_is_object(pols) && !json_is_null(pols))
        og_diag_add(diags, "error", "invalid_cluster_yaml", "policies", "`policies` must be a mapping of name -> {file, applies_to}");
    if (json_is_object(pols)) {
        const char *pn;
        json_t *pv;
        json_object_foreach(pols, pn, pv)
            load_policy(diags, dir, pn, pv, json_is_object(graphs_decl) ? graphs_decl : NULL, resources, policies, owners);
    }
    json_decref(owners);

    /* the config digest: every resource address and digest, in order */
    char *rs = json_dumps(resources, JSON_COMPACT | JSON_SORT_KEYS);
    char cd[65];
    og_cluster_digest(cd, rs, strlen(rs));
    free(rs);
    json_object_set_new(d, "config_digest", json_string(cd));
    json_object_set_new(d, "resources", resources);
    json_object_set_new(d, "graphs", graphs);
    json_object_set_new(d, "policies", policies);
    json_object_set_new(d, "providers", providers);
    json_decref(cfg);
    og_buf_free(&text);
    *desired = d;
}
