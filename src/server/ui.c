/*
 * ui.c — OmniGraph Studio at /ui/ (docs/studio.md): the compiled-in files of the web app
 * (ui_assets.h), answered before the API's route table is consulted.
 *
 * Why outside the route table: these are not API routes (no graph, no token, no decision, not
 * in /openapi.json); they are the same public bytes for everyone, and the app itself calls
 * only the public API with the token the user signs in with.  Every answer carries a strict
 * Content-Security-Policy: scripts and requests from this origin only, so nothing the studio
 * shows (a property value, a schema comment) can run code or send data elsewhere.  Styles may
 * be inline because the editor and the graph drawing insert <style> elements of their own;
 * every directive that fetches (connect, img, font) stays 'self', so a style cannot reach
 * another host either.  The Host/Origin guard (DNS rebinding) has already run.
 */
#include <string.h>

#include "server/server_int.h"
#include "server/ui_assets.h"

#define OG_UI_CSP                                                                                            \
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " \
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

int og_ui_path(const char *url)
{
    return !strncmp(url, "/ui", 3) && (url[3] == 0 || url[3] == '/');
}

static void ui_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, "Content-Security-Policy", OG_UI_CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    /* revalidate every time: a rebuilt server serves its new bundle at once (the ETag makes it a 304) */
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
}

static const og_ui_asset *ui_find(const char *name)
{
    for (size_t i = 0; i < og_ui_nassets; i++)
        if (!strcmp(og_ui_assets[i].path, name)) return &og_ui_assets[i];
    return NULL;
}

struct MHD_Response *og_ui_answer(og_req *r)
{
    const char *url = r->url ? r->url : "/ui";
    if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
        struct MHD_Response *resp =
            og_resp_error(r, 405, "method_not_allowed", "method not allowed on this path", NULL, NULL);
        if (resp) MHD_add_response_header(resp, "Allow", "GET, HEAD");
        return resp;
    }
    if (!og_ui_nassets)
        return og_resp_error(r, 404, "not_found",
                             "this omnigraph-server was built without OmniGraph Studio (web/node_modules was "
                             "missing): run scripts/install-deps.sh, then make build",
                             NULL, NULL);
    if (!url[3]) { /* /ui: the app's relative asset paths need the trailing slash */
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!resp) return NULL;
        MHD_add_response_header(resp, "Location", "/ui/");
        ui_headers(resp);
        r->status = 308;
        return resp;
    }
    const char *name = url[4] ? url + 4 : "index.html";
    const og_ui_asset *a = ui_find(name);
    if (!a) return og_resp_error(r, 404, "not_found", "no such file in OmniGraph Studio", NULL, NULL);
    const char *inm = og_req_header(r, "If-None-Match");
    int fresh = inm && strstr(inm, a->etag);
    struct MHD_Response *resp = fresh ? MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT)
                                      : MHD_create_response_from_buffer(a->len, (void *)a->data,
                                                                        MHD_RESPMEM_PERSISTENT);
    if (!resp) return NULL;
    if (!fresh) MHD_add_response_header(resp, "Content-Type", a->content_type);
    MHD_add_response_header(resp, "ETag", a->etag);
    ui_headers(resp);
    r->status = fresh ? 304 : 200;
    return resp;
}
