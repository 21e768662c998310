/*
 * error.c — the per-thread last-error message behind og_err() and og_error_message().
 *
 * Messages are bounded (1 KiB); a longer one is truncated, never an allocation failure.
 */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OG_ERRMSG_MAX 1024

static _Thread_local char errmsg[OG_ERRMSG_MAX];

static const char *const status_names[] = {
    [OG_OK] = "ok",
    [OG_ERR_INVALID] = "invalid",
    [OG_ERR_NOT_FOUND] = "not_found",
    [OG_ERR_ALREADY_EXISTS] = "already_exists",
    [OG_ERR_CONFLICT] = "conflict",
    [OG_ERR_PRECONDITION_FAILED] = "precondition_failed",
    [OG_ERR_CORRUPT] = "corrupt",
    [OG_ERR_UNSUPPORTED_VERSION] = "unsupported_version",
    [OG_ERR_IO] = "io",
    [OG_ERR_NOMEM] = "out_of_memory",
    [OG_ERR_PARSE] = "parse",
    [OG_ERR_TYPE] = "type",
    [OG_ERR_CONSTRAINT] = "constraint",
    [OG_ERR_UNSUPPORTED] = "unsupported",
    [OG_ERR_AUTH] = "auth",
    [OG_ERR_THROTTLED] = "throttled",
    [OG_ERR_LIMIT] = "limit",
    [OG_ERR_INTERNAL] = "internal",
    [OG_ERR_UNAVAILABLE] = "unavailable",
};

const char *og_status_name(og_status st)
{
    if ((unsigned)st < sizeof status_names / sizeof status_names[0] && status_names[st])
        return status_names[st];
    return "unknown";
}

const char *og_error_message(void) { return errmsg; }

void og_error_clear(void) { errmsg[0] = '\0'; }

og_status og_err(og_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    return code;
}

og_status og_err_wrap(og_status code, const char *fmt, ...)
{
    char prefix[OG_ERRMSG_MAX], old[OG_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errmsg, sizeof old);
    if (old[0])
        snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, old);
    else
        snprintf(errmsg, sizeof errmsg, "%s", prefix);
    return code;
}

og_status og_err_errno(int errnum, const char *fmt, ...)
{
    char what[OG_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(errmsg, sizeof errmsg, "%s: %s", what, strerror(errnum));
    return errnum == ENOMEM ? OG_ERR_NOMEM : OG_ERR_IO;
}
