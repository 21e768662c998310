/*
 * auth.h — bearer tokens of omnigraph-server (reference-surfaces.md §3).  Tokens are read
 * once at startup, hashed with SHA-256 and forgotten: only (digest, actor) pairs are kept
 * (INVARIANTS.md 12).  A presented token is hashed and compared in constant time against
 * EVERY stored digest, so the time taken says nothing about which digest came closest.
 */
#ifndef OG_SERVER_AUTH_H
#define OG_SERVER_AUTH_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_tokenset og_tokenset;

og_status og_tokenset_new(og_tokenset **out);
void og_tokenset_free(og_tokenset *t);

/* Adds one (actor, token) pair; both are trimmed of surrounding white space.  OG_ERR_INVALID
 * on a blank actor or token, a duplicate actor or a duplicate token value.  The plaintext is
 * not retained. */
og_status og_tokenset_add(og_tokenset *t, const char *actor, const char *token);

/* Adds every pair of a JSON object {"actor": "token", ...} (`what` names the source in
 * errors, never the values). */
og_status og_tokenset_add_json(og_tokenset *t, const char *json, const char *what);

/* The server's token sources: OMNIGRAPH_SERVER_BEARER_TOKENS_FILE (a JSON object file) or
 * else OMNIGRAPH_SERVER_BEARER_TOKENS_JSON, combined with OMNIGRAPH_SERVER_BEARER_TOKEN
 * (actor "default").  OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET is refused: this build has
 * no Secrets Manager client.  The variables holding tokens are overwritten in place and
 * removed once read (also from what /proc/PID/environ shows): only digests remain. */
og_status og_tokenset_from_env(og_tokenset *t);

size_t og_tokenset_count(const og_tokenset *t);

/* The actor of the token `presented` (len bytes), or NULL when none matches. */
const char *og_tokenset_match(const og_tokenset *t, const char *presented, size_t len);

/* The runtime states of the startup classifier (§3). */
typedef enum og_auth_mode {
    OG_AUTH_OPEN = 1,         /* no tokens, no policy, --unauthenticated: every per-graph action */
    OG_AUTH_DEFAULT_DENY = 2, /* tokens, no policy: authenticated `read` only */
    OG_AUTH_POLICY = 3        /* tokens and a policy: the policy decides */
} og_auth_mode;

/* Classifies tokens x policy x --unauthenticated; OG_ERR_INVALID (with the remedy in the
 * message) for the states that refuse to start. */
og_status og_auth_classify(size_t ntokens, int has_policy, int unauthenticated, og_auth_mode *out);
const char *og_auth_mode_name(og_auth_mode m);

#endif
