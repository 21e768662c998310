/*
 * api_budget.c — per-query time and memory budgets at the API (include/omnigraph.h
 * og_budget, docs/maintenance.md "Query budgets").  The enforcement is util/budget.h, checked
 * by the executor; this file only resolves which limits apply to a call: the call's
 * (og_db_query_budget), else the handle's (og_db_set_budget), else $OG_QUERY_TIMEOUT_MS /
 * $OG_QUERY_MAX_MEMORY, else OG_QUERY_DEFAULT_*.  Writes (mutations, loads) resolve theirs the
 * same way from og_db_mutate_budget / og_db_load_budget, og_db_set_write_budget,
 * $OG_WRITE_TIMEOUT_MS / $OG_WRITE_MAX_MEMORY and OG_WRITE_DEFAULT_*.
 */
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "util/budget.h"

static _Thread_local const og_budget *call_budget;
static _Thread_local const og_budget *write_call_budget;
static _Thread_local const volatile int *thread_cancel; /* og_set_thread_cancel */

void og_db_set_budget(og_db *db, const og_budget *b)
{
    if (!db) return;
    if (b) db->budget = *b;
    else memset(&db->budget, 0, sizeof db->budget);
}

void og_db_set_write_budget(og_db *db, const og_budget *b)
{
    if (!db) return;
    if (b) db->write_budget = *b;
    else memset(&db->write_budget, 0, sizeof db->write_budget);
}

og_status og_db_mutate_budget(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                              const char *params_json, const og_db_mutate_opts *opts, const og_budget *budget)
{
    const og_budget *saved = write_call_budget;
    write_call_budget = budget;
    og_status st = og_db_mutate_ex(out, db, source, len, name, params_json, opts);
    write_call_budget = saved;
    return st;
}

og_status og_db_load_budget(og_receipt *out, og_db *db, const char *path, const og_load_opts *opts,
                            const og_budget *budget)
{
    const og_budget *saved = write_call_budget;
    write_call_budget = budget;
    og_status st = og_db_load(out, db, path, opts);
    write_call_budget = saved;
    return st;
}

og_status og_db_query_budget(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                             const char *params_json, const og_read_opts *at, const og_budget *budget)
{
    const og_budget *saved = call_budget;
    call_budget = budget;
    og_status st = og_db_query(out, db, source, len, name, params_json, at);
    call_budget = saved;
    return st;
}

/* A budget variable: milliseconds, or for the memory ones a size ("4G", bytes); a value that is
 * neither leaves the default (a budget is a limit, not a reason to refuse the call). */
static int64_t env_i64(const char *name, int is_size, int64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    if (is_size && *v != '-') {
        uint64_t n;
        return og_api_size_parse(v, &n) ? (int64_t)n : dflt;
    }
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end ? dflt : (int64_t)n;
}

/* 0 inherits; < 0 = unlimited (returned as 0 for og_budget_begin). */
static int64_t pick(int64_t call, int64_t handle, const char *env, int is_size, int64_t dflt)
{
    int64_t v = call ? call : handle ? handle : env_i64(env, is_size, dflt);
    if (!v) v = dflt;
    return v < 0 ? 0 : v;
}

void og_api_budget_begin(og_db *db, struct og_query_budget *qb)
{
    const og_budget *c = call_budget;
    int64_t t = pick(c ? c->time_ms : 0, db->budget.time_ms, "OG_QUERY_TIMEOUT_MS", 0, OG_QUERY_DEFAULT_TIME_MS);
    int64_t m = pick(c ? c->memory_bytes : 0, db->budget.memory_bytes, "OG_QUERY_MAX_MEMORY", 1,
                     OG_QUERY_DEFAULT_MEMORY_BYTES);
    og_budget_begin(qb, t, m);
    og_budget_set_cancel(qb, thread_cancel ? thread_cancel : db->cancel);
}

void og_api_write_budget_begin(og_db *db, struct og_query_budget *qb, const char *what)
{
    const og_budget *c = write_call_budget;
    int64_t t = pick(c ? c->time_ms : 0, db->write_budget.time_ms, "OG_WRITE_TIMEOUT_MS", 0, OG_WRITE_DEFAULT_TIME_MS);
    int64_t m = pick(c ? c->memory_bytes : 0, db->write_budget.memory_bytes, "OG_WRITE_MAX_MEMORY", 1,
                     OG_WRITE_DEFAULT_MEMORY_BYTES);
    og_budget_begin_write(qb, t, m, what, "--timeout, og_budget.time_ms or $OG_WRITE_TIMEOUT_MS",
                          "--max-memory, og_budget.memory_bytes or $OG_WRITE_MAX_MEMORY");
    og_budget_set_cancel(qb, thread_cancel ? thread_cancel : db->cancel);
}

void og_db_set_cancel(og_db *db, const volatile int *flag)
{
    if (db) db->cancel = flag;
}

void og_set_thread_cancel(const volatile int *flag) { thread_cancel = flag; }
