/*
 * hugepage.h — a hint for transparent huge pages behind a big buffer about to be written.
 *
 * Why: a buffer of many megabytes touched at random (a hash table's slots) or written whole (a
 * loaded column) costs one TLB entry and one fault per 4 KiB page; with huge pages, one per
 * 2 MiB.  Where transparent huge pages are "madvise" (Debian's default) they must be asked
 * for.  A hint only: refused silently where they are off, and it never changes contents.
 */
#ifndef OG_UTIL_HUGEPAGE_H
#define OG_UTIL_HUGEPAGE_H

#include <stddef.h>

/* Buffers below this are left alone (a huge page is 2 MiB: smaller ones would not fill one). */
#define OG_HUGE_HINT_MIN ((size_t)8 << 20)

/* Asks for huge pages behind the whole 2 MiB-aligned pages of [p, p + n), when n is at least
 * OG_HUGE_HINT_MIN.  Call it before the pages are first touched. */
void og_huge_hint(void *p, size_t n);

#endif
