/*
 * test_live.c — the docs/embeddings.md recipe against a real embedding server.  Runs only when
 * OMNIGRAPH_EMBED_BASE_URL is set (with OMNIGRAPH_EMBED_PROVIDER / _MODEL / a key as the
 * server needs, and OMNIGRAPH_EMBED_TEST_DIM = the model's dimension, default 768); otherwise
 * it prints a SKIP line and exits 77 (ctest: "Skipped").  The recipe's commands themselves run
 * in tests/cli/test_cli_embed_live.c.  Checks unit vectors of the right size and that related sentences are
 * closer than unrelated ones — the one property the mock provider does not have.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embed/embed.h"

static double dot(const float *a, const float *b, uint32_t d)
{
    double s = 0;
    for (uint32_t i = 0; i < d; i++) s += (double)a[i] * b[i];
    return s;
}

static void real_server_embeds_meaning(void **state)
{
    (void)state;
    og_embed_config c;
    assert_int_equal(og_embed_config_from_env(&c), OG_OK);
    const char *dv = getenv("OMNIGRAPH_EMBED_TEST_DIM");
    uint32_t dim = dv && *dv ? (uint32_t)atoi(dv) : 768;
    og_embedder *e;
    assert_int_equal(og_embedder_open(&e, &c), OG_OK);
    const char *t[] = {"a cat sat on the mat", "a kitten rested on the rug", "quarterly revenue grew by ten percent"};
    size_t l[] = {strlen(t[0]), strlen(t[1]), strlen(t[2])};
    float *v = malloc(3 * (size_t)dim * sizeof *v);
    og_status st = og_embedder_embed(e, t, l, 3, dim, OG_EMBED_DOCUMENT, v);
    if (st != OG_OK) fail_msg("%s", og_error_message());
    for (int i = 0; i < 3; i++) assert_true(fabs(dot(v + i * dim, v + i * dim, dim) - 1.0) < 1e-4);
    double near = dot(v, v + dim, dim), far = dot(v, v + 2 * dim, dim);
    printf("live %s model %s: cos(cat, kitten) = %.3f, cos(cat, revenue) = %.3f\n", og_embed_provider_name(c.provider),
           c.model, near, far);
    assert_true(near > far);
    free(v);
    og_embedder_close(e);
}

int main(void)
{
    const char *base = getenv("OMNIGRAPH_EMBED_BASE_URL");
    if (!base || !*base) {
        printf("SKIP: OMNIGRAPH_EMBED_BASE_URL is not set (no real embedding server to test against)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(real_server_embeds_meaning)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
