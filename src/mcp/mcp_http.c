/*
 * mcp_http.c — the stateless Streamable HTTP binding of the MCP handler (docs/mcp.md): what an
 * HTTP surface does with a request to /graphs/{id}/mcp, minus the sockets.  One POST body is
 * one JSON-RPC message (or a batch) answered with one application/json response — or, when the
 * client accepts text/event-stream and the call produced notifications (progress, log
 * messages), with an SSE stream of those notifications ending with the response.  There is no
 * session and no standalone (GET) stream.  Kept beside the handler so the server's route stays
 * a few lines.
 *
 * Why the stream is decided by what happened rather than up front: a call refused before it
 * runs (authorization, admission: 429) produces no notification, so it keeps its plain status;
 * only a call that ran and reported something needs the stream.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/buf.h"

static int contains_ci(const char *h, const char *needle)
{
    size_t n = strlen(needle);
    for (; h && *h; h++) {
        size_t i = 0;
        while (i < n && h[i] && (h[i] | 32) == (needle[i] | 32)) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Whether the body is an `initialize` request (parsed, so a tool argument that happens to
 * read "initialize" does not count). */
static int is_initialize(const char *body, size_t len)
{
    json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
    const char *method = json_string_value(json_object_get(j, "method"));
    int r = method && !strcmp(method, "initialize");
    json_decref(j);
    return r;
}

static char *error_body(const char *msg)
{
    size_t n = strlen(msg) + 96;
    char *s = malloc(n);
    if (s) snprintf(s, n, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"%s\"}}", msg);
    return s;
}

int og_mcp_accepts_sse(const char *accept) { return accept && contains_ci(accept, "text/event-stream"); }

/* The buffering sink: notifications as SSE events, sent with the response at the end. */
typedef struct sse_buf {
    og_buf b;
    int failed;
} sse_buf;

static void buffer_note(void *ctx, const char *json)
{
    sse_buf *sb = ctx;
    char *ev = og_mcp_sse_event(json);
    if (!ev || og_buf_append(&sb->b, ev, strlen(ev)) != OG_OK) sb->failed = 1;
    free(ev);
}

og_status og_mcp_http(og_mcp *m, const og_mcp_http_request *req, unsigned *status, char **out)
{
    *out = NULL;
    m->sse = 0;
    if (!req->method || strcmp(req->method, "POST")) {
        *status = 405;
        *out = error_body("Method Not Allowed: this endpoint is stateless; send each JSON-RPC message as a POST");
        return *out ? OG_OK : OG_ERR_NOMEM;
    }
    if (req->content_type && !contains_ci(req->content_type, "application/json")) {
        *status = 415;
        *out = error_body("Unsupported Media Type: the body must be application/json");
        return *out ? OG_OK : OG_ERR_NOMEM;
    }
    if (req->accept && *req->accept && !contains_ci(req->accept, "application/json") && !contains_ci(req->accept, "*/*") &&
        !contains_ci(req->accept, "text/event-stream")) {
        *status = 406;
        *out = error_body("Not Acceptable: the response is application/json");
        return *out ? OG_OK : OG_ERR_NOMEM;
    }
    /* a follow-up request names its protocol version; initialize negotiates it in the body */
    if (req->protocol_version && *req->protocol_version) {
        int ok = 0;
        for (const char *const *v = og_mcp_protocol_versions; *v; v++) ok |= !strcmp(*v, req->protocol_version);
        if (!ok && !is_initialize(req->body, req->body_len)) {
            *status = 400;
            *out = error_body("Bad Request: unsupported MCP-Protocol-Version");
            return *out ? OG_OK : OG_ERR_NOMEM;
        }
    }
    /* notifications travel only on a stream the client accepts; without a sink of the
     * surface's own they are buffered into the response stream */
    og_mcp_notify_fn live = m->o.notify;
    void *live_ctx = m->o.notify_ctx;
    sse_buf sb = {OG_BUF_INIT, 0};
    if (!og_mcp_accepts_sse(req->accept)) {
        m->o.notify = NULL;
    } else if (!live) {
        m->o.notify = buffer_note;
        m->o.notify_ctx = &sb;
    }
    og_status st = og_mcp_handle(m, req->actor, req->body ? req->body : "", req->body ? req->body_len : 0, out);
    m->o.notify = live;
    m->o.notify_ctx = live_ctx;
    if (st == OG_OK && og_mcp_notified(m)) {
        /* the response is the stream's last event */
        char *ev = *out ? og_mcp_sse_event(*out) : NULL;
        if (*out && (!ev || og_buf_append(&sb.b, ev, strlen(ev)) != OG_OK)) sb.failed = 1;
        free(ev);
        if (!sb.failed && og_buf_append_byte(&sb.b, 0) != OG_OK) sb.failed = 1;
        og_free(*out);
        *out = NULL;
        if (sb.failed) st = OG_ERR_NOMEM;
        else {
            *out = (char *)sb.b.data; /* og_buf memory: malloc'd, og_free-able */
            sb.b.data = NULL;
            m->sse = 1;
        }
    }
    og_buf_free(&sb.b);
    if (st != OG_OK) return st;
    *status = og_mcp_throttled(m) ? 429 : *out ? 200 : 202; /* a notification: accepted, no body */
    return OG_OK;
}
