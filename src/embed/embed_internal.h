/*
 * embed_internal.h — what the files of src/embed/ share and nothing else sees: the typed
 * failure helper and the provider wire functions (wire.c) the client (client.c) drives.
 */
#ifndef OG_EMBED_INTERNAL_H
#define OG_EMBED_INTERNAL_H

#include "embed/embed.h"
#include "util/buf.h"

/* Sets the thread's embedding error kind and message ("embedding <kind> error: ...") and
 * returns the og_status the kind maps to. */
og_status og_embed_fail(og_embed_errkind k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
og_status og_embed_kind_status(og_embed_errkind k);
void og_embed_set_kind(og_embed_errkind k);

/* Builds one request for texts[0..n): the URL and the JSON body.  OG_ERR_INVALID (kind
 * CONFIG / REQUEST) for text that is not UTF-8. */
og_status og_embed_wire_request(const og_embed_config *c, const char *const *texts, const size_t *lens, size_t n,
                                uint32_t dim, og_embed_role role, og_buf *url, og_buf *body);
/* The authentication header line ("Authorization: Bearer …" / "x-goog-api-key: …") into out,
 * or "" when the request goes without a key.  Kind AUTH when the provider needs a key and
 * none is configured. */
og_status og_embed_wire_auth_header(const og_embed_config *c, char *out, size_t cap);
/* Parses a 2xx body into n vectors of dim floats (validated and normalised). */
og_status og_embed_wire_parse(const og_embed_config *c, const char *body, size_t len, size_t n, uint32_t dim,
                              float *out);
/* A short, printable excerpt of an error body (the provider's error message when it has
 * one), with every occurrence of the key replaced by "[redacted]". */
void og_embed_wire_error_excerpt(const og_embed_config *c, const char *body, size_t len, char *out, size_t cap);
/* Replaces occurrences of the configured key in s (in place) by "[redacted]" (as far as fits). */
void og_embed_redact(const og_embed_config *c, char *s, size_t cap);

#endif
