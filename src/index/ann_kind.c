/*
 * ann_kind.c — the "vector" index kind (index/index.h registry): one HNSW file per data file
 * of a Vector property with an index intent (index/ann.h).  Kept apart from ann.c so the
 * file format has no dependency on the registry.
 */
#include "compiler/catalog.h"
#include "index/ann.h"
#include "index/index.h"

static int vector_applies(og_type type, int intent) { return type.id == OG_T_VECTOR && intent == OG_INDEX_VECTOR; }

const og_index_def og_index_def_vector = {"vector", 1, vector_applies, og_ann_build, og_ann_check};
