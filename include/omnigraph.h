/*
 * omnigraph.h — the one public C API of OmniGraph-C.
 *
 * Every surface (the `omnigraph` CLI, `omnigraph-server`, embedding programs) uses only what
 * is declared here.  Conventions, after libgit2:
 *   - every fallible function returns an og_status; 0 (OG_OK) is success;
 *   - output parameters come first; handles are opaque;
 *   - after a failure, og_error_message() returns a human message for the calling thread,
 *     naming the object that failed; it stays valid until the next failing call.
 *
 * The numeric values of og_status are stable: they are part of the ABI and of the CLI's
 * exit-code and the server's HTTP mapping tables.
 */
#ifndef OMNIGRAPH_H
#define OMNIGRAPH_H

#ifdef __cplusplus
extern "C" {
#endif

#define OG_VERSION_STRING "0.1.0"

typedef enum og_status {
    OG_OK = 0,
    OG_ERR_INVALID = 1,              /* bad argument or malformed input (usage error) */
    OG_ERR_NOT_FOUND = 2,            /* the named object does not exist */
    OG_ERR_ALREADY_EXISTS = 3,       /* create-exclusive lost: the object is already there */
    OG_ERR_CONFLICT = 4,             /* concurrent writers: retry budget exhausted, merge conflicts */
    OG_ERR_PRECONDITION_FAILED = 5,  /* an expected head / if-commit did not hold */
    OG_ERR_CORRUPT = 6,              /* stored bytes do not decode as what they claim to be */
    OG_ERR_UNSUPPORTED_VERSION = 7,  /* a format or storage version this build cannot read */
    OG_ERR_IO = 8,                   /* the operating system or the object store failed */
    OG_ERR_NOMEM = 9,                /* an allocation failed */
    OG_ERR_PARSE = 10,               /* .pg / .gq / NDJSON syntax error */
    OG_ERR_TYPE = 11,                /* type-check / catalog error */
    OG_ERR_CONSTRAINT = 12,          /* integrity violation (key, unique, enum, range, card, RI) */
    OG_ERR_UNSUPPORTED = 13,         /* a valid request this build refuses (e.g. a migration step) */
    OG_ERR_AUTH = 14,                /* missing or bad credentials */
    OG_ERR_THROTTLED = 15,           /* the store asked us to slow down and retries ran out */
    OG_ERR_LIMIT = 16,               /* a resource limit was exceeded before any effect */
    OG_ERR_INTERNAL = 17             /* a bug: an internal invariant did not hold */
} og_status;

/* Stable lower-case name of a status ("not_found", "conflict", ...). Never NULL. */
const char *og_status_name(og_status st);

/* The calling thread's message for its last failure ("" when none). */
const char *og_error_message(void);

#ifdef __cplusplus
}
#endif
#endif /* OMNIGRAPH_H */
