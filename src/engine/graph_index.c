/*
 * graph_index.c — key maps and topologies of a branch head, written ahead of the first query
 * (graph_index.h).  The builds are the ones a first reader runs (tableview.h); this only asks
 * for every one of them with persist set.
 */
#include "engine/graph_index.h"

#include <string.h>

#include "compiler/catalog.h"
#include "engine/tableview.h"
#include "util/error.h"

og_status og_engine_graph_index_build(og_engine *e, const char *branch, og_graph_index_report *rep)
{
    memset(rep, 0, sizeof *rep);
    if (og_tableview_index_mode() != 2) return OG_OK;
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, NULL));
    const og_catalog *cat = og_read_catalog(r);
    og_status st = OG_OK;
    for (size_t n = 0; n < cat->nnodes && st == OG_OK; n++) {
        og_tableview *v;
        st = og_read_node_view(r, n, &v);
        if (st == OG_OK && og_tableview_rows(v)) st = og_tableview_prepare_keys(v, 1);
        if (st == OG_OK) rep->node_tables++;
    }
    for (size_t k = 0; k < cat->nedges && st == OG_OK; k++) {
        const og_cat_type *et = &cat->edges[k];
        og_tableview *ev, *fv, *tv;
        const og_topology *t;
        st = og_read_edge_view(r, k, &ev);
        if (st == OG_OK) st = og_read_node_view(r, et->from_node, &fv);
        if (st == OG_OK) st = og_read_node_view(r, et->to_node, &tv);
        if (st == OG_OK) st = og_tableview_topology_ex(ev, fv, tv, OG_TOPO_MATERIALIZE, &t);
        if (st == OG_OK) rep->edge_types++;
    }
    og_read_end(r);
    return st;
}
