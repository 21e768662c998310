/*
 * cli_run.h — shared by the CLI tests: a scratch directory, the `omnigraph` binary under test,
 * running a command line and capturing its stdout, writing a small file.  Header-only (static
 * functions); include it after <cmocka.h>.
 */
#ifndef OG_TEST_CLI_RUN_H
#define OG_TEST_CLI_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char dir[64];
static char bin[1024];

/* Runs a shell command line; returns its exit status and its stdout in out (may be NULL). */
static int run(char *out, size_t cap, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = out ? fread(out, 1, cap - 1, p) : 0;
    if (out) out[n] = '\0';
    else {
        char sink[4096];
        while (fread(sink, 1, sizeof sink, p) > 0) {}
    }
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A cmocka setup body: a fresh scratch dir from `tmpl` ("/tmp/og-NAME-XXXXXX") and the path
 * of the binary under test. */
__attribute__((unused)) static int cli_scratch_new(const char *tmpl)
{
    snprintf(dir, sizeof dir, "%s", tmpl);
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    return 0;
}

/* The matching teardown body: removes the scratch dir. */
__attribute__((unused)) static int cli_scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes `text` to dir/name. */
__attribute__((unused)) static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
