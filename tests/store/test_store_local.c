/*
 * test_store_local.c — what only the local file-system adapter promises beyond the contract:
 * URI normalisation and root creation, temp files never listed nor left behind, real mmap,
 * directories pruned on delete, non-files invisible, unknown URI schemes refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/error.h"

#include "store_fixture.h"

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-store-local-XXXXXX"); }

static void path_of(const fixture *f, const char *rel, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", f->dir, rel);
}

static int count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, ".tmp-", 5) == 0) n++;
    closedir(d);
    return n;
}

static void open_creates_nested_root_and_normalises_the_uri(void **state)
{
    fixture *f = *state;
    char root[256], uri[300];
    snprintf(root, sizeof root, "%s/x/y/z", f->dir);
    snprintf(uri, sizeof uri, "file://%s/x/./y//z/../z/", f->dir);
    og_store *st;
    assert_int_equal(og_store_open(&st, uri), OG_OK);
    assert_string_equal(og_store_uri(st), root);
    assert_true(og_store_is_local(st));
    struct stat sb;
    assert_int_equal(stat(root, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(og_store_put(st, "k", "v", 1), OG_OK);
    og_store_close(st);
    char kp[300];
    snprintf(kp, sizeof kp, "%s/k", root);
    assert_int_equal(stat(kp, &sb), 0);
    /* The probe at open leaves no temp files. */
    assert_int_equal(count_temps(root), 0);
}

static void open_resolves_a_relative_path_against_the_cwd(void **state)
{
    fixture *f = *state;
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->dir), 0);
    og_store *st;
    og_status s = og_store_open(&st, "./rel/../rel2");
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(s, OG_OK);
    char want[256];
    snprintf(want, sizeof want, "%s/rel2", f->dir);
    assert_string_equal(og_store_uri(st), want);
    og_store_close(st);
}

static void open_refuses_unknown_schemes_and_bad_file_uris(void **state)
{
    (void)state;
    og_store *st = (og_store *)1;
    assert_int_equal(og_store_open(&st, "gs://bucket/x"), OG_ERR_INVALID);
    assert_null(st);
    assert_int_equal(og_store_open(&st, "file://relative/x"), OG_ERR_INVALID);
    assert_int_equal(og_store_open(&st, ""), OG_ERR_INVALID);
    assert_int_equal(og_store_open(&st, NULL), OG_ERR_INVALID);
}

static void open_accepts_a_local_path_containing_colon_slash_slash(void **state)
{
    fixture *f = *state;
    char p[256];
    snprintf(p, sizeof p, "%s/odd://name", f->dir);
    og_store *st;
    assert_int_equal(og_store_open(&st, p), OG_OK);
    snprintf(p, sizeof p, "%s/odd:/name", f->dir); /* "//" collapses like any path */
    assert_string_equal(og_store_uri(st), p);
    og_store_close(st);
}

static void open_of_a_root_that_is_a_file_fails(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "afile", "x", 1), OG_OK);
    char p[256];
    path_of(f, "afile", p, sizeof p);
    og_store *st;
    assert_int_not_equal(og_store_open(&st, p), OG_OK);
}

static void put_leaves_no_temp_files_and_list_hides_stray_ones(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "d/a", "1", 1), OG_OK);
    assert_int_equal(og_store_put_if_absent(f->st, "d/b", "2", 1), OG_OK);
    assert_int_equal(og_store_put_if_absent(f->st, "d/b", "3", 1), OG_ERR_ALREADY_EXISTS);
    char d[256];
    path_of(f, "d", d, sizeof d);
    assert_int_equal(count_temps(d), 0);
    /* A temp file a crashed writer left behind, and a directory named like one. */
    char p[300];
    snprintf(p, sizeof p, "%s/.tmp-0000-crashed", d);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "partial", 7), 7);
    close(fd);
    snprintf(p, sizeof p, "%s/.tmp-dir", d);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/.tmp-dir/inner", d);
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    og_keylist l;
    assert_int_equal(og_store_list(f->st, "", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 2);
    assert_string_equal(l.keys[0], "d/a");
    assert_string_equal(l.keys[1], "d/b");
    og_keylist_free(&l);
    /* A prefix naming the temp directly shows nothing either. */
    assert_int_equal(og_store_list(f->st, "d/.tm", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 0);
    og_keylist_free(&l);
}

static void list_skips_fifos_and_directories(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "n/obj", "x", 1), OG_OK);
    char p[256];
    path_of(f, "n/fifo", p, sizeof p);
    assert_int_equal(mkfifo(p, 0644), 0);
    path_of(f, "n/emptydir", p, sizeof p);
    assert_int_equal(mkdir(p, 0755), 0);
    og_keylist l;
    assert_int_equal(og_store_list(f->st, "n/", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.keys[0], "n/obj");
    og_keylist_free(&l);
    /* A fifo is not an object, and reading it must not hang. */
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, "n/fifo", &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_get(f->st, "n/emptydir", &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_delete(f->st, "n/emptydir"), OG_ERR_NOT_FOUND);
}

static void delete_removes_directories_it_empties_but_not_the_root(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "a/b/c/d", "x", 1), OG_OK);
    assert_int_equal(og_store_put(f->st, "a/keep", "y", 1), OG_OK);
    assert_int_equal(og_store_delete(f->st, "a/b/c/d"), OG_OK);
    char p[256];
    struct stat sb;
    path_of(f, "a/b", p, sizeof p);
    assert_int_not_equal(stat(p, &sb), 0);
    path_of(f, "a", p, sizeof p);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(og_store_delete(f->st, "a/keep"), OG_OK);
    assert_int_not_equal(stat(p, &sb), 0);
    assert_int_equal(stat(f->dir, &sb), 0);
}

static void map_is_a_real_mapping_of_the_file(void **state)
{
    fixture *f = *state;
    assert_true(og_store_is_local(f->st));
    assert_int_equal(og_store_put(f->st, "m", "mapped bytes", 12), OG_OK);
    og_mapping *m;
    assert_int_equal(og_store_map(f->st, "m", &m), OG_OK);
    assert_int_equal(og_mapping_size(m), 12);
    assert_memory_equal(og_mapping_data(m), "mapped bytes", 12);
    /* The mapping outlives the key (unlinking does not invalidate it). */
    assert_int_equal(og_store_delete(f->st, "m"), OG_OK);
    assert_memory_equal(og_mapping_data(m), "mapped bytes", 12);
    og_mapping_release(m);
}

/* A file of 2 MiB or more is mapped one page past a 2 MiB boundary, so the kernel can never map
 * a 2 MiB page-cache folio of it as one huge page (store_local.c map_unaligned: a key lookup
 * would otherwise charge the process 2 MiB of RSS per touched page); the reservation around it
 * is given back, and the bytes are the file's. */
static void a_big_mapping_starts_a_page_past_a_huge_page_boundary(void **state)
{
    fixture *f = *state;
    size_t n = ((size_t)3 << 20) + 5, page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 131 + (i >> 12));
    assert_int_equal(og_store_put(f->st, "big", data, n), OG_OK);
    og_mapping *m;
    assert_int_equal(og_store_map(f->st, "big", &m), OG_OK);
    assert_int_equal(og_mapping_size(m), n);
    uintptr_t at = (uintptr_t)og_mapping_data(m);
    assert_int_equal(at % ((size_t)2 << 20), page);
    assert_memory_equal(og_mapping_data(m), data, n);
    /* the mapping is exactly the file's pages: /proc/self/maps shows [at, at + pages) */
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo > at || hi <= at) continue;
        found = 1;
        assert_int_equal(lo, at);
        assert_int_equal(hi, at + ((n + page - 1) & ~(page - 1)));
    }
    fclose(maps);
    assert_true(found);
    og_mapping_release(m);
    /* a small file is mapped as before */
    assert_int_equal(og_store_put(f->st, "small", data, 100000), OG_OK);
    assert_int_equal(og_store_map(f->st, "small", &m), OG_OK);
    assert_memory_equal(og_mapping_data(m), data, 100000);
    og_mapping_release(m);
    free(data);
}

static void put_onto_a_path_through_an_object_fails_without_side_effects(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "file", "x", 1), OG_OK);
    og_status s = og_store_put(f->st, "file/child", "y", 1);
    assert_int_not_equal(s, OG_OK);
    assert_non_null(strstr(og_error_message(), "file/child"));
    og_keylist l;
    assert_int_equal(og_store_list(f->st, "", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 1);
    og_keylist_free(&l);
}

/* The unsynced put (the head hint) overwrites the file in place: one inode for the key's
 * life, so rewriting it frees none (docs/storage.md "put_unsynced"); a shorter object is
 * truncated to its length, a longer one grows, parents are created, and no temp is left. */
static void put_unsynced_overwrites_in_place(void **state)
{
    fixture *f = *state;
    char p[300], d[256];
    path_of(f, "h/x/hint.json", p, sizeof p);
    path_of(f, "h/x", d, sizeof d);
    assert_int_equal(og_store_put_unsynced(f->st, "h/x/hint.json", "{\"seq\":1000}", 12), OG_OK);
    struct stat a, b;
    assert_int_equal(stat(p, &a), 0);
    assert_int_equal(og_store_put_unsynced(f->st, "h/x/hint.json", "{\"seq\":9}", 9), OG_OK);
    assert_int_equal(stat(p, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    og_bytes got = {0};
    assert_int_equal(og_store_get(f->st, "h/x/hint.json", &got), OG_OK);
    assert_int_equal(got.len, 9);
    assert_memory_equal(got.data, "{\"seq\":9}", 9);
    og_bytes_free(&got);
    assert_int_equal(og_store_put_unsynced(f->st, "h/x/hint.json", "{\"seq\":123456}", 14), OG_OK);
    assert_int_equal(stat(p, &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    assert_int_equal(og_store_get(f->st, "h/x/hint.json", &got), OG_OK);
    assert_int_equal(got.len, 14);
    assert_memory_equal(got.data, "{\"seq\":123456}", 14);
    og_bytes_free(&got);
    assert_int_equal(count_temps(d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(open_creates_nested_root_and_normalises_the_uri, setup, teardown),
        cmocka_unit_test_setup_teardown(open_resolves_a_relative_path_against_the_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(open_refuses_unknown_schemes_and_bad_file_uris, setup, teardown),
        cmocka_unit_test_setup_teardown(open_accepts_a_local_path_containing_colon_slash_slash, setup, teardown),
        cmocka_unit_test_setup_teardown(open_of_a_root_that_is_a_file_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(put_leaves_no_temp_files_and_list_hides_stray_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(list_skips_fifos_and_directories, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_removes_directories_it_empties_but_not_the_root, setup, teardown),
        cmocka_unit_test_setup_teardown(map_is_a_real_mapping_of_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(a_big_mapping_starts_a_page_past_a_huge_page_boundary, setup, teardown),
        cmocka_unit_test_setup_teardown(put_onto_a_path_through_an_object_fails_without_side_effects, setup, teardown),
        cmocka_unit_test_setup_teardown(put_unsynced_overwrites_in_place, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
