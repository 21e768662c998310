/*
 * names.c — branch-name rules, the percent-encoding of branch names into one store path
 * segment, and the store keys of graph objects (STORAGE.md §3).
 *
 * The rules follow git's check-ref-format closely (so names stay safe in URLs, shells and
 * paths) plus our reserved prefixes; the encoding keeps [A-Za-z0-9._-] and writes every other
 * byte as %XX, so "agent/ingest-42" lives in "_graph/refs/agent%2Fingest-42/".
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graph/internal.h"
#include "util/error.h"
#include "util/ident.h"
#include "util/utf8.h"

static int keep_byte(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

static size_t encoded_len(const char *name)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) n += keep_byte(*p) ? 1 : 3;
    return n;
}

og_status og_branch_name_check(const char *name)
{
    if (!name || !*name) return og_err(OG_ERR_INVALID, "branch name is empty");
    size_t n = strlen(name);
    if (n > OG_BRANCH_MAX)
        return og_err(OG_ERR_INVALID, "branch name is %zu bytes long; the limit is %d", n, OG_BRANCH_MAX);
    if (!og_utf8_valid((const unsigned char *)name, n))
        return og_err(OG_ERR_INVALID, "branch name \"%.*s\" is not valid UTF-8", (int)n, name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f)
            return og_err(OG_ERR_INVALID, "branch name contains a control character (byte 0x%02x at %zu)", c, i);
        if (strchr(" ~^:?*[\\", c))
            return og_err(OG_ERR_INVALID, "branch name \"%s\" contains '%c', which is not allowed in branch names",
                          name, c);
    }
    if (strstr(name, ".."))
        return og_err(OG_ERR_INVALID, "branch name \"%s\" contains \"..\"", name);
    if (strstr(name, "@{"))
        return og_err(OG_ERR_INVALID, "branch name \"%s\" contains \"@{\"", name);
    if (name[0] == '/' || name[n - 1] == '/')
        return og_err(OG_ERR_INVALID, "branch name \"%s\" must not start or end with '/'", name);
    if (strstr(name, "//"))
        return og_err(OG_ERR_INVALID, "branch name \"%s\" contains an empty path component (\"//\")", name);
    if (name[0] == '-')
        return og_err(OG_ERR_INVALID, "branch name \"%s\" must not start with '-'", name);
    if (name[n - 1] == '.')
        return og_err(OG_ERR_INVALID, "branch name \"%s\" must not end with '.'", name);
    if (n >= 5 && strcmp(name + n - 5, ".lock") == 0)
        return og_err(OG_ERR_INVALID, "branch name \"%s\" must not end with \".lock\"", name);
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '.' && (i == 0 || name[i - 1] == '/'))
            return og_err(OG_ERR_INVALID, "branch name \"%s\" has a path component starting with '.'", name);
    }
    if (name[0] == '_')
        return og_err(OG_ERR_INVALID, "branch name \"%s\" is reserved: names starting with '_' belong to the system",
                      name);
    if (strncmp(name, "refs/", 5) == 0)
        return og_err(OG_ERR_INVALID, "branch name \"%s\" is reserved: names starting with \"refs/\" are not allowed",
                      name);
    if (strcmp(name, "HEAD") == 0) return og_err(OG_ERR_INVALID, "branch name \"HEAD\" is reserved");
    size_t e = encoded_len(name);
    if (e > OG_BRANCH_ENC_MAX)
        return og_err(OG_ERR_INVALID,
                      "branch name \"%s\" is too long once encoded (%zu bytes, limit %d; every byte outside "
                      "[A-Za-z0-9._-] takes 3)",
                      name, e, OG_BRANCH_ENC_MAX);
    return OG_OK;
}

/* Could `name` be read as a commit id or a unique id prefix (src/api/commitref.c)?  Ids are
 * ULIDs: 26 Crockford base32 characters whose first is a timestamp digit 0-7; a prefix of
 * 4 or more of them resolves as a commit. */
static int commit_id_like(const char *name)
{
    size_t n = strlen(name);
    if (n < 4 || n > OG_ULID_LEN || name[0] < '0' || name[0] > '7') return 0;
    for (size_t i = 0; i < n; i++) {
        int c = toupper((unsigned char)name[i]);
        if (!c || !strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c)) return 0;
    }
    return 1;
}

og_status og_branch_name_check_new(const char *name)
{
    OG_TRY(og_branch_name_check(name));
    OG_TRY(og_ident_check(name, "branch name"));
    if (commit_id_like(name))
        return og_err(OG_ERR_INVALID,
                      "branch name \"%s\" looks like a commit id (4 to 26 commit-id characters starting with a digit "
                      "0-7): a reference to it would be ambiguous; give it a name that does not", name);
    if (og_ident_confusable(name, "main"))
        return og_err(OG_ERR_INVALID, "branch name \"%s\" is confusable with \"main\" (it reads the same); choose a "
                      "distinct name", name);
    return OG_OK;
}

void og_branch_encode(const char *name, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (keep_byte(*p)) {
            *out++ = (char)*p;
        } else {
            *out++ = '%';
            *out++ = hex[*p >> 4];
            *out++ = hex[*p & 15];
        }
    }
    *out = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

og_status og_branch_decode(const char *enc, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = enc; *p; p++) {
        unsigned char c;
        if (*p == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (hi < 0 || lo < 0) return og_err(OG_ERR_INVALID, "malformed branch encoding \"%s\"", enc);
            c = (unsigned char)(hi * 16 + lo);
            if (keep_byte(c) || c == 0)
                return og_err(OG_ERR_INVALID, "non-canonical branch encoding \"%s\"", enc);
            p += 2;
        } else {
            c = (unsigned char)*p;
            if (!keep_byte(c)) return og_err(OG_ERR_INVALID, "malformed branch encoding \"%s\"", enc);
        }
        if (o + 1 >= cap) return og_err(OG_ERR_INVALID, "branch encoding \"%s\" is too long", enc);
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return OG_OK;
}

og_status og_ref_key(const char *branch, uint64_t seq, char *out, size_t cap)
{
    char enc[3 * OG_BRANCH_MAX + 1];
    if (strlen(branch) > OG_BRANCH_MAX) return og_err(OG_ERR_INVALID, "branch name too long");
    og_branch_encode(branch, enc);
    int n = snprintf(out, cap, "_graph/refs/%s/%020" PRIu64 ".json", enc, UINT64_MAX - seq);
    if (n < 0 || (size_t)n >= cap) return og_err(OG_ERR_INVALID, "branch log key for \"%s\" too long", branch);
    return OG_OK;
}

void og_commit_key(const char *commit_id, char out[64])
{
    snprintf(out, 64, "_graph/commits/%.26s.json", commit_id);
}

void og_schema_key(const char *schema_id, char out[128])
{
    snprintf(out, 128, "_graph/schemas/%.64s.json", schema_id);
}

char *og_strdup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int og_actor_valid(const char *actor)
{
    if (!actor || !*actor || strlen(actor) > OG_ACTOR_MAX) return 0;
    for (const unsigned char *p = (const unsigned char *)actor; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

int og_actor_via_valid(const char *via)
{
    static const char *const known[] = {"token", "local", "cluster", "unauthenticated"};
    for (size_t i = 0; via && i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(via, known[i])) return 1;
    return 0;
}

int og_table_dir_valid(const char *dir)
{
    if (!dir || !*dir || dir[strlen(dir) - 1] == '/' || strlen(dir) > OG_KEY_MAX - 16) return 0;
    char key[OG_KEY_MAX];
    snprintf(key, sizeof key, "tables/%s", dir);
    if (og_store_key_check(key) != OG_OK) {
        og_error_clear();
        return 0;
    }
    return 1;
}

int og_timestamp_valid(const char *s)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    for (size_t i = 0; i < sizeof pat - 1; i++) {
        if (pat[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pat[i]) return 0;
    }
    return s[sizeof pat - 1] == '\0';
}
