/*
 * id.c — ULID / UUID generation and time formatting.  See id.h.
 *
 * ULID monotonicity: within one millisecond the 80-bit random part of the previous ULID is
 * incremented (per the ULID spec), under a mutex, so ids made by one process sort strictly.
 */
#include "util/id.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/datetime.h"
#include "util/error.h"

og_status og_random_bytes(void *p, size_t n)
{
    uint8_t *q = p;
    while (n) {
        ssize_t got = getrandom(q, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return og_err_errno(errno, "getrandom");
        }
        q += got;
        n -= (size_t)got;
    }
    return OG_OK;
}

int64_t og_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void og_format_time_ms(int64_t ms, char out[25]) { og_datetime_format(ms, out); }

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static pthread_mutex_t ulid_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t ulid_last_ms = -1;
static uint8_t ulid_last_rand[10];

og_status og_ulid_new(char out[OG_ULID_LEN + 1])
{
    uint8_t bytes[16];
    int64_t ms = og_now_ms();
    pthread_mutex_lock(&ulid_lock);
    if (ms <= ulid_last_ms) {
        ms = ulid_last_ms;
        int i = 9;
        while (i >= 0 && ++ulid_last_rand[i] == 0) i--;
    } else {
        og_status st = og_random_bytes(ulid_last_rand, sizeof ulid_last_rand);
        if (st) {
            pthread_mutex_unlock(&ulid_lock);
            return st;
        }
        ulid_last_ms = ms;
    }
    memcpy(bytes + 6, ulid_last_rand, 10);
    pthread_mutex_unlock(&ulid_lock);
    for (int i = 0; i < 6; i++) bytes[i] = (uint8_t)((uint64_t)ms >> (40 - 8 * i));
    /* 128 bits -> 26 base32 chars, most significant first: the first char holds the top 3
     * bits, char c >= 1 the 5 bits ending 5*(25-c) bits above the bottom. */
    unsigned __int128 x = 0;
    for (int i = 0; i < 16; i++) x = (x << 8) | bytes[i];
    for (int c = OG_ULID_LEN - 1; c >= 0; c--, x >>= 5) out[c] = crockford[(unsigned)(x & 31u)];
    out[OG_ULID_LEN] = '\0';
    return OG_OK;
}

int og_ulid_valid(const char *s)
{
    size_t n = strlen(s);
    if (n != OG_ULID_LEN) return 0;
    if (s[0] > '7') return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr(crockford, s[i]) || s[i] == '\0') return 0;
    return 1;
}

og_status og_uuid_new(char out[OG_UUID_LEN + 1])
{
    uint8_t b[16];
    OG_TRY(og_random_bytes(b, sizeof b));
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, OG_UUID_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return OG_OK;
}
