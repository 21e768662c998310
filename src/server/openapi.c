/*
 * openapi.c — the OpenAPI 3.1 document of the routes this server answers, built from the
 * route table itself (routes.c) so the two cannot drift: a path is documented exactly when
 * it is routed.  Component schemas follow the reference's wire shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

static json_t *nstr(void) { return json_pack("{s:[s,s]}", "type", "string", "null"); }
static json_t *str(void) { return json_pack("{s:s}", "type", "string"); }
static json_t *uint_(void) { return json_pack("{s:s,s:i}", "type", "integer", "minimum", 0); }
static json_t *ref(const char *name)
{
    char buf[160];
    snprintf(buf, sizeof buf, "#/components/schemas/%s", name);
    return json_pack("{s:s}", "$ref", buf);
}
static json_t *nref(const char *name) { return json_pack("{s:[{s:s},o]}", "oneOf", "type", "null", ref(name)); }
static json_t *arr(json_t *items) { return json_pack("{s:s,s:o}", "type", "array", "items", items); }

/* An object schema: `req` is a space-separated list of required properties. */
static json_t *obj(const char *req, json_t *props)
{
    json_t *o = json_pack("{s:s,s:o}", "type", "object", "properties", props);
    if (req && *req) {
        json_t *r = json_array();
        char *copy = strdup(req), *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) json_array_append_new(r, json_string(t));
        free(copy);
        json_object_set_new(o, "required", r);
    }
    return o;
}

static json_t *schemas(void)
{
    json_t *s = json_object();
    json_object_set_new(s, "ErrorCode", json_pack("{s:s,s:[s,s,s,s,s,s,s,s]}", "type", "string", "enum", "unauthorized",
                                                  "forbidden", "bad_request", "not_found", "method_not_allowed",
                                                  "conflict", "too_many_requests", "internal"));
    json_object_set_new(s, "ErrorOutput",
                        obj("error", json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "error", str(), "code", nref("ErrorCode"),
                                               "merge_conflicts", arr(ref("MergeConflictOutput")),
                                               "precondition_failure", nref("PreconditionFailureOutput"),
                                               "resource_limit", nref("ResourceLimitOutput"), "key_conflict",
                                               json_pack("{}"), "read_set_conflict", json_pack("{}"))));
    json_object_set_new(s, "MergeConflictOutput",
                        obj("entity_kind type_name kind message",
                            json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "entity_kind", ref("EntityKindOutput"), "type_name",
                                      str(), "entity_id", nstr(), "kind", str(), "message", str(), "properties",
                                      arr(obj("property", json_pack("{s:o,s:{},s:{},s:{}}", "property", str(), "base",
                                                                    "source", "target"))))));
    json_object_set_new(s, "EntityKindOutput", json_pack("{s:s,s:[s,s]}", "type", "string", "enum", "node", "edge"));
    json_object_set_new(s, "PreconditionFailureOutput",
                        obj("expected", json_pack("{s:o,s:o}", "expected", str(), "actual", nstr())));
    json_object_set_new(s, "ResourceLimitOutput", obj("resource limit actual", json_pack("{s:o,s:o,s:o}", "resource",
                                                                                         str(), "limit", uint_(),
                                                                                         "actual", uint_())));
    json_object_set_new(s, "HealthOutput",
                        obj("status version internal_schema_version",
                            json_pack("{s:o,s:o,s:o,s:o}", "status", str(), "version", str(),
                                      "internal_schema_version", uint_(), "source_version", nstr())));
    json_object_set_new(s, "GraphInfo", obj("graph_id uri", json_pack("{s:o,s:o}", "graph_id", str(), "uri", str())));
    json_object_set_new(s, "GraphCreateRequest",
                        obj("graph_id schema_source", json_pack("{s:o,s:o}", "graph_id", str(), "schema_source", str())));
    json_object_set_new(s, "GraphCreateOutput",
                        obj("graph_id uri", json_pack("{s:o,s:o,s:o}", "graph_id", str(), "uri", str(), "actor_id", nstr())));
    json_object_set_new(s, "GraphDeleteOutput",
                        obj("graph_id deleted", json_pack("{s:o,s:{s:s},s:o}", "graph_id", str(), "deleted", "type",
                                                          "boolean", "actor_id", nstr())));
    json_object_set_new(s, "GraphListResponse", obj("graphs", json_pack("{s:o}", "graphs", arr(ref("GraphInfo")))));
    json_object_set_new(s, "SnapshotDatasetOutput",
                        obj("entity_kind type_name dataset_path published_dataset_version entity_count",
                            json_pack("{s:o,s:o,s:o,s:o,s:o}", "entity_kind", ref("EntityKindOutput"), "type_name",
                                      str(), "dataset_path", str(), "published_dataset_version", uint_(),
                                      "entity_count", uint_())));
    json_object_set_new(s, "SnapshotOutput",
                        obj("graph_branch graph_manifest_version internal_schema_version datasets",
                            json_pack("{s:o,s:o,s:o,s:o,s:o}", "graph_branch", str(), "graph_manifest_version", uint_(),
                                      "internal_schema_version", uint_(), "datasets", arr(ref("SnapshotDatasetOutput")),
                                      "graph_commit_id", nstr())));
    /* max_rows / offset and the page's fields of ReadOutput are OmniGraph-C additions
     * (docs/server.md "Paging a read") */
    json_object_set_new(s, "QueryRequest",
                        obj("query", json_pack("{s:o,s:o,s:{},s:o,s:o,s:{s:s,s:i},s:o}", "query", str(), "name", nstr(),
                                               "params", "branch", nstr(), "snapshot", nstr(), "max_rows", "type",
                                               "integer", "minimum", 1, "offset", uint_())));
    json_object_set_new(s, "ReadRequest",
                        obj("query_source", json_pack("{s:o,s:o,s:{},s:o,s:o}", "query_source", str(), "query_name",
                                                      nstr(), "params", "branch", nstr(), "snapshot", nstr())));
    json_object_set_new(s, "ReadTargetOutput", obj("", json_pack("{s:o,s:o}", "branch", nstr(), "snapshot", nstr())));
    json_object_set_new(s, "ReadOutput",
                        obj("query_name target row_count rows",
                            json_pack("{s:o,s:o,s:o,s:o,s:{},s:o,s:o,s:o,s:{s:s},s:o}", "query_name", str(), "target",
                                      ref("ReadTargetOutput"), "row_count", uint_(), "columns", arr(str()), "rows",
                                      "graph_commit_id", nstr(), "total_rows", uint_(), "offset", uint_(), "truncated",
                                      "type", "boolean", "next_offset", uint_())));
    json_object_set_new(s, "ChangeRequest",
                        obj("query", json_pack("{s:o,s:o,s:{},s:o}", "query", str(), "name", nstr(), "params", "branch",
                                               nstr())));
    json_object_set_new(s, "CommitOutput",
                        obj("graph_commit_id graph_manifest_version created_at",
                            json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "graph_commit_id", str(),
                                      "graph_manifest_version", uint_(), "created_at",
                                      json_pack("{s:s,s:s}", "type", "integer", "format", "int64"), "graph_branch",
                                      nstr(), "parent_commit_id", nstr(), "merged_parent_commit_id", nstr(), "actor_id",
                                      nstr(), "actor_via", nstr())));
    json_object_set_new(s, "ChangeOutput",
                        obj("branch query_name affected_nodes affected_edges",
                            json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "query_name", str(), "branch", str(),
                                      "affected_nodes", uint_(), "affected_edges", uint_(), "inserted", uint_(),
                                      "updated", uint_(), "deleted", uint_(), "actor_id", nstr(),
                                      "commit", nref("CommitOutput"))));
    json_object_set_new(s, "LoadMode", json_pack("{s:s,s:[s,s,s]}", "type", "string", "enum", "overwrite", "append", "merge"));
    json_object_set_new(s, "GraphBatchDeclarationOutput",
                        obj("name entities_loaded", json_pack("{s:o,s:o}", "name", str(), "entities_loaded", uint_())));
    json_t *load_props = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "branch", str(), "base_branch", nstr(),
                                   "branch_created", json_pack("{s:s}", "type", "boolean"), "mode", ref("LoadMode"),
                                   "nodes", arr(ref("GraphBatchDeclarationOutput")), "edges",
                                   arr(ref("GraphBatchDeclarationOutput")), "total_entities", uint_(), "actor_id",
                                   nstr(), "commit", nref("CommitOutput"));
    json_object_set_new(load_props, "embedding_generation",
                        json_pack("{s:[s,s],s:[s,n]}", "type", "string", "null", "enum", "unsupported"));
    json_object_set_new(s, "GraphBatchLoadOutput",
                        obj("branch branch_created mode nodes edges total_entities", json_deep_copy(load_props)));
    json_object_set_new(load_props, "uri", str());
    json_object_set_new(s, "IngestOutput", obj("uri branch branch_created mode nodes edges total_entities", load_props));
    json_object_set_new(s, "IngestRequest",
                        obj("data", json_pack("{s:o,s:o,s:o,s:o}", "data", str(), "branch", nstr(), "from", nstr(),
                                              "mode", nref("LoadMode"))));
    json_t *export_req = obj("", json_pack("{s:o,s:o,s:o}", "branch", nstr(), "snapshot", nstr(), "type_names", arr(str())));
    json_object_set_new(export_req, "additionalProperties", json_false());
    json_object_set_new(s, "ExportRequest", export_req);
    json_object_set_new(s, "SchemaOutput", obj("schema_source", json_pack("{s:o}", "schema_source", str())));
    json_object_set_new(s, "SchemaApplyRequest",
                        obj("schema_source", json_pack("{s:o,s:{s:s}}", "schema_source", str(), "allow_data_loss",
                                                       "type", "boolean")));
    json_object_set_new(s, "SchemaPlanOutput",
                        obj("uri supported step_count steps",
                            json_pack("{s:o,s:{s:s},s:o,s:{s:s,s:{}}}", "uri", str(), "supported", "type", "boolean",
                                      "step_count", uint_(), "steps", "type", "array", "items")));
    json_object_set_new(s, "SchemaApplyOutput",
                        obj("uri supported applied step_count graph_manifest_version steps",
                            json_pack("{s:o,s:{s:s},s:{s:s},s:o,s:o,s:{s:s,s:{}},s:o,s:o}", "uri", str(), "supported",
                                      "type", "boolean", "applied", "type", "boolean", "step_count", uint_(),
                                      "graph_manifest_version", uint_(), "steps", "type", "array", "items", "actor_id",
                                      nstr(), "commit", nref("CommitOutput"))));
    /* `details` and `message` are OmniGraph-C additions: each branch's record (docs/server.md) */
    json_object_set_new(s, "BranchDetailOutput",
                        obj("name head", json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name", str(), "head", str(),
                                                   "incarnation", str(), "seq", uint_(), "created_by", nstr(),
                                                   "created_at", nstr(), "base", nstr(), "message", nstr())));
    json_object_set_new(s, "BranchListOutput", obj("branches", json_pack("{s:o,s:o}", "branches", arr(str()), "details",
                                                                         arr(ref("BranchDetailOutput")))));
    json_object_set_new(s, "BranchCreateRequest",
                        obj("name", json_pack("{s:o,s:o,s:o}", "name", str(), "from", nstr(), "message", nstr())));
    json_object_set_new(s, "BranchCreateOutput",
                        obj("uri from name", json_pack("{s:o,s:o,s:o,s:o,s:o}", "uri", str(), "from", str(), "name", str(),
                                                       "actor_id", nstr(), "message", nstr())));
    json_object_set_new(s, "BranchDeleteOutput",
                        obj("uri name", json_pack("{s:o,s:o,s:o}", "uri", str(), "name", str(), "actor_id", nstr())));
    json_t *side = json_pack("{s:s,s:[s,s]}", "type", "string", "enum", "ours", "theirs");
    json_t *per_kind = obj("", json_pack("{s:O,s:O,s:O,s:O}", "all", side, "divergent_insert", side, "divergent_update",
                                         side, "delete_vs_update", side));
    json_object_set_new(per_kind, "additionalProperties", json_false());
    json_object_set_new(s, "BranchMergeRequest",
                        obj("source", json_pack("{s:o,s:o,s:{s:s},s:{s:[o,o,{s:s}]},s:{s:s}}", "source", str(),
                                                "target", nstr(), "delete_branch", "type", "boolean", "strategy",
                                                "oneOf", side, per_kind, "type", "null", "dry_run", "type", "boolean")));
    json_object_set_new(s, "BranchMergeOutcome", json_pack("{s:s,s:[s,s,s]}", "type", "string", "enum",
                                                           "already_up_to_date", "fast_forward", "merged"));
    json_object_set_new(s, "BranchMergeOutput",
                        obj("source target outcome",
                            json_pack("{s:o,s:o,s:o,s:o,s:{s:[s,s]},s:o,s:{s:s,s:{s:s}}}", "source", str(), "target",
                                      str(), "outcome", ref("BranchMergeOutcome"), "actor_id", nstr(), "branch_deleted",
                                      "type", "boolean", "null", "branch_delete_error", nstr(), "resolved", "type",
                                      "array", "items", "type", "object")));
    json_object_set_new(s, "ExplainRequest",
                        obj("query", json_pack("{s:o,s:o,s:{},s:o,s:o,s:{s:[s,s]}}", "query", str(), "name", nstr(),
                                               "params", "branch", nstr(), "snapshot", nstr(), "analyze", "type",
                                               "boolean", "null")));
    json_object_set_new(s, "ExplainOutput", obj("plan", json_pack("{s:o}", "plan", str())));
    /* merge proposals (OmniGraph-C extension; docs/server.md) */
    json_object_set_new(s, "ProposalCreateRequest",
                        obj("source title", json_pack("{s:o,s:o,s:o,s:o}", "source", str(), "target", nstr(), "title",
                                                      str(), "description", nstr())));
    json_object_set_new(s, "ProposalApproveRequest",
                        obj("", json_pack("{s:{s:s,s:[s,s,s]},s:o}", "strategy", "type", "string", "enum", "fail", "ours",
                                          "theirs", "if_commit", nstr())));
    json_object_set_new(s, "ProposalCloseRequest", obj("", json_pack("{s:o}", "reason", nstr())));
    json_object_set_new(s, "ProposalOutput",
                        obj("id state source target title",
                            json_pack("{s:o,s:{s:s,s:[s,s,s]},s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id", str(),
                                      "state", "type", "string", "enum", "open", "merged", "closed", "source", str(),
                                      "target", str(), "title", str(), "description", nstr(), "created_by", nstr(),
                                      "created_at", nstr(), "source_head", nstr(), "updated_by", nstr(), "updated_at",
                                      nstr(), "merge_commit", nstr(), "close_reason", nstr())));
    json_object_set_new(s, "ProposalListOutput",
                        obj("proposals", json_pack("{s:o}", "proposals", arr(ref("ProposalOutput")))));
    json_object_set_new(s, "ProposalReviewOutput",
                        obj("proposal conflicts",
                            json_pack("{s:o,s:o,s:{s:s},s:{s:[s,s]},s:{s:s,s:{}}}", "proposal", ref("ProposalOutput"),
                                      "merge_base", nstr(), "diff", "type", "object", "merge", "type", "object", "null",
                                      "conflicts", "type", "array", "items")));
    json_object_set_new(s, "ProposalApproveOutput",
                        obj("proposal merge", json_pack("{s:o,s:{s:s}}", "proposal", ref("ProposalOutput"), "merge",
                                                        "type", "object")));
    json_object_set_new(s, "ChangeCauseOutput",
                        obj("graph_commit_id authored_branch authored_at",
                            json_pack("{s:o,s:o,s:o,s:o,s:o,s:{s:s,s:s}}", "graph_commit_id", str(), "parent_commit_id",
                                      nstr(), "merged_parent_commit_id", nstr(), "authored_branch", str(), "actor_id",
                                      nstr(), "authored_at", "type", "integer", "format", "int64")));
    json_object_set_new(s, "ChangeImageOutput",
                        obj("properties", json_pack("{s:{},s:o}", "properties", "endpoints",
                                                    json_pack("{s:[{s:s},{s:s,s:{s:o,s:o},s:[s,s]}]}", "oneOf", "type",
                                                              "null", "type", "object", "properties", "from", str(),
                                                              "to", str(), "required", "from", "to"))));
    json_object_set_new(s, "EntityChangeOutput",
                        obj("kind type id op",
                            json_pack("{s:o,s:o,s:o,s:{s:s,s:[s,s,s]},s:o,s:o}", "kind", ref("EntityKindOutput"), "type",
                                      obj("id name", json_pack("{s:o,s:o}", "id", str(), "name", str())), "id", str(),
                                      "op", "type", "string", "enum", "insert", "update", "delete", "before",
                                      nref("ChangeImageOutput"), "after", nref("ChangeImageOutput"))));
    json_object_set_new(s, "CommitChangesOutput",
                        obj("cause changes", json_pack("{s:o,s:o,s:o}", "cause", ref("ChangeCauseOutput"), "changes",
                                                       arr(ref("EntityChangeOutput")), "next_page_token", nstr())));
    json_object_set_new(s, "ChangeFeedOutput",
                        obj("blocks", json_pack("{s:o,s:o,s:o,s:{s:[s,s]}}", "blocks",
                                                arr(obj("cause changes", json_pack("{s:o,s:o}", "cause",
                                                                                   ref("ChangeCauseOutput"), "changes",
                                                                                   arr(ref("EntityChangeOutput"))))),
                                                "next_page_token", nstr(), "cursor", nstr(), "caught_up", "type",
                                                "boolean", "null")));
    json_object_set_new(s, "ChangeBaselineRequest",
                        obj("", json_pack("{s:o,s:o,s:o,s:o}", "branch", nstr(), "kind", arr(str()), "type", arr(str()),
                                          "op", arr(str()))));
    json_object_set_new(s, "DiffChangeOutput",
                        obj("kind type id op",
                            json_pack("{s:o,s:o,s:o,s:{s:s,s:[s,s,s]},s:{s:s},s:{s:s}}", "kind", ref("EntityKindOutput"),
                                      "type", str(), "id", str(), "op", "type", "string", "enum", "insert", "update",
                                      "delete", "before", "type", "object", "after", "type", "object")));
    json_object_set_new(s, "DiffOutput",
                        obj("from to stats changes",
                            json_pack("{s:o,s:o,s:o,s:o,s:o}", "from", str(), "to", str(), "stats",
                                      obj("inserted updated deleted",
                                          json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "inserted", uint_(), "updated",
                                                    uint_(), "deleted", uint_(), "fragments_read", uint_(),
                                                    "fragments_skipped", uint_(), "rows_read", uint_())),
                                      "changes", arr(ref("DiffChangeOutput")), "next_page_token", nstr())));
    json_t *lint_req = obj("query", json_pack("{s:o,s:o,s:o}", "query", str(), "branch", nstr(), "snapshot", nstr()));
    json_object_set_new(lint_req, "additionalProperties", json_false());
    json_object_set_new(s, "LintRequest", lint_req);
    json_t *nint = json_pack("{s:[s,s]}", "type", "integer", "null");
    json_object_set_new(s, "LintDiagnosticOutput",
                        obj("severity code message query line column end_line end_column start end",
                            json_pack("{s:{s:s,s:[s,s]},s:o,s:o,s:o,s:O,s:O,s:O,s:O,s:O,s:O,s:o}", "severity", "type",
                                      "string", "enum", "error", "warning", "code", str(), "message", str(), "query",
                                      nstr(), "line", nint, "column", nint, "end_line", nint, "end_column", nint,
                                      "start", nint, "end", nint, "hint", str())));
    json_decref(nint);
    json_object_set_new(s, "LintOutput",
                        obj("ok errors warnings queries diagnostics",
                            json_pack("{s:{s:s},s:o,s:o,s:o,s:o}", "ok", "type", "boolean", "errors", uint_(), "warnings",
                                      uint_(), "queries",
                                      arr(obj("name kind ok", json_pack("{s:o,s:{s:s,s:[s,s]},s:{s:s}}", "name", str(),
                                                                        "kind", "type", "string", "enum", "read",
                                                                        "mutation", "ok", "type", "boolean"))),
                                      "diagnostics", arr(ref("LintDiagnosticOutput")))));
    json_object_set_new(s, "CommitListOutput", obj("commits", json_pack("{s:o}", "commits", arr(ref("CommitOutput")))));
    /* stored queries */
    json_t *param = obj("name kind nullable",
                        json_pack("{s:o,s:{s:s,s:[s,s,s,s,s,s,s,s,s,s]},s:o,s:o,s:{s:s}}", "name", str(), "kind", "type",
                                  "string", "enum", "string", "bool", "int", "bigint", "float", "date", "datetime",
                                  "blob", "vector", "list", "item_kind", nstr(), "vector_dim", uint_(), "nullable",
                                  "type", "boolean"));
    json_object_set_new(s, "StoredQueryParamOutput", param);
    json_object_set_new(s, "StoredQueryOutputEntry",
                        obj("name tool_name mutation params",
                            json_pack("{s:o,s:o,s:{s:s},s:o,s:o,s:{s:s},s:o,s:{s:s}}", "name", str(), "tool_name", str(),
                                      "mcp_expose", "type", "boolean", "description", nstr(), "instruction", nstr(),
                                      "mutation", "type", "boolean", "params", arr(ref("StoredQueryParamOutput")),
                                      "params_schema", "type", "object")));
    json_object_set_new(s, "StoredQueryListOutput",
                        obj("queries", json_pack("{s:o}", "queries", arr(ref("StoredQueryOutputEntry")))));
    json_t *sq_req = obj("", json_pack("{s:{s:[s,s]},s:o,s:o,s:{s:[s,s]},s:{s:[s,s],s:i},s:{s:[s,s],s:i}}", "params", "type",
                                       "object", "null", "branch", nstr(), "snapshot", nstr(), "expect_mutation", "type",
                                       "boolean", "null", "max_rows", "type", "integer", "null", "minimum", 1, "offset",
                                       "type", "integer", "null", "minimum", 0));
    json_object_set_new(sq_req, "additionalProperties", json_false());
    json_object_set_new(s, "StoredQueryRequest", sq_req);
    json_object_set_new(s, "StoredQueryOutput", json_pack("{s:[o,o]}", "oneOf", ref("ReadOutput"), ref("ChangeOutput")));
    /* MCP (JSON-RPC 2.0) */
    json_object_set_new(s, "JsonRpcMessage",
                        obj("jsonrpc", json_pack("{s:{s:s},s:{},s:o,s:{s:s}}", "jsonrpc", "const", "2.0", "id", "method",
                                                 str(), "params", "type", "object")));
    json_object_set_new(s, "JsonRpcResponse",
                        obj("jsonrpc id", json_pack("{s:{s:s},s:{},s:{},s:{s:s}}", "jsonrpc", "const", "2.0", "id",
                                                    "result", "error", "type", "object")));
    return s;
}

static json_t *json_content(json_t *schema)
{
    return json_pack("{s:{s:o}}", "application/json", "schema", schema);
}

static json_t *operation(const og_route *rt, int auth)
{
    json_t *op = json_object();
    json_object_set_new(op, "operationId", json_string(rt->op_id));
    json_object_set_new(op, "summary", json_string(rt->summary));
    if (strstr(rt->summary, "Deprecated")) json_object_set_new(op, "deprecated", json_true());
    json_t *params = json_array();
    if (strstr(rt->path, "{graph_id}"))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s,s:s}}", "name", "graph_id", "in", "path",
                                                "required", 1, "schema", "type", "string", "pattern",
                                                "^[a-zA-Z0-9-]{1,64}$"));
    if (strstr(rt->path, "{branch}"))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", "branch", "in", "path", "required", 1,
                                                "schema", "type", "string"));
    if (strstr(rt->path, "{name}"))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", "name", "in", "path", "required", 1,
                                                "schema", "type", "string"));
    if (strstr(rt->path, "{commit_id}"))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", "commit_id", "in", "path", "required",
                                                1, "schema", "type", "string"));
    if (strstr(rt->path, "if-graph-commit"))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", "Omnigraph-If-Graph-Commit", "in",
                                                "header", "required", 1, "schema", "type", "string"));
    char *qp = strdup(rt->query_params ? rt->query_params : ""), *save = NULL;
    for (char *t = strtok_r(qp, " ", &save); t; t = strtok_r(NULL, " ", &save))
        json_array_append_new(params, json_pack("{s:s,s:s,s:b,s:{s:s}}", "name", t, "in", "query", "required", 0,
                                                "schema", "type", "string"));
    free(qp);
    if (json_array_size(params))
        json_object_set_new(op, "parameters", params);
    else
        json_decref(params);
    if (rt->body == OG_BODY_NDJSON)
        json_object_set_new(op, "requestBody",
                            json_pack("{s:b,s:{s:{s:{s:s}}}}", "required", 1, "content",
                                      strstr(rt->path, "/load/csv") ? "text/csv" : "application/x-ndjson",
                                      "schema", "type", "string"));
    else if (rt->request_schema)
        json_object_set_new(op, "requestBody", json_pack("{s:b,s:o}", "required", rt->body == OG_BODY_JSON || rt->body == OG_BODY_RAW, "content",
                                                         json_content(ref(rt->request_schema))));
    json_t *responses = json_object();
    json_t *ok = json_pack("{s:s}", "description", "Success");
    if (rt->response_type)
        json_object_set_new(ok, "content", json_pack("{s:{s:{s:s}}}", rt->response_type, "schema", "type", "string"));
    else if (rt->response_schema)
        json_object_set_new(ok, "content", json_content(ref(rt->response_schema)));
    else
        json_object_set_new(ok, "content", json_content(json_pack("{s:s}", "type", "object")));
    json_object_set_new(responses, "200", ok);
    if (strstr(rt->path, "/mcp"))
        json_object_set_new(responses, "202", json_pack("{s:s}", "description", "A notification: accepted, no body"));
    if (strstr(rt->path, "/blob")) {
        json_object_set_new(responses, "206", json_pack("{s:s}", "description", "One byte range (Content-Range)"));
        json_object_set_new(responses, "304", json_pack("{s:s}", "description", "If-None-Match holds"));
        json_object_set_new(responses, "412", json_pack("{s:s,s:o}", "description", "If-Match does not hold", "content",
                                                        json_content(ref("ErrorOutput"))));
        json_object_set_new(responses, "416", json_pack("{s:s,s:o}", "description", "Range not satisfiable", "content",
                                                        json_content(ref("ErrorOutput"))));
    }
    static const struct {
        const char *status, *what;
    } errs[] = {{"400", "Bad request"},          {"401", "Unauthorized"},         {"403", "Forbidden"},
                {"404", "Not found"},            {"405", "Method not allowed"},   {"409", "Conflict"},
                {"410", "Change feed gap"},      {"412", "Precondition failed"},  {"413", "Payload too large"},
                {"415", "Unsupported media type"}, {"429", "Too many concurrent writes for this actor"},
                {"500", "Internal error"}};
    for (size_t i = 0; i < sizeof errs / sizeof *errs; i++) {
        if (!rt->needs_auth && strcmp(errs[i].status, "500")) continue;
        if (!strcmp(errs[i].status, "412") && !strstr(rt->path, "if-graph-commit")) continue;
        if (!strcmp(errs[i].status, "410") && strcmp(rt->path, "/graphs/{graph_id}/changes")) continue;
        if (!strcmp(errs[i].status, "415") && rt->body != OG_BODY_JSON && rt->body != OG_BODY_NDJSON &&
            rt->body != OG_BODY_RAW)
            continue;
        if (!strcmp(errs[i].status, "429") &&
            !(rt->action == OG_ACTION_CHANGE || rt->action == OG_ACTION_SCHEMA_APPLY ||
              rt->action == OG_ACTION_BRANCH_CREATE || rt->action == OG_ACTION_BRANCH_DELETE ||
              rt->action == OG_ACTION_BRANCH_MERGE || rt->action == OG_ACTION_INVOKE_QUERY))
            continue;
        json_object_set_new(responses, errs[i].status,
                            json_pack("{s:s,s:o}", "description", errs[i].what, "content",
                                      json_content(ref("ErrorOutput"))));
    }
    json_object_set_new(op, "responses", responses);
    if (auth && rt->needs_auth) json_object_set_new(op, "security", json_pack("[{s:[]}]", "bearer_token"));
    return op;
}

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

char *og_server_openapi(int auth_enabled)
{
    json_t *paths = json_object();
    for (size_t i = 0; i < og_nroutes; i++) {
        const og_route *rt = &og_routes[i];
        if (!strcmp(rt->path, "/openapi.json")) continue; /* the discovery route is not self-listed */
        json_t *item = json_object_get(paths, rt->path);
        if (!item) {
            item = json_object();
            json_object_set_new(paths, rt->path, item);
        }
        char m[16];
        snprintf(m, sizeof m, "%s", rt->method);
        lower(m);
        json_object_set_new(item, m, operation(rt, auth_enabled));
    }
    json_t *doc = json_pack("{s:s,s:{s:s,s:s,s:s},s:o,s:{s:o}}", "openapi", "3.1.0", "info", "title", "omnigraph-server",
                            "version", OG_VERSION_STRING, "description",
                            "The HTTP API of OmniGraph-C: graphs served under /graphs/{graph_id}/... "
                            "(wire-compatible with the reference OmniGraph server).",
                            "paths", paths, "components", "schemas", schemas());
    if (auth_enabled)
        json_object_set_new(json_object_get(doc, "components"), "securitySchemes",
                            json_pack("{s:{s:s,s:s}}", "bearer_token", "type", "http", "scheme", "bearer"));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return text;
}
