/*
 * ident.h — names that must not deceive (docs/graph-authority.md "Branch names"): the checks a new
 * branch name passes, and the confusable skeleton that protected-branch matching compares.
 *
 * Why a module: `mаin` (Cyrillic а), `ｍａｉｎ` (full width), `Main` and `main` + U+200B all
 * read as `main` to a person and to an agent, but compare unequal as bytes; a policy that
 * protects `main` must protect them too, and the graph should not create them at all.  The
 * Unicode data (normalization, scripts, the UTS #39 confusables table) is ICU's.
 */
#ifndef OG_UTIL_IDENT_H
#define OG_UTIL_IDENT_H

#include <stddef.h>

#include "omnigraph.h"

/* The bytes a skeleton may take: a skeleton can be longer than its name (one character may
 * map to several). */
#define OG_IDENT_SKELETON_MAX 1024

/* The confusable skeleton of a UTF-8 name: NFKC case folding (which also drops default
 * ignorable characters such as U+200B) followed by the UTS #39 skeleton.  Two names with the
 * same skeleton are visually confusable: `main`, `Main`, `MAIN`, `mаin`, `ｍａｉｎ` all map to
 * one skeleton.  OG_ERR_INVALID for text that is not valid UTF-8 or whose skeleton does not
 * fit `cap`.  Thread-safe. */
og_status og_ident_skeleton(const char *name, char *out, size_t cap);

/* 1 when a and b are different strings with the same skeleton (0 when equal, or when either
 * has no skeleton). */
int og_ident_confusable(const char *a, const char *b);

/* The Unicode rules of a new identifier (branch names, docs/graph-authority.md): in NFC; no control,
 * format or other invisible character (general categories Cc, Cf, Zl, Zp, Co, Cs, Cn, default
 * ignorable code points, and spaces other than U+0020); and not mixing scripts beyond UTS #39's
 * "highly restrictive" level (Latin with Cyrillic or Greek is refused; Latin with Han and
 * Japanese or Korean scripts is allowed).  OG_OK, or OG_ERR_INVALID naming `what` and the
 * offending character (U+XXXX) or rule. */
og_status og_ident_check(const char *name, const char *what);

#endif
