/*
 * lexer.h — the shared tokenizer of the two languages (.pg schema, .gq queries), per
 * reference-language.md §0, plus source positions and the diagnostic type both parsers use.
 *
 * Usage:
 *     og_source src;  og_source_init(&src, "schema.pg", text, len);   (borrows text)
 *     og_tokens toks; og_diag err;
 *     if (og_lex(&toks, &src, &err) != OG_OK) { print og_diag_format(&err) ...; og_diag_free(&err); }
 *     ... toks.v[0 .. toks.len-1], the last one is OG_TOK_EOF ...
 *     og_tokens_free(&toks); og_source_free(&src);
 *
 * Lexical rules (§0):
 *   - whitespace = space, tab, CR, LF; `// ...` to end of line and `/ * ... * /` (not nested) are
 *     comments; an unterminated block comment is an error; `#` is an error.
 *   - OG_TOK_TYPENAME = [A-Z][A-Za-z0-9_]*, OG_TOK_IDENT = [a-z_][A-Za-z0-9_]*.  Keywords are
 *     not separate kinds: parsers compare the text (og_tok_is()).
 *   - OG_TOK_VAR = "$" followed (no space) by an ident or "_" ; the token text excludes '$'.
 *     A '$' not followed by an identifier character is OG_TOK_DOLLAR.
 *   - OG_TOK_STRING = "..." with escapes \" \\ \n \r \t only (anything else: error
 *     "unsupported escape sequence"); raw newlines inside strings are allowed; the decoded
 *     value is in tok.str / tok.str_len (may contain any byte but is NUL-terminated).
 *   - OG_TOK_INT = [0-9]+ (value in tok.u, tok.overflow set when > UINT64_MAX);
 *     OG_TOK_FLOAT = [0-9]+ "." [0-9]+ (value in tok.f).  "1..5" lexes INT DOTDOT INT.
 *     No signs: '-' is OG_TOK_MINUS (the schema's @range bounds accept a leading '-').
 *   - Adjacent tokens (tok[i].start == tok[i-1].end) let the schema parser re-join an
 *     unquoted enum value such as `data-eng` or `3d` (IDENT MINUS IDENT, INT IDENT).
 *
 * Positions: byte offsets [start, end) into the source; line and col are 1-based, col counts
 * Unicode code points (UTF-8 lead bytes) from the start of the line.
 */
#ifndef OG_COMPILER_LEXER_H
#define OG_COMPILER_LEXER_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/buf.h"

/* ---- source text and positions ------------------------------------------------------- */

typedef struct og_source {
    const char *file; /* display name ("<input>" when NULL was given); borrowed */
    const char *text; /* borrowed; need not be NUL-terminated */
    size_t len;
    size_t *line_starts; /* owned: byte offset of each line's first byte */
    size_t nlines;
} og_source;

/* Borrows file and text (both must outlive the og_source).  OG_ERR_NOMEM only. */
og_status og_source_init(og_source *src, const char *file, const char *text, size_t len);
void og_source_free(og_source *src);
/* Byte offset -> 1-based line and column (column in code points).  Offsets past the end map
 * to the end of the text. */
void og_source_pos(const og_source *src, size_t offset, uint32_t *line, uint32_t *col);

/* ---- diagnostics ----------------------------------------------------------------------- */

/* One error or warning.  All strings owned (freed by og_diag_free). */
typedef struct og_diag {
    og_status code;   /* OG_ERR_PARSE for syntax, OG_ERR_TYPE for catalog/semantic errors */
    int warning;      /* 1 for a warning (does not fail the check) */
    char *file;
    uint32_t line, col;
    size_t start, end; /* byte span */
    char *message;     /* one line, no trailing newline, e.g. "unknown interface 'Foo'" */
    char *hint;        /* one line or NULL, e.g. "declare `interface Foo { ... }`" */
} og_diag;

typedef struct og_diags {
    og_diag *v;
    size_t len, cap;
} og_diags;

#define OG_DIAGS_INIT {NULL, 0, 0}

/* Fills *d (file/line/col from src and start).  hint may be NULL.  Returns `code` (so it can
 * be returned directly) unless memory runs out (then OG_ERR_NOMEM with d->message NULL). */
og_status og_diag_set(og_diag *d, og_status code, const og_source *src, size_t start, size_t end,
                      const char *hint, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void og_diag_free(og_diag *d);
/* Appends a diagnostic to a list (same arguments as og_diag_set). Returns `code` or NOMEM. */
og_status og_diags_add(og_diags *ds, og_status code, const og_source *src, size_t start,
                       size_t end, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Moves *d into the list (d is left zeroed). */
og_status og_diags_push(og_diags *ds, og_diag *d);
void og_diags_free(og_diags *ds);
/* Stable sort by position (byte offset), so errors print in source order. */
void og_diags_sort(og_diags *ds);
/* Number of non-warning entries. */
size_t og_diags_errors(const og_diags *ds);
/* Appends "file:line:col: message\n" and, when there is a hint, "  hint: hint\n"
 * (warnings print "file:line:col: warning: message"). */
og_status og_diag_format(og_buf *out, const og_diag *d);

/* ---- tokens ------------------------------------------------------------------------------ */

typedef enum og_tok_kind {
    OG_TOK_EOF = 0,
    OG_TOK_TYPENAME, /* Foo */
    OG_TOK_IDENT,    /* foo, _x */
    OG_TOK_VAR,      /* $foo, $_ (text excludes '$') */
    OG_TOK_STRING,   /* "..." */
    OG_TOK_INT,      /* 42 */
    OG_TOK_FLOAT,    /* 4.2 */
    OG_TOK_LBRACE,   /* { */
    OG_TOK_RBRACE,   /* } */
    OG_TOK_LPAREN,   /* ( */
    OG_TOK_RPAREN,   /* ) */
    OG_TOK_LBRACKET, /* [ */
    OG_TOK_RBRACKET, /* ] */
    OG_TOK_COMMA,    /* , */
    OG_TOK_COLON,    /* : */
    OG_TOK_SEMI,     /* ; */
    OG_TOK_EQ,       /* = */
    OG_TOK_EQEQ,     /* == */
    OG_TOK_NE,       /* != */
    OG_TOK_LT,       /* < */
    OG_TOK_LE,       /* <= */
    OG_TOK_GT,       /* > */
    OG_TOK_GE,       /* >= */
    OG_TOK_ARROW,    /* -> */
    OG_TOK_LARROW,   /* <- */
    OG_TOK_AT,       /* @ */
    OG_TOK_DOLLAR,   /* $ not followed by a name */
    OG_TOK_QUESTION, /* ? */
    OG_TOK_DOT,      /* . */
    OG_TOK_DOTDOT,   /* .. */
    OG_TOK_STAR,     /* * */
    OG_TOK_PIPE,     /* | */
    OG_TOK_MINUS,    /* - */
    OG_TOK_PLUS,     /* + */
    OG_TOK_SLASH,    /* / (not starting a comment) */
    OG_TOK_BANG,     /* ! */
    OG_TOK_PERCENT,  /* % */
    OG_TOK_AMP,      /* & */
    OG_TOK__COUNT
} og_tok_kind;

typedef struct og_token {
    og_tok_kind kind;
    size_t start, end;     /* byte span in the source (a VAR's span includes the '$') */
    uint32_t line, col;    /* of start */
    const char *text;      /* points into the source; for VAR past the '$' */
    size_t text_len;
    char *str;             /* STRING: decoded, NUL-terminated, owned by the og_tokens */
    size_t str_len;
    uint64_t u;            /* INT */
    int overflow;          /* INT did not fit in uint64_t */
    double f;              /* FLOAT (and INT as a double) */
} og_token;

typedef struct og_tokens {
    og_token *v;
    size_t len; /* includes the final OG_TOK_EOF */
} og_tokens;

/* Tokenizes the whole source.  On a lexical error returns OG_ERR_PARSE with *err filled
 * (message like "unsupported escape sequence '\\q'") and *out empty; OG_ERR_NOMEM possible.
 * On success *err is untouched (may be NULL).  Free *out with og_tokens_free. */
og_status og_lex(og_tokens *out, const og_source *src, og_diag *err);
void og_tokens_free(og_tokens *t);

/* 1 when the token's text equals the NUL-terminated word (case-sensitive). */
int og_tok_is(const og_token *t, const char *word);
/* Human name of a kind for error messages: "'{'", "identifier", "string", "end of input". */
const char *og_tok_kind_name(og_tok_kind k);
/* Short human rendering of a token into buf: "'foo'", "'{'", "end of input". */
const char *og_tok_describe(const og_token *t, char *buf, size_t cap);

#endif
