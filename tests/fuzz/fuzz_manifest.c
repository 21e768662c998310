/*
 * fuzz_manifest.c — libFuzzer target for the table manifest decoder (table/manifest.h): the
 * input is a whole manifest file (`_versions/<n>.manifest`).  A manifest that decodes is copied, the
 * original freed, and every fragment, data file path and field array of the copy read — the
 * decoder keeps data files in one block and copies rebase their pointers into their own, so
 * a copy must never reach the original's memory.  Any input must give OG_OK or a typed error;
 * ASan/UBSan report the rest.  Seeds: tests/fuzz/corpus/fuzz_manifest/ (manifests our writer
 * produced).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "table/manifest.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    og_manifest m, c;
    if (og_manifest_file_decode(data, size, &m) != OG_OK) {
        og_error_clear();
        return 0;
    }
    if (og_manifest_copy(&c, &m) != OG_OK) {
        og_error_clear();
        og_manifest_free(&m);
        return 0;
    }
    og_manifest_free(&m);
    volatile uint64_t sink = 0;
    for (size_t i = 0; i < c.nfragments; i++) {
        const og_fragment *f = &c.fragments[i];
        sink += f->id + f->physical_rows + og_manifest_find_fragment(&c, f->id);
        for (size_t k = 0; k < f->nfiles; k++) {
            const og_data_file *d = &f->files[k];
            sink += strlen(d->path);
            for (size_t j = 0; j < d->nfields; j++) sink += (uint32_t)d->fields[j];
            for (size_t j = 0; j < d->ncolumn_indices; j++) sink += (uint32_t)d->column_indices[j];
        }
    }
    (void)sink;
    og_manifest_free(&c);
    return 0;
}
