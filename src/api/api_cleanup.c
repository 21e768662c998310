/*
 * api_cleanup.c — og_db_cleanup (include/omnigraph.h): the public face of
 * og_engine_cleanup (src/engine/cleanup.h, docs/maintenance.md).  Kept in its own file so
 * maintenance stays apart from the read/write entry points of api.c.
 */
#include <string.h>

#include "api/db.h"
#include "engine/cleanup.h"
#include "util/error.h"

og_status og_db_cleanup(og_cleanup_result *out, og_db *db, const og_cleanup_opts_pub *opts)
{
    memset(out, 0, sizeof *out);
    if (!db || !opts) return og_err(OG_ERR_INVALID, "og_db_cleanup: db and options are required");
    og_cleanup_opts o = {opts->keep_commits, opts->older_than_ms, opts->grace_ms, opts->confirm, 0};
    og_cleanup_report r;
    og_status st = og_engine_cleanup(db->e, &o, &r);
    out->dry_run = r.dry_run;
    out->commits_retained = r.commits_retained;
    out->commits_removed = r.commits_removed;
    out->commits_bytes = r.commits_bytes;
    out->log_entries_removed = r.log_entries_removed;
    out->log_entries_bytes = r.log_entries_bytes;
    out->versions_removed = r.versions_removed;
    out->versions_bytes = r.versions_bytes;
    out->versions_emptied = r.versions_emptied;
    out->files_removed = r.files_removed;
    out->files_bytes = r.files_bytes;
    out->orphans_removed = r.orphans_removed;
    out->orphans_bytes = r.orphans_bytes;
    out->index_removed = r.index_removed;
    out->index_bytes = r.index_bytes;
    out->young_kept = r.young_kept;
    out->tables = r.tables;
    return st;
}
