/*
 * test_server_concurrency.c — writers racing through the server: 8 clients insert into one
 * branch of one server at once, then clients of TWO server processes serving the same graph
 * write at once.  Every acknowledged (200) write must be in the graph afterwards, and
 * nothing unacknowledged may be (the store arbitrates; no lock, no lost update); then one of
 * two replicas is killed with SIGKILL mid-write and no acknowledged write is lost.  Writes to
 * different branches of one server run at once, not one after another, and merges into one
 * target all land, also from a fleet of agents over three replicas (no request fails).  Then an export larger than the server's stream buffers, with the
 * server's peak memory checked.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvconc-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    curl_global_init(CURL_GLOBAL_ALL);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

typedef struct writer {
    const srv *s;
    int id, n;
    int acked[64];
} writer;

static void *write_loop(void *arg)
{
    writer *w = arg;
    for (int i = 0; i < w->n; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"query\":\"query a($n: String) { insert Note { title: $n } }\",\"params\":{\"n\":\"w%d-%d\"}}", w->id,
                 i);
        http_resp r = post_json(w->s, NULL, "/graphs/g1/mutate", body);
        w->acked[i] = r.status == 200;
        if (r.status != 200 && r.status != 409) fprintf(stderr, "writer %d: %ld %s\n", w->id, r.status, r.body);
        http_free(&r);
    }
    return NULL;
}

/* The titles of every Note, as one string "|t1|t2|...|". */
static char *note_titles(const srv *s)
{
    http_resp r = post_json(s, NULL, "/graphs/g1/query",
                            "{\"query\":\"query q() { match { $n: Note } return { $n.title } }\"}");
    assert_int_equal(r.status, 200);
    size_t cap = 16 + r.len, len = 1;
    char *out = malloc(cap);
    strcpy(out, "|");
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(r.json, "rows"), i, row)
    {
        len += (size_t)snprintf(out + len, cap - len, "%s|", jstr(row, "n.title"));
    }
    http_free(&r);
    return out;
}

static void check_writers(const srv *s, writer *w, int nw)
{
    char *titles = note_titles(s);
    int acked = 0;
    for (int k = 0; k < nw; k++)
        for (int i = 0; i < w[k].n; i++) {
            char t[64];
            snprintf(t, sizeof t, "|w%d-%d|", w[k].id, i);
            int present = strstr(titles, t) != NULL;
            assert_int_equal(present, w[k].acked[i]); /* acknowledged <=> present */
            acked += w[k].acked[i];
        }
    free(titles);
    fprintf(stderr, "acknowledged %d of %d writes\n", acked, nw * w[0].n);
    assert_true(acked > 0);
}

static void test_one_server_eight_writers(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    writer w[8];
    pthread_t th[8];
    for (int k = 0; k < 8; k++) {
        w[k] = (writer){&s, k, 6, {0}};
        pthread_create(&th[k], NULL, write_loop, &w[k]);
    }
    for (int k = 0; k < 8; k++) pthread_join(th[k], NULL);
    check_writers(&s, w, 8);
    assert_int_equal(srv_stop(&s), 0);
}

static void test_two_servers_one_graph(void **state)
{
    srv a, b;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&a, logpath, args), 0);
    assert_int_equal(srv_start(&b, logpath, args), 0);
    writer w[4];
    pthread_t th[4];
    for (int k = 0; k < 4; k++) {
        w[k] = (writer){k % 2 ? &b : &a, 100 + k, 6, {0}};
        pthread_create(&th[k], NULL, write_loop, &w[k]);
    }
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL);
    check_writers(&a, w, 4);
    check_writers(&b, w, 4); /* both processes see the same graph */
    assert_int_equal(srv_stop(&a), 0);
    assert_int_equal(srv_stop(&b), 0);
}

/* One insert of Note `title` on `branch`; the HTTP status. */
typedef struct branch_write {
    const srv *s;
    char branch[32];
    long status;
} branch_write;

static void *write_on_branch(void *arg)
{
    branch_write *b = arg;
    char body[256];
    snprintf(body, sizeof body,
             "{\"query\":\"query a($n: String) { insert Note { title: $n } }\",\"branch\":\"%s\",\"params\":{\"n\":\"t-%s\"}}",
             b->branch, b->branch);
    http_resp r = post_json(b->s, NULL, "/graphs/g1/mutate", body);
    b->status = r.status;
    if (r.status != 200) fprintf(stderr, "write on %s: %ld %s\n", b->branch, r.status, r.body);
    http_free(&r);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes to different branches run at once (docs/server.md "Concurrent writes"): with every
 * store request delayed 40 ms, one write takes a few round trips; eight writes to eight
 * branches sent together end in far less than eight writes one after another would — a
 * graph-wide write lock would serialise them — and each lands on its own branch. */
static void test_writes_to_different_branches_run_at_once(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    setenv("OG_STORE_COUNT", "40", 1);
    int started = srv_start(&s, logpath, args);
    unsetenv("OG_STORE_COUNT");
    assert_int_equal(started, 0);
    branch_write w[8];
    for (int k = 0; k < 8; k++) {
        w[k] = (branch_write){&s, "", 0};
        snprintf(w[k].branch, sizeof w[k].branch, "par-%d", k);
        char body[128];
        snprintf(body, sizeof body, "{\"name\":\"%s\",\"from\":\"main\"}", w[k].branch);
        http_resp r = post_json(&s, NULL, "/graphs/g1/branches", body);
        assert_int_equal(r.status, 200);
        http_free(&r);
    }
    /* a first write warms the handle (tables opened, caches filled); then one write alone,
     * then seven at once on the other branches */
    branch_write one = {&s, "par-0", 0};
    write_on_branch(&one);
    assert_int_equal(one.status, 200);
    snprintf(one.branch, sizeof one.branch, "main");
    double t0 = now_s();
    write_on_branch(&one);
    double alone = now_s() - t0;
    assert_int_equal(one.status, 200);
    pthread_t th[7];
    t0 = now_s();
    for (int k = 1; k < 8; k++) pthread_create(&th[k - 1], NULL, write_on_branch, &w[k]);
    for (int k = 1; k < 8; k++) pthread_join(th[k - 1], NULL);
    double together = now_s() - t0;
    fprintf(stderr, "one write alone %.3f s, seven on seven branches at once %.3f s\n", alone, together);
    for (int k = 1; k < 8; k++) assert_int_equal(w[k].status, 200);
    assert_true(together < 3.5 * alone); /* one after another: about 7x */
    for (int k = 0; k < 8; k++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"query\":\"query q() { match { $n: Note } return { $n.title } }\",\"branch\":\"%s\"}", w[k].branch);
        http_resp r = post_json(&s, NULL, "/graphs/g1/query", body);
        assert_int_equal(r.status, 200);
        char want[64];
        snprintf(want, sizeof want, "t-%s", w[k].branch);
        assert_non_null(strstr(r.body, want));
        assert_null(strstr(r.body, k ? "t-par-0\"" : "t-par-1\"")); /* only its own */
        http_free(&r);
    }
    assert_int_equal(srv_stop(&s), 0);
}

static int occurrences(const char *hay, const char *needle);

typedef struct merge_job {
    const srv *s;
    char source[32];
    long status;
    char outcome[32];
} merge_job;

static void *merge_into_main(void *arg)
{
    merge_job *m = arg;
    char body[128];
    snprintf(body, sizeof body, "{\"source\":\"%s\",\"target\":\"main\"}", m->source);
    http_resp r = post_json(m->s, NULL, "/graphs/g1/branches/merge", body);
    m->status = r.status;
    snprintf(m->outcome, sizeof m->outcome, "%s", r.json ? jstr(r.json, "outcome") ? jstr(r.json, "outcome") : "" : "");
    if (r.status != 200) fprintf(stderr, "merge of %s: %ld %s\n", m->source, r.status, r.body);
    http_free(&r);
    return NULL;
}

/* Merges into one target queue in the engine (the branch's in-process pipeline,
 * docs/graph-authority.md §2: each plans on the one being published) instead of racing for
 * main's next log entry: eight branches, one insert each, merged into main at once — every
 * merge is answered 200, and main holds all eight rows once. */
static void test_merges_into_one_target_all_land(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    merge_job m[8];
    pthread_t th[8];
    for (int k = 0; k < 8; k++) {
        m[k] = (merge_job){&s, "", 0, ""};
        snprintf(m[k].source, sizeof m[k].source, "mrg-%d", k);
        char body[128];
        snprintf(body, sizeof body, "{\"name\":\"%s\",\"from\":\"main\"}", m[k].source);
        http_resp r = post_json(&s, NULL, "/graphs/g1/branches", body);
        assert_int_equal(r.status, 200);
        http_free(&r);
        branch_write w = {&s, "", 0};
        snprintf(w.branch, sizeof w.branch, "%s", m[k].source);
        write_on_branch(&w);
        assert_int_equal(w.status, 200);
    }
    for (int k = 0; k < 8; k++) pthread_create(&th[k], NULL, merge_into_main, &m[k]);
    for (int k = 0; k < 8; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 8; k++) assert_int_equal(m[k].status, 200);
    char *titles = note_titles(&s);
    for (int k = 0; k < 8; k++) {
        char want[64];
        snprintf(want, sizeof want, "|t-mrg-%d|", k);
        assert_int_equal(occurrences(titles, want), 1);
    }
    free(titles);
    assert_int_equal(srv_stop(&s), 0);
}

/* The fleet over replicas (issue 30, docs/server.md "Concurrent writes"): FLEET_REPLICAS
 * server processes over one graph, FLEET_AGENTS agents spread over them, each creating its
 * own branch from main, inserting FLEET_ROWS notes on it and merging it into main, all at
 * once.  Replicas race for the same table versions (every branch writes the one Note table)
 * and for main's next log entry; a lost race is the engine's to retry, never the agent's
 * error: every request is answered 200, and main holds every agent's notes exactly once. */
#define FLEET_REPLICAS 4
#define FLEET_AGENTS 40
#define FLEET_ROWS 4

typedef struct fleet_agent {
    const srv *s;
    int id;
    int failures;
} fleet_agent;

static void fleet_call(fleet_agent *a, const char *path, const char *body)
{
    http_resp r = post_json(a->s, NULL, path, body);
    if (r.status != 200) {
        a->failures++;
        fprintf(stderr, "fleet agent %d: %s: %ld %s\n", a->id, path, r.status, r.body);
    }
    http_free(&r);
}

static void *fleet_agent_run(void *arg)
{
    fleet_agent *a = arg;
    char body[512];
    snprintf(body, sizeof body, "{\"name\":\"fl-%d\",\"from\":\"main\"}", a->id);
    fleet_call(a, "/graphs/g1/branches", body);
    for (int k = 0; k < FLEET_ROWS; k++) {
        snprintf(body, sizeof body,
                 "{\"query\":\"query a($n: String) { insert Note { title: $n } }\",\"branch\":\"fl-%d\","
                 "\"params\":{\"n\":\"fleet-%d-%d\"}}",
                 a->id, a->id, k);
        fleet_call(a, "/graphs/g1/mutate", body);
    }
    snprintf(body, sizeof body, "{\"source\":\"fl-%d\",\"target\":\"main\"}", a->id);
    fleet_call(a, "/graphs/g1/branches/merge", body);
    return NULL;
}

static void fleet_run(int first_id)
{
    srv s[FLEET_REPLICAS];
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    for (int i = 0; i < FLEET_REPLICAS; i++) assert_int_equal(srv_start(&s[i], logpath, args), 0);
    fleet_agent a[FLEET_AGENTS];
    pthread_t th[FLEET_AGENTS];
    double t0 = now_s();
    for (int k = 0; k < FLEET_AGENTS; k++) {
        a[k] = (fleet_agent){&s[k % FLEET_REPLICAS], first_id + k, 0};
        pthread_create(&th[k], NULL, fleet_agent_run, &a[k]);
    }
    int failures = 0;
    for (int k = 0; k < FLEET_AGENTS; k++) {
        pthread_join(th[k], NULL);
        failures += a[k].failures;
    }
    fprintf(stderr, "fleet: %d agents over %d replicas, %d failures, %.2f s\n", FLEET_AGENTS, FLEET_REPLICAS,
            failures, now_s() - t0);
    int wrong = 0; /* notes not in main exactly once, as each replica reads main */
    for (int i = 0; i < FLEET_REPLICAS; i++) {
        char *titles = note_titles(&s[i]);
        for (int k = 0; k < FLEET_AGENTS; k++)
            for (int r = 0; r < FLEET_ROWS; r++) {
                char want[64];
                snprintf(want, sizeof want, "|fleet-%d-%d|", first_id + k, r);
                wrong += occurrences(titles, want) != 1;
            }
        free(titles);
    }
    int stopped = 0; /* the replicas go before any assertion can end the test */
    for (int i = 0; i < FLEET_REPLICAS; i++) stopped += srv_stop(&s[i]) == 0;
    assert_int_equal(failures, 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(stopped, FLEET_REPLICAS);
}

/* On the local disk: the replicas also queue on the branch's cross-process publish lock. */
static void test_fleet_over_replicas_local(void **state)
{
    (void)state;
    fleet_run(0);
}

/* On a store read as S3 (the counting adapter, 1 ms a request): no lock, only retries. */
static void test_fleet_over_replicas_remote(void **state)
{
    (void)state;
    setenv("OG_STORE_COUNT", "1,remote", 1);
    fleet_run(1000);
    unsetenv("OG_STORE_COUNT");
}

/* A field of /proc/PID/status in KiB ("VmHWM:", "VmRSS:"), or -1. */
/* Occurrences of `needle` in `hay`. */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

typedef struct killer {
    srv *victim;
    writer *watch; /* kill once this writer has two acknowledged writes */
} killer;

static void *kill_loop(void *arg)
{
    killer *k = arg;
    for (int spins = 0; spins < 3000; spins++) {
        if (k->watch->acked[0] + k->watch->acked[1] >= 2) break;
        usleep(2000);
    }
    usleep(5000); /* into the next write */
    kill(k->victim->pid, SIGKILL);
    int st;
    waitpid(k->victim->pid, &st, 0);
    return NULL;
}

/* Two replicas over one graph; one is killed with SIGKILL while its clients write (and the
 * other's write too).  Afterwards, through the survivor and through the restarted replica:
 * the graph reads, every acknowledged write is there exactly once, a write the killed
 * replica never answered is there at most once (it may have been published just before the
 * kill), and the survivor's writes are there exactly when acknowledged. */
static void test_replica_killed_mid_write(void **state)
{
    srv a, b, a2;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&a, logpath, args), 0);
    assert_int_equal(srv_start(&b, logpath, args), 0);
    writer w[4];
    pthread_t th[4], kt;
    for (int k = 0; k < 4; k++) {
        w[k] = (writer){k % 2 ? &b : &a, 200 + k, 12, {0}};
        pthread_create(&th[k], NULL, write_loop, &w[k]);
    }
    killer kl = {&a, &w[0]};
    pthread_create(&kt, NULL, kill_loop, &kl);
    pthread_join(kt, NULL);
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL);
    assert_false(srv_alive(&a));
    a.pid = 0;
    assert_int_equal(srv_start(&a2, logpath, args), 0);
    const srv *readers[2] = {&b, &a2};
    int lost_on_kill = 0;
    for (int r = 0; r < 2; r++) {
        char *titles = note_titles(readers[r]);
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < w[k].n; i++) {
                char t[64];
                snprintf(t, sizeof t, "|w%d-%d|", w[k].id, i);
                int n = occurrences(titles, t);
                if (w[k].acked[i]) assert_int_equal(n, 1); /* acknowledged: there, once */
                else if (k % 2) assert_int_equal(n, 0);    /* the survivor answered every write */
                else assert_true(n <= 1);
                lost_on_kill += r == 0 && k % 2 == 0 && !w[k].acked[i];
            }
        free(titles);
    }
    fprintf(stderr, "writes through the killed replica left unanswered: %d\n", lost_on_kill);
    assert_true(lost_on_kill > 0); /* the kill did land mid-run */
    assert_int_equal(srv_stop(&a2), 0);
    assert_int_equal(srv_stop(&b), 0);
}

static long status_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field))) kb = strtol(line + strlen(field), NULL, 10);
    if (f) fclose(f);
    return kb;
}

static long peak_kb(pid_t pid) { return status_kb(pid, "VmHWM:"); }

/* Resets the process's peak RSS to its current RSS (Linux >= 4.0: "5" > clear_refs) and
 * returns that current RSS in KiB; -1 when the kernel refuses. */
static long reset_peak_kb(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)pid);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    if (fclose(f) || !ok) return -1;
    return status_kb(pid, "VmRSS:");
}

/* The child mode of this binary (`--export-peak URI TYPE`): opens the graph, resets its peak,
 * exports TYPE to /dev/null with og_db_export and prints how far its RSS peak rose, in KiB —
 * what the export costs the engine alone, measured the way the server's rise is.  (Only a
 * first export tells: after one, the freed pages stay resident and a second one reuses
 * them, for the server as for this child.) */
static int export_peak_child(const char *uri, const char *type)
{
    og_db *db;
    if (og_db_open(&db, uri, NULL)) return 2;
    FILE *null = fopen("/dev/null", "w");
    long base = reset_peak_kb(getpid());
    const char *types[] = {type};
    og_status st = null ? og_db_export(db, null, NULL, types, 1) : OG_ERR_IO;
    if (null) fclose(null);
    long peak = peak_kb(getpid());
    og_db_close(db);
    if (st || base < 0 || peak < 0) return 3;
    printf("%ld\n", peak - base);
    return 0;
}

static char self_exe[4096];

/* Runs the child mode with the server's ASAN_OPTIONS (set by the caller); -1 on failure. */
static long embedded_export_rise_kb(const char *uri, const char *type)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' --export-peak '%s' '%s'", self_exe, uri, type);
    FILE *p = popen(cmd, "r");
    long kb = -1;
    if (p && fscanf(p, "%ld", &kb) != 1) kb = -1;
    if (p && pclose(p)) kb = -1;
    return kb;
}

typedef struct counter {
    size_t bytes, lines;
} counter;

static size_t count_only(char *p, size_t sz, size_t n, void *arg)
{
    counter *c = arg;
    c->bytes += sz * n;
    for (size_t i = 0; i < sz * n; i++) c->lines += p[i] == '\n';
    return sz * n;
}

static void test_large_load_and_export(void **state)
{
    /* ~12 MiB of notes loaded, then exported; the client never holds it all.
     * Under ASan, freed memory is quarantined: keep that small so peaks measure live memory. */
    char asan[512];
    const char *prev = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "%s%squarantine_size_mb=4", prev ? prev : "", prev && *prev ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    /* six batches (six fragments per table): the engine holds one fragment at a time */
    const size_t n = 6000, body_len = 2000, batches = 6;
    char *pad = malloc(body_len + 1);
    memset(pad, 'x', body_len);
    pad[body_len] = 0;
    size_t cap = n / batches * (body_len + 100), len = 0, total = 0;
    char *nd = malloc(cap);
    long before = peak_kb(s.pid);
    for (size_t b = 0; b < batches; b++) {
        len = 0;
        for (size_t i = b * n / batches; i < (b + 1) * n / batches; i++)
            len += (size_t)snprintf(nd + len, cap - len,
                                    "{\"type\":\"Note\",\"data\":{\"title\":\"big-%zu\",\"body\":\"%s\"}}\n", i, pad);
        const char *h[] = {"Content-Type: application/x-ndjson", NULL};
        http_resp r = http(&s, "POST", "/graphs/g1/load/ndjson?mode=append", h, nd, len);
        if (r.status != 200) fprintf(stderr, "%s\n", r.body);
        assert_int_equal(r.status, 200);
        http_free(&r);
        total += len;
    }
    free(pad);
    free(nd);
    len = total;
    long after_load = peak_kb(s.pid);
    /* the server's rise is measured from its RSS right before the export (the load phase's
     * peak, which depends on timing, no longer hides or adds anything) */
    long base = reset_peak_kb(s.pid);

    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://%s/graphs/g1/export", s.addr);
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"type_names\":[\"Note\"]}");
    counter cnt = {0, 0};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, count_only);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &cnt);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    assert_int_equal(code, 200);
    assert_true(cnt.lines >= n);
    assert_true(cnt.bytes >= len);
    long after_export = peak_kb(s.pid);
    char uri[256];
    snprintf(uri, sizeof uri, "%s/g", dir);
    long engine = embedded_export_rise_kb(uri, "Note");
    fprintf(stderr,
            "server peak KiB: start %ld, after %zu-byte load %ld, after %zu-byte export %ld; export rise: server %ld, "
            "og_db_export alone %ld\n",
            before, len, after_load, cnt.bytes, after_export, base >= 0 ? after_export - base : -1, engine);
    assert_int_equal(srv_stop(&s), 0);
    if (base < 0 || engine < 0) {
        /* no peak reset (an old kernel): the coarse check, growth over the load's peak */
        printf("SKIP: precise export peak unavailable (clear_refs or the child failed); coarse check only\n");
        assert_true((after_export - after_load) * 1024 < 2 * (long)cnt.bytes);
        return;
    }
    /* og_db_export materializes one table's columns at a time (engine/export.c): the rise of
     * the engine alone (same ASAN_OPTIONS, same graph, same type) is the baseline.  The
     * server adds only bounded stream buffers (a pipe, 64 KiB stdio and response blocks, the
     * producer thread's stack); had it accumulated the rendered stream, its rise would exceed
     * the engine's by the bytes sent.  A third of them is the line: measured, the server's
     * rise stays a few MiB BELOW the engine's (its handle's caches are warm, and pages its
     * loads freed are reused), while an accumulated stream would put it above by about
     * more than half the bytes sent (measured: 5 MiB below, for a 12 MB stream). */
    long server_rise = after_export - base;
    if ((server_rise - engine) * 1024 >= (long)cnt.bytes / 3)
        fail_msg("the export raised the server's peak by %ld KiB, the engine alone by %ld KiB: %ld KiB more for a "
                 "%zu-byte stream",
                 server_rise, engine, server_rise - engine, cnt.bytes);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--export-peak")) return export_peak_child(argv[2], argv[3]);
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    self_exe[n > 0 ? n : 0] = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_server_eight_writers),
        cmocka_unit_test(test_two_servers_one_graph),
        cmocka_unit_test(test_writes_to_different_branches_run_at_once),
        cmocka_unit_test(test_merges_into_one_target_all_land),
        cmocka_unit_test(test_replica_killed_mid_write),
        cmocka_unit_test(test_large_load_and_export),
        cmocka_unit_test(test_fleet_over_replicas_local),
        cmocka_unit_test(test_fleet_over_replicas_remote),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
