/*
 * api_embed.c — embeddings behind the public API: `og_db_embed` (fill a graph branch's @embed
 * vectors as one commit), `og_embed_file` (the offline NDJSON pipeline), and the query-time
 * embedder state of an og_db.
 *
 * Why here: the embed layer talks HTTP, so it may not be called from engine/ (invariant 11);
 * the API is the lowest layer that sees both the graph and the embed layer.  The graph path
 * writes through the normal door: export the target types at one pinned commit, transform the
 * records, and merge-load only the changed rows with that commit as the expected head, so a
 * concurrent writer makes the run fail with OG_ERR_PRECONDITION_FAILED instead of being
 * overwritten.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api/db.h"
#include "compiler/catalog.h"
#include "embed/embed.h"
#include "engine/engine.h"
#include "util/error.h"

/* Query-time embedding of one og_db: the provider is resolved from the environment on the
 * first text query (so graphs never queried with text need no configuration), then kept with
 * the graph's embedding cache; a mutex serialises use because a handle may serve threads. */
struct og_api_embed_state {
    pthread_mutex_t mu;
    int ready;
    og_status init_st;     /* the first resolution's failure, reported again */
    char init_msg[1024];
    og_embedder *e;
    og_embed_cache *cache;
    char uri[1024];
    int has_cfg;           /* og_db_set_embed_provider: this configuration, not the environment */
    og_embed_config cfg;
};

struct og_api_embed_state *og_api_embed_state_new(const char *uri)
{
    struct og_api_embed_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->mu, NULL);
    snprintf(s->uri, sizeof s->uri, "%s", uri ? uri : "");
    return s;
}

void og_api_embed_state_free(struct og_api_embed_state *s)
{
    if (!s) return;
    og_embedder_close(s->e);
    og_embed_cache_close(s->cache);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static og_status open_embedder(og_embedder **e, og_embed_cache **cache, const char *cache_id, int no_cache,
                               const og_embed_config *given);

og_status og_db_set_embed_provider(og_db *db, const og_db_embed_provider *p)
{
    if (!db || !db->emb) return og_err(OG_ERR_INVALID, "og_db_set_embed_provider: no graph handle");
    og_embed_config c;
    og_embed_provider kind = OG_EMBED_OPENAI_COMPATIBLE;
    if (p && p->kind && *p->kind && og_embed_provider_parse(p->kind, &kind) != OG_OK)
        return og_err(OG_ERR_INVALID, "unknown embedding provider kind '%s' (openai-compatible, openai, gemini or mock)",
                      p->kind);
    if (p) {
        og_embed_config_defaults(&c, kind);
        /* the limits (deadline, timeout, retries, batching) stay the environment's */
        og_embed_config env;
        if (og_embed_config_from_env(&env) == OG_OK) {
            c.deadline_ms = env.deadline_ms;
            c.timeout_ms = env.timeout_ms;
            c.retry_attempts = env.retry_attempts;
            c.backoff_ms = env.backoff_ms;
            c.batch_inputs = env.batch_inputs;
            c.batch_bytes = env.batch_bytes;
            c.concurrency = env.concurrency;
        }
        memset(env.api_key, 0, sizeof env.api_key);
        if (p->base_url && *p->base_url && kind != OG_EMBED_MOCK) {
            if (strncmp(p->base_url, "http://", 7) && strncmp(p->base_url, "https://", 8))
                return og_err(OG_ERR_INVALID, "embedding provider base_url must start with http:// or https://");
            if (strlen(p->base_url) >= sizeof c.base_url)
                return og_err(OG_ERR_INVALID, "embedding provider base_url is too long");
            snprintf(c.base_url, sizeof c.base_url, "%s", p->base_url);
            size_t n = strlen(c.base_url);
            while (n > 0 && c.base_url[n - 1] == '/') c.base_url[--n] = 0;
            c.base_url_overridden = 1;
        }
        if (p->model && *p->model) {
            if (strlen(p->model) >= sizeof c.model) return og_err(OG_ERR_INVALID, "embedding provider model is too long");
            snprintf(c.model, sizeof c.model, "%s", p->model);
        }
        if (p->api_key && *p->api_key) {
            if (strlen(p->api_key) >= sizeof c.api_key) return og_err(OG_ERR_INVALID, "the API key is too long");
            snprintf(c.api_key, sizeof c.api_key, "%s", p->api_key);
        }
    }
    struct og_api_embed_state *s = db->emb;
    pthread_mutex_lock(&s->mu);
    og_embedder_close(s->e);
    og_embed_cache_close(s->cache);
    s->e = NULL;
    s->cache = NULL;
    s->ready = 0;
    s->has_cfg = p != NULL;
    if (p) s->cfg = c;
    else memset(&s->cfg, 0, sizeof s->cfg);
    pthread_mutex_unlock(&s->mu);
    memset(c.api_key, 0, sizeof c.api_key);
    return OG_OK;
}

og_status og_api_embed_text(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out)
{
    struct og_api_embed_state *s = ud;
    if (!s) return og_err(OG_ERR_UNSUPPORTED, "nearest with a String query: this handle has no embedding state");
    pthread_mutex_lock(&s->mu);
    og_status st = OG_OK;
    if (!s->ready) {
        char id[1100];
        snprintf(id, sizeof id, "graph:%s", s->uri);
        s->init_st = open_embedder(&s->e, &s->cache, id, 0, s->has_cfg ? &s->cfg : NULL);
        if (s->init_st != OG_OK) snprintf(s->init_msg, sizeof s->init_msg, "%s", og_error_message());
        s->ready = 1;
    }
    if (s->init_st != OG_OK) st = og_err(s->init_st, "%s", s->init_msg);
    const og_embed_config *c = st == OG_OK ? og_embedder_config(s->e) : NULL;
    if (st == OG_OK && model && *model && strcmp(model, c->model))
        st = og_err(OG_ERR_TYPE,
                    "nearest with a String query: the property's @embed records model \"%s\" but the configured "
                    "embedder resolves to %s model \"%s\"; set OMNIGRAPH_EMBED_MODEL (and the provider) to the "
                    "recorded model",
                    model, og_embed_provider_name(c->provider), c->model);
    if (st == OG_OK) {
        st = og_embedder_embed(s->e, &text, &len, 1, dim, OG_EMBED_QUERY, out);
        if (st != OG_OK) og_err_wrap(st, "nearest with a String query");
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static og_embed_mode mode_of(og_db_embed_mode m)
{
    return m == OG_DB_EMBED_REEMBED_ALL ? OG_EMBED_MODE_REEMBED_ALL
           : m == OG_DB_EMBED_CLEAN     ? OG_EMBED_MODE_CLEAN
                                        : OG_EMBED_MODE_FILL_MISSING;
}

typedef struct progress_ctx {
    int on;
    double last;
    const og_embed_summary *sum; /* the run's counts so far (updated after each chunk) */
} progress_ctx;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_progress(progress_ctx *p, const og_embed_summary *s, uint64_t in_flight_done, size_t batch_done,
                           size_t batch_total)
{
    double now = wall();
    if (!p->on || now - p->last < 2.0) return;
    p->last = now;
    fprintf(stderr, "omnigraph embed: %llu records read, %llu selected, %llu embedded, %llu cleaned",
            (unsigned long long)s->records, (unsigned long long)s->selected,
            (unsigned long long)(s->embedded + in_flight_done), (unsigned long long)s->cleaned);
    if (batch_total) fprintf(stderr, " (%zu of %zu texts of the current chunk)", batch_done, batch_total);
    fputc('\n', stderr);
}

/* After each chunk of records (pipeline.c). */
static void on_progress(void *ctx, const og_embed_summary *s) { print_progress(ctx, s, 0, 0, 0); }

/* As the provider's answers land inside a chunk, so a slow provider still shows progress. */
static void on_embed_progress(void *ctx, size_t done, size_t total)
{
    progress_ctx *p = ctx;
    if (p->sum && done < total) print_progress(p, p->sum, done, done, total);
}

/* The embedder of a run: configuration `given` (NULL: from the environment), the cache named
 * by `cache_id`. */
static og_status open_embedder(og_embedder **e, og_embed_cache **cache, const char *cache_id, int no_cache,
                               const og_embed_config *given)
{
    *e = NULL;
    *cache = NULL;
    og_embed_config cfg;
    if (given) cfg = *given;
    else OG_TRY(og_embed_config_from_env(&cfg));
    OG_TRY(og_embedder_open(e, &cfg));
    memset(cfg.api_key, 0, sizeof cfg.api_key);
    if (no_cache || cfg.provider == OG_EMBED_MOCK) return OG_OK; /* mock vectors cost nothing to recompute */
    char path[1200];
    og_status st = og_embed_cache_path(path, sizeof path, cache_id);
    if (st == OG_OK) st = og_embed_cache_open(cache, path);
    if (st != OG_OK) {
        /* The cache saves requests; it never decides success. */
        fprintf(stderr, "omnigraph: warning: embedding cache unavailable (%s)\n", og_error_message());
        *cache = NULL;
        return OG_OK;
    }
    og_embedder_set_cache(*e, *cache);
    return OG_OK;
}

static og_status summary_json(char **out, const char *input, const char *output, const char *branch,
                              const og_embed_summary *s, og_embed_mode mode, const og_embed_target *t, size_t nt,
                              og_embedder *e, const char *commit)
{
    if (!out) return OG_OK;
    const og_embed_config *c = og_embedder_config(e);
    og_embed_stats st;
    og_embedder_stats(e, &st);
    json_t *dim = nt ? json_integer(t[0].dim) : json_null();
    for (size_t i = 1; i < nt; i++)
        if (t[i].dim != t[0].dim) {
            json_decref(dim);
            dim = json_null();
            break;
        }
    json_t *o = json_object();
    json_object_set_new(o, "input", json_string(input));
    json_object_set_new(o, "output", output ? json_string(output) : json_null());
    if (branch) json_object_set_new(o, "branch", json_string(branch));
    json_object_set_new(o, "records", json_integer((json_int_t)s->records));
    json_object_set_new(o, "selected_records", json_integer((json_int_t)s->selected));
    json_object_set_new(o, "embedded_records", json_integer((json_int_t)s->embedded));
    json_object_set_new(o, "cleaned_records", json_integer((json_int_t)s->cleaned));
    json_object_set_new(o, "mode", json_string(og_embed_mode_name(mode)));
    json_object_set_new(o, "dimension", dim);
    json_object_set_new(o, "model", json_string(mode == OG_EMBED_MODE_CLEAN ? "" : c->model)); /* as the reference */
    json_object_set_new(o, "provider", json_string(og_embed_provider_name(c->provider)));
    if (branch) json_object_set_new(o, "commit", commit && *commit ? json_string(commit) : json_null());
    json_object_set_new(o, "requests", json_integer((json_int_t)st.requests));
    json_object_set_new(o, "cache_hits", json_integer((json_int_t)st.cache_hits));
    *out = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* The @embed properties of the catalog's node types. */
static og_status catalog_targets(const og_catalog *cat, og_embed_target **out, size_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < cat->nnodes; i++)
        for (size_t k = 0; k < cat->nodes[i].nprops; k++) cnt += cat->nodes[i].props[k].embed_source != NULL;
    *out = NULL;
    *n = 0;
    if (!cnt) return og_err(OG_ERR_INVALID, "the schema declares no @embed property: nothing to embed");
    og_embed_target *t = calloc(cnt, sizeof *t);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t j = 0;
    for (size_t i = 0; i < cat->nnodes; i++)
        for (size_t k = 0; k < cat->nodes[i].nprops; k++) {
            const og_cat_prop *p = &cat->nodes[i].props[k];
            if (!p->embed_source) continue;
            snprintf(t[j].type, sizeof t[j].type, "%s", cat->nodes[i].name);
            snprintf(t[j].target, sizeof t[j].target, "%s", p->name);
            snprintf(t[j].source, sizeof t[j].source, "%s", p->embed_source);
            snprintf(t[j].model, sizeof t[j].model, "%s", p->embed_model ? p->embed_model : "");
            t[j].dim = p->type.dim;
            j++;
        }
    *out = t;
    *n = j;
    return OG_OK;
}

og_status og_db_embed(char **summary, og_receipt *out, og_db *db, const og_db_embed_opts *o)
{
    if (summary) *summary = NULL;
    memset(out, 0, sizeof *out);
    og_db_embed_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!o) o = &dflt;
    const char *branch = o->branch ? o->branch : "main";
    og_read *r;
    OG_TRY(og_read_begin(&r, db->e, branch, NULL));
    char commit[64];
    snprintf(commit, sizeof commit, "%s", og_snapshot_commit_id(og_read_snapshot(r)));
    og_embed_target *t;
    size_t nt;
    og_status st = catalog_targets(og_read_catalog(r), &t, &nt);
    og_read_end(r);
    if (st != OG_OK) return st;
    og_embed_filter f = {o->types, o->ntypes, o->selects, o->nselects};
    og_embedder *e = NULL;
    og_embed_cache *cache = NULL;
    FILE *in = NULL, *outf = NULL;
    char tmp[1100];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/omnigraph-embed-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = -1, made = 0, hold = -1;
    og_embed_summary s;
    memset(&s, 0, sizeof s);
    if (o->expected_head && strcmp(o->expected_head, commit))
        st = og_err(OG_ERR_PRECONDITION_FAILED, "branch %s is at commit %s, not %s (--if-commit)", branch, commit,
                    o->expected_head);
    if (st == OG_OK) st = og_embed_filter_check(&f, t, nt);
    char cache_id[1100];
    snprintf(cache_id, sizeof cache_id, "graph:%s", db->uri);
    if (st == OG_OK) /* the handle's provider (og_db_set_embed_provider) when it has one */
        st = open_embedder(&e, &cache, cache_id, o->no_cache, db->emb && db->emb->has_cfg ? &db->emb->cfg : NULL);
    for (size_t i = 0; st == OG_OK && o->mode != OG_DB_EMBED_CLEAN && i < nt; i++)
        st = og_embed_check_model(&t[i], og_embedder_config(e));
    /* Export the target types at the pinned commit. */
    const char **types = st == OG_OK ? calloc(nt, sizeof *types) : NULL;
    size_t ntypes = 0;
    if (st == OG_OK && !types) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == OG_OK && i < nt; i++) {
        int dup = 0;
        for (size_t k = 0; k < ntypes; k++) dup |= !strcmp(types[k], t[i].type);
        if (!dup) types[ntypes++] = t[i].type;
    }
    if (st == OG_OK && !(in = tmpfile())) st = og_err_errno(errno, "embed: cannot create a temporary file");
    og_read_opts at = {NULL, commit};
    if (st == OG_OK) st = og_db_export(db, in, &at, types, ntypes);
    free(types);
    if (st == OG_OK && fseek(in, 0, SEEK_SET)) st = og_err_errno(errno, "embed: cannot rewind the export");
    if (st == OG_OK) {
        fd = mkstemp(tmp);
        made = fd >= 0;
        /* Where /proc is there, the file loses its name at once and is loaded through a second
         * descriptor: a run killed part-way (Ctrl-C, SIGKILL) leaves nothing behind. */
        if (fd >= 0 && (hold = dup(fd)) >= 0) {
            char pp[64];
            snprintf(pp, sizeof pp, "/proc/self/fd/%d", hold);
            if (access(pp, R_OK) == 0 && unlink(tmp) == 0) {
                snprintf(tmp, sizeof tmp, "%s", pp);
                made = 0;
            } else {
                close(hold);
                hold = -1;
            }
        }
        if (fd < 0 || !(outf = fdopen(fd, "w"))) st = og_err_errno(errno, "embed: cannot create a temporary file");
        else fd = -1;
    }
    progress_ctx pc = {o->progress, wall(), &s};
    if (st == OG_OK && o->progress) og_embedder_set_progress(e, on_embed_progress, &pc);
    if (st == OG_OK) {
        char name[1100];
        snprintf(name, sizeof name, "%s@%s", db->uri, branch);
        st = og_embed_run(e, t, nt, mode_of(o->mode), &f, in, name, outf, 1, &s, on_progress, &pc);
    }
    if (outf && fclose(outf) && st == OG_OK) st = og_err_errno(errno, "embed: cannot write %s", tmp);
    outf = NULL;
    if (st == OG_OK && (s.embedded || s.cleaned)) {
        og_load_opts lo = {.mode = OG_LOAD_MERGE, .branch = branch, .expected_head = commit, .progress = o->progress};
        st = og_db_load(out, db, tmp, &lo);
        if (st != OG_OK) og_err_wrap(st, "embed: publishing the vectors");
    } else if (st == OG_OK) {
        snprintf(out->branch, sizeof out->branch, "%s", branch);
    }
    if (o->progress && st == OG_OK) {
        pc.last = 0;
        on_progress(&pc, &s);
    }
    if (st == OG_OK)
        st = summary_json(summary, db->uri, NULL, branch, &s, og_embed_mode_effective(mode_of(o->mode), &f), t, nt, e,
                          out->published ? out->commit : NULL);
    if (fd >= 0) close(fd);
    if (hold >= 0) close(hold);
    if (made) unlink(tmp);
    if (in) fclose(in);
    og_embedder_close(e);
    og_embed_cache_close(cache);
    free(t);
    return st;
}

og_status og_embed_file(char **summary, const char *input, const char *output, const char *spec_path,
                        const og_db_embed_opts *o)
{
    if (summary) *summary = NULL;
    if (!input || !output || !spec_path) return og_err(OG_ERR_INVALID, "embed: input, output and spec are required");
    og_db_embed_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!o) o = &dflt;
    FILE *sf = fopen(spec_path, "rb");
    if (!sf) return og_err_errno(errno, "embed: cannot read %s", spec_path);
    char *spec = NULL;
    size_t sl = 0, cap = 0;
    og_status st = OG_OK;
    for (;;) {
        if (sl + 4096 > cap) {
            char *ns = realloc(spec, cap = cap * 2 + 8192);
            if (!ns) {
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            spec = ns;
        }
        size_t got = fread(spec + sl, 1, cap - sl, sf);
        sl += got;
        if (!got) break;
        if (sl > 16u * 1024 * 1024) {
            st = og_err(OG_ERR_LIMIT, "embed: %s is larger than 16 MiB", spec_path);
            break;
        }
    }
    fclose(sf);
    og_embed_target *t = NULL;
    size_t nt = 0;
    if (st == OG_OK) st = og_embed_spec_parse(&t, &nt, spec, sl);
    if (st != OG_OK) og_err_wrap(st, "%s", spec_path);
    free(spec);
    if (st != OG_OK) return st;
    og_embed_filter f = {o->types, o->ntypes, o->selects, o->nselects};
    st = og_embed_filter_check(&f, t, nt);
    og_embedder *e = NULL;
    og_embed_cache *cache = NULL;
    char abs_out[4096];
    if (output[0] == '/' || !getcwd(abs_out, sizeof abs_out - 1200)) snprintf(abs_out, sizeof abs_out, "file:%s", output);
    else {
        size_t l = strlen(abs_out);
        snprintf(abs_out + l, sizeof abs_out - l, "/%s", output);
    }
    if (st == OG_OK) st = open_embedder(&e, &cache, abs_out, o->no_cache, NULL);
    FILE *in = NULL, *outf = NULL;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", output, (long)getpid());
    if (st == OG_OK && !(in = fopen(input, "rb"))) st = og_err_errno(errno, "embed: cannot read %s", input);
    if (st == OG_OK && !(outf = fopen(tmp, "wb"))) st = og_err_errno(errno, "embed: cannot write %s", tmp);
    og_embed_summary s;
    memset(&s, 0, sizeof s);
    progress_ctx pc = {o->progress, wall(), &s};
    if (st == OG_OK && o->progress) og_embedder_set_progress(e, on_embed_progress, &pc);
    if (st == OG_OK) st = og_embed_run(e, t, nt, mode_of(o->mode), &f, in, input, outf, 0, &s, on_progress, &pc);
    if (outf) {
        if (fflush(outf) || fsync(fileno(outf))) {
            if (st == OG_OK) st = og_err_errno(errno, "embed: cannot write %s", tmp);
        }
        if (fclose(outf) && st == OG_OK) st = og_err_errno(errno, "embed: cannot write %s", tmp);
        if (st == OG_OK && rename(tmp, output)) st = og_err_errno(errno, "embed: cannot rename %s to %s", tmp, output);
        if (st != OG_OK) unlink(tmp);
    }
    if (in) fclose(in);
    if (st == OG_OK)
        st = summary_json(summary, input, output, NULL, &s, og_embed_mode_effective(mode_of(o->mode), &f), t, nt, e, NULL);
    og_embedder_close(e);
    og_embed_cache_close(cache);
    free(t);
    return st;
}
