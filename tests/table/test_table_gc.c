/*
 * test_table_gc.c — reclaiming table history (og_table_gc, og_table_destroy) on a local
 * store: versions 1..5 (append, append, delete, compact, append), gc keep_from=4 leaves
 * exactly versions 4 and 5 readable with their rows, deletes versions 1..3 and only the files
 * no kept version names (a data file shared with the kept versions stays), never touches a
 * data file a txn has staged but not committed, counts exactly what it deleted, evicts cached
 * manifests, is idempotent, refuses a missing keep_from; a crash between deleting files and
 * deleting manifests (fault point table.gc_after_files) leaves the kept versions whole, the
 * old ones failing with OG_ERR_NOT_FOUND, and a repeat finishes the job; destroy deletes every
 * key of the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "table/table.h"
#include "util/error.h"
#include "util/fault.h"

static const og_type T_STR = {OG_T_STRING, OG_T_NULL, 0};
static const og_type T_I64 = {OG_T_I64, OG_T_NULL, 0};

typedef struct fx {
    char dir[64];
    og_store *st;
    og_table *t;
    char file_a[256], file_b[256], file_a2[256], file_c[256], file_staged[256], del0[256];
} fx;

/* id String (pk, field 0), n I64 (field 1) */
static void schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    assert_int_equal(og_lance_schema_add_column(s, "id", T_STR, 0, -1, 0, 1), OG_OK);
    assert_int_equal(og_lance_schema_add_column(s, "n", T_I64, 1, -1, 1, 0), OG_OK);
}

/* Appends rows k = start .. start+count-1 (id "r<k>", n = k). */
static void append_rows(og_table_txn *x, int start, int count)
{
    og_vector c[2];
    assert_int_equal(og_vector_init(&c[0], T_STR), OG_OK);
    assert_int_equal(og_vector_init(&c[1], T_I64), OG_OK);
    for (int k = start; k < start + count; k++) {
        char b[16];
        int n = snprintf(b, sizeof b, "r%d", k);
        assert_int_equal(og_vector_append_bytes(&c[0], b, (size_t)n), OG_OK);
        assert_int_equal(og_vector_append_i64(&c[1], k), OG_OK);
    }
    assert_int_equal(og_table_txn_append(x, c, 2, NULL), OG_OK);
    og_vector_free(&c[0]);
    og_vector_free(&c[1]);
}

/* The store key of fragment `frag`'s data file in manifest m. */
static void data_key(const fx *f, const og_manifest *m, uint64_t frag, char *out)
{
    long i = og_manifest_find_fragment(m, frag);
    assert_true(i >= 0);
    snprintf(out, 256, "tables/t1.lance/data/%s", m->fragments[i].files[0].path);
}

static void begin(fx *f, uint64_t base, og_table_txn **x)
{
    og_lance_schema s;
    schema(&s);
    assert_int_equal(og_table_txn_begin(x, f->t, base, base ? NULL : &s), OG_OK);
    og_lance_schema_free(&s);
}

static void commit(og_table_txn *x, uint64_t want)
{
    uint64_t v;
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, want);
    og_table_txn_free(x);
}

/* v1 append r0..r3 (fragment 0, file A); v2 append r4..r7 (fragment 1, file B); v3 delete
 * r0 (deletion file of fragment 0); v4 compact fragment 0 (fragment 2, file A'); v5 append
 * r8..r9 (fragment 3, file C); then a txn on v5 stages r10..r11 (file S) and never commits. */
static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/og-tablegc-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    if (og_store_open(&f->st, f->dir) != OG_OK) return -1;
    if (og_table_open(&f->t, f->st, "t1.lance") != OG_OK) return -1;
    og_table_txn *x;
    begin(f, 0, &x);
    append_rows(x, 0, 4);
    data_key(f, og_table_txn_manifest(x), 0, f->file_a);
    commit(x, 1);
    begin(f, 1, &x);
    append_rows(x, 4, 4);
    data_key(f, og_table_txn_manifest(x), 1, f->file_b);
    commit(x, 2);
    begin(f, 2, &x);
    uint32_t gone[] = {0};
    assert_int_equal(og_table_txn_delete(x, 0, gone, 1), OG_OK);
    commit(x, 3);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, 3, &m), OG_OK);
    char rel[128];
    const og_fragment *f0 = &m.fragments[og_manifest_find_fragment(&m, 0)];
    assert_true(f0->deletion.present);
    assert_int_equal(og_deletion_path(rel, sizeof rel, 0, f0->deletion.read_version, f0->deletion.id, f0->deletion.kind), OG_OK);
    snprintf(f->del0, sizeof f->del0, "tables/t1.lance/%s", rel);
    og_manifest_free(&m);
    begin(f, 3, &x);
    uint64_t frag0 = 0, nid;
    assert_int_equal(og_table_txn_compact(x, &frag0, 1, &nid), OG_OK);
    assert_int_equal(nid, 2);
    data_key(f, og_table_txn_manifest(x), 2, f->file_a2);
    commit(x, 4);
    begin(f, 4, &x);
    append_rows(x, 8, 2);
    data_key(f, og_table_txn_manifest(x), 3, f->file_c);
    commit(x, 5);
    begin(f, 5, &x);
    append_rows(x, 10, 2);
    data_key(f, og_table_txn_manifest(x), 4, f->file_staged);
    og_table_txn_free(x); /* staged, never committed */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    og_table_close(f->t);
    og_store_close(f->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->dir);
    free(f);
    return 0;
}

/* Version v's live rows as "id:n;id:n", or the scan's status as "error <name>". */
static void dump(fx *f, uint64_t v, char *out, size_t cap)
{
    out[0] = '\0';
    og_manifest m;
    og_status st = og_table_load(f->t, v, &m);
    if (st != OG_OK) {
        snprintf(out, cap, "error %s", og_status_name(st));
        return;
    }
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, f->t, &m, NULL), OG_OK);
    size_t at = 0;
    og_table_batch b;
    while ((st = og_table_scan_next(s, &b)) == OG_OK && b.nrows)
        for (size_t r = 0; r < b.nrows; r++) {
            size_t n;
            const uint8_t *id = og_vector_get_bytes(&b.cols[0], r, &n);
            at += (size_t)snprintf(out + at, cap - at, "%s%.*s:%lld", at ? ";" : "", (int)n, (const char *)id,
                                   (long long)og_vector_get_i64(&b.cols[1], r));
        }
    if (st != OG_OK) snprintf(out, cap, "error %s", og_status_name(st));
    og_table_scan_free(s);
    og_manifest_free(&m);
}

static const char *V4 = "r1:1;r2:2;r3:3;r4:4;r5:5;r6:6;r7:7";
static const char *V5 = "r1:1;r2:2;r3:3;r4:4;r5:5;r6:6;r7:7;r8:8;r9:9";

static int exists(fx *f, const char *key)
{
    uint64_t size;
    og_status st = og_store_head(f->st, key, &size);
    assert_true(st == OG_OK || st == OG_ERR_NOT_FOUND);
    return st == OG_OK;
}

static uint64_t size_of(fx *f, const char *key)
{
    uint64_t size = 0;
    assert_int_equal(og_store_head(f->st, key, &size), OG_OK);
    return size;
}

static uint64_t manifest_size(fx *f, uint64_t v)
{
    char rel[64], key[128];
    assert_int_equal(og_manifest_path(rel, sizeof rel, v), OG_OK);
    snprintf(key, sizeof key, "tables/t1.lance/%s", rel);
    return size_of(f, key);
}

static size_t count_keys(fx *f, const char *prefix)
{
    og_keylist kl;
    assert_int_equal(og_store_list(f->st, prefix, NULL, 0, &kl), OG_OK);
    size_t n = kl.count;
    og_keylist_free(&kl);
    return n;
}

static void expect_versions(fx *f, const uint64_t *want, size_t n)
{
    uint64_t *vs;
    size_t got;
    assert_int_equal(og_table_list_versions(f->t, &vs, &got), OG_OK);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(vs[i], want[i]);
    free(vs);
}

static void gc_keeps_what_kept_versions_name(void **state)
{
    fx *f = *state;
    char got[512];
    /* the manifest cache must not answer for a removed version */
    og_cache *cache;
    assert_int_equal(og_cache_new(&cache, 1 << 20), OG_OK);
    og_table_set_cache(f->t, cache);
    dump(f, 1, got, sizeof got);
    assert_string_equal(got, "r0:0;r1:1;r2:2;r3:3");
    uint64_t want_bytes = size_of(f, f->file_a) + size_of(f, f->del0) + manifest_size(f, 1) + manifest_size(f, 2) +
                          manifest_size(f, 3);
    assert_int_equal(count_keys(f, "tables/t1.lance/data/"), 5); /* A B A' C S */

    og_table_gc_stats s;
    assert_int_equal(og_table_gc(f->t, 4, &s), OG_OK);
    assert_int_equal(s.versions_removed, 3);
    assert_int_equal(s.files_removed, 2); /* A (only versions 1..3) and fragment 0's deletion file */
    assert_int_equal(s.bytes_removed, want_bytes);
    assert_int_equal(s.newest_removed, 3);

    const uint64_t kept[] = {4, 5};
    expect_versions(f, kept, 2);
    dump(f, 4, got, sizeof got);
    assert_string_equal(got, V4);
    dump(f, 5, got, sizeof got);
    assert_string_equal(got, V5);
    for (uint64_t v = 1; v <= 3; v++) {
        dump(f, v, got, sizeof got);
        assert_string_equal(got, "error not_found");
    }
    assert_false(exists(f, f->file_a));
    assert_false(exists(f, f->del0));
    assert_true(exists(f, f->file_b));      /* shared by versions 2, 3 and the kept 4, 5 */
    assert_true(exists(f, f->file_a2));
    assert_true(exists(f, f->file_c));
    assert_true(exists(f, f->file_staged)); /* named by no manifest yet: never a candidate */
    assert_int_equal(count_keys(f, "tables/t1.lance/data/"), 4);
    assert_int_equal(count_keys(f, "tables/t1.lance/_deletions/"), 0);

    /* idempotent; refusals delete nothing */
    assert_int_equal(og_table_gc(f->t, 4, &s), OG_OK);
    assert_int_equal(s.versions_removed + s.files_removed + s.bytes_removed, 0);
    assert_int_equal(og_table_gc(f->t, 3, &s), OG_ERR_NOT_FOUND);
    assert_int_equal(og_table_gc(f->t, 99, &s), OG_ERR_NOT_FOUND);
    assert_int_equal(og_table_gc(f->t, 0, &s), OG_ERR_INVALID);
    expect_versions(f, kept, 2);

    /* a later write on the kept head still works, and gc to it keeps the shared files */
    og_table_txn *x;
    begin(f, 5, &x);
    uint32_t d[] = {1};
    assert_int_equal(og_table_txn_delete(x, 1, d, 1), OG_OK);
    commit(x, 6);
    assert_int_equal(og_table_gc(f->t, 6, &s), OG_OK);
    assert_int_equal(s.versions_removed, 2);
    assert_int_equal(s.files_removed, 0);
    dump(f, 6, got, sizeof got);
    assert_string_equal(got, "r1:1;r2:2;r3:3;r4:4;r6:6;r7:7;r8:8;r9:9");
    og_table_set_cache(f->t, NULL);
    og_cache_free(cache);
}

static void a_crash_between_files_and_manifests_is_repeated(void **state)
{
    fx *f = *state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("OG_FAULT", "table.gc_after_files", 1);
        og_table_gc(f->t, 4, NULL);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), OG_FAULT_EXIT_CODE);

    const uint64_t all[] = {1, 2, 3, 4, 5};
    expect_versions(f, all, 5);
    char got[512];
    dump(f, 4, got, sizeof got);
    assert_string_equal(got, V4);
    dump(f, 5, got, sizeof got);
    assert_string_equal(got, V5);
    dump(f, 1, got, sizeof got); /* its data file is gone: a typed error, not a crash */
    assert_string_equal(got, "error not_found");
    assert_non_null(strstr(og_error_message(), "missing"));

    og_table_gc_stats s;
    assert_int_equal(og_table_gc(f->t, 4, &s), OG_OK);
    assert_int_equal(s.versions_removed, 3);
    assert_int_equal(s.files_removed, 0);
    const uint64_t kept[] = {4, 5};
    expect_versions(f, kept, 2);
    dump(f, 5, got, sizeof got);
    assert_string_equal(got, V5);
}

static void destroy_deletes_every_key(void **state)
{
    fx *f = *state;
    size_t before = count_keys(f, "tables/t1.lance/");
    assert_int_equal(before, 5 + 1 + 5); /* data A B A' C S, one deletion file, five manifests */
    og_table_gc_stats s;
    assert_int_equal(og_table_destroy(f->t, &s), OG_OK);
    assert_int_equal(s.versions_removed, 5);
    assert_int_equal(s.files_removed, 6);
    assert_int_equal(s.newest_removed, 5);
    assert_int_equal(count_keys(f, "tables/t1.lance/"), 0);
    uint64_t latest = 1;
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 0);
    assert_int_equal(og_table_destroy(f->t, &s), OG_OK); /* nothing left: fine */
    assert_int_equal(s.versions_removed + s.files_removed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(gc_keeps_what_kept_versions_name, setup, teardown),
        cmocka_unit_test_setup_teardown(a_crash_between_files_and_manifests_is_repeated, setup, teardown),
        cmocka_unit_test_setup_teardown(destroy_deletes_every_key, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
