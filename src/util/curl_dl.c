/*
 * curl_dl.c — loads libcurl on first use (util/curl_dl.h says why and what callers may rely on).
 *
 * One dlopen per process, RTLD_NOW so a library missing an entry point we use fails here, with
 * its name, instead of at the first request.  The handle is never closed: libcurl keeps global
 * state (TLS back end, resolver) for the life of the process, as it did when it was linked.
 */
#define OG_CURL_DL_IMPL 1
#include "util/curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

og_curl_fns og_curl;

static const struct {
    const char *name;
    size_t off;
} syms[] = {
    {"curl_global_init", offsetof(og_curl_fns, global_init)},
    {"curl_easy_init", offsetof(og_curl_fns, easy_init)},
    {"curl_easy_setopt", offsetof(og_curl_fns, easy_setopt)},
    {"curl_easy_getinfo", offsetof(og_curl_fns, easy_getinfo)},
    {"curl_easy_perform", offsetof(og_curl_fns, easy_perform)},
    {"curl_easy_reset", offsetof(og_curl_fns, easy_reset)},
    {"curl_easy_cleanup", offsetof(og_curl_fns, easy_cleanup)},
    {"curl_easy_strerror", offsetof(og_curl_fns, easy_strerror)},
    {"curl_slist_append", offsetof(og_curl_fns, slist_append)},
    {"curl_slist_free_all", offsetof(og_curl_fns, slist_free_all)},
    {"curl_getdate", offsetof(og_curl_fns, getdate)},
    {"curl_multi_init", offsetof(og_curl_fns, multi_init)},
    {"curl_multi_add_handle", offsetof(og_curl_fns, multi_add_handle)},
    {"curl_multi_remove_handle", offsetof(og_curl_fns, multi_remove_handle)},
    {"curl_multi_perform", offsetof(og_curl_fns, multi_perform)},
    {"curl_multi_poll", offsetof(og_curl_fns, multi_poll)},
    {"curl_multi_info_read", offsetof(og_curl_fns, multi_info_read)},
    {"curl_multi_cleanup", offsetof(og_curl_fns, multi_cleanup)},
    {"curl_version", offsetof(og_curl_fns, version)},
};

#define NEEDS "S3 stores and embedding providers need libcurl (Debian: libcurl4)"

og_status og_curl_resolve(const char *soname, og_curl_fns *out)
{
    memset(out, 0, sizeof *out);
    dlerror();
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        return og_err(OG_ERR_UNSUPPORTED, "%s could not be loaded (%s); " NEEDS, soname, why ? why : "dlopen failed");
    }
    og_curl_fns t = {0};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p) {
            dlclose(lib);
            return og_err(OG_ERR_UNSUPPORTED, "%s has no %s (libcurl 7.85 or later is needed); " NEEDS,
                          soname, syms[i].name);
        }
        /* POSIX guarantees a data pointer from dlsym converts to the function pointer it names. */
        memcpy((char *)&t + syms[i].off, &p, sizeof p);
    }
    *out = t;
    return OG_OK;
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static og_status load_rc = OG_ERR_INTERNAL;
static char load_msg[512];

static void load(void)
{
    og_curl_fns t = {0};
    load_rc = og_curl_resolve(OG_CURL_SONAME, &t);
    if (load_rc == OG_OK) {
        CURLcode cc = t.global_init(CURL_GLOBAL_DEFAULT);
        if (cc != CURLE_OK)
            load_rc = og_err(OG_ERR_UNSUPPORTED, "%s: curl_global_init failed (%s); " NEEDS, OG_CURL_SONAME,
                             t.easy_strerror(cc));
        else
            og_curl = t;
    }
    if (load_rc != OG_OK) snprintf(load_msg, sizeof load_msg, "%s", og_error_message());
}

og_status og_curl_load(void)
{
    pthread_once(&load_once, load);
    if (load_rc != OG_OK) return og_err(load_rc, "%s", load_msg);
    return OG_OK;
}
