/*
 * s3_sigv4.h — AWS Signature Version 4 for the S3 adapter (private to src/store/).
 *
 * Pure functions over strings, no I/O and no clock, so the published AWS examples can be
 * checked byte for byte (tests/store/test_s3_sigv4.c).  The adapter supplies the time stamp,
 * the already encoded path and query and the headers it will send; og_sigv4_sign() returns
 * the Authorization header value.  Secrets pass through here and are never copied into an
 * error message.
 */
#ifndef OG_STORE_S3_SIGV4_H
#define OG_STORE_S3_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Hex SHA-256 of "" (the payload hash of a request without a body). */
#define OG_SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct og_sigv4_header {
    const char *name;  /* any case; lower-cased for signing */
    const char *value; /* trimmed and inner runs of spaces collapsed for signing */
} og_sigv4_header;

typedef struct og_sigv4_request {
    const char *method;          /* "GET", "PUT", ... */
    const char *canonical_uri;   /* the URI-encoded path as sent ("/bucket/a%20b"), "/" at least */
    const char *canonical_query; /* og_sigv4_query() output, or "" */
    const og_sigv4_header *headers; /* every header to sign; must include host and x-amz-date */
    size_t nheaders;
    const char *payload_hash;    /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;        /* "YYYYMMDDTHHMMSSZ" (UTC) */
    const char *region;          /* "us-east-1" */
    const char *service;         /* "s3" */
} og_sigv4_request;

/* Lower-case hex SHA-256 of [data, data+len) into out[65]. */
void og_sigv4_sha256_hex(const void *data, size_t len, char out[65]);

/* Appends the SigV4 URI encoding of `s`: unreserved characters (A-Z a-z 0-9 - _ . ~) as is,
 * everything else as %XX with upper-case hex; '/' is kept when keep_slash is 1. */
og_status og_sigv4_uri_encode(og_buf *out, const char *s, int keep_slash);

/* One query parameter, not yet encoded.  A value of NULL or "" is written "name=". */
typedef struct og_sigv4_param {
    const char *name;
    const char *value;
} og_sigv4_param;

/* Builds the canonical query string: every name and value encoded, sorted by encoded name
 * (then value), joined with '&'.  The same string is used on the wire, so what is signed is
 * exactly what is sent. */
og_status og_sigv4_query(og_buf *out, const og_sigv4_param *params, size_t n);

/* Derives the signing key HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service),
 * "aws4_request") into key[32]; `date` is "YYYYMMDD". */
og_status og_sigv4_signing_key(const char *secret, const char *date, const char *region,
                               const char *service, uint8_t key[32]);

/* Signs `r`.  `authorization` receives the Authorization header value
 * ("AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…").  When not NULL,
 * canonical_out and sts_out receive the canonical request and the string to sign (for tests
 * and for debugging SignatureDoesNotMatch; neither contains the secret). */
og_status og_sigv4_sign(const og_sigv4_request *r, const char *access_key, const char *secret,
                        og_buf *authorization, og_buf *canonical_out, og_buf *sts_out);

#endif
