/*
 * lexer.c — the shared tokenizer of .pg and .gq (reference-language.md §0), source position
 * mapping and diagnostics.  See lexer.h for the token rules.  The lexer never reads past
 * src->len, never loops (every step consumes at least one byte) and reports the first
 * lexical error with its position.
 */
#include "compiler/lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/utf8.h"

/* ---- source ----------------------------------------------------------------------------- */

og_status og_source_init(og_source *src, const char *file, const char *text, size_t len)
{
    memset(src, 0, sizeof *src);
    src->file = file ? file : "<input>";
    src->text = text ? text : "";
    src->len = text ? len : 0;
    size_t n = 1;
    for (size_t i = 0; i < src->len; i++)
        if (src->text[i] == '\n') n++;
    src->line_starts = malloc(n * sizeof *src->line_starts);
    if (!src->line_starts) return og_err(OG_ERR_NOMEM, "out of memory (source lines)");
    size_t k = 0;
    src->line_starts[k++] = 0;
    for (size_t i = 0; i < src->len; i++)
        if (src->text[i] == '\n') src->line_starts[k++] = i + 1;
    src->nlines = k;
    return OG_OK;
}

void og_source_free(og_source *src)
{
    if (!src) return;
    free(src->line_starts);
    src->line_starts = NULL;
    src->nlines = 0;
}

void og_source_pos(const og_source *src, size_t offset, uint32_t *line, uint32_t *col)
{
    if (offset > src->len) offset = src->len;
    size_t lo = 0, hi = src->nlines ? src->nlines - 1 : 0;
    if (!src->line_starts) {
        *line = 1;
        *col = 1;
        return;
    }
    while (lo < hi) { /* last line start <= offset */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (src->line_starts[mid] <= offset) lo = mid;
        else hi = mid - 1;
    }
    size_t c = 1;
    for (size_t i = src->line_starts[lo]; i < offset; i++)
        if (((unsigned char)src->text[i] & 0xC0) != 0x80) c++;
    *line = (uint32_t)(lo + 1);
    *col = (uint32_t)c;
}

/* ---- diagnostics -------------------------------------------------------------------------- */

static char *og_strdup_(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static og_status diag_vset(og_diag *d, og_status code, const og_source *src, size_t start,
                           size_t end, const char *hint, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->code = code;
    d->start = start;
    d->end = end < start ? start : end;
    if (src) {
        og_source_pos(src, start, &d->line, &d->col);
        d->file = og_strdup_(src->file);
    } else {
        d->line = 1;
        d->col = 1;
    }
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    d->message = malloc((size_t)n + 1);
    if (d->message) vsnprintf(d->message, (size_t)n + 1, fmt, ap);
    d->hint = og_strdup_(hint);
    if (!d->message || (src && !d->file) || (hint && !d->hint)) {
        og_diag_free(d);
        return og_err(OG_ERR_NOMEM, "out of memory (diagnostic)");
    }
    og_err(code, "%s:%u:%u: %s", d->file ? d->file : "<input>", d->line, d->col, d->message);
    return code;
}

og_status og_diag_set(og_diag *d, og_status code, const og_source *src, size_t start, size_t end,
                      const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    og_status st = diag_vset(d, code, src, start, end, hint, fmt, ap);
    va_end(ap);
    return st;
}

void og_diag_free(og_diag *d)
{
    if (!d) return;
    free(d->file);
    free(d->message);
    free(d->hint);
    memset(d, 0, sizeof *d);
}

og_status og_diags_push(og_diags *ds, og_diag *d)
{
    if (ds->len == ds->cap) {
        size_t nc = ds->cap ? ds->cap * 2 : 8;
        og_diag *nv = realloc(ds->v, nc * sizeof *nv);
        if (!nv) {
            og_diag_free(d);
            return og_err(OG_ERR_NOMEM, "out of memory (diagnostics)");
        }
        ds->v = nv;
        ds->cap = nc;
    }
    ds->v[ds->len++] = *d;
    memset(d, 0, sizeof *d);
    return OG_OK;
}

og_status og_diags_add(og_diags *ds, og_status code, const og_source *src, size_t start,
                       size_t end, const char *hint, const char *fmt, ...)
{
    og_diag d;
    va_list ap;
    va_start(ap, fmt);
    og_status st = diag_vset(&d, code, src, start, end, hint, fmt, ap);
    va_end(ap);
    if (st == OG_ERR_NOMEM && !d.message) return st;
    og_status pst = og_diags_push(ds, &d);
    return pst != OG_OK ? pst : code;
}

void og_diags_free(og_diags *ds)
{
    if (!ds) return;
    for (size_t i = 0; i < ds->len; i++) og_diag_free(&ds->v[i]);
    free(ds->v);
    ds->v = NULL;
    ds->len = ds->cap = 0;
}

void og_diags_sort(og_diags *ds)
{
    for (size_t i = 1; i < ds->len; i++) /* insertion sort: stable, lists are short */
        for (size_t j = i; j > 0 && ds->v[j - 1].start > ds->v[j].start; j--) {
            og_diag t = ds->v[j];
            ds->v[j] = ds->v[j - 1];
            ds->v[j - 1] = t;
        }
}

size_t og_diags_errors(const og_diags *ds)
{
    size_t n = 0;
    for (size_t i = 0; i < ds->len; i++)
        if (!ds->v[i].warning) n++;
    return n;
}

og_status og_diag_format(og_buf *out, const og_diag *d)
{
    OG_TRY(og_buf_printf(out, "%s:%u:%u: %s%s\n", d->file ? d->file : "<input>", d->line, d->col,
                         d->warning ? "warning: " : "", d->message ? d->message : ""));
    if (d->hint) OG_TRY(og_buf_printf(out, "  hint: %s\n", d->hint));
    return OG_OK;
}

/* ---- tokens ------------------------------------------------------------------------------- */

static const char *const kind_names[OG_TOK__COUNT] = {
    [OG_TOK_EOF] = "end of input",   [OG_TOK_TYPENAME] = "type name",
    [OG_TOK_IDENT] = "identifier",   [OG_TOK_VAR] = "variable",
    [OG_TOK_STRING] = "string",      [OG_TOK_INT] = "integer",
    [OG_TOK_FLOAT] = "float",        [OG_TOK_LBRACE] = "'{'",
    [OG_TOK_RBRACE] = "'}'",         [OG_TOK_LPAREN] = "'('",
    [OG_TOK_RPAREN] = "')'",         [OG_TOK_LBRACKET] = "'['",
    [OG_TOK_RBRACKET] = "']'",       [OG_TOK_COMMA] = "','",
    [OG_TOK_COLON] = "':'",          [OG_TOK_SEMI] = "';'",
    [OG_TOK_EQ] = "'='",             [OG_TOK_EQEQ] = "'=='",
    [OG_TOK_NE] = "'!='",            [OG_TOK_LT] = "'<'",
    [OG_TOK_LE] = "'<='",            [OG_TOK_GT] = "'>'",
    [OG_TOK_GE] = "'>='",            [OG_TOK_ARROW] = "'->'",
    [OG_TOK_LARROW] = "'<-'",        [OG_TOK_AT] = "'@'",
    [OG_TOK_DOLLAR] = "'$'",         [OG_TOK_QUESTION] = "'?'",
    [OG_TOK_DOT] = "'.'",            [OG_TOK_DOTDOT] = "'..'",
    [OG_TOK_STAR] = "'*'",           [OG_TOK_PIPE] = "'|'",
    [OG_TOK_MINUS] = "'-'",          [OG_TOK_PLUS] = "'+'",
    [OG_TOK_SLASH] = "'/'",          [OG_TOK_BANG] = "'!'",
    [OG_TOK_PERCENT] = "'%'",        [OG_TOK_AMP] = "'&'",
};

const char *og_tok_kind_name(og_tok_kind k)
{
    if ((unsigned)k >= OG_TOK__COUNT || !kind_names[k]) return "token";
    return kind_names[k];
}

int og_tok_is(const og_token *t, const char *word)
{
    size_t n = strlen(word);
    return (t->kind == OG_TOK_IDENT || t->kind == OG_TOK_TYPENAME) && t->text_len == n &&
           memcmp(t->text, word, n) == 0;
}

const char *og_tok_describe(const og_token *t, char *buf, size_t cap)
{
    if (!cap) return buf;
    switch (t->kind) {
    case OG_TOK_EOF: snprintf(buf, cap, "end of input"); break;
    case OG_TOK_STRING: snprintf(buf, cap, "string \"%.*s\"", (int)(t->str_len > 40 ? 40 : t->str_len), t->str ? t->str : ""); break;
    case OG_TOK_VAR: snprintf(buf, cap, "'$%.*s'", (int)(t->text_len > 60 ? 60 : t->text_len), t->text); break;
    default: snprintf(buf, cap, "'%.*s'", (int)(t->text_len > 60 ? 60 : t->text_len), t->text); break;
    }
    return buf;
}

void og_tokens_free(og_tokens *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->len; i++) free(t->v[i].str);
    free(t->v);
    t->v = NULL;
    t->len = 0;
}

typedef struct lexer {
    const og_source *src;
    const char *s;
    size_t n, i;
    og_tokens *out;
    size_t cap;
    og_diag *err;
    /* position of the last token start, advanced incrementally (tokens come in order), so
     * line:col costs O(text) for the whole file instead of O(line length) per token */
    size_t pos_off;
    uint32_t pos_line, pos_col;
} lexer;

/* Advances lx's remembered position to byte `offset` (>= the last one) and reports it. */
static void lexer_pos(lexer *lx, size_t offset, uint32_t *line, uint32_t *col)
{
    if (offset < lx->pos_off) { /* not expected; fall back to the exact search */
        og_source_pos(lx->src, offset, line, col);
        return;
    }
    for (size_t i = lx->pos_off; i < offset && i < lx->n; i++) {
        unsigned char c = (unsigned char)lx->s[i];
        if (c == '\n') {
            lx->pos_line++;
            lx->pos_col = 1;
        } else if ((c & 0xC0) != 0x80) {
            lx->pos_col++;
        }
    }
    lx->pos_off = offset;
    *line = lx->pos_line;
    *col = lx->pos_col;
}

static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_word(int c) { return is_upper(c) || is_lower(c) || is_digit(c) || c == '_'; }

static og_status lex_fail(lexer *lx, size_t start, size_t end, const char *hint, const char *msg,
                          const char *detail)
{
    if (lx->err)
        return og_diag_set(lx->err, OG_ERR_PARSE, lx->src, start, end, hint, "%s%s", msg,
                           detail ? detail : "");
    return og_err(OG_ERR_PARSE, "%s%s", msg, detail ? detail : "");
}

static og_status push(lexer *lx, og_tok_kind k, size_t start, size_t end, og_token **tout)
{
    if (lx->out->len == lx->cap) {
        size_t nc = lx->cap ? lx->cap * 2 : 64;
        og_token *nv = realloc(lx->out->v, nc * sizeof *nv);
        if (!nv) return og_err(OG_ERR_NOMEM, "out of memory (tokens)");
        lx->out->v = nv;
        lx->cap = nc;
    }
    og_token *t = &lx->out->v[lx->out->len++];
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->start = start;
    t->end = end;
    lexer_pos(lx, start, &t->line, &t->col);
    t->text = lx->s + start;
    t->text_len = end - start;
    if (tout) *tout = t;
    return OG_OK;
}

/* Skips whitespace and comments. */
static og_status skip_space(lexer *lx)
{
    for (;;) {
        if (lx->i >= lx->n) return OG_OK;
        char c = lx->s[lx->i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            lx->i++;
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '/') {
            while (lx->i < lx->n && lx->s[lx->i] != '\n') lx->i++;
        } else if (c == '/' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '*') {
            size_t start = lx->i;
            lx->i += 2;
            for (;;) {
                if (lx->i + 1 >= lx->n) {
                    lx->i = lx->n;
                    return lex_fail(lx, start, start + 2, "close it with `*/` (block comments do not nest)",
                                    "unterminated block comment", NULL);
                }
                if (lx->s[lx->i] == '*' && lx->s[lx->i + 1] == '/') {
                    lx->i += 2;
                    break;
                }
                lx->i++;
            }
        } else {
            return OG_OK;
        }
    }
}

static og_status lex_string(lexer *lx)
{
    size_t start = lx->i;
    lx->i++; /* opening quote */
    og_buf b = OG_BUF_INIT;
    og_status st = OG_OK;
    for (;;) {
        if (lx->i >= lx->n) {
            st = lex_fail(lx, start, lx->n, "close the string with `\"`", "unterminated string literal", NULL);
            goto fail;
        }
        char c = lx->s[lx->i];
        if (c == '"') {
            lx->i++;
            break;
        }
        if (c == '\\') {
            if (lx->i + 1 >= lx->n) {
                st = lex_fail(lx, start, lx->n, "close the string with `\"`", "unterminated string literal", NULL);
                goto fail;
            }
            char e = lx->s[lx->i + 1];
            char v;
            switch (e) {
            case '"': v = '"'; break;
            case '\\': v = '\\'; break;
            case 'n': v = '\n'; break;
            case 'r': v = '\r'; break;
            case 't': v = '\t'; break;
            default: {
                char det[16];
                unsigned char ue = (unsigned char)e;
                if (ue >= 0x20 && ue < 0x7f) snprintf(det, sizeof det, " '\\%c'", e);
                else snprintf(det, sizeof det, " '\\x%02x'", ue);
                st = lex_fail(lx, lx->i, lx->i + 2, "only \\\" \\\\ \\n \\r \\t are supported",
                              "unsupported escape sequence", det);
                goto fail;
            }
            }
            if ((st = og_buf_append_byte(&b, (uint8_t)v)) != OG_OK) goto fail;
            lx->i += 2;
            continue;
        }
        if ((st = og_buf_append_byte(&b, (uint8_t)c)) != OG_OK) goto fail;
        lx->i++;
    }
    og_token *t;
    if ((st = push(lx, OG_TOK_STRING, start, lx->i, &t)) != OG_OK) goto fail;
    t->str_len = b.len;
    og_buf_cstr(&b);
    if (!b.data) {
        st = og_err(OG_ERR_NOMEM, "out of memory (string)");
        goto fail;
    }
    t->str = (char *)b.data;
    return OG_OK;
fail:
    og_buf_free(&b);
    return st;
}

static og_status lex_number(lexer *lx)
{
    size_t start = lx->i;
    uint64_t u = 0;
    int overflow = 0;
    while (lx->i < lx->n && is_digit(lx->s[lx->i])) {
        unsigned d = (unsigned)(lx->s[lx->i] - '0');
        if (u > (UINT64_MAX - d) / 10) overflow = 1;
        else u = u * 10 + d;
        lx->i++;
    }
    og_tok_kind k = OG_TOK_INT;
    if (lx->i + 1 < lx->n && lx->s[lx->i] == '.' && is_digit(lx->s[lx->i + 1])) {
        lx->i++;
        while (lx->i < lx->n && is_digit(lx->s[lx->i])) lx->i++;
        k = OG_TOK_FLOAT;
    }
    og_token *t;
    OG_TRY(push(lx, k, start, lx->i, &t));
    char tmp[64];
    size_t len = lx->i - start;
    if (len < sizeof tmp) {
        memcpy(tmp, lx->s + start, len);
        tmp[len] = 0;
        t->f = strtod(tmp, NULL);
    } else {
        char *big = malloc(len + 1);
        if (!big) return og_err(OG_ERR_NOMEM, "out of memory (number)");
        memcpy(big, lx->s + start, len);
        big[len] = 0;
        t->f = strtod(big, NULL);
        free(big);
    }
    if (k == OG_TOK_INT) {
        t->u = overflow ? UINT64_MAX : u;
        t->overflow = overflow;
    }
    return OG_OK;
}

og_status og_lex(og_tokens *out, const og_source *src, og_diag *err)
{
    lexer lx = {src, src->text, src->len, 0, out, 0, err, 0, 1, 1};
    out->v = NULL;
    out->len = 0;
    og_status st = OG_OK;
    /* the text must be UTF-8 without NUL bytes (comments and strings included) */
    for (size_t i = 0; i < lx.n;) {
        const unsigned char *u = (const unsigned char *)lx.s + i;
        size_t k = *u ? og_utf8_seq_len(u, lx.n - i) : 0;
        if (!k)
            return lex_fail(&lx, i, i + 1, "save the file as UTF-8 text",
                            *u ? "invalid UTF-8 in source" : "NUL byte in source", NULL);
        i += k;
    }
    for (;;) {
        if ((st = skip_space(&lx)) != OG_OK) goto fail;
        if (lx.i >= lx.n) break;
        size_t start = lx.i;
        unsigned char c = (unsigned char)lx.s[lx.i];
        if (is_upper(c) || is_lower(c) || c == '_') {
            while (lx.i < lx.n && is_word(lx.s[lx.i])) lx.i++;
            st = push(&lx, is_upper(c) ? OG_TOK_TYPENAME : OG_TOK_IDENT, start, lx.i, NULL);
        } else if (is_digit(c)) {
            st = lex_number(&lx);
        } else if (c == '"') {
            st = lex_string(&lx);
        } else if (c == '$') {
            if (lx.i + 1 < lx.n && (is_lower(lx.s[lx.i + 1]) || lx.s[lx.i + 1] == '_')) {
                lx.i++;
                while (lx.i < lx.n && is_word(lx.s[lx.i])) lx.i++;
                og_token *t;
                st = push(&lx, OG_TOK_VAR, start, lx.i, &t);
                if (st == OG_OK) {
                    t->text++;
                    t->text_len--;
                }
            } else {
                lx.i++;
                st = push(&lx, OG_TOK_DOLLAR, start, lx.i, NULL);
            }
        } else {
            og_tok_kind k;
            size_t w = 1;
            char d = lx.i + 1 < lx.n ? lx.s[lx.i + 1] : 0;
            switch (c) {
            case '{': k = OG_TOK_LBRACE; break;
            case '}': k = OG_TOK_RBRACE; break;
            case '(': k = OG_TOK_LPAREN; break;
            case ')': k = OG_TOK_RPAREN; break;
            case '[': k = OG_TOK_LBRACKET; break;
            case ']': k = OG_TOK_RBRACKET; break;
            case ',': k = OG_TOK_COMMA; break;
            case ':': k = OG_TOK_COLON; break;
            case ';': k = OG_TOK_SEMI; break;
            case '=': if (d == '=') { k = OG_TOK_EQEQ; w = 2; } else k = OG_TOK_EQ; break;
            case '!': if (d == '=') { k = OG_TOK_NE; w = 2; } else k = OG_TOK_BANG; break;
            case '<':
                if (d == '=') { k = OG_TOK_LE; w = 2; }
                else if (d == '-') { k = OG_TOK_LARROW; w = 2; }
                else k = OG_TOK_LT;
                break;
            case '>': if (d == '=') { k = OG_TOK_GE; w = 2; } else k = OG_TOK_GT; break;
            case '-': if (d == '>') { k = OG_TOK_ARROW; w = 2; } else k = OG_TOK_MINUS; break;
            case '@': k = OG_TOK_AT; break;
            case '?': k = OG_TOK_QUESTION; break;
            case '.': if (d == '.') { k = OG_TOK_DOTDOT; w = 2; } else k = OG_TOK_DOT; break;
            case '*': k = OG_TOK_STAR; break;
            case '|': k = OG_TOK_PIPE; break;
            case '+': k = OG_TOK_PLUS; break;
            case '/': k = OG_TOK_SLASH; break;
            case '%': k = OG_TOK_PERCENT; break;
            case '&': k = OG_TOK_AMP; break;
            case '#':
                st = lex_fail(&lx, start, start + 1, "comments are `// ...` or `/* ... */`",
                              "unexpected character '#'", NULL);
                goto fail;
            default: {
                char det[48];
                if (c >= 0x20 && c < 0x7f) snprintf(det, sizeof det, " '%c'", c);
                else snprintf(det, sizeof det, " (byte 0x%02x)", c);
                const char *hint = c == '\'' ? "strings are written in double quotes: \"...\""
                                   : c == 0xef && lx.i == 0 ? "the file starts with a UTF-8 byte order mark; save it without one"
                                   : "identifiers are ASCII: [A-Za-z_][A-Za-z0-9_]*";
                st = lex_fail(&lx, start, start + 1, hint, "unexpected character", det);
                goto fail;
            }
            }
            lx.i += w;
            st = push(&lx, k, start, lx.i, NULL);
        }
        if (st != OG_OK) goto fail;
    }
    if ((st = push(&lx, OG_TOK_EOF, lx.n, lx.n, NULL)) != OG_OK) goto fail;
    return OG_OK;
fail:
    og_tokens_free(out);
    return st;
}
