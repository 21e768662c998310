/*
 * ui_assets.h — the files of OmniGraph Studio (web/, docs/studio.md) as compiled into the
 * server.  Why compiled in: the server binary is the whole deployment — no directory of
 * static files to install beside it, lose or mismatch with the server's routes.  The table
 * is generated at build time by scripts/embed-assets.py from the esbuild bundle of web/; a
 * build without the npm packages (web/node_modules) gets an empty table and /ui/ says so.
 */
#ifndef OG_SERVER_UI_ASSETS_H
#define OG_SERVER_UI_ASSETS_H

#include <stddef.h>

typedef struct og_ui_asset {
    const char *path;          /* "index.html", "app.js" (below /ui/) */
    const char *content_type;  /* "text/html; charset=utf-8", ... */
    const unsigned char *data;
    size_t len;
    const char *etag;          /* "\"<hex sha-256 prefix>\"" */
} og_ui_asset;

extern const og_ui_asset og_ui_assets[];
extern const size_t og_ui_nassets;

#endif
