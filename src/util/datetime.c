/*
 * datetime.c — Date / DateTime parsing and formatting.  See datetime.h.
 *
 * Civil-date arithmetic uses the era-based algorithm (400-year cycles) so it is exact for
 * every year, before 1970 included, without the C library's time zone machinery.
 */
#include "util/datetime.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

int64_t og_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void og_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static int digits(const char *s, size_t n, size_t at, size_t count, unsigned *out)
{
    if (at + count > n) return 0;
    unsigned v = 0;
    for (size_t i = 0; i < count; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9') return 0;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return 1;
}

static unsigned days_in_month(unsigned y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return dm[m - 1];
}

/* Parses YYYY-MM-DD at the start of s; returns 10 or 0. */
static size_t parse_ymd(const char *s, size_t n, int64_t *days)
{
    unsigned y, m, d;
    if (!digits(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits(s, n, 5, 2, &m) || s[7] != '-' ||
        !digits(s, n, 8, 2, &d))
        return 0;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return 0;
    *days = og_days_from_civil(y, m, d);
    return 10;
}

og_status og_date_parse(const char *s, size_t n, int32_t *days)
{
    int64_t dd;
    if (parse_ymd(s, n, &dd) != 10 || n != 10)
        return og_err(OG_ERR_INVALID, "invalid Date \"%.*s\" (expected YYYY-MM-DD)", (int)(n > 64 ? 64 : n), s);
    *days = (int32_t)dd;
    return OG_OK;
}

og_status og_datetime_parse(const char *s, size_t n, int64_t *ms)
{
    int64_t days;
    unsigned hh = 0, mi = 0, ss = 0, frac_ms = 0;
    int64_t offset_min = 0;
    size_t at = parse_ymd(s, n, &days);
    if (!at) goto bad;
    if (at < n) {
        if (s[at] != 'T' && s[at] != 't' && s[at] != ' ') goto bad;
        at++;
        if (!digits(s, n, at, 2, &hh) || at + 2 >= n || s[at + 2] != ':' || !digits(s, n, at + 3, 2, &mi) ||
            at + 5 >= n || s[at + 5] != ':' || !digits(s, n, at + 6, 2, &ss))
            goto bad;
        at += 8;
        if (hh > 23 || mi > 59 || ss > 59) goto bad; /* no leap seconds */
        if (at < n && s[at] == '.') {
            at++;
            size_t k = 0;
            while (at < n && s[at] >= '0' && s[at] <= '9') {
                if (k < 3) frac_ms = frac_ms * 10 + (unsigned)(s[at] - '0');
                k++, at++;
            }
            if (k == 0 || k > 9) goto bad;
            for (; k < 3; k++) frac_ms *= 10;
        }
        if (at >= n) {
            /* no zone: UTC wall-clock, the spelling every value output writes (the reference
             * reads it the same way), so an exported or returned DateTime loads back */
        } else if (s[at] == 'Z' || s[at] == 'z') {
            at++;
        } else if (s[at] == '+' || s[at] == '-') {
            unsigned oh, om;
            if (!digits(s, n, at + 1, 2, &oh) || at + 3 >= n || s[at + 3] != ':' || !digits(s, n, at + 4, 2, &om) ||
                oh > 23 || om > 59)
                goto bad;
            offset_min = (int64_t)(oh * 60 + om) * (s[at] == '-' ? -1 : 1);
            at += 6;
        } else {
            goto bad;
        }
        if (at != n) goto bad;
    }
    *ms = ((days * 86400 + hh * 3600 + mi * 60 + ss) - offset_min * 60) * 1000 + frac_ms;
    return OG_OK;
bad:
    return og_err(OG_ERR_INVALID, "invalid DateTime \"%.*s\" (expected RFC 3339, e.g. 2026-12-02T15:04:05Z)",
                  (int)(n > 64 ? 64 : n), s);
}

void og_date_format(int32_t days, char out[11])
{
    int64_t y;
    unsigned m, d;
    og_civil_from_days(days, &y, &m, &d);
    snprintf(out, 11, "%04d-%02u-%02u", (int)(y % 10000), m, d);
}

void og_datetime_format(int64_t ms, char out[25])
{
    int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) {
        frac += 1000;
        secs -= 1;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned m, d;
    og_civil_from_days(days, &y, &m, &d);
    snprintf(out, 25, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", (int)(y % 10000), m, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60), (int)frac);
}

void og_datetime_format_value(int64_t ms, char out[25])
{
    og_datetime_format(ms, out);
    /* "YYYY-MM-DDTHH:MM:SS.mmmZ" -> no zone letter; no fraction when it is .000 */
    out[memcmp(out + 19, ".000", 4) ? 23 : 19] = '\0';
}
