/*
 * fuzz_schema.c — libFuzzer target for the schema language: any input must either compile or
 * fail with diagnostics (never crash, leak or loop).  For inputs that compile, two
 * properties are checked: the JSON schema object round-trips byte-for-byte, and planning the
 * same text against its own catalog yields an empty, supported plan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/migrate.h"
#include "compiler/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, "fuzz.pg", (const char *)data, size, &d);
    if (st != OG_OK) {
        if (st != OG_ERR_NOMEM && og_diags_errors(&d) == 0) abort(); /* a failure must explain itself */
        for (size_t i = 0; i < d.len; i++)
            if (!d.v[i].message || d.v[i].line == 0 || d.v[i].col == 0) abort();
        og_diags_free(&d);
        return 0;
    }
    og_diags_free(&d);
    og_buf a = OG_BUF_INIT, b = OG_BUF_INIT;
    if (og_catalog_to_json(&a, cat) != OG_OK) abort();
    og_catalog *back = NULL;
    if (og_catalog_from_json(&back, (const char *)a.data, a.len) != OG_OK) abort();
    if (og_catalog_to_json(&b, back) != OG_OK) abort();
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
    og_migration_plan plan;
    og_status pst = og_migration_plan_build(&plan, back, "fuzz.pg", (const char *)data, size, &d);
    if (pst != OG_OK || plan.nsteps != 0 || !plan.supported) abort();
    og_migration_plan_free(&plan);
    og_diags_free(&d);
    og_catalog_free(back);
    og_catalog_free(cat);
    og_buf_free(&a);
    og_buf_free(&b);
    return 0;
}
