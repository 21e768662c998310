/*
 * guard.c — what a request must be before any handler sees it (guard.h).
 *
 * Framing: a proxy in front of the server and the server itself must agree where a request
 * ends, or one client's bytes become another's request (request smuggling).  So the head is
 * refused when two framings compete (Content-Length and Transfer-Encoding, or two different
 * lengths), when a header the server acts on appears twice (Host, Authorization, Origin), and
 * when a value holds a control character — a NUL in particular, which C code downstream
 * would silently treat as the end of the value (a bearer token "good\0junk").
 *
 * Host and Origin: a browser page on attacker.example whose name the attacker re-points at
 * 127.0.0.1 (DNS rebinding) reaches a loopback server with `Host: attacker.example:PORT`, and
 * the browser considers the answer same-origin.  The server therefore answers only requests
 * addressed to one of its own names, parsed exactly ("127.0.0.1.attacker.example" is a name,
 * not an address), and refuses a browser Origin that is not one of them either.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/guard.h"

/* ---- framing ---------------------------------------------------------------------------- */

static int is_name(const og_hdr *h, const char *name)
{
    return h->klen == strlen(name) && !strncasecmp(h->k, name, h->klen);
}

/* RFC 9110 field names are tokens; values are visible characters, spaces and tabs. */
static int clean_name(const char *k, size_t n)
{
    if (!n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)k[i];
        if (c <= 0x20 || c >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", c)) return 0;
    }
    return 1;
}

static int clean_value(const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
    }
    return 1;
}

static int all_digits(const char *v, size_t n)
{
    if (!n || n > 19) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)v[i])) return 0;
    return 1;
}

const char *og_guard_frame(int http11, const og_hdr *h, size_t n)
{
    size_t hosts = 0, auths = 0, origins = 0, tes = 0;
    const og_hdr *cl = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!clean_name(h[i].k, h[i].klen) || strlen(h[i].k) != h[i].klen) return "a header name is malformed";
        if (strlen(h[i].v) != h[i].vlen || !clean_value(h[i].v, h[i].vlen))
            return "a header value holds a control character";
        if (is_name(&h[i], "Host")) hosts++;
        else if (is_name(&h[i], "Authorization")) auths++;
        else if (is_name(&h[i], "Origin")) origins++;
        else if (is_name(&h[i], "Transfer-Encoding")) {
            tes++;
            if (h[i].vlen != 7 || strncasecmp(h[i].v, "chunked", 7))
                return "Transfer-Encoding other than chunked is not accepted";
        } else if (is_name(&h[i], "Content-Length")) {
            if (!all_digits(h[i].v, h[i].vlen)) return "Content-Length is not a number";
            if (cl && (cl->vlen != h[i].vlen || memcmp(cl->v, h[i].v, h[i].vlen)))
                return "two different Content-Length headers";
            cl = &h[i];
        }
    }
    if (cl && tes) return "Content-Length and Transfer-Encoding together";
    if (tes > 1) return "more than one Transfer-Encoding header";
    if (hosts > 1) return "more than one Host header";
    if (http11 && !hosts) return "HTTP/1.1 request without a Host header";
    if (auths > 1) return "more than one Authorization header";
    if (origins > 1) return "more than one Origin header";
    return NULL;
}

/* ---- authorities ------------------------------------------------------------------------ */

static int ipv4_literal(const char *h, size_t n)
{
    size_t parts = 0, i = 0;
    while (i < n) {
        size_t start = i;
        unsigned v = 0;
        while (i < n && isdigit((unsigned char)h[i]) && i - start < 3) v = v * 10 + (unsigned)(h[i++] - '0');
        size_t len = i - start;
        if (!len || v > 255 || (len > 1 && h[start] == '0')) return 0;
        parts++;
        if (i == n) break;
        if (h[i] != '.' || parts == 4) return 0;
        i++;
        if (i == n) return 0;
    }
    return parts == 4;
}

int og_guard_ip_literal(const char *h)
{
    size_t n = strlen(h);
    if (ipv4_literal(h, n)) return 1;
    if (n < 3 || n > 47 || h[0] != '[' || h[n - 1] != ']') return 0;
    char in[48];
    memcpy(in, h + 1, n - 2);
    in[n - 2] = 0;
    unsigned char a[16];
    return inet_pton(AF_INET6, in, a) == 1;
}

int og_guard_authority(const char *a, size_t n, char *host, size_t cap, int *port)
{
    *port = -1;
    size_t hn;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close) return 0;
        hn = (size_t)(close - a) + 1;
    } else {
        hn = 0;
        while (hn < n && a[hn] != ':') hn++;
    }
    if (!hn || hn >= cap || hn > 253) return 0;
    for (size_t i = 0; i < hn; i++) host[i] = (char)tolower((unsigned char)a[i]);
    host[hn] = 0;
    if (host[0] == '[') {
        if (!og_guard_ip_literal(host)) return 0;
    } else {
        /* a DNS name or a dotted quad: letters, digits, '-' and '.', no empty label */
        for (size_t i = 0; i < hn; i++) {
            char c = host[i];
            if (!(isalnum((unsigned char)c) || c == '-' || c == '.')) return 0;
            if (c == '.' && (i == 0 || host[i - 1] == '.')) return 0;
        }
    }
    if (hn == n) return 1;
    if (a[hn] != ':' || n - hn - 1 == 0 || n - hn - 1 > 5) return 0;
    if (a[hn + 1] == '0' && n - hn - 1 > 1) return 0; /* one spelling per port: no leading zeros */
    unsigned p = 0;
    for (size_t i = hn + 1; i < n; i++) {
        if (!isdigit((unsigned char)a[i])) return 0;
        p = p * 10 + (unsigned)(a[i] - '0');
    }
    if (p > 65535) return 0;
    *port = (int)p;
    return 1;
}

/* ---- the allow-list --------------------------------------------------------------------- */

static int bind_loopback(const og_host_allow *a)
{
    return !strcasecmp(a->bind_host, "localhost") || (!strncmp(a->bind_host, "127.", 4) && ipv4_literal(a->bind_host, strlen(a->bind_host)));
}

static int bind_wildcard(const og_host_allow *a)
{
    return !strcmp(a->bind_host, "0.0.0.0");
}

static int loopback_name(const char *h)
{
    return !strcmp(h, "localhost") || !strcmp(h, "127.0.0.1") || !strcmp(h, "[::1]");
}

/* Is `host` (lower case) a --allowed-host entry?  *entry_port: that entry's port or -1. */
static int extra_match(const og_host_allow *a, const char *host, int *entry_port)
{
    for (size_t i = 0; i < a->nextra; i++) {
        char h[256];
        int p;
        if (!og_guard_authority(a->extra[i], strlen(a->extra[i]), h, sizeof h, &p)) continue;
        if (!strcmp(h, host)) {
            *entry_port = p;
            return 1;
        }
    }
    return 0;
}

/* 1 when `host` is one of the server's own names.  `for_host`: the Host header (a wildcard
 * bind answers to any IP address, which no DNS name can be re-pointed to become); else an
 * Origin (a page served from an arbitrary IP address is not trusted). */
static int name_allowed(const og_host_allow *a, const char *host, int for_host, int *entry_port)
{
    *entry_port = -1;
    if (extra_match(a, host, entry_port)) return 1;
    if ((bind_loopback(a) || bind_wildcard(a)) && loopback_name(host)) return 1;
    if (bind_wildcard(a)) return for_host && og_guard_ip_literal(host);
    return !strcasecmp(a->bind_host, host);
}

int og_guard_host_allowed(const og_host_allow *a, const char *v)
{
    char host[256];
    int port, entry_port;
    if (!v || !og_guard_authority(v, strlen(v), host, sizeof host, &port)) return 0;
    if (!name_allowed(a, host, 1, &entry_port)) return 0;
    if (port < 0) port = 80;
    return entry_port >= 0 ? port == entry_port : (unsigned)port == a->port;
}

int og_guard_origin_allowed(const og_host_allow *a, const char *origin)
{
    if (!origin) return 0;
    size_t skip = !strncasecmp(origin, "http://", 7) ? 7 : !strncasecmp(origin, "https://", 8) ? 8 : 0;
    if (!skip) return 0;
    char host[256];
    int port, entry_port;
    const char *auth = origin + skip;
    if (!og_guard_authority(auth, strlen(auth), host, sizeof host, &port)) return 0;
    if (!name_allowed(a, host, 0, &entry_port)) return 0;
    if (entry_port < 0) return 1; /* a page of one of our names, on any port */
    if (port < 0) port = skip == 7 ? 80 : 443;
    return port == entry_port;
}
