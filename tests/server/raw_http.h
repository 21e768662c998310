/*
 * raw_http.h — shared by the server tests that must send what no HTTP client library will
 * (two Content-Length headers, a NUL inside a header, no Host, a slow trickle): a request as
 * raw bytes over a loopback socket, its answer read back with a deadline.  Header-only;
 * include after server_client.h.
 */
#ifndef OG_TEST_RAW_HTTP_H
#define OG_TEST_RAW_HTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

static inline uint64_t raw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A connected socket to the server (from source address `from`, e.g. "127.0.0.2", or NULL),
 * or -1. */
static inline int raw_connect_from(const srv *s, const char *from)
{
    char host[64];
    snprintf(host, sizeof host, "%s", s->addr);
    char *colon = strrchr(host, ':');
    if (!colon) return -1;
    *colon = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (from) {
        struct sockaddr_in me = {.sin_family = AF_INET};
        inet_pton(AF_INET, from, &me.sin_addr);
        if (bind(fd, (struct sockaddr *)&me, sizeof me)) {
            close(fd);
            return -1;
        }
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int raw_connect(const srv *s) { return raw_connect_from(s, NULL); }

/* The server's port, as text. */
static inline const char *raw_port(const srv *s) { return strrchr(s->addr, ':') + 1; }

/* Reads from fd into out (NUL-terminated) until the peer closes, `cap` is full or
 * `timeout_ms` passes; returns the bytes read. */
static inline size_t raw_read_all(int fd, char *out, size_t cap, int timeout_ms)
{
    size_t len = 0;
    uint64_t until = raw_now_ms() + (uint64_t)timeout_ms;
    while (len + 1 < cap) {
        uint64_t now = raw_now_ms();
        if (now >= until) break;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(until - now)) <= 0) break;
        ssize_t n = read(fd, out + len, cap - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
    }
    out[len] = 0;
    return len;
}

/* Sends `len` bytes of `req` on a new connection and reads the answer (until the server
 * closes or timeout_ms); returns the status code of the first response line, or -1 (no
 * answer).  `out` gets the whole answer when not NULL. */
static inline int raw_request(const srv *s, const char *req, size_t len, char *out, size_t cap, int timeout_ms)
{
    int fd = raw_connect(s);
    if (fd < 0) return -1;
    if (write(fd, req, len) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    char buf[16384];
    if (!out) {
        out = buf;
        cap = sizeof buf;
    }
    raw_read_all(fd, out, cap, timeout_ms);
    close(fd);
    int status = -1;
    if (sscanf(out, "HTTP/1.%*d %d", &status) != 1) return -1;
    return status;
}

#endif
