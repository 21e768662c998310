/*
 * embed.c — the seam where query text becomes a vector for `nearest($v.p, "text")` (db.h).
 * The engine calls it through og_engine_opts.embed; a provider (the reference's @embed
 * clients) plugs in here without touching the engine.  None exists in this build yet.
 */
#include "api/db.h"
#include "util/error.h"

og_status og_api_embed_text(void *ud, const char *text, size_t len, uint32_t dim, float *out)
{
    (void)ud;
    (void)text;
    (void)len;
    (void)out;
    return og_err(OG_ERR_UNSUPPORTED, "nearest with a String query needs an embedding provider, and this build has "
                                      "none yet; pass a Vector(%u) parameter instead", dim);
}
