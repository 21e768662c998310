/*
 * curl_dl.h — libcurl, loaded on first use instead of linked.
 *
 * Why: nothing a local graph does needs HTTP, yet a program linked to libcurl pays the dynamic
 * loader for libcurl's ~30 dependent libraries at every start (~5 ms of CPU here, most of a
 * cold `omnigraph query`; docs/benchmarks.md "Cold start").  So the S3 store and the embedding
 * client call og_curl_load() where they used to call curl_global_init(), and only then is
 * libcurl mapped (dlopen of OG_CURL_SONAME, once per process, never unloaded).
 *
 * Contract for callers: include this header instead of <curl/curl.h>, call og_curl_load() and
 * use the curl_* functions listed in og_curl_fns as usual once it returned OG_OK (the names are
 * macros onto the table of the loaded library's entry points; calling one before a successful
 * og_curl_load() is a NULL call).  A function not in the table is not available: add it here and
 * in curl_dl.c.  This module is the only code that knows libcurl is loaded late.
 */
#ifndef OG_UTIL_CURL_DL_H
#define OG_UTIL_CURL_DL_H

#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK 1 /* gcc's type-checking wrappers are macros of the same names */
#endif
#include <curl/curl.h>
#include <time.h>

#include "omnigraph.h"

/* The library og_curl_load() opens (the soname of libcurl 7.16 and later, Debian's libcurl4). */
#define OG_CURL_SONAME "libcurl.so.4"

typedef struct og_curl_fns {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *h);
    void (*easy_reset)(CURL *h);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    time_t (*getdate)(const char *s, const time_t *unused);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[], unsigned n, int timeout_ms, int *numfds);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    CURLMcode (*multi_cleanup)(CURLM *m);
    char *(*version)(void);
} og_curl_fns;

/* The loaded library's entry points; all NULL until og_curl_load() succeeded. */
extern og_curl_fns og_curl;

/* Loads OG_CURL_SONAME and runs curl_global_init(CURL_GLOBAL_DEFAULT), once per process
 * (thread-safe; later calls return the first outcome at once).  OG_OK, or OG_ERR_UNSUPPORTED
 * naming the library and why it could not be used (absent, a symbol missing, init failed):
 * HTTP (S3 stores, embedding providers) is then unavailable, everything local still works. */
og_status og_curl_load(void);

/* Test hook: resolves the table from `soname` into *out without touching og_curl or running
 * curl_global_init.  Same errors as og_curl_load(). */
og_status og_curl_resolve(const char *soname, og_curl_fns *out);

#ifndef OG_CURL_DL_IMPL
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init og_curl.global_init
#define curl_easy_init og_curl.easy_init
#define curl_easy_setopt og_curl.easy_setopt
#define curl_easy_getinfo og_curl.easy_getinfo
#define curl_easy_perform og_curl.easy_perform
#define curl_easy_reset og_curl.easy_reset
#define curl_easy_cleanup og_curl.easy_cleanup
#define curl_easy_strerror og_curl.easy_strerror
#define curl_slist_append og_curl.slist_append
#define curl_slist_free_all og_curl.slist_free_all
#define curl_getdate og_curl.getdate
#define curl_multi_init og_curl.multi_init
#define curl_multi_add_handle og_curl.multi_add_handle
#define curl_multi_remove_handle og_curl.multi_remove_handle
#define curl_multi_perform og_curl.multi_perform
#define curl_multi_poll og_curl.multi_poll
#define curl_multi_info_read og_curl.multi_info_read
#define curl_multi_cleanup og_curl.multi_cleanup
#define curl_version og_curl.version
#endif

#endif
