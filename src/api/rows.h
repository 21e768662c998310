/*
 * rows.h — the og_rows result object behind the public API (private to src/api/).
 */
#ifndef OG_API_ROWS_H
#define OG_API_ROWS_H

#include "engine/exec.h"
#include "graph/graph.h"
#include "omnigraph.h"
#include "util/buf.h"

struct og_rows {
    og_result res;
    char commit[OG_ULID_LEN + 1];
    char *query_name;
    char **type_names; /* per column, the .gq spelling */
    /* the time budget the query ran under, for og_rows_render_in_budget: its monotonic
     * deadline (0 = none) and its length in ms (for the message) */
    int64_t deadline_ms, time_ms;
};

/* Fills the derived fields (type names, query name) after the engine produced res. */
og_status og_rows_finish(og_rows *r, const char *name);

/* The JSON format through a jansson tree: what og_rows_render writes directly, byte for
 * byte (its fallback for the cases the direct writer leaves to it; tests compare the two). */
og_status og_rows_render_json_tree(og_buf *b, const og_rows *r, const char *target);
/* The JSON format written directly (no tree); -1, with b partly written, where it leaves the
 * document to the tree (object columns, names or strings that are not UTF-8, a column name
 * twice), else 0. */
int og_rows_render_json_direct(og_buf *b, const og_rows *r, const char *target);
/* Every renderer calls og_budget_check() once per row (a no-op unless og_rows_render_in_budget
 * began a budget); the direct JSON writer then returns this, with the error set. */
#define OG_ROWS_RENDER_STOPPED (-2)

/* The text formats (CSV, the aligned table) over cells whatever holds them (rows_text.c):
 * og_rows in process, a served result for og_read_output_render. */
typedef enum og_text_cell { OG_TEXT_NULL, OG_TEXT_STRING, OG_TEXT_OTHER } og_text_cell;
typedef struct og_text_grid {
    size_t ncols, nrows;
    const char *(*name)(const void *ctx, size_t col);
    /* appends the cell's text to out (nothing for a null) and says what it was */
    og_text_cell (*cell)(const void *ctx, size_t row, size_t col, og_buf *out);
    const void *ctx;
} og_text_grid;
/* CSV for OG_FORMAT_CSV, else the table (wide for OG_FORMAT_TABLE_WIDE); og_budget_check()
 * once per row. */
og_status og_text_grid_render(og_buf *out, const og_text_grid *g, og_format fmt);
/* A rendering's end: on OG_OK b's text (NUL-terminated; "" when empty) into *out and its
 * length into *len (may be NULL); else b is freed and st returned. */
og_status og_text_take(og_buf *b, og_status st, char **out, size_t *len);

#endif
