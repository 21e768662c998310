/*
 * fault.h — test-only crash points (SQLite-style fault injection).
 *
 * og_fault_point("commit.after_manifest") makes the process _exit(OG_FAULT_EXIT_CODE)
 * immediately when the environment variable OG_FAULT names that point (a comma-separated list
 * is allowed).  An entry "name#N" (N >= 1) exits at the N-th pass of that point in the
 * process instead of the first (a point a path passes once per file or per put).  With OG_FAULT
 * unset it costs a getenv.  Tests discover the points a code path passes by running it once
 * with OG_FAULT_TRACE=1, which prints each name to stderr as it is passed (so also how often),
 * and then crash at each in turn.
 */
#ifndef OG_UTIL_FAULT_H
#define OG_UTIL_FAULT_H

#define OG_FAULT_EXIT_CODE 86

void og_fault_point(const char *name);

/* Error injection: 1 when the environment variable OG_FAULT_ERROR names `name` (same list
 * syntax; "#N" entries are ignored); the caller then fails as if an I/O error had happened
 * there.  Tests use it for failures a process survives (a crash point cannot show what the
 * process does next). */
int og_fault_error(const char *name);

#endif
