/*
 * test_datetime.c — Date/DateTime text: strict parsing (calendar days, zones, fractions),
 * canonical formatting, pre-1970 values, and a round-trip property over a wide range of days.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/datetime.h"

static void dates_parse_strictly(void **state)
{
    (void)state;
    int32_t d;
    assert_int_equal(og_date_parse("1970-01-01", 10, &d), OG_OK);
    assert_int_equal(d, 0);
    assert_int_equal(og_date_parse("1929-10-21", 10, &d), OG_OK);
    assert_int_equal(d, -14682);
    assert_int_equal(og_date_parse("2024-02-29", 10, &d), OG_OK);
    const char *bad[] = {"2023-02-29", "2024-13-01", "2024-00-10", "24-01-01", "2024-1-01", "2024-01-01x", "", "2024/01/01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(og_date_parse(bad[i], strlen(bad[i]), &d), OG_ERR_INVALID);
}

static void datetimes_honour_zones_and_fractions(void **state)
{
    (void)state;
    int64_t ms;
    const char *s = "2026-12-02T15:04:05.123Z";
    assert_int_equal(og_datetime_parse(s, strlen(s), &ms), OG_OK);
    assert_true(ms == 1796223845123LL);
    s = "2026-12-02T16:04:05.123456789+01:00";
    int64_t ms2;
    assert_int_equal(og_datetime_parse(s, strlen(s), &ms2), OG_OK);
    assert_true(ms2 == ms);
    s = "1969-12-31T23:59:59.999Z";
    assert_int_equal(og_datetime_parse(s, strlen(s), &ms), OG_OK);
    assert_true(ms == -1);
    s = "2026-12-02";
    assert_int_equal(og_datetime_parse(s, strlen(s), &ms), OG_OK);
    assert_true(ms == 1796169600000LL);
    s = "2026-12-02T15:04:05.123"; /* no zone: UTC, the spelling results and exports write */
    assert_int_equal(og_datetime_parse(s, strlen(s), &ms2), OG_OK);
    assert_true(ms2 == 1796223845123LL);
    const char *bad[] = {"2026-12-02T25:00:00Z", "2026-12-02T15:04:05.", "2026-12-02T15:04:05 ", "2026-12-02T15:04:05.Z",
                         "2026-12-02T15:04Z", "2026-12-02T15:04:05+0100", "2026-12-02T15:04:05Zjunk"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(og_datetime_parse(bad[i], strlen(bad[i]), &ms), OG_ERR_INVALID);
}

static void formatting_is_canonical_and_round_trips(void **state)
{
    (void)state;
    char buf[25];
    og_datetime_format(-1, buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    /* a value: no zone letter, no fraction when the milliseconds are zero */
    og_datetime_format_value(-1, buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999");
    og_datetime_format_value(1704067200000LL, buf);
    assert_string_equal(buf, "2024-01-01T00:00:00");
    og_datetime_format_value(1704067200010LL, buf);
    assert_string_equal(buf, "2024-01-01T00:00:00.010");
    og_date_format(-14682, buf);
    assert_string_equal(buf, "1929-10-21");
    for (int32_t day = -719162; day <= 2932896; day += 997) { /* 0001-01-01 .. 9999-12-31 */
        char t[11];
        int32_t back;
        og_date_format(day, t);
        assert_int_equal(og_date_parse(t, 10, &back), OG_OK);
        assert_int_equal(back, day);
        int64_t ms = (int64_t)day * 86400000 + (day % 86400) * 1000 + 7;
        char u[25];
        int64_t msb;
        og_datetime_format(ms, u);
        assert_int_equal(og_datetime_parse(u, strlen(u), &msb), OG_OK);
        assert_true(msb == ms);
        og_datetime_format_value(ms - 7, u); /* whole seconds: no fraction */
        assert_int_equal(og_datetime_parse(u, strlen(u), &msb), OG_OK);
        assert_true(msb == ms - 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dates_parse_strictly),
        cmocka_unit_test(datetimes_honour_zones_and_fractions),
        cmocka_unit_test(formatting_is_canonical_and_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
