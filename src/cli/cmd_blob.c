/*
 * cmd_blob.c — `omnigraph blob get|stat ENTITY TYPE ID PROPERTY` (reference-surfaces.md §1.2):
 * one Blob cell of a node or edge, its bytes (whole or a byte range, to stdout or a file) or
 * its metadata (size and the strong ETag the server's GET /blob answers), over og_db_blob_get.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *blob_help =
    "usage: omnigraph blob get ENTITY TYPE ID PROPERTY [--branch B | --snapshot C]\n"
    "                          [--offset N] [--length M] [--out PATH] [--store ROOT | ROOT]\n"
    "       omnigraph blob stat ENTITY TYPE ID PROPERTY [--branch B | --snapshot C] [--json] [--store ROOT | ROOT]\n"
    "\n"
    "One Blob property of one node or edge.  ENTITY is node or edge; TYPE and PROPERTY are names\n"
    "of the graph's schema; ID is the entity's id (a node's @key value).  Reads default to the\n"
    "head of main.\n"
    "get: the raw bytes, to stdout or to --out PATH (written to a temporary file and renamed, so\n"
    "a failure leaves an existing PATH untouched).  A byte range: --offset N --length M is bytes\n"
    "N..N+M (clamped at the end), --offset N alone is N to the end, --length M alone the first\n"
    "M.  --length 0 is a usage error; an offset at or past the end of a non-empty value is\n"
    "unsatisfiable (exit 1); a full get of an empty value prints nothing and succeeds.\n"
    "stat: kind (managed), size and etag (the SHA-256 of the bytes, as the server's ETag), and\n"
    "the target read (branch or snapshot, and resolved_snapshot: the commit read).  A null cell\n"
    "is not_found.\n"
    "  --branch B, --snapshot C   the state to read (C: a commit reference)\n"
    "  --json                     stat as JSON: {selector, kind, size, etag, target}\n";

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) return 0;
    *out = v;
    return 1;
}

static void etag_of(const char *p, size_t n, char out[70])
{
    unsigned char d[32];
    unsigned int len = 32;
    EVP_Digest(p, n, d, &len, EVP_sha256(), NULL);
    out[0] = '"';
    for (int i = 0; i < 32; i++) snprintf(out + 1 + 2 * i, 3, "%02x", d[i]);
    out[65] = '"';
    out[66] = 0;
}

/* Writes n bytes to `path` through a temporary file renamed into place. */
static int write_file_atomically(const char *path, const char *p, size_t n)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) return 0;
    snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int ok = f != NULL;
    if (!f && fd >= 0) close(fd);
    if (ok && n) ok = fwrite(p, 1, n, f) == n;
    if (ok) ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0) ok = 0;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok && fd >= 0) unlink(tmp);
    free(tmp);
    return ok;
}

int og_cmd_blob(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(blob_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1];
    int is_get = !strcmp(sub, "get"), is_stat = !strcmp(sub, "stat");
    if (!is_get && !is_stat) return og_cli_usage("blob", "unknown subcommand '%s' (get, stat)", sub);
    const char *verb = is_get ? "blob get" : "blob stat";
    og_graph_args a = {.verb = verb};
    const char *offset_s = NULL, *length_s = NULL, *out = NULL;
    og_flag flags[] = {
        {"--offset", NULL, 1, 0, &offset_s, NULL, NULL, NULL},
        {"--length", NULL, 1, 0, &length_s, NULL, NULL, NULL},
        {"--out", NULL, 1, 0, &out, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, is_get ? flags : NULL, is_get ? 3 : 0, 5);
    if (rc) return rc;
    if (a.actor) return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (is_get && a.json) return og_cli_usage(verb, "get writes the raw bytes; --json is for blob stat");
    if (a.npositional < 4) return og_cli_usage(verb, "ENTITY TYPE ID PROPERTY are required");
    const char *entity = a.positional[0], *type = a.positional[1], *id = a.positional[2], *prop = a.positional[3];
    if (strcmp(entity, "node") && strcmp(entity, "edge"))
        return og_cli_usage(verb, "ENTITY must be node or edge (got '%s')", entity);
    uint64_t off = 0, len = 0;
    int has_off = offset_s != NULL, has_len = length_s != NULL;
    if (has_off && !parse_u64(offset_s, &off)) return og_cli_usage(verb, "--offset must be a non-negative integer");
    if (has_len && !parse_u64(length_s, &len)) return og_cli_usage(verb, "--length must be a non-negative integer");
    if (has_len && len == 0) return og_cli_usage(verb, "--length 0 selects no bytes");
    if (has_off && has_len && off > UINT64_MAX - len) return og_cli_usage(verb, "--offset + --length overflows");
    memmove(a.positional, a.positional + 4, (a.npositional - 4) * sizeof a.positional[0]);
    a.npositional -= 4;
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_read_opts at = {a.branch, a.at};
    char *data = NULL, commit[32] = "";
    size_t n = 0;
    og_status st = og_db_blob_get(&data, &n, commit, db, &at, !strcmp(entity, "edge"), type, id, prop);
    og_db_close(db);
    if (st) return og_cli_fail(verb, st);
    int exit_code = OG_EXIT_OK;
    if (is_stat) {
        char etag[70];
        etag_of(data, n, etag);
        if (a.json) {
            json_t *target = json_object();
            if (a.branch) json_object_set_new(target, "branch", json_string(a.branch));
            if (a.at) json_object_set_new(target, "snapshot", json_string(a.at));
            json_object_set_new(target, "resolved_snapshot", json_string(commit));
            json_t *o = json_pack("{s:{s:s,s:s,s:s,s:s},s:s,s:I,s:s,s:o}", "selector", "entity", entity, "type", type, "id",
                                  id, "property", prop, "kind", "managed", "size", (json_int_t)n, "etag", etag, "target",
                                  target);
            char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            json_decref(o);
            if (s) printf("%s\n", s);
            free(s);
        } else {
            printf("%s %s %s %s\nkind: managed\nsize: %zu\netag: %s\n", entity, type, id, prop, n, etag);
            if (a.branch) printf("branch: %s\n", a.branch);
            if (a.at) printf("snapshot: %s\n", a.at);
            printf("resolved_snapshot: %s\n", commit);
        }
    } else {
        /* the selected bytes: [a, b) of n, clamped at the end as HTTP ranges are */
        size_t from = 0, to = n;
        if (has_off || has_len) {
            if (n == 0 ? off > 0 : off >= n) {
                fprintf(stderr, "omnigraph %s: invalid: range not satisfiable: offset %llu is at or past the end of the "
                                "%zu-byte value\n", verb, (unsigned long long)off, n);
                og_free(data);
                return OG_EXIT_FAIL;
            }
            from = (size_t)off;
            to = has_len && len < n - from ? from + (size_t)len : n;
        }
        if (out) {
            if (!write_file_atomically(out, data + from, to - from)) {
                fprintf(stderr, "omnigraph %s: io: cannot write %s\n", verb, out);
                exit_code = OG_EXIT_FAIL;
            }
        } else if (to > from && fwrite(data + from, 1, to - from, stdout) != to - from) {
            fprintf(stderr, "omnigraph %s: io: cannot write to stdout\n", verb);
            exit_code = OG_EXIT_FAIL;
        }
    }
    og_free(data);
    return exit_code;
}
