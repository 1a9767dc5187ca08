// Graphviz (Debian libgraphviz-dev): parse a DOT text, lay it out with dot, render it, in one call.
#ifndef FLOWSTACK_GRAPHVIZ_SHIM_H
#define FLOWSTACK_GRAPHVIZ_SHIM_H

#include <graphviz/gvc.h>
#include <graphviz/cgraph.h>

/// Why flowstack_graphviz_render failed; 0 when it did not.
enum flowstack_graphviz_failure {
    FLOWSTACK_GRAPHVIZ_OK = 0,
    FLOWSTACK_GRAPHVIZ_PARSE = 1,
    FLOWSTACK_GRAPHVIZ_LAYOUT = 2,
    FLOWSTACK_GRAPHVIZ_RENDER = 3,
};

/// Renders `dot` laid out by the dot engine into `format` ("svg"); on success `*result` holds
/// `*length` bytes to free with gvFreeRenderData. Graphviz keeps global state: callers serialize.
static inline int flowstack_graphviz_render(GVC_t *context, const char *dot, const char *format,
                                            char **result, unsigned int *length) {
    agseterr(AGMAX);  /* no messages on stderr: failures are reported by the return value */
    Agraph_t *graph = agmemread(dot);
    if (graph == NULL) return FLOWSTACK_GRAPHVIZ_PARSE;
    if (gvLayout(context, graph, "dot") != 0) {
        agclose(graph);
        return FLOWSTACK_GRAPHVIZ_LAYOUT;
    }
    int rendered = gvRenderData(context, graph, format, result, length);
    gvFreeLayout(context, graph);
    agclose(graph);
    return rendered == 0 ? FLOWSTACK_GRAPHVIZ_OK : FLOWSTACK_GRAPHVIZ_RENDER;
}

#endif
