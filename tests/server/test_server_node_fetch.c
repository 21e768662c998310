/*
 * test_server_node_fetch.c — a second client implementation against a live server: Node's
 * built-in fetch (tests/server/node_fetch_client.mjs, no packages) runs a read, a conditional
 * mutation that wins and one that gets 412, an NDJSON load sent as a streamed (chunked) body,
 * a 415, and counts the rows after.  Prints a SKIP line when node is absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static void test_node_fetch_client(void **state)
{
    if (system("node --version > /dev/null 2>&1") != 0) {
        printf("SKIP: node is not installed (scripts/install-deps.sh installs it)\n");
        return;
    }
    char dir[64] = "/tmp/og-srvnode-XXXXXX", graph[128], logpath[128], cmd[1024];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(make_graph(dir, "g"), 0);
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"node\":\"tok-node\"}", 1);
    char policy[200];
    snprintf(policy, sizeof policy, "%s/p.yaml", dir);
    FILE *f = fopen(policy, "w");
    fputs("version: 1\ngroups:\n  w: [node]\nrules:\n  - id: all\n    allow: { actors: { group: w }, actions: [read, "
          "change] }\n",
          f);
    fclose(f);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--policy", policy, NULL};
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    snprintf(cmd, sizeof cmd, "node '%s/tests/server/node_fetch_client.mjs' 'http://%s' g1 tok-node", OG_SOURCE_DIR,
             s.addr);
    int rc = system(cmd);
    assert_int_equal(srv_stop(&s), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    assert_int_equal(rc, 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_fetch_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
