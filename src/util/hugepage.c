/*
 * hugepage.c — og_huge_hint (hugepage.h): madvise(MADV_HUGEPAGE) over a buffer's aligned part.
 */
#include "util/hugepage.h"

#include <stdint.h>
#include <sys/mman.h>

void og_huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (!p || n < OG_HUGE_HINT_MIN) return;
    uintptr_t span = (uintptr_t)2 << 20, lo = ((uintptr_t)p + span - 1) & ~(span - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(span - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p, (void)n;
#endif
}
