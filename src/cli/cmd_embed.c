/*
 * cmd_embed.c — `omnigraph embed`: fill, replace or remove @embed vectors, either on a graph
 * branch (one commit through og_db_embed) or offline from NDJSON to NDJSON (og_embed_file,
 * the reference's --input/--output/--spec pipeline, or a --seed manifest naming the same
 * three).  docs/embeddings.md.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *embed_help =
    "usage: omnigraph embed [--reembed-all | --clean] [--type T]... [--select Type:field=value]...\n"
    "                       [--branch B] [--if-commit C] [--json] [--progress] [--no-cache] --store ROOT\n"
    "       omnigraph embed --input F --output F --spec F [--reembed-all | --clean] [--type T]...\n"
    "                       [--select Type:field=value]... [--json] [--progress] [--no-cache]\n"
    "       omnigraph embed --seed MANIFEST.yaml [--output F] [--reembed-all | --clean] ...\n"
    "\n"
    "Computes the vectors of @embed(\"source\") properties from their source property with the\n"
    "embedding provider of the environment (OMNIGRAPH_EMBED_PROVIDER, OMNIGRAPH_EMBED_BASE_URL,\n"
    "OMNIGRAPH_EMBED_MODEL, the provider's API key; see docs/embeddings.md).\n"
    "On a graph it writes ONE commit (a merge of the changed rows); with --input it reads and\n"
    "writes NDJSON files and touches no graph.  A rerun after a failure embeds only what is\n"
    "still missing (finished vectors are kept in the embedding cache).\n"
    "  (default)           fill missing vectors of the selected records\n"
    "  --reembed-all       replace the vectors of the selected records\n"
    "  --clean             remove the vectors of the selected records\n"
    "  --type T            only node type T (repeatable)\n"
    "  --select T:f=v      only records of T whose property f equals v (f=v: of any type;\n"
    "                      repeatable: any of them); without --reembed-all or --clean the\n"
    "                      selected records are re-embedded (mode reembed_selected)\n"
    "  --branch B          the branch to embed (default main)\n"
    "  --if-commit C       only if the branch head is commit C (exit 4 otherwise)\n"
    "  --input F, --output F, --spec F   the offline file pipeline; the spec is\n"
    "                      {\"dimension\":N,\"types\":{\"T\":{\"target\":\"vec\",\"fields\":[\"src\"]}}}\n"
    "  --seed M            the file pipeline from a YAML manifest: sources.raw_seed (or\n"
    "                      seed.data) is the input, artifacts.embedded_seed the output (default\n"
    "                      ./build/seed.embedded.jsonl; --output overrides it), embeddings the\n"
    "                      spec; paths are relative to the manifest's directory\n"
    "  --json              print the summary as JSON\n"
    "  --progress          progress lines on stderr\n"
    "  --no-cache          neither read nor fill the embedding cache\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --as ACTOR          actor recorded on the commit\n"
    "  --quiet             no target echo, no summary line of a write\n";

static void print_summary(const char *text, int json)
{
    if (json) {
        fputs(text, stdout);
        putchar('\n');
        return;
    }
    json_t *j = json_loads(text, 0, NULL);
    const char *model = json_string_value(json_object_get(j, "model"));
    printf("%s: %lld records, %lld selected, %lld embedded, %lld cleaned (%s%s%s)",
           json_string_value(json_object_get(j, "mode")), (long long)json_integer_value(json_object_get(j, "records")),
           (long long)json_integer_value(json_object_get(j, "selected_records")),
           (long long)json_integer_value(json_object_get(j, "embedded_records")),
           (long long)json_integer_value(json_object_get(j, "cleaned_records")),
           json_string_value(json_object_get(j, "provider")), model && *model ? ", model " : "",
           model && *model ? model : "");
    json_t *c = json_object_get(j, "commit"), *o = json_object_get(j, "output");
    if (json_is_string(c))
        printf("; commit %s on %s", json_string_value(c), json_string_value(json_object_get(j, "branch")));
    else if (json_object_get(j, "branch"))
        printf("; nothing changed, no commit");
    else if (json_is_string(o))
        printf("; wrote %s", json_string_value(o));
    putchar('\n');
    json_decref(j);
}

/* A YAML node as JSON: mappings, sequences, and scalars (an unquoted integer is a number,
 * everything else a string).  NULL on an unsupported node (an alias). */
static json_t *yaml_json(yaml_document_t *d, yaml_node_t *n)
{
    if (!n) return NULL;
    if (n->type == YAML_SCALAR_NODE) {
        const char *v = (const char *)n->data.scalar.value;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && *v) {
            char *end;
            long long x = strtoll(v, &end, 10);
            if (!*end) return json_integer(x);
        }
        return json_stringn(v, n->data.scalar.length);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            json_t *v = yaml_json(d, yaml_document_get_node(d, *it));
            if (!v) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, v);
        }
        return a;
    }
    if (n->type == YAML_MAPPING_NODE) {
        json_t *o = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(d, p->key);
            json_t *v = yaml_json(d, yaml_document_get_node(d, p->value));
            if (!k || k->type != YAML_SCALAR_NODE || !v) {
                json_decref(v);
                json_decref(o);
                return NULL;
            }
            json_object_set_new(o, (const char *)k->data.scalar.value, v);
        }
        return o;
    }
    return NULL;
}

/* A manifest path: absolute as it is, else relative to the manifest's directory. */
static char *manifest_path(const char *manifest, const char *p)
{
    if (p[0] == '/') return strdup(p);
    const char *slash = strrchr(manifest, '/');
    size_t dn = slash ? (size_t)(slash - manifest) : 1;
    size_t n = dn + strlen(p) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%.*s/%s", (int)dn, slash ? manifest : ".", p);
    return out;
}

/* Reads a seed manifest: *input and *output (malloc'd) and the spec written to a temporary
 * JSON file *spec_tmp (malloc'd path; the caller unlinks it).  Prints the error and returns
 * 0 on failure. */
static int read_seed(const char *path, const char *output_flag, char **input, char **output, char **spec_tmp)
{
    *input = *output = *spec_tmp = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "omnigraph embed: cannot read seed manifest %s\n", path);
        return 0;
    }
    yaml_parser_t p;
    yaml_document_t d;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int ok = yaml_parser_load(&p, &d);
    json_t *m = ok ? yaml_json(&d, yaml_document_get_root_node(&d)) : NULL;
    if (!ok)
        fprintf(stderr, "omnigraph embed: %s:%zu:%zu: %s\n", path, p.problem_mark.line + 1, p.problem_mark.column + 1,
                p.problem ? p.problem : "invalid YAML");
    if (ok) yaml_document_delete(&d);
    yaml_parser_delete(&p);
    fclose(f);
    if (!ok) return 0;
    const char *raw = json_string_value(json_object_get(json_object_get(m, "sources"), "raw_seed"));
    if (!raw) raw = json_string_value(json_object_get(json_object_get(m, "seed"), "data"));
    const char *emb = json_string_value(json_object_get(json_object_get(m, "artifacts"), "embedded_seed"));
    json_t *spec = json_object_get(m, "embeddings");
    const char *missing = !json_is_object(m) ? "a mapping at the top" : !raw ? "sources.raw_seed" : !json_is_object(spec) ? "embeddings" : NULL;
    if (missing) {
        fprintf(stderr, "omnigraph embed: seed manifest %s is missing %s\n", path, missing);
        json_decref(m);
        return 0;
    }
    *input = manifest_path(path, raw);
    *output = output_flag ? strdup(output_flag) : manifest_path(path, emb ? emb : "./build/seed.embedded.jsonl");
    /* the output's directory is made when missing (the default is ./build/) */
    char *slash = *output ? strrchr(*output, '/') : NULL;
    if (slash && slash != *output) {
        *slash = 0;
        mkdir(*output, 0777);
        *slash = '/';
    }
    const char *tmpdir = getenv("TMPDIR");
    size_t n = strlen(tmpdir && *tmpdir ? tmpdir : "/tmp") + 32;
    *spec_tmp = malloc(n);
    int fd = -1;
    if (*spec_tmp) {
        snprintf(*spec_tmp, n, "%s/og-seed-spec-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        fd = mkstemp(*spec_tmp);
    }
    char *text = json_dumps(spec, JSON_COMPACT);
    ok = fd >= 0 && text && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0) close(fd);
    free(text);
    json_decref(m);
    if (!ok) {
        fprintf(stderr, "omnigraph embed: cannot write the seed's spec to a temporary file\n");
        if (fd >= 0) unlink(*spec_tmp);
        free(*spec_tmp);
        *spec_tmp = NULL;
    }
    return ok && *input && *output;
}

int og_cmd_embed(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(embed_help, stdout);
        return OG_EXIT_OK;
    }
    og_graph_args a = {.verb = "embed"};
    const char *input = NULL, *output = NULL, *spec = NULL, *seed = NULL, *if_commit = NULL;
    int reembed = 0, clean = 0, progress = 0, no_cache = 0;
    const char *types[64], *selects[64];
    size_t ntypes = 0, nselects = 0;
    og_flag flags[] = {
        {"--input", NULL, 1, 0, &input, NULL, NULL, NULL},
        {"--output", NULL, 1, 0, &output, NULL, NULL, NULL},
        {"--spec", NULL, 1, 0, &spec, NULL, NULL, NULL},
        {"--seed", NULL, 1, 0, &seed, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--reembed-all", NULL, 0, 0, NULL, &reembed, NULL, NULL},
        {"--clean", NULL, 0, 0, NULL, &clean, NULL, NULL},
        {"--progress", NULL, 0, 0, NULL, &progress, NULL, NULL},
        {"--no-cache", NULL, 0, 0, NULL, &no_cache, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--select", NULL, 1, 1, NULL, NULL, selects, &nselects},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, sizeof flags / sizeof flags[0], 1);
    if (rc) return rc;
    if (seed && (input || spec))
        return og_cli_usage("embed", "--seed names the input and the spec; give it without --input and --spec");
    if (reembed && clean) return og_cli_usage("embed", "--reembed-all and --clean exclude each other");
    og_db_embed_opts o = {reembed ? OG_DB_EMBED_REEMBED_ALL : clean ? OG_DB_EMBED_CLEAN : OG_DB_EMBED_FILL_MISSING,
                          types, ntypes, selects, nselects, a.branch, if_commit, progress, no_cache};
    char *summary = NULL;
    og_status st;
    if (seed) {
        if (a.store || a.npositional || a.branch || if_commit)
            return og_cli_usage("embed", "the file pipeline (--seed) takes no graph, --branch or --if-commit");
        char *in = NULL, *outp = NULL, *spec_tmp = NULL;
        if (!read_seed(seed, output, &in, &outp, &spec_tmp)) {
            free(in), free(outp), free(spec_tmp);
            return OG_EXIT_FAIL;
        }
        st = og_embed_file(&summary, in, outp, spec_tmp, &o);
        unlink(spec_tmp);
        free(in), free(outp), free(spec_tmp);
    } else if (input || output || spec) {
        if (!input || !output || !spec) return og_cli_usage("embed", "--input, --output and --spec go together");
        if (a.store || a.npositional || a.branch || if_commit)
            return og_cli_usage("embed", "the file pipeline (--input) takes no graph, --branch or --if-commit");
        st = og_embed_file(&summary, input, output, spec, &o);
    } else {
        const char *root = og_graph_args_root(&a);
        if (!root) return OG_EXIT_USAGE;
        og_graph_args_echo(&a, root);
        og_db *db = og_graph_args_open(&a, root);
        if (!db) return OG_EXIT_FAIL;
        og_receipt r;
        st = og_db_embed(&summary, &r, db, &o);
        og_db_close(db);
    }
    if (st) return og_cli_fail("embed", st);
    if (a.json || !a.quiet) print_summary(summary, a.json);
    og_free(summary);
    return OG_EXIT_OK;
}
