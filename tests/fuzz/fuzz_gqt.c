/*
 * fuzz_gqt.c — libFuzzer target for the `.gqt` logic-test reader (src/cli/gqt_parse.c): any
 * file must either parse or be refused with a "line N: ..." message (never crash, leak or
 * loop), and a parsed case must be self-consistent: every step has an expectation, every
 * concurrent block at least two sessions each with an outcome, every loop a range of steps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gqt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    gqt_case c;
    memset(&c, 0, sizeof c);
    c.path = strdup("fuzz.gqt");
    c.text = malloc(size + 1);
    if (!c.path || !c.text) abort();
    memcpy(c.text, data, size);
    c.text[size] = 0;
    c.len = size;
    og_buf err = OG_BUF_INIT;
    if (gqt_parse(&c, &err)) {
        if (err.len < 7 || memcmp(err.data, "line ", 5)) abort(); /* a refusal names its line */
    } else {
        for (size_t i = 0; i < c.nsteps; i++) {
            const gqt_step *st = &c.steps[i];
            if (st->kind == GQT_CONCURRENT) {
                if (st->nsessions < 2 || st->nsessions > 4 || !st->order) abort();
                for (size_t k = 0; k < st->nsessions; k++)
                    if (!st->sessions[k].expect || !st->sessions[k].body) abort();
            } else if (st->kind != GQT_RESTART && !st->skip_step) {
                if (st->expect == GQT_EX_NONE && !st->has_ok && !st->has_affected && !st->has_outcome) abort();
                if (!st->body) abort();
            }
        }
        for (size_t i = 0; i < c.nloops; i++)
            if (c.loops[i].first >= c.loops[i].end || c.loops[i].end > c.nsteps || !c.loops[i].nvalues) abort();
    }
    og_buf_free(&err);
    gqt_case_free(&c);
    return 0;
}
