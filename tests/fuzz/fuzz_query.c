/*
 * fuzz_query.c — libFuzzer target for the .gq front end: parses the input as a query file
 * and, for every query, type-checks it against a fixed small schema, lowers it to the IR,
 * dumps the IR and runs the lint driver over the whole input.  Any input must give OG_OK or
 * a typed error; ASan/UBSan report crashes, leaks and undefined behaviour.  Inputs starting
 * with 0xFF are read as token choices (see render_tokens).  Seeds live in
 * tests/fuzz/corpus/fuzz_query/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ir.h"
#include "compiler/lint.h"
#include "compiler/query_check.h"
#include "compiler/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *SCHEMA =
    "interface Titled { title: String }\n"
    "node Person { name: String @key  age: I32?  nick: String?  tags: [String]?  born: Date?\n"
    "              seen: DateTime?  photo: Blob?  role: enum(admin, guest)?  score: F64? }\n"
    "node Company { name: String @key }\n"
    "node Doc implements Titled { slug: String @key  body: String  embedding: Vector(4)  status: String? }\n"
    "node Chunk { text: String  vec: Vector(4) @embed(text) }\n"
    "edge Knows: Person -> Person { since: Date? }\n"
    "edge WorksAt: Person -> Company\n"
    "edge Cites: Doc -> Doc\n"
    "edge Wrote: Person -> Doc { role: String  note: String? }\n";

static og_catalog *cat;

/* Token mode: when the input starts with 0xFF, every further byte picks a word of the
 * language's vocabulary, so even without coverage feedback on the library most inputs get
 * past the tokenizer into the parser and checker. */
static const char *const VOCAB[] = {
    "query ", "q", "(", ")", "{", "}", "[", "]", ",", ":", ".", "?", "<", ">", "=", "!=", "<=",
    ">=", "match ", "return ", "order ", "limit ", "not ", "insert ", "update ", "delete ",
    "set ", "where ", "as ", "asc ", "desc ", "contains ", "starts_with ", "now()", "nearest",
    "search", "fuzzy", "match_text", "bm25", "rrf", "count", "sum", "avg", "min", "max",
    "date(\"2024-01-01\")", "datetime(\"2024-01-01T00:00:00Z\")", "\"x\"", "1", "2.5", "0",
    "true", "[1, 2, 3, 4]", "$p", "$f", "$d", "$w", "$_", "$q", "$v", "$n", "Person", "Company",
    "Doc", "Chunk", "Titled", "Knows", "knows", "worksAt", "cites", "wrote", "name", "age",
    "nick", "tags", "born", "seen", "photo", "role", "score", "slug", "body", "embedding",
    "title", "text", "vec", "since", "note", "from", "to", "String", "I32", "Vector(4)",
    "DateTime", "Blob", "{1,2}", "{1,}", "@description(\"d\")", " ", "\n",
    /* issue 32: pagination, distinct, arithmetic, functions, sub-patterns, collect */
    "offset ", "distinct ", "exists ", "is ", "null ", "in ", "+", "-", "*", "/", "%", "lower", "upper",
    "trim", "length", "substring", "concat", "coalesce", "abs", "round", "year", "size", "collect",
    /* issue 32: shortest paths */
    "shortest ", "nodes", "$p: shortest { $p knows{1,3} $f }",
};

static size_t render_tokens(const uint8_t *data, size_t size, char *out, size_t cap)
{
    size_t n = 0, nv = sizeof VOCAB / sizeof VOCAB[0];
    for (size_t i = 1; i < size; i++) {
        const char *w = VOCAB[data[i] % nv];
        size_t l = strlen(w);
        if (n + l + 1 >= cap) break;
        memcpy(out + n, w, l);
        n += l;
        out[n++] = ' ';
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[65536];
    if (!cat && og_schema_compile(&cat, "fuzz.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return 0;
    if (size > 0 && data[0] == 0xFF) {
        size = render_tokens(data, size, text, sizeof text);
        data = (const uint8_t *)text;
    }
    og_source src;
    if (og_source_init(&src, "fuzz.gq", (const char *)data, size) != OG_OK) return 0;
    og_query_file *f = NULL;
    og_diag err;
    memset(&err, 0, sizeof err);
    if (og_query_parse(&f, &src, &err) == OG_OK) {
        for (size_t i = 0; i < f->nqueries; i++) {
            og_ir_query *ir = NULL;
            og_diag e2;
            memset(&e2, 0, sizeof e2);
            if (og_query_compile(&ir, f, i, cat, &src, &e2) == OG_OK) {
                og_buf b = OG_BUF_INIT;
                og_ir_dump(&b, ir);
                og_buf_free(&b);
                og_ir_free(ir);
            }
            og_diag_free(&e2);
        }
        og_query_file_free(f);
    }
    og_diag_free(&err);
    og_source_free(&src);
    og_lint_report r;
    if (og_lint_run(&r, cat, "fuzz.gq", (const char *)data, size) == OG_OK) {
        og_buf b = OG_BUF_INIT;
        og_lint_render_text(&b, &r);
        og_buf_free(&b);
    }
    og_lint_report_free(&r);
    return 0;
}
