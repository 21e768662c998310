/*
 * error.h — typed errors with a per-thread last-error message.
 *
 * A failing function sets the message once, where the failure is first understood, and returns
 * the status: `return og_err(OG_ERR_NOT_FOUND, "commit %s not found", id);`.  Callers that add
 * context use og_err_wrap(), which prefixes the existing message.  og_error_message() (public,
 * omnigraph.h) reads it back.
 */
#ifndef OG_UTIL_ERROR_H
#define OG_UTIL_ERROR_H

#include "omnigraph.h"

#if defined(__GNUC__)
#define OG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OG_PRINTF(a, b)
#endif

/* Sets the thread's message and returns `code` (so it can be used in a return statement). */
og_status og_err(og_status code, const char *fmt, ...) OG_PRINTF(2, 3);

/* Prefixes the current message with "<context>: " and returns `code`. */
og_status og_err_wrap(og_status code, const char *fmt, ...) OG_PRINTF(2, 3);

/* Sets an OG_ERR_IO message that ends with strerror(errnum). */
og_status og_err_errno(int errnum, const char *fmt, ...) OG_PRINTF(2, 3);

void og_error_clear(void);

/* Propagate a non-OK status. */
#define OG_TRY(expr)                         \
    do {                                     \
        og_status og_try_st_ = (expr);       \
        if (og_try_st_ != OG_OK) return og_try_st_; \
    } while (0)

#endif
