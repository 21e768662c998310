/*
 * mcp_int.h — the MCP handler's state, shared by the files of src/mcp/ (mcp.c, the handler;
 * mcp_http.c, the HTTP binding, which swaps the notification sink for one request).  Not for
 * surfaces: they use mcp.h.
 */
#ifndef OG_MCP_MCP_INT_H
#define OG_MCP_MCP_INT_H

#include <jansson.h>
#include <stdint.h>

#include "mcp/mcp.h"

struct og_mcp {
    og_mcp_opts o;
    int throttled;          /* the current message's write was refused by o.admit */
    char throttle_msg[320];
    og_mcp_log_level level; /* log notifications at or above it (OFF = none) */
    size_t notified;        /* notifications sent during the current og_mcp_handle */
    /* the tools/call being run (notifications are sent while it runs) */
    json_t *token;          /* its params._meta.progressToken (borrowed), NULL = no progress */
    double progress;        /* the last progress value sent for it */
    const char *tool;       /* its tool name (borrowed) */
    uint64_t t0_us;         /* when it started running */
    int sse;                /* the last og_mcp_http answered with an SSE stream */
};

#endif
