/*
 * ndjson.c — strict NDJSON envelope reader for `load`.  See ndjson.h.
 *
 * Lines are read with getline into one reused buffer; a line longer than the limit is
 * reported as soon as it is seen (OG_ERR_LIMIT), before it is parsed.  Lines are parsed by
 * util/jsontok.h (strict like jansson with JSON_REJECT_DUPLICATES, which gives the "no
 * duplicate keys at any depth" rule) into a token array, strings decoded in place in the
 * line: a record points into its line's bytes and tokens, and no DOM is built or freed.
 *
 * Background parsing (og_ndjson_reader_start): parsing is a large part of a load's CPU time
 * and depends on nothing the loader does, so WORKERS threads read, parse and envelope-check
 * ahead while the caller stages records, through load/batch_ring.h: a batch is at most
 * BATCH_RECORDS records or BATCH_BYTES line bytes (so memory stays bounded); the workers take
 * turns at reading the raw lines of their next batch (the input is read in order, one batch
 * at a time), then parse them in parallel; the caller takes batches in number order.  A slot
 * is always refilled by the worker that filled it before (one batch's lines and tokens live
 * in its slot until then).  A failure ends the
 * input: its batch carries the records before it, then the status and message, so the
 * caller sees exactly the records and the error a sequential read gives.  Freeing the
 * reader stops and joins the workers.
 */
#include "load/ndjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load/batch_ring.h"
#include "util/error.h"

#define WORKERS 2
#define RING 4 /* a multiple of WORKERS: slot k % RING is always filled by worker k % WORKERS */
#define BATCH_RECORDS 1024
#define BATCH_BYTES ((size_t)256 << 10)

typedef struct nd_item {
    og_ndjson_record rec;   /* rec.data is fixed up when the batch's tokens stop moving */
    size_t data_tok;        /* index of rec.data in the batch's doc, or SIZE_MAX: none */
    uint64_t line;
    size_t off, len;        /* the raw line in the batch's `raw` */
    uint64_t bytes;         /* input bytes consumed through this record */
} nd_item;

typedef struct nd_batch {
    nd_item items[BATCH_RECORDS];
    size_t n;
    char *raw;              /* the lines, back to back (strings decoded in place) */
    size_t raw_len, raw_cap;
    og_jdoc doc;            /* every line's tokens */
    int done;               /* no batch follows: end of input, or `err` after the items */
    og_status err;
    char *errmsg;
} nd_batch;

struct nd_async;

struct og_ndjson_reader {
    FILE *in;
    char *name;
    char *line;
    size_t cap;
    size_t max_line;
    uint64_t lineno;
    uint64_t bytes;
    og_jdoc doc;            /* the current line's tokens (sequential reads) */
    struct nd_async *async; /* NULL = sequential */
};

struct nd_async {
    og_batch_ring *ring;    /* load/batch_ring.h: WORKERS threads over RING batches */
    nd_batch *batches[RING];
    size_t pos;             /* next item of the batch the caller holds */
    uint64_t consumed;      /* bytes through the caller's last record */
};

og_status og_ndjson_reader_new(og_ndjson_reader **out, FILE *in, const char *name)
{
    og_ndjson_reader *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->name = strdup(name ? name : "<input>");
    if (!r->name) {
        free(r);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    r->in = in;
    r->max_line = OG_NDJSON_MAX_LINE;
    og_jdoc_init(&r->doc);
    *out = r;
    return OG_OK;
}

void og_ndjson_reader_set_max_line(og_ndjson_reader *r, size_t max) { r->max_line = max; }

uint64_t og_ndjson_bytes_read(const og_ndjson_reader *r) { return r->async ? r->async->consumed : r->bytes; }

static void batch_clear(nd_batch *b)
{
    og_jdoc_reset(&b->doc);
    free(b->errmsg);
    b->n = 0;
    b->raw_len = 0;
    b->done = 0;
    b->err = OG_OK;
    b->errmsg = NULL;
}

static void async_free(og_ndjson_reader *r)
{
    struct nd_async *a = r->async;
    if (!a) return;
    og_batch_ring_free(a->ring); /* stops and joins the workers */
    for (int i = 0; i < RING; i++) {
        if (!a->batches[i]) continue;
        batch_clear(a->batches[i]);
        og_jdoc_free(&a->batches[i]->doc);
        free(a->batches[i]->raw);
        free(a->batches[i]);
    }
    free(a);
    r->async = NULL;
}

void og_ndjson_reader_free(og_ndjson_reader *r)
{
    if (!r) return;
    async_free(r);
    og_jdoc_free(&r->doc);
    free(r->line);
    free(r->name);
    free(r);
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

static int fail(const char *name, uint64_t lineno, og_status *err, og_status code, const char *what)
{
    *err = og_err(code, "%s:%llu: %s", name, (unsigned long long)lineno, what);
    return -1;
}

/* The `data` of records without one: a shared empty object. */
static const og_jtok empty_object = {OG_J_OBJECT, 1, 0, {0}};

static int is_key(const og_jtok *k, const char *s, size_t n) { return k->len == n && !memcmp(k->v.s, s, n); }

/* Checks the envelope of one parsed line (root token obj) and fills rec. */
static int check_envelope(const char *nm, uint64_t ln, const og_jtok *obj, og_ndjson_record *rec, og_status *err)
{
    char msg[512];
    if (obj->kind != OG_J_OBJECT) return fail(nm, ln, err, OG_ERR_PARSE, "each line must be a JSON object");
    const og_jtok *type = NULL, *edge = NULL, *data = NULL, *from = NULL, *to = NULL, *id = NULL;
    const og_jtok *k = obj + 1;
    for (uint32_t m = 0; m < obj->len; m++, k = og_jtok_next(k + 1)) {
        const og_jtok *v = k + 1;
        if (is_key(k, "type", 4)) type = v;
        else if (is_key(k, "edge", 4)) edge = v;
        else if (is_key(k, "data", 4)) data = v;
        else if (is_key(k, "from", 4)) from = v;
        else if (is_key(k, "to", 2)) to = v;
        else if (is_key(k, "id", 2)) id = v; /* any other key is reported below */
    }
    if (type && edge) return fail(nm, ln, err, OG_ERR_PARSE, "a line has both \"type\" and \"edge\"; a record is a node or an edge");
    if (!type && !edge) return fail(nm, ln, err, OG_ERR_PARSE, "a line needs \"type\" (a node) or \"edge\" (an edge)");
    const og_jtok *name = type ? type : edge;
    if (name->kind != OG_J_STRING || name->len == 0)
        return fail(nm, ln, err, OG_ERR_PARSE, type ? "\"type\" must be a non-empty string" : "\"edge\" must be a non-empty string");
    k = obj + 1;
    for (uint32_t m = 0; m < obj->len; m++, k = og_jtok_next(k + 1)) {
        int ok = is_key(k, "id", 2) || (type ? (is_key(k, "type", 4) || is_key(k, "data", 4))
                                             : (is_key(k, "edge", 4) || is_key(k, "from", 4) || is_key(k, "to", 2) ||
                                                is_key(k, "data", 4)));
        if (!ok) {
            snprintf(msg, sizeof msg, "unknown %s envelope key \"%s\" (allowed: %s)", type ? "node" : "edge", k->v.s,
                     type ? "type, id, data" : "edge, id, from, to, data");
            return fail(nm, ln, err, OG_ERR_PARSE, msg);
        }
    }
    if (data && data->kind != OG_J_OBJECT) return fail(nm, ln, err, OG_ERR_PARSE, "\"data\" must be a JSON object");
    if (!data) data = &empty_object; /* no object per line: most edges have no data */
    memset(rec, 0, sizeof *rec);
    rec->line = ln;
    rec->type = name->v.s;
    rec->data = data;
    if (id && (id->kind != OG_J_STRING || id->len == 0))
        return fail(nm, ln, err, OG_ERR_PARSE, "\"id\" must be a non-empty string");
    rec->id = id ? id->v.s : NULL;
    if (type) {
        rec->kind = OG_NDJSON_NODE;
        return 1;
    }
    rec->kind = OG_NDJSON_EDGE;
    if (!from || !to) return fail(nm, ln, err, OG_ERR_PARSE, "an edge needs \"from\" and \"to\"");
    if (from->kind != OG_J_STRING || to->kind != OG_J_STRING)
        return fail(nm, ln, err, OG_ERR_PARSE, "edge \"from\" and \"to\" must be strings (node ids)");
    rec->from = from->v.s;
    rec->to = to->v.s;
    rec->from_len = from->len;
    rec->to_len = to->len;
    return 1;
}

/* Parses one non-blank line (modified in place) into doc and checks its envelope. */
static int parse_line(const og_ndjson_reader *r, og_jdoc *doc, uint64_t lineno, char *text, size_t n,
                      og_ndjson_record *rec, og_status *err)
{
    char jmsg[200];
    size_t root;
    og_status st = og_json_parse(doc, text, n, &root, jmsg, sizeof jmsg);
    if (st == OG_ERR_NOMEM) {
        *err = og_err(OG_ERR_NOMEM, "out of memory");
        return -1;
    }
    if (st != OG_OK) {
        char msg[400];
        const char *hint = lineno == 1 && n >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)
                               ? " (the file starts with a UTF-8 byte order mark; save it without one)"
                           : strstr(jmsg, "premature end")
                               ? " (the line ends inside a JSON value: a truncated file, or a line break inside a value?)"
                               : "";
        snprintf(msg, sizeof msg, "invalid JSON at %s%s", jmsg, hint);
        return fail(r->name, lineno, err, OG_ERR_PARSE, msg);
    }
    return check_envelope(r->name, lineno, &doc->tok[root], rec, err);
}

/* The next non-blank line into r->line: 1 with its length, 0 at the end, -1 on a failure. */
static int read_line(og_ndjson_reader *r, size_t *len, og_status *err)
{
    for (;;) {
        errno = 0;
        ssize_t n = getline(&r->line, &r->cap, r->in);
        if (n < 0) {
            if (ferror(r->in)) {
                *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
                return -1;
            }
            return 0;
        }
        r->lineno++;
        r->bytes += (uint64_t)n;
        if ((size_t)n > r->max_line) {
            char msg[128];
            snprintf(msg, sizeof msg, "line is %zd bytes, over the %zu-byte limit", n, r->max_line);
            return fail(r->name, r->lineno, err, OG_ERR_LIMIT, msg);
        }
        if (is_blank(r->line, (size_t)n)) continue;
        *len = (size_t)n;
        return 1;
    }
}

/* The sequential read: the next record with r->current owning its DOM. */
static int read_next(og_ndjson_reader *r, og_ndjson_record *rec, og_status *err)
{
    *err = OG_OK;
    og_jdoc_reset(&r->doc);
    size_t n;
    int k = read_line(r, &n, err);
    if (k <= 0) return k;
    return parse_line(r, &r->doc, r->lineno, r->line, n, rec, err);
}

/* ---- background parsing ------------------------------------------------------------------- */

/* Sets b's failure (the first one wins: a parse error comes before a later read error). */
static void batch_fail(nd_batch *b, og_status st)
{
    b->done = 1;
    b->err = st;
    free(b->errmsg);
    b->errmsg = strdup(og_error_message());
    if (!b->errmsg) b->err = OG_ERR_NOMEM;
}

/* Copies the raw lines of one batch out of the input (the caller holds the read turn). */
static void batch_read(og_ndjson_reader *r, nd_batch *b)
{
    while (b->n < BATCH_RECORDS && b->raw_len < BATCH_BYTES) {
        size_t n;
        og_status st = OG_OK;
        int k = read_line(r, &n, &st);
        if (k <= 0) {
            if (k < 0) batch_fail(b, st);
            b->done = 1;
            return;
        }
        if (b->raw_cap - b->raw_len < n) {
            size_t cap = b->raw_cap ? b->raw_cap : BATCH_BYTES;
            while (cap - b->raw_len < n) cap *= 2;
            char *raw = realloc(b->raw, cap);
            if (!raw) {
                batch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
                return;
            }
            b->raw = raw;
            b->raw_cap = cap;
        }
        nd_item *it = &b->items[b->n++];
        memcpy(b->raw + b->raw_len, r->line, n);
        it->line = r->lineno;
        it->off = b->raw_len;
        it->len = n;
        it->bytes = r->bytes;
        b->raw_len += n;
    }
}

/* Parses the batch's lines; a failure keeps the records before it.  Records point at tokens
 * by index until the last line is parsed (the token array may move while it grows). */
static void batch_parse(const og_ndjson_reader *r, nd_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        nd_item *it = &b->items[i];
        og_status st = OG_OK;
        if (parse_line(r, &b->doc, it->line, b->raw + it->off, it->len, &it->rec, &st) < 0) {
            b->n = i;
            batch_fail(b, st);
            break;
        }
        it->data_tok = it->rec.data == &empty_object ? SIZE_MAX : (size_t)(it->rec.data - b->doc.tok);
    }
    for (size_t i = 0; i < b->n; i++) {
        nd_item *it = &b->items[i];
        it->rec.data = it->data_tok == SIZE_MAX ? &empty_object : &b->doc.tok[it->data_tok];
    }
}

static void ring_clear(void *ctx, void *worker, void *batch)
{
    (void)ctx, (void)worker;
    batch_clear(batch); /* the DOMs this worker made for the slot's previous batch */
}

static int ring_read(void *ctx, void *worker, void *batch)
{
    (void)worker;
    nd_batch *b = batch;
    batch_read(ctx, b);
    return b->done;
}

static int ring_parse(void *ctx, void *worker, void *batch, int ended)
{
    (void)worker, (void)ended;
    nd_batch *b = batch;
    batch_parse(ctx, b);
    return b->done;
}

og_status og_ndjson_reader_start(og_ndjson_reader *r)
{
    if (r->async || r->lineno) return og_err(OG_ERR_INVALID, "ndjson: background parsing must start before the first read");
    struct nd_async *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
    r->async = a;
    for (int i = 0; i < RING; i++)
        if (!(a->batches[i] = calloc(1, sizeof *a->batches[i]))) {
            async_free(r);
            return og_err(OG_ERR_NOMEM, "out of memory");
        }
    static const og_batch_ring_ops ops = {ring_clear, ring_read, ring_parse};
    void *workers[WORKERS];
    for (int i = 0; i < WORKERS; i++) workers[i] = r;
    og_status st = og_batch_ring_start(&a->ring, &ops, r, workers, WORKERS, (void *const *)a->batches, RING);
    if (st) async_free(r);
    return st;
}

static int async_next(og_ndjson_reader *r, og_ndjson_record *rec, og_status *err)
{
    struct nd_async *a = r->async;
    *err = OG_OK;
    for (;;) {
        nd_batch *b = og_batch_ring_take(a->ring);
        if (a->pos < b->n) {
            nd_item *it = &b->items[a->pos++];
            *rec = it->rec;
            a->consumed = it->bytes;
            return 1;
        }
        if (b->done) { /* stays held: every later call answers the same */
            if (b->err) *err = og_err(b->err, "%s", b->errmsg ? b->errmsg : "ndjson: read failed");
            return b->err ? -1 : 0;
        }
        /* release the batch (its worker frees the records' DOMs when it refills the slot) */
        og_batch_ring_release(a->ring);
        a->pos = 0;
    }
}

int og_ndjson_next(og_ndjson_reader *r, og_ndjson_record *rec, og_status *err)
{
    return r->async ? async_next(r, rec, err) : read_next(r, rec, err);
}

const og_ndjson_record *og_ndjson_peek(const og_ndjson_reader *r, size_t k)
{
    const struct nd_async *a = r->async;
    const nd_batch *b = a ? og_batch_ring_held(a->ring) : NULL;
    return b && a->pos + k < b->n ? &b->items[a->pos + k].rec : NULL;
}

void og_ndjson_skip(og_ndjson_reader *r, size_t k)
{
    struct nd_async *a = r->async;
    const nd_batch *b = a ? og_batch_ring_held(a->ring) : NULL;
    if (!k || !b) return;
    a->pos += k;
    a->consumed = b->items[a->pos - 1].bytes;
}
