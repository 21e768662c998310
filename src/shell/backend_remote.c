/*
 * backend_remote.c — the shell's backend for a graph served by omnigraph-server
 * (`omnigraph shell --server URL --graph ID`, backend.h).
 *
 * Not built yet: it is to fill og_shell_backend_ops over the CLI's HTTP client (POST
 * /graphs/ID/read and /change for run, /explain, GET /branches, /schema, /catalog, a request
 * aborted for cancel).  Until then the shell says so instead of pretending.
 */
#include "shell/backend.h"
#include "util/error.h"

og_status og_shell_backend_remote(og_shell_backend *out, const char *url, const char *graph)
{
    (void)out;
    return og_err(OG_ERR_UNSUPPORTED,
                  "omnigraph shell --server %s --graph %s: the remote backend is not built yet; open the graph "
                  "with --store ROOT",
                  url, graph);
}
