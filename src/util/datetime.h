/*
 * datetime.h — the schema's Date and DateTime values as text (reference-language.md §5, §8).
 *
 * Date = signed days since 1970-01-01 (Lance date32); DateTime = signed milliseconds since the
 * epoch, UTC (Lance date64).  Parsing is strict: a date must be YYYY-MM-DD with a real
 * calendar day; a DateTime is RFC 3339 (`T` or space separator, optional fraction of up to 9
 * digits — truncated to milliseconds, `Z` or a ±HH:MM offset, or no zone: UTC wall-clock, the
 * spelling of values in results and exports).  A bare date is accepted as a DateTime at
 * midnight UTC.  Formatting: "YYYY-MM-DD"; a DateTime VALUE (a cell of a result, an export,
 * a change) as the reference spells it, "YYYY-MM-DDTHH:MM:SS" with ".mmm" only when the
 * milliseconds are not zero and no zone letter; a timestamp of the system (a commit's
 * created_at) as "YYYY-MM-DDTHH:MM:SS.mmmZ".  Years 0000..9999 only.
 */
#ifndef OG_UTIL_DATETIME_H
#define OG_UTIL_DATETIME_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

/* OG_OK or OG_ERR_INVALID with a message quoting the text. */
og_status og_date_parse(const char *s, size_t n, int32_t *days);
og_status og_datetime_parse(const char *s, size_t n, int64_t *ms);

/* out must hold 11 / 25 bytes. */
void og_date_format(int32_t days, char out[11]);
void og_datetime_format(int64_t ms, char out[25]);
void og_datetime_format_value(int64_t ms, char out[25]);

/* Days since the epoch of a proleptic Gregorian civil date (no range check). */
int64_t og_days_from_civil(int64_t y, unsigned m, unsigned d);
void og_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
