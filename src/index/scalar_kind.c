/*
 * scalar_kind.c — the "scalar" index kind (index/index.h registry): one sorted-key file per
 * data file of an @index / @key property that is an enum or an orderable scalar (ints, floats,
 * Date, DateTime, Bool) — the reference's BTREE intent — (index/scalar.h).
 */
#include "compiler/catalog.h"
#include "index/index.h"
#include "index/scalar.h"

static int scalar_applies(og_type type, int intent)
{
    return intent == OG_INDEX_BTREE && og_scalar_kind_of(type) != OG_SCALAR_NONE;
}

const og_index_def og_index_def_scalar = {"scalar", 1, scalar_applies, og_scalar_build, og_scalar_check};
