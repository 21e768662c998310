/*
 * test_batch_index.c — engine/batch_index.h: the builder beside a load.  Every task it is given
 * is either built (its files written whole, the same bytes og_keymap_encode / og_fts_encode
 * give) or dropped, never half; the files it wrote reach the joining thread's store journal, so
 * a load that fails deletes them, or are deleted by a discard (an attempt that lost its publish);
 * a task whose file exists already writes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../store/store_fixture.h"
#include "engine/batch_index.h"
#include "index/fts.h"
#include "index/keymap.h"
#include "util/buf.h"
#include "util/error.h"

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-batch-index-XXXXXX"); }

static void ids_of(og_vector *v, int task, int rows)
{
    assert_int_equal(og_vector_init(v, (og_type){OG_T_STRING, OG_T_NULL, 0}), OG_OK);
    for (int r = 0; r < rows; r++) {
        char id[32];
        int n = snprintf(id, sizeof id, "t%d-row%05d", task, r);
        assert_int_equal(og_vector_append_bytes(v, id, (size_t)n), OG_OK);
    }
}

static int exists(og_store *st, const char *key)
{
    uint64_t size;
    int ok = og_store_head(st, key, &size) == OG_OK;
    og_error_clear();
    return ok;
}

static void every_task_is_built_whole_or_dropped_and_journaled(void **state)
{
    fixture *f = *state;
    enum { TASKS = 24, ROWS = 3000 };
    og_batch_index *b = og_batch_index_new();
    assert_non_null(b);
    og_store_journal j;
    og_store_journal_begin(&j, f->st, "tables/");
    j.prefix2 = "_index/";
    for (int t = 0; t < TASKS; t++) {
        og_batch_index_task task;
        memset(&task, 0, sizeof task);
        task.store = f->st;
        snprintf(task.keymap_key, sizeof task.keymap_key, "_index/t/%02d/keymap.v1", t);
        ids_of(&task.ids, t, ROWS);
        task.ntexts = 1;
        snprintf(task.fts_keys[0], sizeof task.fts_keys[0], "_index/t/%02d/fts-3.v1", t);
        ids_of(&task.texts[0], t, ROWS);
        og_batch_index_add(b, &task);
        assert_int_equal(task.ids.len, 0); /* taken, queued or not */
        assert_int_equal(task.texts[0].len, 0);
    }
    og_batch_index_join(b);
    og_store_journal_end(&j);
    size_t built = 0;
    for (int t = 0; t < TASKS; t++) {
        char km[64], fk[64];
        snprintf(km, sizeof km, "_index/t/%02d/keymap.v1", t);
        snprintf(fk, sizeof fk, "_index/t/%02d/fts-3.v1", t);
        assert_int_equal(exists(f->st, km), exists(f->st, fk)); /* a task's files: both or none */
        if (!exists(f->st, km)) continue;
        built++;
        og_vector ids;
        ids_of(&ids, t, ROWS);
        og_buf want = OG_BUF_INIT, want_fts = OG_BUF_INIT;
        assert_int_equal(og_keymap_encode(&ids, &want), OG_OK);
        og_analyzer *an;
        assert_int_equal(og_analyzer_new(&an, NULL), OG_OK);
        assert_int_equal(og_fts_encode_vector(an, &ids, &want_fts), OG_OK);
        og_analyzer_free(an);
        og_mapping *m;
        assert_int_equal(og_store_map(f->st, km, &m), OG_OK);
        assert_int_equal(og_mapping_size(m), want.len);
        assert_memory_equal(og_mapping_data(m), want.data, want.len);
        og_mapping_release(m);
        assert_int_equal(og_store_map(f->st, fk, &m), OG_OK);
        assert_int_equal(og_mapping_size(m), want_fts.len);
        assert_memory_equal(og_mapping_data(m), want_fts.data, want_fts.len);
        og_mapping_release(m);
        og_buf_free(&want);
        og_buf_free(&want_fts);
        og_vector_free(&ids);
    }
    assert_true(built >= 1); /* the first task finds the queue empty */
    assert_int_equal(og_batch_index_written(b), 2 * built);
    assert_int_equal(og_batch_index_dropped(b), TASKS - built);
    /* the join put exactly those files in this thread's journal: discarding deletes them */
    assert_int_equal(j.keys.count, 2 * built);
    assert_int_equal(og_store_journal_discard(&j), 2 * built);
    for (int t = 0; t < TASKS; t++) {
        char km[64];
        snprintf(km, sizeof km, "_index/t/%02d/keymap.v1", t);
        assert_false(exists(f->st, km));
    }
    og_batch_index_free(b);
}

/* A file that exists already is not the builder's: it is neither rewritten nor journaled (a
 * failed load must not delete what another writer made). */
static void an_existing_file_is_left_alone_and_not_journaled(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "_index/x/keymap.v1", "theirs", 6), OG_OK);
    og_batch_index *b = og_batch_index_new();
    og_store_journal j;
    og_store_journal_begin(&j, f->st, "tables/");
    j.prefix2 = "_index/";
    og_batch_index_task task;
    memset(&task, 0, sizeof task);
    task.store = f->st;
    snprintf(task.keymap_key, sizeof task.keymap_key, "_index/x/keymap.v1");
    ids_of(&task.ids, 0, 10);
    assert_int_equal(og_batch_index_add(b, &task), 1);
    og_batch_index_free(b); /* joins: the journal is this thread's */
    og_store_journal_end(&j);
    assert_int_equal(j.keys.count, 0);
    og_store_journal_free(&j);
    og_mapping *m;
    assert_int_equal(og_store_map(f->st, "_index/x/keymap.v1", &m), OG_OK);
    assert_int_equal(og_mapping_size(m), 6);
    assert_memory_equal(og_mapping_data(m), "theirs", 6);
    og_mapping_release(m);
}

/* A builder that outlived a write attempt which did not publish deletes what it wrote; one
 * whose attempt published keeps it (docs/load.md "Indexes of flushed batches"). */
static void discard_deletes_what_was_written_and_free_keeps_it(void **state)
{
    fixture *f = *state;
    for (int keep = 0; keep < 2; keep++) {
        og_batch_index *b = og_batch_index_new();
        og_batch_index_task task;
        memset(&task, 0, sizeof task);
        task.store = f->st;
        snprintf(task.keymap_key, sizeof task.keymap_key, "_index/d%d/keymap.v1", keep);
        ids_of(&task.ids, keep, 100);
        assert_int_equal(og_batch_index_add(b, &task), 1);
        if (!keep) og_batch_index_discard(b);
        og_batch_index_free(b);
        char km[64];
        snprintf(km, sizeof km, "_index/d%d/keymap.v1", keep);
        assert_int_equal(exists(f->st, km), keep);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_task_is_built_whole_or_dropped_and_journaled, setup, teardown),
        cmocka_unit_test_setup_teardown(an_existing_file_is_left_alone_and_not_journaled, setup, teardown),
        cmocka_unit_test_setup_teardown(discard_deletes_what_was_written_and_free_keeps_it, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
