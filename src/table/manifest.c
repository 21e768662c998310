/*
 * manifest.c — lance.table.Manifest encode/decode and the manifest file layout.  See
 * manifest.h for the field numbers and the layout; LANCE.md "Manifest" for why each field is
 * written the way it is (max_fragment_id written even when 0, feature flags, data_format).
 */
#include "table/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/pb.h"

/* Manifest */
enum {
    M_FIELDS = 1, M_FRAGMENTS = 2, M_VERSION = 3, M_INDEX_SECTION = 6, M_TIMESTAMP = 7,
    M_READER_FLAGS = 9, M_WRITER_FLAGS = 10, M_MAX_FRAGMENT_ID = 11, M_WRITER_VERSION = 13,
    M_DATA_FORMAT = 15
};
/* DataFragment */
enum { F_ID = 1, F_FILES = 2, F_DELETION = 3, F_PHYSICAL_ROWS = 4 };
/* DataFile */
enum { D_PATH = 1, D_FIELDS = 2, D_COLUMNS = 3, D_MAJOR = 4, D_MINOR = 5, D_SIZE = 6 };
/* DeletionFile */
enum { X_TYPE = 1, X_READ_VERSION = 2, X_ID = 3, X_NUM_DELETED = 4 };

static const uint8_t footer_magic[4] = {'L', 'A', 'N', 'C'};

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                    */
/* ---------------------------------------------------------------------------------------- */

void og_manifest_init(og_manifest *m)
{
    memset(m, 0, sizeof *m);
}

static void data_file_free(og_data_file *d)
{
    free(d->path);
    free(d->fields);
    free(d->column_indices);
    memset(d, 0, sizeof *d);
}

void og_fragment_free(og_fragment *f)
{
    if (!f->in_arena) {
        for (size_t i = 0; i < f->nfiles; i++) data_file_free(&f->files[i]);
        free(f->files);
    }
    memset(f, 0, sizeof *f);
}

void og_manifest_free(og_manifest *m)
{
    og_lance_schema_free(&m->schema);
    for (size_t i = 0; i < m->nfragments; i++) og_fragment_free(&m->fragments[i]);
    free(m->fragments);
    free(m->arena);
    free(m->writer_library);
    free(m->writer_version);
    free(m->format_name);
    free(m->format_version);
    og_manifest_init(m);
}

static og_status dup_str(char **dst, const char *src)
{
    *dst = NULL;
    if (!src) return OG_OK;
    *dst = strdup(src);
    return *dst ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static og_status dup_i32s(int32_t **dst, const int32_t *src, size_t n)
{
    *dst = NULL;
    if (!n) return OG_OK;
    *dst = malloc(n * sizeof **dst);
    if (!*dst) return og_err(OG_ERR_NOMEM, "out of memory");
    memcpy(*dst, src, n * sizeof **dst);
    return OG_OK;
}

static og_status data_file_copy(og_data_file *dst, const og_data_file *src)
{
    memset(dst, 0, sizeof *dst);
    og_status st = dup_str(&dst->path, src->path);
    if (st == OG_OK) st = dup_i32s(&dst->fields, src->fields, src->nfields);
    if (st == OG_OK) st = dup_i32s(&dst->column_indices, src->column_indices, src->ncolumn_indices);
    if (st != OG_OK) {
        data_file_free(dst);
        return st;
    }
    dst->nfields = src->nfields;
    dst->ncolumn_indices = src->ncolumn_indices;
    dst->major = src->major;
    dst->minor = src->minor;
    dst->size_bytes = src->size_bytes;
    return OG_OK;
}

og_status og_fragment_copy(og_fragment *dst, const og_fragment *src)
{
    memset(dst, 0, sizeof *dst);
    dst->id = src->id;
    dst->deletion = src->deletion;
    dst->physical_rows = src->physical_rows;
    if (src->nfiles) {
        dst->files = calloc(src->nfiles, sizeof *dst->files);
        if (!dst->files) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < src->nfiles; i++) {
            og_status st = data_file_copy(&dst->files[i], &src->files[i]);
            if (st != OG_OK) {
                og_fragment_free(dst);
                return st;
            }
            dst->nfiles = i + 1;
        }
    }
    return OG_OK;
}

og_status og_manifest_add_fragment(og_manifest *m, const og_fragment *f)
{
    og_fragment *p = realloc(m->fragments, (m->nfragments + 1) * sizeof *p);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    m->fragments = p;
    OG_TRY(og_fragment_copy(&m->fragments[m->nfragments], f));
    m->nfragments++;
    return OG_OK;
}

og_status og_manifest_set_strings(og_manifest *m, const char *writer_library,
                                  const char *writer_version, const char *format_name,
                                  const char *format_version)
{
    char *s[4];
    const char *src[4] = {writer_library, writer_version, format_name, format_version};
    for (int i = 0; i < 4; i++) {
        og_status st = dup_str(&s[i], src[i]);
        if (st != OG_OK) {
            for (int j = 0; j < i; j++) free(s[j]);
            return st;
        }
    }
    free(m->writer_library);
    free(m->writer_version);
    free(m->format_name);
    free(m->format_version);
    m->writer_library = s[0];
    m->writer_version = s[1];
    m->format_name = s[2];
    m->format_version = s[3];
    return OG_OK;
}

/* Points an in_arena fragment copied from arena `from` at the same bytes of arena `to`. */
static void arena_rebase(og_fragment *f, const void *from, void *to)
{
#define REBASE(p) ((p) ? (void *)((uint8_t *)to + ((const uint8_t *)(const void *)(p) - (const uint8_t *)from)) : NULL)
    f->files = REBASE(f->files);
    for (size_t k = 0; k < f->nfiles; k++) {
        og_data_file *d = &f->files[k];
        d->path = REBASE(d->path);
        d->fields = REBASE(d->fields);
        d->column_indices = REBASE(d->column_indices);
    }
#undef REBASE
}

og_status og_manifest_copy(og_manifest *dst, const og_manifest *src)
{
    og_manifest_init(dst);
    og_status st = og_lance_schema_copy(&dst->schema, &src->schema);
    if (st == OG_OK && src->nfragments && !(dst->fragments = malloc(src->nfragments * sizeof *dst->fragments)))
        st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && src->arena) { /* the arena's files in one copy, their pointers moved over */
        if (!(dst->arena = malloc(src->arena_used ? src->arena_used : 1))) st = og_err(OG_ERR_NOMEM, "out of memory");
        else memcpy(dst->arena, src->arena, src->arena_used), dst->arena_used = src->arena_used;
    }
    for (size_t i = 0; st == OG_OK && i < src->nfragments; i++) { /* (room for all: no realloc each) */
        if (src->fragments[i].in_arena) {
            dst->fragments[i] = src->fragments[i];
            arena_rebase(&dst->fragments[i], src->arena, dst->arena);
        } else {
            st = og_fragment_copy(&dst->fragments[i], &src->fragments[i]);
        }
        if (st == OG_OK) dst->nfragments++;
    }
    if (st == OG_OK)
        st = og_manifest_set_strings(dst, src->writer_library, src->writer_version,
                                     src->format_name, src->format_version);
    if (st != OG_OK) {
        og_manifest_free(dst);
        return st;
    }
    dst->version = src->version;
    dst->ts_seconds = src->ts_seconds;
    dst->ts_nanos = src->ts_nanos;
    dst->reader_flags = src->reader_flags;
    dst->writer_flags = src->writer_flags;
    dst->has_max_fragment_id = src->has_max_fragment_id;
    dst->max_fragment_id = src->max_fragment_id;
    dst->has_index_section = src->has_index_section;
    return OG_OK;
}

long og_manifest_find_fragment(const og_manifest *m, uint64_t id)
{
    /* Fragments are listed by ascending id as a rule (appends take the next id): a binary
     * search first — its hit is checked, ids are unique — then the scan for any other order.
     * A point read of one row of a 153-fragment table searched it twice per call. */
    size_t lo = 0, hi = m->nfragments;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->fragments[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < m->nfragments && m->fragments[lo].id == id) return (long)lo;
    for (size_t i = 0; i < m->nfragments; i++)
        if (m->fragments[i].id == id) return (long)i;
    return -1;
}

uint64_t og_fragment_live_rows(const og_fragment *f)
{
    uint64_t del = f->deletion.present ? f->deletion.num_deleted_rows : 0;
    return del >= f->physical_rows ? 0 : f->physical_rows - del;
}

uint64_t og_manifest_live_rows(const og_manifest *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->nfragments; i++) n += og_fragment_live_rows(&m->fragments[i]);
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Encoding                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static og_status put_packed_i32(og_buf *b, uint32_t field, const int32_t *v, size_t n)
{
    uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) return og_err(OG_ERR_NOMEM, "out of memory");
    /* int32 on the wire: sign-extended to 64 bits (a negative id takes 10 bytes). */
    for (size_t i = 0; i < n; i++) tmp[i] = (uint64_t)(int64_t)v[i];
    og_status st = og_pb_put_packed_uint(b, field, tmp, n);
    free(tmp);
    return st;
}

static og_status encode_data_file(const og_data_file *d, og_buf *b)
{
    OG_TRY(og_pb_put_str(b, D_PATH, d->path ? d->path : ""));
    if (d->nfields) OG_TRY(put_packed_i32(b, D_FIELDS, d->fields, d->nfields));
    if (d->ncolumn_indices) OG_TRY(put_packed_i32(b, D_COLUMNS, d->column_indices, d->ncolumn_indices));
    if (d->major) OG_TRY(og_pb_put_uint(b, D_MAJOR, d->major));
    if (d->minor) OG_TRY(og_pb_put_uint(b, D_MINOR, d->minor));
    if (d->size_bytes) OG_TRY(og_pb_put_uint(b, D_SIZE, d->size_bytes));
    return OG_OK;
}

static og_status encode_deletion(const og_deletion_info *x, og_buf *b)
{
    /* file_type is an enum whose 0 is ARROW_ARRAY: write it even when 0 is not needed by
     * proto3, but harmless; we only ever write BITMAP (1). */
    OG_TRY(og_pb_put_uint(b, X_TYPE, (uint64_t)x->kind));
    OG_TRY(og_pb_put_uint(b, X_READ_VERSION, x->read_version));
    OG_TRY(og_pb_put_uint(b, X_ID, x->id));
    OG_TRY(og_pb_put_uint(b, X_NUM_DELETED, x->num_deleted_rows));
    return OG_OK;
}

static og_status encode_fragment(const og_fragment *f, og_buf *b)
{
    og_status st = og_pb_put_uint(b, F_ID, f->id);
    og_buf tmp = OG_BUF_INIT;
    for (size_t i = 0; st == OG_OK && i < f->nfiles; i++) {
        og_buf_reset(&tmp);
        st = encode_data_file(&f->files[i], &tmp);
        if (st == OG_OK) st = og_pb_put_msg(b, F_FILES, &tmp);
    }
    if (st == OG_OK && f->deletion.present) {
        og_buf_reset(&tmp);
        st = encode_deletion(&f->deletion, &tmp);
        if (st == OG_OK) st = og_pb_put_msg(b, F_DELETION, &tmp);
    }
    if (st == OG_OK) st = og_pb_put_uint(b, F_PHYSICAL_ROWS, f->physical_rows);
    og_buf_free(&tmp);
    return st;
}

static og_status put_str_pair(og_buf *b, uint32_t field, const char *a, const char *c)
{
    og_buf tmp = OG_BUF_INIT;
    og_status st = OG_OK;
    if (a) st = og_pb_put_str(&tmp, 1, a);
    if (st == OG_OK && c) st = og_pb_put_str(&tmp, 2, c);
    if (st == OG_OK) st = og_pb_put_msg(b, field, &tmp);
    og_buf_free(&tmp);
    return st;
}

og_status og_manifest_encode(const og_manifest *m, og_buf *out)
{
    OG_TRY(og_lance_schema_encode_fields(&m->schema, M_FIELDS, out));
    og_buf tmp = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; st == OG_OK && i < m->nfragments; i++) {
        og_buf_reset(&tmp);
        st = encode_fragment(&m->fragments[i], &tmp);
        if (st == OG_OK) st = og_pb_put_msg(out, M_FRAGMENTS, &tmp);
    }
    if (st == OG_OK) st = og_pb_put_uint(out, M_VERSION, m->version);
    if (st == OG_OK) {
        og_buf_reset(&tmp);
        if (m->ts_seconds) st = og_pb_put_int(&tmp, 1, m->ts_seconds);
        if (st == OG_OK && m->ts_nanos) st = og_pb_put_int(&tmp, 2, m->ts_nanos);
        if (st == OG_OK) st = og_pb_put_msg(out, M_TIMESTAMP, &tmp);
    }
    if (st == OG_OK) st = og_pb_put_uint(out, M_READER_FLAGS, m->reader_flags);
    if (st == OG_OK) st = og_pb_put_uint(out, M_WRITER_FLAGS, m->writer_flags);
    /* proto3 optional: its presence matters, so it is written even when 0. */
    if (st == OG_OK && m->has_max_fragment_id) st = og_pb_put_uint(out, M_MAX_FRAGMENT_ID, m->max_fragment_id);
    if (st == OG_OK && (m->writer_library || m->writer_version))
        st = put_str_pair(out, M_WRITER_VERSION, m->writer_library, m->writer_version);
    if (st == OG_OK && (m->format_name || m->format_version))
        st = put_str_pair(out, M_DATA_FORMAT, m->format_name, m->format_version);
    og_buf_free(&tmp);
    return st;
}

og_status og_manifest_file_encode(const og_manifest *m, og_buf *out)
{
    size_t start = out->len;
    OG_TRY(og_buf_append_u32le(out, 0)); /* length, patched below */
    OG_TRY(og_manifest_encode(m, out));
    size_t len = out->len - start - 4;
    if (len > UINT32_MAX) return og_err(OG_ERR_LIMIT, "manifest of %zu bytes is too large", len);
    uint8_t *lp = out->data + start;
    lp[0] = (uint8_t)len;
    lp[1] = (uint8_t)(len >> 8);
    lp[2] = (uint8_t)(len >> 16);
    lp[3] = (uint8_t)(len >> 24);
    OG_TRY(og_buf_append_u64le(out, 0)); /* position of the length word within the file */
    OG_TRY(og_buf_append_u16le(out, 0));
    OG_TRY(og_buf_append_u16le(out, 2));
    return og_buf_append(out, footer_magic, 4);
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static og_status corrupt(const char *what)
{
    return og_err(OG_ERR_CORRUPT, "manifest: %s", what);
}

static og_status expect_wire(const og_pb_field *f, int wire)
{
    if (f->wire != wire) return og_err(OG_ERR_CORRUPT, "manifest: field %u has wire type %d", f->field, f->wire);
    return OG_OK;
}

/* The decoder's arena (og_manifest.arena): a bump allocator over one block sized from the
 * manifest's bytes so that it never runs out (arena_bound); NULL a = malloc. */
typedef struct arena {
    uint8_t *base;
    size_t cap, used;
} arena;

/* Bytes an arena needs at most for a manifest of n bytes: a data file takes at least 2
 * encoded bytes and at most 8-aligned struct + path + NUL + two int32 arrays whose values
 * take a byte each, so 4 x its bytes plus ~100 covers it. */
static size_t arena_bound(size_t n) { return 50 * n + 64; }

static void *arena_take(arena *a, size_t n)
{
    size_t at = (a->used + 7) & ~(size_t)7;
    if (at > a->cap || n > a->cap - at) return NULL; /* (arena_bound makes this unreachable) */
    a->used = at + n;
    return a->base + at;
}

static og_status take_str(const og_pb_field *f, char **dst, arena *a)
{
    OG_TRY(expect_wire(f, OG_PB_LEN));
    if (memchr(f->data, 0, f->len)) return corrupt("string with a NUL byte");
    char *s = a ? arena_take(a, f->len + 1) : malloc(f->len + 1);
    if (!s) return a ? OG_ERR_LIMIT : og_err(OG_ERR_NOMEM, "out of memory"); /* (LIMIT: decode it without the arena) */
    memcpy(s, f->data, f->len);
    s[f->len] = '\0';
    if (!a) free(*dst);
    *dst = s;
    return OG_OK;
}

/* Repeated int32 (packed or not): appended to *v — decoded in place, one realloc (a
 * manifest holds two such lists per data file; a 763-fragment manifest's temporary arrays
 * were a third of its decode). */
static og_status take_i32s(const og_pb_field *f, int32_t **v, size_t *n, arena *a)
{
    size_t k = 1;
    if (f->wire == OG_PB_LEN) { /* a value ends at each byte without the continuation bit */
        k = 0;
        for (size_t i = 0; i < f->len; i++) k += !(f->data[i] & 0x80);
        if (f->len && (f->data[f->len - 1] & 0x80)) return corrupt("bad repeated int32");
    } else if (f->wire != OG_PB_VARINT) {
        return corrupt("bad repeated int32");
    }
    if (!k) return OG_OK;
    int32_t *p;
    if (a) { /* (a repeated field seen again: a new run, the old one left in the arena) */
        p = arena_take(a, (*n + k) * sizeof *p);
        if (p && *n) memcpy(p, *v, *n * sizeof *p);
    } else {
        p = realloc(*v, (*n + k) * sizeof *p);
    }
    if (!p) return a ? OG_ERR_LIMIT : og_err(OG_ERR_NOMEM, "out of memory"); /* (LIMIT: decode it without the arena) */
    *v = p;
    og_pb_reader r = {NULL, NULL};
    if (f->wire == OG_PB_LEN) r = og_pb_reader_init(f->data, f->len);
    for (size_t i = 0; i < k; i++) {
        uint64_t u = f->u;
        if (f->wire == OG_PB_LEN) OG_TRY(og_pb_read_varint(&r, &u));
        int64_t x = (int64_t)u;
        if (x < INT32_MIN || x > INT32_MAX) return corrupt("int32 out of range");
        p[(*n)++] = (int32_t)x;
    }
    return OG_OK;
}

static og_status decode_data_file(const uint8_t *p, size_t n, og_data_file *d, arena *a)
{
    og_pb_reader r = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    while (st == OG_OK && (rc = og_pb_next(&r, &f)) == 1) {
        switch (f.field) {
        case D_PATH: st = take_str(&f, &d->path, a); break;
        case D_FIELDS: st = take_i32s(&f, &d->fields, &d->nfields, a); break;
        case D_COLUMNS: st = take_i32s(&f, &d->column_indices, &d->ncolumn_indices, a); break;
        case D_MAJOR:
            st = expect_wire(&f, OG_PB_VARINT);
            if (st == OG_OK && f.u > UINT32_MAX) st = corrupt("file major version out of range");
            d->major = (uint32_t)f.u;
            break;
        case D_MINOR:
            st = expect_wire(&f, OG_PB_VARINT);
            if (st == OG_OK && f.u > UINT32_MAX) st = corrupt("file minor version out of range");
            d->minor = (uint32_t)f.u;
            break;
        case D_SIZE: st = expect_wire(&f, OG_PB_VARINT); d->size_bytes = f.u; break;
        default: break;
        }
    }
    if (st != OG_OK) return st;
    if (rc < 0) return OG_ERR_CORRUPT;
    if (!d->path || !d->path[0]) return corrupt("data file without a path");
    if (strstr(d->path, "..") || d->path[0] == '/') return corrupt("data file path escapes data/");
    if (d->ncolumn_indices && d->ncolumn_indices != d->nfields)
        return corrupt("data file fields and column_indices differ in length");
    return OG_OK;
}

static og_status decode_deletion(const uint8_t *p, size_t n, og_deletion_info *x)
{
    og_pb_reader r = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    memset(x, 0, sizeof *x);
    x->present = 1;
    x->kind = OG_DELETION_ARROW_ARRAY; /* proto3 default */
    while ((rc = og_pb_next(&r, &f)) == 1) {
        if (f.field >= X_TYPE && f.field <= X_NUM_DELETED) OG_TRY(expect_wire(&f, OG_PB_VARINT));
        switch (f.field) {
        case X_TYPE:
            if (f.u > 1) return corrupt("unknown deletion file type");
            x->kind = (og_deletion_kind)f.u;
            break;
        case X_READ_VERSION: x->read_version = f.u; break;
        case X_ID: x->id = f.u; break;
        case X_NUM_DELETED: x->num_deleted_rows = f.u; break;
        default: break;
        }
    }
    return rc < 0 ? OG_ERR_CORRUPT : OG_OK;
}

/* Decodes one fragment; with an arena its data files live there (in_arena), else in
 * memory of their own.  A fragment of more files than fit the local list below, or one the
 * arena has no room left for (a repeated int32 list spelt out one value a field, which the
 * arena's bound does not cover), is decoded without the arena: OG_ERR_LIMIT tells the caller
 * to. */
#define ARENA_FILES 16
static og_status decode_fragment(const uint8_t *p, size_t n, og_fragment *fr, arena *a)
{
    og_pb_reader r = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    memset(fr, 0, sizeof *fr);
    og_data_file local[ARENA_FILES];
    fr->in_arena = a != NULL;
    while (st == OG_OK && (rc = og_pb_next(&r, &f)) == 1) {
        switch (f.field) {
        case F_ID: st = expect_wire(&f, OG_PB_VARINT); fr->id = f.u; break;
        case F_FILES: {
            st = expect_wire(&f, OG_PB_LEN);
            if (st != OG_OK) break;
            if (a) {
                if (fr->nfiles == ARENA_FILES) return OG_ERR_LIMIT; /* (nothing to free: all in the arena) */
                memset(&local[fr->nfiles], 0, sizeof local[0]);
                st = decode_data_file(f.data, f.len, &local[fr->nfiles++], a);
                break;
            }
            og_data_file *files = realloc(fr->files, (fr->nfiles + 1) * sizeof *files);
            if (!files) { st = og_err(OG_ERR_NOMEM, "out of memory"); break; }
            fr->files = files;
            memset(&files[fr->nfiles], 0, sizeof *files);
            fr->nfiles++;
            st = decode_data_file(f.data, f.len, &files[fr->nfiles - 1], NULL);
            break;
        }
        case F_DELETION:
            st = expect_wire(&f, OG_PB_LEN);
            if (st == OG_OK) st = decode_deletion(f.data, f.len, &fr->deletion);
            break;
        case F_PHYSICAL_ROWS: st = expect_wire(&f, OG_PB_VARINT); fr->physical_rows = f.u; break;
        default: break;
        }
    }
    if (st == OG_OK && rc < 0) st = OG_ERR_CORRUPT;
    if (st == OG_OK && fr->id > UINT32_MAX) st = corrupt("fragment id does not fit a row address");
    if (st == OG_OK && fr->physical_rows > UINT32_MAX) st = corrupt("fragment has too many rows");
    if (st == OG_OK && fr->deletion.present && fr->deletion.num_deleted_rows > fr->physical_rows)
        st = corrupt("fragment deletes more rows than it has");
    if (st == OG_OK && a && fr->nfiles) {
        if (!(fr->files = arena_take(a, fr->nfiles * sizeof *fr->files))) st = OG_ERR_LIMIT;
        else memcpy(fr->files, local, fr->nfiles * sizeof *fr->files);
    }
    if (st != OG_OK) og_fragment_free(fr);
    return st;
}

static og_status decode_pair(const og_pb_field *f, char **a, char **b)
{
    OG_TRY(expect_wire(f, OG_PB_LEN));
    og_pb_reader r = og_pb_reader_init(f->data, f->len);
    og_pb_field g;
    int rc;
    while ((rc = og_pb_next(&r, &g)) == 1) {
        if (g.field == 1) OG_TRY(take_str(&g, a, NULL));
        else if (g.field == 2) OG_TRY(take_str(&g, b, NULL));
    }
    return rc < 0 ? OG_ERR_CORRUPT : OG_OK;
}

static og_status decode_timestamp(const og_pb_field *f, og_manifest *m)
{
    OG_TRY(expect_wire(f, OG_PB_LEN));
    og_pb_reader r = og_pb_reader_init(f->data, f->len);
    og_pb_field g;
    int rc;
    while ((rc = og_pb_next(&r, &g)) == 1) {
        if (g.field == 1 && g.wire == OG_PB_VARINT) m->ts_seconds = (int64_t)g.u;
        else if (g.field == 2 && g.wire == OG_PB_VARINT) m->ts_nanos = (int32_t)(int64_t)g.u;
    }
    return rc < 0 ? OG_ERR_CORRUPT : OG_OK;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The fragment id that appears twice in m, or -1 (as a uint64_t: ids fit 32 bits).  Ids
 * ascend as a rule — one pass; any other order sorts a copy.  The pairwise check it replaces
 * was most of a fresh process's first traversal of a 763-fragment edge table (10M nodes,
 * docs/benchmarks.md "Scaling"). */
static uint64_t repeated_fragment_id(const og_manifest *m)
{
    size_t n = m->nfragments, i = 1;
    while (i < n && m->fragments[i - 1].id < m->fragments[i].id) i++;
    if (i >= n) return UINT64_MAX;
    uint64_t *ids = malloc(n * sizeof *ids);
    if (!ids) { /* (no memory for the copy: the pairs, as before) */
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < a; b++)
                if (m->fragments[a].id == m->fragments[b].id) return m->fragments[a].id;
        return UINT64_MAX;
    }
    for (size_t k = 0; k < n; k++) ids[k] = m->fragments[k].id;
    qsort(ids, n, sizeof *ids, u64_cmp);
    uint64_t dup = UINT64_MAX;
    for (size_t k = 1; k < n && dup == UINT64_MAX; k++)
        if (ids[k] == ids[k - 1]) dup = ids[k];
    free(ids);
    return dup;
}

static og_status check_manifest(const og_manifest *m)
{
    og_status st = og_lance_schema_validate(&m->schema);
    if (st != OG_OK) return og_err_wrap(st, "manifest schema");
    for (size_t i = 0; i < m->nfragments; i++) {
        const og_fragment *f = &m->fragments[i];
        if (m->has_max_fragment_id && f->id > m->max_fragment_id)
            return og_err(OG_ERR_CORRUPT, "manifest: fragment %llu above max_fragment_id %u",
                          (unsigned long long)f->id, m->max_fragment_id);
    }
    uint64_t dup = repeated_fragment_id(m);
    if (dup != UINT64_MAX)
        return og_err(OG_ERR_CORRUPT, "manifest: fragment id %llu appears twice", (unsigned long long)dup);
    return OG_OK;
}

og_status og_manifest_decode(const uint8_t *p, size_t n, og_manifest *m)
{
    og_manifest_init(m);
    og_pb_reader r = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    int have_version = 0;
    size_t fcap = 0; /* fragments allocated (doubling: one realloc per fragment was quadratic) */
    arena ar = {malloc(arena_bound(n)), arena_bound(n), 0}; /* (none: each file allocates) */
    m->arena = ar.base;
    while (st == OG_OK && (rc = og_pb_next(&r, &f)) == 1) {
        switch (f.field) {
        case M_FIELDS:
            st = expect_wire(&f, OG_PB_LEN);
            if (st == OG_OK) st = og_lance_schema_add_decoded(&m->schema, f.data, f.len);
            break;
        case M_FRAGMENTS: {
            st = expect_wire(&f, OG_PB_LEN);
            if (st != OG_OK) break;
            og_fragment fr;
            st = decode_fragment(f.data, f.len, &fr, ar.base ? &ar : NULL);
            if (st == OG_ERR_LIMIT) st = decode_fragment(f.data, f.len, &fr, NULL); /* (see decode_fragment) */
            if (st != OG_OK) break;
            if (m->nfragments == fcap) {
                size_t cap = fcap ? fcap * 2 : 8;
                og_fragment *frs = realloc(m->fragments, cap * sizeof *frs);
                if (!frs) {
                    og_fragment_free(&fr);
                    st = og_err(OG_ERR_NOMEM, "out of memory");
                    break;
                }
                m->fragments = frs;
                fcap = cap;
            }
            m->fragments[m->nfragments++] = fr;
            break;
        }
        case M_VERSION: st = expect_wire(&f, OG_PB_VARINT); m->version = f.u; have_version = 1; break;
        case M_INDEX_SECTION: m->has_index_section = 1; break;
        case M_TIMESTAMP: st = decode_timestamp(&f, m); break;
        case M_READER_FLAGS: st = expect_wire(&f, OG_PB_VARINT); m->reader_flags = f.u; break;
        case M_WRITER_FLAGS: st = expect_wire(&f, OG_PB_VARINT); m->writer_flags = f.u; break;
        case M_MAX_FRAGMENT_ID:
            st = expect_wire(&f, OG_PB_VARINT);
            if (st == OG_OK && f.u > UINT32_MAX) st = corrupt("max_fragment_id out of range");
            m->has_max_fragment_id = 1;
            m->max_fragment_id = (uint32_t)f.u;
            break;
        case M_WRITER_VERSION: st = decode_pair(&f, &m->writer_library, &m->writer_version); break;
        case M_DATA_FORMAT: st = decode_pair(&f, &m->format_name, &m->format_version); break;
        default: break;
        }
    }
    if (st == OG_OK && rc < 0) st = OG_ERR_CORRUPT;
    if (st == OG_OK && !have_version) st = corrupt("no version number");
    if (st == OG_OK) st = check_manifest(m);
    m->arena_used = ar.used;
    if (st == OG_OK && ar.base && ar.cap - ar.used > ((size_t)64 << 10)) { /* keep what is used */
        uint8_t *tight = malloc(ar.used ? ar.used : 1);
        if (tight) {
            memcpy(tight, ar.base, ar.used);
            for (size_t i = 0; i < m->nfragments; i++)
                if (m->fragments[i].in_arena) arena_rebase(&m->fragments[i], ar.base, tight);
            free(ar.base);
            m->arena = tight;
        }
    }
    if (st != OG_OK) {
        if (st == OG_ERR_CORRUPT && !og_error_message()[0]) og_err(OG_ERR_CORRUPT, "manifest: malformed");
        og_manifest_free(m);
    }
    return st;
}

og_status og_manifest_file_decode(const uint8_t *p, size_t n, og_manifest *m)
{
    og_manifest_init(m);
    if (n < OG_MANIFEST_FOOTER_SIZE + 4) return corrupt("file too short");
    const uint8_t *foot = p + n - OG_MANIFEST_FOOTER_SIZE;
    if (memcmp(foot + 12, footer_magic, 4) != 0) return corrupt("bad footer magic");
    uint64_t pos = og_load_u64le(foot);
    size_t body_end = n - OG_MANIFEST_FOOTER_SIZE;
    if (pos > body_end || body_end - pos < 4) return corrupt("footer position out of range");
    uint32_t len = og_load_u32le(p + pos);
    if (len > body_end - pos - 4) return corrupt("length word runs past the footer");
    return og_manifest_decode(p + pos + 4, len, m);
}

/* ---------------------------------------------------------------------------------------- */
/* Names                                                                                     */
/* ---------------------------------------------------------------------------------------- */

og_status og_manifest_path(char *out, size_t cap, uint64_t version)
{
    int k = snprintf(out, cap, "_versions/%020llu.manifest", (unsigned long long)(UINT64_MAX - version));
    if (k < 0 || (size_t)k >= cap) return og_err(OG_ERR_INVALID, "manifest path too long");
    return OG_OK;
}

int og_manifest_parse_name(const char *key, uint64_t *version, int *v2)
{
    const char *name = strrchr(key, '/');
    name = name ? name + 1 : key;
    const char *dot = strstr(name, ".manifest");
    if (!dot || strcmp(dot, ".manifest") != 0 || dot == name) return 0;
    size_t digits = (size_t)(dot - name);
    if (digits > 20) return 0;
    uint64_t v = 0;
    for (const char *c = name; c < dot; c++) {
        if (*c < '0' || *c > '9') return 0;
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    int is_v2 = digits == 20;
    if (is_v2) v = UINT64_MAX - v;
    if (v == 0) return 0;
    *version = v;
    if (v2) *v2 = is_v2;
    return 1;
}
