/*
 * test_curl_dl.c — util/curl_dl.h: libcurl is not mapped until og_curl_load(); a missing
 * library or one without libcurl's entry points is a typed OG_ERR_UNSUPPORTED naming the
 * library (and the missing symbol) and leaves the table empty; a successful load fills every
 * entry, maps the library once, and the functions work through the curl_* names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/curl_dl.h"

static int libcurl_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, "/libcurl") != NULL;
    fclose(f);
    return found;
}

static void not_mapped_before_first_use(void **state)
{
    (void)state;
    assert_false(libcurl_mapped());
    assert_null(og_curl.easy_init);
}

static void absent_library_is_a_typed_error(void **state)
{
    (void)state;
    og_curl_fns t;
    assert_int_equal(og_curl_resolve("libog-no-such-curl.so.4", &t), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "libog-no-such-curl.so.4 could not be loaded"));
    assert_non_null(strstr(og_error_message(), "S3 stores and embedding providers need libcurl"));
    assert_null(t.easy_init);
    assert_null(og_curl.easy_init);
    assert_false(libcurl_mapped());
}

static void library_without_curl_is_a_typed_error(void **state)
{
    (void)state;
    og_curl_fns t;
    assert_int_equal(og_curl_resolve("libc.so.6", &t), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "libc.so.6 has no curl_global_init"));
    assert_null(t.global_init);
    assert_null(og_curl.easy_init);
}

static void load_maps_libcurl_once_and_it_works(void **state)
{
    (void)state;
    assert_int_equal(og_curl_load(), OG_OK);
    assert_true(libcurl_mapped());
    const void *const *fns = (const void *const *)&og_curl;
    for (size_t i = 0; i < sizeof og_curl / sizeof(void *); i++) assert_non_null(fns[i]);
    assert_memory_equal(curl_version(), "libcurl/", 8);

    struct curl_slist *l = curl_slist_append(NULL, "A: 1");
    assert_non_null(l);
    l = curl_slist_append(l, "B: 2");
    assert_string_equal(l->next->data, "B: 2");
    curl_slist_free_all(l);

    CURL *h = curl_easy_init();
    assert_non_null(h);
    assert_int_equal(curl_easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
    assert_int_equal(curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L), CURLE_OK);
    curl_easy_cleanup(h);
    assert_true(strlen(curl_easy_strerror(CURLE_COULDNT_CONNECT)) > 0);
    assert_true(curl_getdate("Sun, 06 Nov 1994 08:49:37 GMT", NULL) == 784111777);

    CURL *(*first)(void) = og_curl.easy_init;
    assert_int_equal(og_curl_load(), OG_OK); /* once: the same table */
    assert_true(first == og_curl.easy_init);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(not_mapped_before_first_use),
        cmocka_unit_test(absent_library_is_a_typed_error),
        cmocka_unit_test(library_without_curl_is_a_typed_error),
        cmocka_unit_test(load_maps_libcurl_once_and_it_works),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
