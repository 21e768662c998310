/*
 * cache_size.c — the bound of a handle's cache when the caller leaves og_open_opts.cache_bytes
 * at 0: $OMNIGRAPH_CACHE_SIZE ("512M", "2G", "64K", a number of bytes), else the graph layer's
 * default (64 MiB).  og_api_size_parse is also how the budget variables
 * ($OG_QUERY_MAX_MEMORY, $OG_WRITE_MAX_MEMORY) read a size.
 *
 * Why an environment variable: the cache is what a long-running process (the server, an MCP
 * session, an embedding application) keeps of the table views it derived — columns, id maps,
 * built topologies, charged at what they hold (engine/tableview.h) — and an operator needs to
 * cap it without a new flag on every verb that opens a graph, as Kùzu's buffer pool size is
 * one setting (docs/engine.md "Memory").  A malformed value is ignored (the default applies):
 * a cache bound is a performance setting, never a reason to refuse to open a graph.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/db.h"

int og_api_size_parse(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s)) return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: return 0;
    }
    if (shift && (*end == 'i' || *end == 'I')) end++; /* "512MiB" */
    if (*end == 'b' || *end == 'B') end++;
    if (*end || v == 0 || v > (unsigned long long)(INT64_MAX >> shift)) return 0;
    *out = (uint64_t)v << shift;
    return 1;
}

size_t og_api_cache_bytes(size_t requested)
{
    if (requested) return requested;
    uint64_t v;
    return og_api_size_parse(getenv("OMNIGRAPH_CACHE_SIZE"), &v) && v <= SIZE_MAX ? (size_t)v : 0;
}
