/*
 * csv.c — the strict RFC 4180 reader.  See csv.h.
 *
 * One byte at a time through a 64 KiB input buffer, a small state machine per record.  The
 * decoded bytes of a record's fields go back to back (each NUL-terminated) into `rec`, whose
 * field table records offsets while the record grows (rec may move), and pointers only when
 * the record is complete.  Position tracking is per byte: `line` and `col` are those of the
 * next byte to read, so an error names the byte that is wrong.
 */
#include "util/csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/utf8.h"

#define IN_BUF (64u << 10)

struct og_csv_reader {
    FILE *in;
    char *name;
    char delim;
    size_t max_record;
    unsigned char inbuf[IN_BUF];
    const unsigned char *src; /* inbuf, or the caller's bytes (og_csv_reader_new_mem) */
    size_t in_pos, in_len;
    int in_eof;
    uint64_t bytes;        /* consumed */
    uint64_t line;         /* position of the next byte */
    uint32_t col;
    int started;           /* the BOM check is done */
    char *rec;             /* decoded fields of the current record */
    size_t rec_len, rec_cap;
    og_csv_field *f;
    size_t nf, f_cap;
    size_t *off;           /* field start offsets in rec while the record grows */
    uint64_t rec_line;
    og_status failed;      /* sticky */
    char *failmsg;
};

og_status og_csv_reader_new(og_csv_reader **out, FILE *in, const char *name, char delim)
{
    *out = NULL;
    if (delim == '"' || delim == '\r' || delim == '\n' || delim == '\0')
        return og_err(OG_ERR_INVALID, "the CSV delimiter cannot be a quote, CR, LF or NUL");
    og_csv_reader *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->name = strdup(name ? name : "<input>");
    if (!r->name) {
        free(r);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    r->in = in;
    r->delim = delim;
    r->max_record = OG_CSV_MAX_RECORD;
    r->line = 1;
    r->col = 1;
    r->src = r->inbuf;
    *out = r;
    return OG_OK;
}

og_status og_csv_reader_new_mem(og_csv_reader **out, const char *buf, size_t len, const char *name, char delim,
                                uint64_t line)
{
    OG_TRY(og_csv_reader_new(out, NULL, name, delim));
    og_csv_reader_reset_mem(*out, buf, len, line);
    return OG_OK;
}

void og_csv_reader_reset_mem(og_csv_reader *r, const char *buf, size_t len, uint64_t line)
{
    r->in = NULL;
    r->src = (const unsigned char *)buf;
    r->in_pos = 0;
    r->in_len = len;
    r->in_eof = 1;
    r->bytes = 0;
    r->line = line;
    r->col = 1;
    r->started = 1; /* a byte order mark belongs to the start of a file only */
    r->failed = OG_OK;
    free(r->failmsg);
    r->failmsg = NULL;
}

void og_csv_reader_rest(const og_csv_reader *r, const char **p, size_t *n, uint64_t *line)
{
    *p = (const char *)r->src + r->in_pos;
    *n = r->in_len - r->in_pos;
    *line = r->line;
}

size_t og_csv_split(const char *buf, size_t len, uint64_t *lines)
{
    size_t end = 0;
    uint64_t nl = 0, nl_end = 0;
    int quoted = 0;
    const char *p = buf, *stop = buf + len;
    for (;;) {
        /* only quotes and line feeds matter: jump between them */
        const char *q = quoted ? memchr(p, '"', (size_t)(stop - p)) : NULL;
        const char *lf = memchr(p, '\n', (size_t)(stop - p));
        if (!quoted) q = memchr(p, '"', (size_t)((lf ? lf : stop) - p));
        if (q && (!lf || q < lf)) {
            quoted ^= 1;
            p = q + 1;
            continue;
        }
        if (!lf) break;
        nl++;
        if (!quoted) end = (size_t)(lf + 1 - buf), nl_end = nl;
        p = lf + 1;
    }
    *lines = nl_end;
    return end;
}

void og_csv_reader_set_max_record(og_csv_reader *r, size_t max) { r->max_record = max; }
uint64_t og_csv_record_line(const og_csv_reader *r) { return r->rec_line; }
uint64_t og_csv_bytes_read(const og_csv_reader *r) { return r->bytes; }
const char *og_csv_reader_name(const og_csv_reader *r) { return r->name; }
size_t og_csv_reader_max_record(const og_csv_reader *r) { return r->max_record; }

void og_csv_reader_free(og_csv_reader *r)
{
    if (!r) return;
    free(r->name);
    free(r->rec);
    free(r->f);
    free(r->off);
    free(r->failmsg);
    free(r);
}

/* The next byte without consuming it, or -1 at the end (-2 on a read error). */
static int peek(og_csv_reader *r)
{
    if (r->in_pos == r->in_len) {
        if (r->in_eof || !r->in) return -1;
        r->in_len = fread(r->inbuf, 1, IN_BUF, r->in);
        r->in_pos = 0;
        if (r->in_len == 0) {
            r->in_eof = 1;
            return ferror(r->in) ? -2 : -1;
        }
    }
    return r->src[r->in_pos];
}

static void take(og_csv_reader *r, int c)
{
    r->in_pos++;
    r->bytes++;
    if (c == '\n') {
        r->line++;
        r->col = 1;
    } else {
        r->col++;
    }
}

static int fail_at(og_csv_reader *r, og_status *err, og_status code, uint64_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int fail_at(og_csv_reader *r, og_status *err, og_status code, uint64_t line, uint32_t col, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    *err = og_err(code, "%s:%llu:%u: %s", r->name, (unsigned long long)line, col, what);
    r->failed = code;
    free(r->failmsg);
    r->failmsg = strdup(og_error_message());
    return -1;
}

static int put(og_csv_reader *r, char c, og_status *err)
{
    if (r->rec_len >= r->max_record) /* decoded bytes plus one NUL per field */
        return fail_at(r, err, OG_ERR_LIMIT, r->rec_line, 1, "record is over the %zu-byte limit", r->max_record);
    if (r->rec_len + 1 >= r->rec_cap) {
        size_t cap = r->rec_cap ? r->rec_cap * 2 : 4096;
        char *p = realloc(r->rec, cap);
        if (!p) {
            *err = og_err(OG_ERR_NOMEM, "out of memory");
            return -1;
        }
        r->rec = p;
        r->rec_cap = cap;
    }
    r->rec[r->rec_len++] = c;
    return 0;
}

static int field_begin(og_csv_reader *r, int quoted, og_status *err)
{
    if (r->nf == r->f_cap) {
        size_t cap = r->f_cap ? r->f_cap * 2 : 16;
        og_csv_field *f = realloc(r->f, cap * sizeof *f);
        if (!f) {
            *err = og_err(OG_ERR_NOMEM, "out of memory");
            return -1;
        }
        r->f = f;
        size_t *off = realloc(r->off, cap * sizeof *off);
        if (!off) {
            *err = og_err(OG_ERR_NOMEM, "out of memory");
            return -1;
        }
        r->off = off;
        r->f_cap = cap;
    }
    og_csv_field *f = &r->f[r->nf];
    memset(f, 0, sizeof *f);
    f->quoted = quoted;
    f->line = r->line;
    f->col = r->col;
    r->off[r->nf++] = r->rec_len;
    return 0;
}

/* Ends the current field: NUL-terminates it and checks its bytes. */
static int field_end(og_csv_reader *r, og_status *err)
{
    og_csv_field *f = &r->f[r->nf - 1];
    size_t start = r->off[r->nf - 1];
    f->len = r->rec_len - start;
    if (put(r, '\0', err)) return -1;
    const unsigned char *s = (const unsigned char *)r->rec + start;
    for (size_t i = 0; i < f->len;) {
        if (s[i] && s[i] < 0x80) { /* ASCII: most bytes */
            i++;
            continue;
        }
        size_t k = s[i] ? og_utf8_seq_len(s + i, f->len - i) : 0;
        if (!k)
            return fail_at(r, err, OG_ERR_PARSE, f->line, f->col, s[i] ? "invalid UTF-8 in field %zu (byte %zu of the field)"
                                                                        : "a NUL byte in field %zu (byte %zu of the field)",
                           r->nf, i + 1);
        i += k;
    }
    return 0;
}

/* Consumes a line end at a CR or LF: 0, or -1 for a CR without LF. */
static int line_end(og_csv_reader *r, int c, og_status *err)
{
    uint64_t line = r->line;
    uint32_t col = r->col;
    take(r, c);
    if (c == '\r') {
        if (peek(r) != '\n')
            return fail_at(r, err, OG_ERR_PARSE, line, col, "a carriage return must be followed by a line feed (CRLF)");
        take(r, '\n');
    }
    return 0;
}

int og_csv_next(og_csv_reader *r, og_csv_field **fields, size_t *n, og_status *err)
{
    *err = OG_OK;
    if (r->failed) {
        *err = og_err(r->failed, "%s", r->failmsg ? r->failmsg : "csv: read failed");
        return -1;
    }
    if (!r->started) {
        r->started = 1;
        if (peek(r) == 0xEF && r->in_len - r->in_pos >= 3 && !memcmp(r->src + r->in_pos, "\xEF\xBB\xBF", 3)) {
            r->in_pos += 3;
            r->bytes += 3;
        }
    }
    for (;;) { /* skip empty lines */
        int c = peek(r);
        if (c == '\n' || (c == '\r')) {
            if (line_end(r, c, err)) return -1;
            continue;
        }
        if (c == -1) return 0;
        if (c == -2) {
            *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
            return -1;
        }
        break;
    }
    r->rec_len = 0;
    r->nf = 0;
    r->rec_line = r->line;
    for (;;) { /* one field per turn */
        int c = peek(r);
        int quoted = c == '"';
        if (field_begin(r, quoted, err)) return -1;
        if (quoted) {
            uint64_t oline = r->line;
            uint32_t ocol = r->col;
            take(r, c);
            for (;;) {
                c = peek(r);
                if (c == -2) {
                    *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
                    return -1;
                }
                if (c == -1)
                    return fail_at(r, err, OG_ERR_PARSE, oline, ocol,
                                   "the quoted field opened here is never closed (a missing '\"'?)");
                if (c == '"') {
                    uint64_t qline = r->line;
                    uint32_t qcol = r->col;
                    take(r, c);
                    if (peek(r) == '"') {
                        take(r, '"');
                        if (put(r, '"', err)) return -1;
                        continue;
                    }
                    c = peek(r);
                    if (c != r->delim && c != '\n' && c != '\r' && c != -1 && c != -2)
                        return fail_at(r, err, OG_ERR_PARSE, qline, qcol + 1,
                                       "unexpected '%c' after the closing quote of a field (write a quote inside a "
                                       "quoted field as \"\")",
                                       c >= 0x20 && c < 0x7f ? c : '?');
                    break;
                }
                take(r, c);
                if (put(r, (char)c, err)) return -1;
            }
        } else {
            for (;;) {
                c = peek(r);
                /* the run of plain bytes at hand in one copy (the byte loop below does the rest) */
                if (c >= 0 && c != r->delim && c != '\n' && c != '\r' && c != '"') {
                    const unsigned char *p0 = r->src + r->in_pos, *e = r->src + r->in_len, *q = p0;
                    const unsigned char d = (unsigned char)r->delim;
                    while (q < e && *q != d && *q != '\n' && *q != '\r' && *q != '"') q++;
                    size_t k = (size_t)(q - p0);
                    if (r->rec_len + k > r->max_record) /* as put() would, at the byte past the limit */
                        return fail_at(r, err, OG_ERR_LIMIT, r->rec_line, 1, "record is over the %zu-byte limit", r->max_record);
                    if (r->rec_len + k + 1 >= r->rec_cap) {
                        size_t cap = r->rec_cap ? r->rec_cap : 4096;
                        while (r->rec_len + k + 1 >= cap) cap *= 2;
                        char *np = realloc(r->rec, cap);
                        if (!np) {
                            *err = og_err(OG_ERR_NOMEM, "out of memory");
                            return -1;
                        }
                        r->rec = np;
                        r->rec_cap = cap;
                    }
                    memcpy(r->rec + r->rec_len, p0, k);
                    r->rec_len += k;
                    r->in_pos += k;
                    r->bytes += k;
                    r->col += (uint32_t)k;
                    continue;
                }
                if (c == r->delim || c == '\n' || c == '\r' || c < 0) break;
                if (c == '"')
                    return fail_at(r, err, OG_ERR_PARSE, r->line, r->col,
                                   "a quote inside an unquoted field (quote the whole field and write the quote as \"\")");
                take(r, c);
                if (put(r, (char)c, err)) return -1;
            }
            if (c == -2) {
                *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
                return -1;
            }
        }
        if (field_end(r, err)) return -1;
        c = peek(r);
        if (c == r->delim) {
            take(r, c);
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (line_end(r, c, err)) return -1;
        } else if (c == -2) {
            *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
            return -1;
        }
        break; /* the end of the record (or of the input) */
    }
    for (size_t i = 0; i < r->nf; i++) r->f[i].s = r->rec + r->off[i];
    *fields = r->f;
    *n = r->nf;
    return 1;
}
