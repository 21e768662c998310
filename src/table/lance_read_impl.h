/*
 * lance_read_impl.h — private to lance_read.c (opening, page plans) and lance_decode.c
 * (decoding rows, scans).  Not part of table/'s contract: use lance_file.h.
 *
 * Memory: the reader owns everything declared here; og_lance_span points into the caller's
 * file bytes (borrowed, see lance_file.h).
 */
#ifndef OG_TABLE_LANCE_READ_IMPL_H
#define OG_TABLE_LANCE_READ_IMPL_H

#include "table/lance_file.h"

/* A bounds-checked slice of the file.  `off` is its position in the file.  In a reader over a
 * range source (og_lance_reader_open_source) a span outside the metadata window is "remote":
 * p stays NULL except while a read has its page pinned (lance_decode.c pin_pages). */
typedef struct og_lance_span {
    const uint8_t *p;
    uint64_t len;
    uint64_t off;
    int remote;
} og_lance_span;

/* The shape of a page after its encoding tree has been matched (lance_read.c plan_page). */
enum {
    OG_LPF_ALLNULL = 1, /* every row null, no buffers */
    OG_LPF_FIXED,       /* values (+ validity): fixed-width, bool bits, or vector floats */
    OG_LPF_BINARY,      /* end offsets (offs, obits, adj) + bytes (+ validity) */
    OG_LPF_LIST,        /* end offsets (offs, obits, adj) into the child column (+ validity) */
    OG_LPF_DICT         /* idx (ibits; 0 = null, k = item k-1) into dict_n binary items */
};

typedef struct og_lance_page {
    uint64_t row_start, rows;       /* rows of this page within the column */
    uint64_t item_start, num_items; /* LIST: the child items the page references */
    int form;
    int has_validity;
    og_lance_span validity;         /* one bit per row, 1 = present */
    og_lance_span values;           /* FIXED */
    og_lance_span offs;             /* BINARY / LIST / DICT items: end offsets */
    unsigned obits;                 /* 32 or 64 */
    uint64_t adj;                   /* null adjustment (0 = no null offsets) */
    og_lance_span bytes;            /* BINARY / DICT items */
    og_lance_span idx;              /* DICT indices */
    unsigned ibits;
    uint64_t dict_n;
} og_lance_page;

typedef struct og_lance_column {
    og_type type;                   /* LIST for a list field, the element type for its child */
    og_lance_page *pages;
    size_t npages;
    uint64_t total_rows;            /* sum of page rows */
    uint64_t total_items;           /* LIST: sum of num_items */
    og_lance_span *col_bufs;        /* ColumnMetadata buffers */
    size_t ncol_bufs;
    size_t prefetched;              /* range source: pages [0, prefetched) were hinted already */
} og_lance_column;

struct og_lance_reader {
    /* The bytes the metadata is parsed from: the whole file for og_lance_reader_open
     * (win_off 0, win_len = size), the fetched tail of it for a range source. */
    const uint8_t *win;
    uint64_t win_off, win_len;
    size_t size;                    /* the whole file's size */
    int sourced;                    /* 1: opened over a range source (pages fetched on demand) */
    og_lance_source src;
    void *win_pin;
    uint16_t major, minor;
    uint64_t num_rows;
    og_lance_schema schema;
    og_lance_column *cols;          /* one per schema field */
    size_t ncols;
    og_lance_span *gbufs;
    size_t ngbufs;
};

#endif
