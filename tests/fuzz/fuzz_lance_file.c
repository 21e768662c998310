/*
 * fuzz_lance_file.c — libFuzzer target for the Lance 2.0 reader (table/lance_file.h): opens a
 * reader over the input and reads every top-level column, whole and in scan batches.  Any
 * input must give OG_OK or a typed error; ASan/UBSan report the rest.  Seeds (small files our
 * writer produced, see tests/table/test_lance_file.c seed_files_for_the_fuzzer) live in
 * tests/fuzz/corpus/fuzz_lance_file/.
 */
#include <stddef.h>
#include <stdint.h>

#include "table/lance_file.h"
#include "util/error.h"

/* All-null pages cost no bytes, so a tiny file can claim billions of rows: read at most this
 * many, which keeps every input fast and small in memory. */
#define MAX_ROWS 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    og_lance_reader *r;
    if (og_lance_reader_open(&r, data, size) != OG_OK) return 0;
    const og_lance_schema *s = og_lance_reader_schema(r);
    uint64_t rows = og_lance_reader_num_rows(r);
    if (rows > MAX_ROWS) rows = MAX_ROWS;
    size_t ntop = og_lance_schema_num_top(s);
    for (size_t i = 0; i < ntop; i++) {
        og_vector v;
        if (og_lance_reader_read_top(r, i, 0, rows, &v) == OG_OK) og_vector_free(&v);
        if (rows > 3 && og_lance_reader_read_top(r, i, 3, rows - 3, &v) == OG_OK) og_vector_free(&v);
    }
    if (og_lance_reader_num_rows(r) <= 4096) {
        og_lance_scan *sc;
        if (og_lance_scan_open(&sc, r, NULL, 0, 1000) == OG_OK) {
            const og_vector *cols;
            uint64_t start;
            size_t n;
            while (og_lance_scan_next(sc, &cols, &start, &n) == OG_OK && n > 0) {
            }
            og_lance_scan_free(sc);
        }
    }
    og_lance_reader_free(r);
    og_error_clear();
    return 0;
}
