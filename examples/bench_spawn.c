/*
 * bench_spawn.c — what a user feels of a command: a fresh process per sample, timed from spawn
 * to exit (issue 17's "`omnigraph query` end to end" target; bench/graph/coldstart.sh).
 *
 *   bench_spawn SAMPLES KEYS_FILE PROGRAM [ARG...]
 *
 * Runs PROGRAM SAMPLES times, one after the other, stdout and stderr to /dev/null (the rows are
 * still formatted and written).  Every "%k" inside an ARG is replaced by the next line of
 * KEYS_FILE (round robin), so each sample can look up a different key.  Prints one JSON object:
 * wall time (spawn → reaped), CPU time (the child's user + system, from wait4) and its peak
 * RSS, each as median / p90 / min / max.  Exit 1 if any sample failed (then nothing is timed).
 * A tool to measure with, not part of the library: it uses no omnigraph API.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void stats(const char *name, double *v, int n, const char *sep)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int p90 = (int)(0.9 * (n - 1) + 0.5);
    printf("\"%s\":{\"median\":%.3f,\"p90\":%.3f,\"min\":%.3f,\"max\":%.3f}%s", name,
           n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[p90], v[0], v[n - 1], sep);
}

/* argv with every "%k" replaced by key; the strings are leaked (a short-lived tool). */
static char **subst(char **args, int nargs, const char *key)
{
    char **out = calloc((size_t)nargs + 1, sizeof *out);
    for (int i = 0; i < nargs; i++) {
        const char *a = args[i], *p = strstr(a, "%k");
        if (!p) {
            out[i] = args[i];
            continue;
        }
        size_t n = strlen(a) + strlen(key) + 1;
        out[i] = malloc(n);
        snprintf(out[i], n, "%.*s%s%s", (int)(p - a), a, key, p + 2);
    }
    return out;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_spawn SAMPLES KEYS_FILE PROGRAM [ARG...]  (\"%%k\" in an ARG = next key)\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1) n = 1;
    char **keys = NULL;
    int nkeys = 0, cap = 0;
    FILE *kf = fopen(argv[2], "r");
    if (!kf) {
        perror(argv[2]);
        return 2;
    }
    char line[4096];
    while (fgets(line, sizeof line, kf)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (nkeys == cap) keys = realloc(keys, (size_t)(cap = cap ? cap * 2 : 64) * sizeof *keys);
        keys[nkeys++] = strdup(line);
    }
    fclose(kf);
    if (!nkeys) {
        fprintf(stderr, "%s: no keys\n", argv[2]);
        return 2;
    }
    double *wall = calloc((size_t)n, sizeof *wall), *cpu = calloc((size_t)n, sizeof *cpu);
    double *rss = calloc((size_t)n, sizeof *rss);
    for (int i = 0; i < n; i++) {
        char **av = subst(argv + 3, argc - 3, keys[i % nkeys]);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        pid_t pid;
        double t0 = now_ms();
        if (posix_spawn(&pid, av[0], &fa, NULL, av, environ) != 0) {
            perror(av[0]);
            return 1;
        }
        int ws;
        struct rusage ru;
        if (wait4(pid, &ws, 0, &ru) < 0) {
            perror("wait4");
            return 1;
        }
        wall[i] = now_ms() - t0;
        posix_spawn_file_actions_destroy(&fa);
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, "bench_spawn: sample %d (key %s) failed (status %d)\n", i, keys[i % nkeys], ws);
            return 1;
        }
        cpu[i] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
        rss[i] = (double)ru.ru_maxrss / 1024.0; /* MiB */
    }
    double l[3] = {0};
    getloadavg(l, 3);
    printf("{\"samples\":%d,", n);
    stats("wall_ms", wall, n, ",");
    stats("cpu_ms", cpu, n, ",");
    stats("maxrss_mib", rss, n, ",");
    printf("\"loadavg\":%.2f}\n", l[0]);
    return 0;
}
