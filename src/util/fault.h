/*
 * fault.h — test-only crash points (SQLite-style fault injection).
 *
 * og_fault_point("commit.after_manifest") makes the process _exit(OG_FAULT_EXIT_CODE)
 * immediately when the environment variable OG_FAULT names that point (a comma-separated list
 * is allowed).  With OG_FAULT unset it costs one cached getenv.  Tests loop over every point
 * a code path declares (og_fault_points_seen lists the names reached, for that purpose, when
 * OG_FAULT_TRACE=1 prints each name to stderr as it is passed).
 */
#ifndef OG_UTIL_FAULT_H
#define OG_UTIL_FAULT_H

#define OG_FAULT_EXIT_CODE 86

void og_fault_point(const char *name);

#endif
