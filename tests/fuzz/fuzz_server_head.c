/*
 * fuzz_server_head.c — libFuzzer target for what every request passes before a handler
 * (src/server/guard.c): the framing check over a header list, and the Host and Origin
 * allow-lists.  The input is a request head: a first byte choosing HTTP/1.1 or 1.0, then
 * "Name: value" lines split at '\n' (NUL bytes kept inside, as a client could send them).
 * Properties, checked independently of guard.c (abort() on a violation):
 *  - an accepted head has no control byte in any value, no two different Content-Lengths,
 *    not both Content-Length and Transfer-Encoding, one Host at most (exactly one on 1.1),
 *    one Authorization at most;
 *  - a loopback server (127.0.0.1:8080) accepts as Host exactly localhost, 127.0.0.1 or [::1]
 *    with port 8080 (any letter case), and as Origin only http(s):// pages of those names;
 *  - a wildcard server (0.0.0.0:8080) accepts as Host only an IP address or localhost, with
 *    port 8080.
 * Seeds: tests/fuzz/corpus/fuzz_server_head/.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXH 64

static int name_is(const og_hdr *h, const char *n) { return h->klen == strlen(n) && !strncasecmp(h->k, n, h->klen); }

static void check_frame(int http11, const og_hdr *h, size_t n)
{
    if (og_guard_frame(http11, h, n)) return;
    size_t hosts = 0, auths = 0, tes = 0, cls = 0;
    const og_hdr *cl = NULL;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < h[i].vlen; j++) {
            unsigned char c = (unsigned char)h[i].v[j];
            if ((c < 0x20 && c != '\t') || c == 0x7f) abort();
        }
        if (name_is(&h[i], "Host")) hosts++;
        if (name_is(&h[i], "Authorization")) auths++;
        if (name_is(&h[i], "Transfer-Encoding")) tes++;
        if (name_is(&h[i], "Content-Length")) {
            if (cl && (cl->vlen != h[i].vlen || memcmp(cl->v, h[i].v, h[i].vlen))) abort();
            cl = &h[i];
            cls++;
        }
    }
    if ((cls && tes) || hosts > 1 || auths > 1 || (http11 && hosts != 1)) abort();
}

/* Is v exactly NAME ":8080" for one of the loopback names (case aside)? */
static int loopback_8080(const char *v)
{
    static const char *const ok[] = {"localhost:8080", "127.0.0.1:8080", "[::1]:8080"};
    for (size_t i = 0; i < 3; i++)
        if (!strcasecmp(v, ok[i])) return 1;
    return 0;
}

static void check_host(const char *v)
{
    og_host_allow lo = {"127.0.0.1", 8080, NULL, 0};
    if (og_guard_host_allowed(&lo, v) && !loopback_8080(v)) abort();
    og_host_allow any = {"0.0.0.0", 8080, NULL, 0};
    if (og_guard_host_allowed(&any, v)) {
        size_t n = strlen(v);
        if (n < 6 || strcmp(v + n - 5, ":8080")) abort();
        char h[64];
        if (n - 5 >= sizeof h) abort();
        memcpy(h, v, n - 5);
        h[n - 5] = 0;
        unsigned char a[16];
        int ip4 = inet_pton(AF_INET, h, a) == 1;
        int ip6 = h[0] == '[' && h[n - 6] == ']' && (h[n - 6] = 0, inet_pton(AF_INET6, h + 1, a) == 1);
        if (!ip4 && !ip6 && strcasecmp(h, "localhost")) abort();
    }
    if (og_guard_origin_allowed(&lo, v)) {
        const char *a = !strncasecmp(v, "http://", 7) ? v + 7 : !strncasecmp(v, "https://", 8) ? v + 8 : NULL;
        if (!a) abort();
        size_t k = strcspn(a, ":");
        if (a[0] == '[') k = strcspn(a, "]") + 1;
        char name[16];
        if (k >= sizeof name) abort();
        memcpy(name, a, k);
        name[k] = 0;
        if (strcasecmp(name, "localhost") && strcmp(name, "127.0.0.1") && strcmp(name, "[::1]")) abort();
        for (const char *p = a + k + (a[k] == ':'); *p; p++)
            if (!isdigit((unsigned char)*p)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    int http11 = data[0] & 1;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    og_hdr h[MAXH];
    size_t n = 0;
    char *p = buf, *end = buf + size - 1;
    while (p < end && n < MAXH) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        *line_end = 0;
        char *colon = memchr(p, ':', (size_t)(line_end - p));
        if (colon) {
            *colon = 0;
            char *v = colon + 1;
            while (v < line_end && *v == ' ') v++;
            h[n++] = (og_hdr){p, (size_t)(colon - p), v, (size_t)(line_end - v)};
            /* a NUL-free value, as a header string reaches the allow-lists */
            if (!memchr(v, 0, (size_t)(line_end - v))) check_host(v);
        }
        p = line_end + 1;
    }
    check_frame(http11, h, n);
    free(buf);
    return 0;
}
