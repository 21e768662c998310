/*
 * fuzz_server_body.c — differential libFuzzer target for the server's flat body lane
 * (src/server/body.c): whenever og_json_parse accepts an input, the text og_jtok_text prints
 * from its tokens must read back (jansson) equal — kinds, values, reals exactly, key order
 * aside — to jansson's reading of the input itself.  (That jsontok accepts what jansson
 * accepts is fuzz_json's job.)  abort() on any difference.  Seeds:
 * tests/fuzz/corpus/fuzz_server_body/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    og_jdoc d = OG_JDOC_INIT;
    size_t root;
    if (og_json_parse(&d, buf, size, &root, NULL, 0) == OG_OK) {
        int uint = 0; /* jansson cannot hold integers above INT64_MAX: the server hands those to it */
        for (size_t i = root; i < d.n; i++) uint |= d.tok[i].kind == OG_J_UINT;
        og_buf b = OG_BUF_INIT;
        if (!uint && og_jtok_text(&d.tok[root], &b) == OG_OK && og_buf_append_byte(&b, 0) == OG_OK) {
            json_t *want = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
            json_t *got = json_loads((const char *)b.data, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
            if (!want || !got || !json_equal(want, got)) {
                fprintf(stderr, "fuzz_server_body: printed back as %s\n", (const char *)b.data);
                abort();
            }
            json_decref(want);
            json_decref(got);
        }
        og_buf_free(&b);
    }
    og_jdoc_free(&d);
    free(buf);
    return 0;
}
