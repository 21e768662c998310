/*
 * guard.h — the checks every request passes before any route is looked up (guard.c): the
 * request's framing (one Host, one Content-Length or a chunked body but not both, no
 * control characters in a header, no NUL in a query parameter) and its Host and Origin
 * against the server's allow-list (DNS-rebinding protection, docs/server.md "Host and
 * Origin").  Pure functions over strings, so the fuzzer (tests/fuzz/fuzz_server_head.c)
 * drives them without a socket.
 */
#ifndef OG_SERVER_GUARD_H
#define OG_SERVER_GUARD_H

#include <stddef.h>

/* One header as received: name and value with their lengths (a NUL byte inside either makes
 * the length differ from strlen). */
typedef struct og_hdr {
    const char *k;
    size_t klen;
    const char *v;
    size_t vlen;
} og_hdr;

/* NULL when the head is well framed, else why not (a static string for a 400 body).
 * `http11` is 1 for HTTP/1.1 (Host is then required). */
const char *og_guard_frame(int http11, const og_hdr *h, size_t n);

/* Splits an authority "host[:port]" exactly: host is a name of letters, digits, '-' and '.',
 * a dotted IPv4 address, or a bracketed IPv6 address; port 1*5 digits ≤ 65535 without a leading zero.  host gets
 * the lower-cased host (brackets kept); *port the port, or -1 when none is given.  0 when
 * malformed (or the host does not fit). */
int og_guard_authority(const char *a, size_t n, char *host, size_t cap, int *port);

/* 1 when `h` is a dotted-quad IPv4 address (four decimal parts 0–255) or a bracketed IPv6
 * address. */
int og_guard_ip_literal(const char *h);

/* The names a request may address the server by. */
typedef struct og_host_allow {
    const char *bind_host;           /* as given to --bind ("127.0.0.1", "0.0.0.0", "localhost", …) */
    unsigned port;                   /* the port the server listens on */
    const char *const *extra;        /* --allowed-host entries: "name" or "name:port" */
    size_t nextra;
} og_host_allow;

/* 1 when a Host value names this server: a name of the allow-list with the listening port
 * (or the entry's own port), else 0. */
int og_guard_host_allowed(const og_host_allow *a, const char *host_value);

/* 1 when an Origin value ("scheme://authority") is a page of an allowed name (any port,
 * unless the --allowed-host entry names one), else 0 ("null" and malformed origins too). */
int og_guard_origin_allowed(const og_host_allow *a, const char *origin);

#endif
