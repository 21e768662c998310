/*
 * fault_around.c — how much resident memory one random read of a read-only file mapping costs
 * the process on this kernel, with and without madvise(MADV_RANDOM), with the file in the page
 * cache or not (docs/benchmarks.md "Scaling": madvise(MADV_RANDOM) on the mapped indexes).
 *
 * Why: a traversal or key lookup touches a few 4 KiB pages of a mapped topology or key map,
 * but a read fault maps the cached pages around the touched one too (fault-around, 64 KiB by
 * default), and the process's RSS counts them.  This checks whether a hint turns that off.
 * The file is mapped the way src/store/store_local.c map_unaligned maps a store file (4 KiB
 * past a 2 MiB boundary), so no page-cache folio is mapped as one huge page.
 *
 *   fault_around FILE MODE TOUCHES
 *     MODE 0: cached (MADV_WILLNEED first), normal      1: cached, MADV_RANDOM
 *          2: evicted (POSIX_FADV_DONTNEED), normal     3: evicted, MADV_RANDOM
 *   Touches TOUCHES random pages (fixed seed), then reads the first 64 MiB in order; prints the
 *   growth of RssFile per touch, the minor faults and both times.
 *
 * Build: cc -O2 -std=c11 -o /tmp/fault_around bench/graph/fault_around.c
 * File:  dd if=/dev/urandom of=/tmp/big.bin bs=4M count=128 (512 MiB, written in big runs)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long rss_file_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "RssFile:", 8) == 0) v = atol(line + 8);
    if (f) fclose(f);
    return v;
}

static long minor_faults(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    char buf[1024];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    long v = -1;
    /* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt */
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", &v) != 1) v = -1;
    return v;
}

static double ms_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fault_around FILE MODE(0-3) TOUCHES\n");
        return 2;
    }
    int mode = atoi(argv[2]), touches = atoi(argv[3]);
    int fd = open(argv[1], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size < (off_t)(64u << 20)) {
        fprintf(stderr, "fault_around: %s: need a readable file of at least 64 MiB\n", argv[1]);
        return 1;
    }
    size_t size = (size_t)sb.st_size, span = (size_t)2 << 20, page = 4096;
    uint8_t *r = mmap(NULL, size + span + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return 1;
    uintptr_t at = (((uintptr_t)r + span - 1) & ~(uintptr_t)(span - 1)) + page;
    uint8_t *p = mmap((void *)at, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) return 1;
    if (mode >= 2) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    else (void)madvise(p, size, MADV_WILLNEED);
    if (mode == 1 || mode == 3) (void)madvise(p, size, MADV_RANDOM);

    long rss0 = rss_file_kb(), f0 = minor_faults();
    volatile uint64_t sum = 0;
    uint64_t x = 42;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int i = 0; i < touches; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        sum += p[((x >> 17) % (size / page)) * page];
    }
    double rand_ms = ms_since(&t);
    long rss1 = rss_file_kb(), f1 = minor_faults();
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (size_t o = 0; o < ((size_t)64 << 20); o += 64) sum += p[o];
    double seq_ms = ms_since(&t);
    static const char *names[] = {"cached, normal", "cached, MADV_RANDOM", "evicted, normal",
                                  "evicted, MADV_RANDOM"};
    printf("%-21s %d touches: RssFile +%ld KiB (%.1f KiB a touch), %ld minor faults, %.2f ms; "
           "then 64 MiB in order: %.2f ms, %ld minor faults\n",
           names[mode & 3], touches, rss1 - rss0, (double)(rss1 - rss0) / touches, f1 - f0,
           rand_ms, seq_ms, minor_faults() - f1);
    return 0;
}
