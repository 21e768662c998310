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

/* The 26 characters of the ULID of time `ms` and random part rand[10]: the first 10 hold the
 * 48-bit time (bits 129..80 of the 130 the characters cover, the top two zero), the last 16
 * the 80 random bits, most significant first. */
static void ulid_encode(int64_t ms, const uint8_t rand[10], char out[OG_ULID_LEN + 1])
{
    uint64_t t = (uint64_t)ms & ((1ull << 48) - 1);
    for (int c = 9; c >= 0; c--, t >>= 5) out[c] = crockford[t & 31u];
    uint64_t hi = ((uint64_t)rand[0] << 8) | rand[1], lo = 0;
    for (int i = 2; i < 10; i++) lo = (lo << 8) | rand[i];
    for (int c = OG_ULID_LEN - 1; c >= 10; c--) {
        out[c] = crockford[lo & 31u];
        lo = (lo >> 5) | ((hi & 31u) << 59);
        hi >>= 5;
    }
    out[OG_ULID_LEN] = '\0';
}

/* out := prev with its 80-bit random part plus one, as ulid_encode of the incremented rand
 * would write it: the 16 characters are exactly those bits, 5 a character, so the increment
 * is a base-32 one on the characters, its carry stopping at the time (the random part wraps,
 * as ulid_last_rand does).  A character at a time instead of 26 per id: encoding was most of
 * the 5M ids of a 5M-edge load. */
static void ulid_next_of(const char prev[OG_ULID_LEN + 1], char out[OG_ULID_LEN + 1])
{
    memcpy(out, prev, OG_ULID_LEN + 1);
    for (int c = OG_ULID_LEN - 1; c >= 10; c--) {
        if (out[c] != 'Z') {
            /* the next Crockford digit: 9 → A, and I, L, O, U are not digits */
            char d = out[c];
            out[c] = d == '9' ? 'A' : d == 'H' ? 'J' : d == 'K' ? 'M' : d == 'N' ? 'P' : d == 'T' ? 'V' : (char)(d + 1);
            return;
        }
        out[c] = '0';
    }
}

og_status og_ulid_new_n(char (*out)[OG_ULID_LEN + 1], size_t n)
{
    if (!n) return OG_OK;
    int64_t ms = og_now_ms();
    pthread_mutex_lock(&ulid_lock);
    for (size_t k = 0; k < n; k++) {
        if (k || ms <= ulid_last_ms) {
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
        if (k) ulid_next_of(out[k - 1], out[k]); /* same ms, rand one more */
        else ulid_encode(ms, ulid_last_rand, out[k]);
    }
    pthread_mutex_unlock(&ulid_lock);
    return OG_OK;
}

og_status og_ulid_new(char out[OG_ULID_LEN + 1])
{
    char one[1][OG_ULID_LEN + 1];
    OG_TRY(og_ulid_new_n(one, 1));
    memcpy(out, one[0], OG_ULID_LEN + 1);
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
