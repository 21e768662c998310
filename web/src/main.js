// OmniGraph Studio: the single-page app omnigraph-server serves at /ui/ (docs/studio.md).
// Plain DOM, no framework: sign-in, the graph/branch/commit pickers, the query editor and its
// results (table and graph view), lint as you type, mutation receipts, the schema, the commit
// timeline with its diffs and merges, and the search playground.
// Every control has an accessible name; tests/studio/ drives them by those names.
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { syntaxHighlighting, defaultHighlightStyle, bracketMatching } from "@codemirror/language";
import { autocompletion, completionKeymap, closeBrackets } from "@codemirror/autocomplete";
import { forceLinting, lintKeymap } from "@codemirror/lint";
import cytoscape from "cytoscape";
import { api, g, token, ApiError } from "./api.js";
import { gqLanguage, parseSchema, schemaCompletion, isMutation, queryAt, traversals, bindings, traversalName } from "./gq.js";
import { tableOf, toCsv, toTsv, graphElements, typeColor, setTypeOrder, labelOf } from "./results.js";
import { gqLinter } from "./lint.js";
import { searchableTypes, modesOf, buildSearch } from "./search.js";
import { parseJson, toJson } from "./json.js";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
};

const state = {
  open: false,       // the server needs no token (--unauthenticated)
  graph: null,
  branch: "main",
  commit: null,      // null: the branch head; else time travel to this commit
  schema: { nodes: [], edges: [] },
  commits: [],
  last: null,        // the last read's answer
  lastText: "",
  view: "table",
  cy: null,
  schemaCy: null,
};

const SAMPLE = `// Ctrl-Enter runs the query under the cursor
query sample() {
    match { $n: TYPE }
    return { $n }
    limit 25
}
`;

// ---- sign-in -----------------------------------------------------------------------------

function showError(target, err) {
  const box = $(target);
  box.replaceChildren();
  if (!err) return;
  const head = err instanceof ApiError && err.status ? `${err.status} ${err.code || ""}`.trim() + ": " : "";
  box.append(el("strong", { text: head }), document.createTextNode(err.message));
}

async function start() {
  let graphs = null, listErr = null;
  try {
    graphs = (await api("/graphs")).graphs;
  } catch (e) {
    if (e.status === 401) {
      const had = token.get();
      token.clear();
      return showSignin(had ? e : null);
    }
    listErr = e;
  }
  state.open = !token.get() && graphs !== null;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("signout").hidden = state.open;
  $("who").textContent = state.open ? "open server (no token needed)" : "signed in";
  await showGraphs(graphs, listErr);
}

function showSignin(err) {
  $("app").hidden = true;
  $("signout").hidden = true;
  $("who").textContent = "";
  $("signin").hidden = false;
  showError("signin-error", err);
  $("token").focus();
}

$("signin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const t = $("token").value.trim();
  if (!t) return;
  token.set(t);
  $("token").value = "";
  await start();
});

$("signout").addEventListener("click", () => {
  token.clear();
  location.reload();
});

// ---- pickers -----------------------------------------------------------------------------

async function showGraphs(graphs, listErr) {
  const sel = $("graph"), input = $("graph-id");
  if (graphs) {
    sel.hidden = false;
    input.hidden = true;
    sel.replaceChildren(...graphs.map((x) => el("option", { value: x.graph_id, text: x.graph_id })));
    $("graph-note").textContent = graphs.length ? "" : "This server serves no graph.";
    if (graphs.length) await selectGraph(graphs[0].graph_id);
  } else {
    // listing graphs is denied to this token (graph_list): the id is typed instead
    sel.hidden = true;
    input.hidden = false;
    $("graph-note").textContent = `Graphs cannot be listed (${listErr.message}); type the graph id.`;
  }
}

$("graph").addEventListener("change", (e) => selectGraph(e.target.value));
// a typed graph id is opened on Enter or when the field is left, once per new value
const pickTyped = () => { const v = $("graph-id").value.trim(); if (v && v !== state.graph) selectGraph(v); };
$("graph-id").addEventListener("change", pickTyped);
$("graph-id").addEventListener("keydown", (e) => { if (e.key === "Enter") pickTyped(); });

async function selectGraph(id) {
  state.graph = id;
  state.branch = "main";
  state.commit = null;
  showError("error", null);
  try {
    const [schema, branches] = await Promise.all([api(g(id, "schema")), api(g(id, "branches"))]);
    state.schemaSource = schema.schema_source;
    state.schema = parseSchema(schema.schema_source);
    setTypeOrder([...state.schema.nodes, ...state.schema.edges].map((t) => t.name));
    state.branches = branches.branches;
    $("branch").replaceChildren(...branches.branches.map((b) => el("option", { value: b, text: b })));
    $("branch").value = "main";
    mergeTargets();
    $("graph-note").textContent = "";
    if (editor.state.doc.toString() === SAMPLE.replace("TYPE", "TYPE") || editor.state.doc.toString().includes("TYPE")) {
      const first = state.schema.nodes[0];
      setEditor(SAMPLE.replace("TYPE", first ? first.name : "Node"));
    }
    renderSchema();
    renderSearchForm();
    await loadCommits();
    forceLinting(editor);
  } catch (e) {
    $("graph-note").textContent = `Graph '${id}': ${e.message}`;
  }
}

$("branch").addEventListener("change", async (e) => {
  state.branch = e.target.value;
  state.commit = null;
  mergeTargets();
  await loadCommits();
});

$("commit").addEventListener("change", (e) => travel(e.target.value || null));

function travel(commit) {
  state.commit = commit;
  $("commit").value = commit || "";
  const c = state.commits.find((x) => x.graph_commit_id === commit);
  $("travel").textContent = commit ? `Time travel: reading commit ${commit.slice(0, 10)}… of ${when(c)}; writes are off.` : "";
  document.body.classList.toggle("travelling", !!commit);
  forceLinting(editor);
}

const when = (c) => (c ? new Date(c.created_at / 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "");

async function loadCommits() {
  try {
    const r = await api(g(state.graph, `commits?branch=${encodeURIComponent(state.branch)}`));
    state.commits = r.commits;
  } catch (e) {
    state.commits = [];
    showError("error", e);
  }
  const opts = [el("option", { value: "", text: `head of ${state.branch}` })];
  for (const c of state.commits) opts.push(el("option", { value: c.graph_commit_id, text: `${c.graph_commit_id.slice(0, 10)} · ${when(c)} · ${c.actor_id || "omnigraph"}` }));
  $("commit").replaceChildren(...opts);
  travel(state.commit && state.commits.some((c) => c.graph_commit_id === state.commit) ? state.commit : null);
  renderTimeline();
}

// ---- the editor --------------------------------------------------------------------------

const editor = new EditorView({
  parent: $("editor"),
  state: EditorState.create({
    doc: SAMPLE,
    extensions: [
      lineNumbers(),
      history(),
      drawSelection(),
      highlightActiveLine(),
      bracketMatching(),
      closeBrackets(),
      gqLanguage,
      syntaxHighlighting(defaultHighlightStyle),
      autocompletion({ override: [schemaCompletion(() => state.schema)] }),
      gqLinter(lint, showProblems, (t) => plainSpaces(t)),
      keymap.of([{ key: "Mod-Enter", run: () => { run(); return true; } }, ...completionKeymap, ...lintKeymap, ...historyKeymap, ...defaultKeymap]),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-label": "Query" }),
      EditorView.theme({ "&": { fontSize: "14px" }, ".cm-content": { fontFamily: "var(--mono)" } }),
    ],
  }),
});

// The server's lint report of the editor's text (POST …/lint) at the branch or commit shown;
// null (nothing shown) before a graph is open or when the request is refused.
async function lint(text) {
  if (!state.graph || !text.trim()) return null;
  const body = { query: text };
  if (state.commit) body.snapshot = state.commit; else body.branch = state.branch;
  return api(g(state.graph, "lint"), { method: "POST", body });
}

// The diagnostics as a list under the editor: what the underline says, readable without
// hovering (and announced to a screen reader).
function showProblems(diags) {
  const box = $("problems");
  box.hidden = !diags.length;
  box.replaceChildren(...diags.map((d) => el("li", { class: `problem problem-${d.severity}` },
    el("span", { class: "where", text: d.line ? `Line ${d.line}, column ${d.column}` : "File" }), ` ${d.severity}: ${d.message}`)));
}

function setEditor(text) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
}

$("params").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) run(); });
$("run").addEventListener("click", () => run());

// ---- running -----------------------------------------------------------------------------

// A browser may put no-break spaces into edited or pasted text (U+00A0, from a web page or a
// contenteditable line end); the language's whitespace is ASCII, so outside string literals
// they are plain spaces.
const plainSpaces = (text) => text.replace(/"(?:[^"\\]|\\.)*"|\u00a0/g, (m) => (m === "\u00a0" ? " " : m));

async function run() {
  if (!state.graph) return;
  const whole = plainSpaces(editor.state.doc.toString());
  const { name, text } = queryAt(whole, editor.state.selection.main.head);
  let params;
  const ptext = $("params").value.trim();
  showError("error", null);
  $("receipt").hidden = true;
  if (ptext) {
    try { params = parseJson(ptext); } catch (e) { return showError("error", new Error(`Parameters are not JSON: ${e.message}`)); }
  }
  const body = { query: whole };
  if (name) body.name = name;
  if (params) body.params = params;
  const mutation = isMutation(text);
  if (mutation && state.commit) return showError("error", new Error("A mutation writes the head of a branch: return to the head (Commit picker) to write."));
  $("status").textContent = "Running…";
  $("run").disabled = true;
  const t0 = performance.now();
  try {
    if (mutation) {
      body.branch = state.branch;
      const r = await api(g(state.graph, "mutate"), { method: "POST", body });
      $("status").textContent = `Mutation applied in ${Math.round(performance.now() - t0)} ms.`;
      clearResults();
      showReceipt(r);
      await loadCommits();
    } else {
      if (state.commit) body.snapshot = state.commit; else body.branch = state.branch;
      const r = await api(g(state.graph, "query"), { method: "POST", body });
      state.last = r;
      state.lastText = text;
      sort = { col: null, dir: 1 }; // a new answer starts in the order the query gave it
      const at = r.target && r.target.snapshot ? `commit ${r.target.snapshot.slice(0, 10)}` : `${state.branch} at ${String(r.graph_commit_id || "").slice(0, 10)}`;
      $("status").textContent = `${r.row_count} row${r.row_count === 1 ? "" : "s"} · ${at} · ${Math.round(performance.now() - t0)} ms`;
      renderResults();
    }
  } catch (e) {
    // the refusal replaces the previous answer, so nothing on screen looks like its result
    $("status").textContent = "";
    clearResults();
    showError("error", e);
  } finally {
    $("run").disabled = false;
  }
}

function showReceipt(r) {
  const box = $("receipt");
  box.hidden = false;
  box.replaceChildren(
    el("h3", { text: "Mutation receipt" }),
    el("dl", {},
      el("dt", { text: "branch" }), el("dd", { text: r.branch }),
      el("dt", { text: "nodes affected" }), el("dd", { text: String(r.affected_nodes) }),
      el("dt", { text: "edges affected" }), el("dd", { text: String(r.affected_edges) }),
      el("dt", { text: "actor" }), el("dd", { text: r.actor_id || "omnigraph" }),
      el("dt", { text: "new commit" }), el("dd", { text: r.commit ? (r.commit.graph_commit_id || toJson(r.commit)) : "none (nothing matched)" })));
}

// ---- results -----------------------------------------------------------------------------

let sort = { col: null, dir: 1 };

function clearResults() {
  state.last = null;
  $("table-wrap").replaceChildren();
  if (state.cy) { state.cy.destroy(); state.cy = null; }
  $("dl-json").disabled = $("dl-csv").disabled = $("copy").disabled = true;
}

function renderResults() {
  const r = state.last;
  $("dl-json").disabled = $("dl-csv").disabled = $("copy").disabled = !r;
  if (!r) return;
  const { columns, rows } = tableOf(r);
  if (sort.col !== null && sort.col < columns.length) {
    const k = sort.col;
    rows.sort((a, b) => (a[k] === b[k] ? 0 : a[k] === null ? 1 : b[k] === null ? -1 : a[k] < b[k] ? -sort.dir : sort.dir));
  }
  const cell = (v) => (v === null || v === undefined ? el("span", { class: "null", text: "null" }) : typeof v === "object" ? toJson(v) : String(v));
  const table = el("table", { class: "results", "aria-label": "Results" },
    el("thead", {}, el("tr", {}, ...columns.map((c, i) => el("th", { scope: "col", "aria-sort": sort.col === i ? (sort.dir > 0 ? "ascending" : "descending") : "none" },
      el("button", { type: "button", text: c, title: "Sort by this column", onclick: () => { sort = { col: i, dir: sort.col === i ? -sort.dir : 1 }; renderResults(); } }))))),
    el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map((v) => el("td", {}, cell(v)))))));
  $("table-wrap").replaceChildren(table);
  if (state.view === "graph") drawGraph();
}

function setView(v) {
  state.view = v;
  $("view-table").setAttribute("aria-pressed", String(v === "table"));
  $("view-graph").setAttribute("aria-pressed", String(v === "graph"));
  $("table-wrap").hidden = v !== "table";
  $("graph-wrap").hidden = v !== "graph";
  if (v === "graph") drawGraph();
}
$("view-table").addEventListener("click", () => setView("table"));
$("view-graph").addEventListener("click", () => setView("graph"));

const cyStyle = [
  { selector: "node", style: { "background-color": "data(color)", label: "data(label)", color: "#1d2330", "font-size": 11, "text-valign": "bottom", "text-margin-y": 4, width: 26, height: 26, "border-width": 1, "border-color": "#fff" } },
  { selector: "edge", style: { width: 1.5, "line-color": "#9aa4b5", "target-arrow-color": "#9aa4b5", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(label)", "font-size": 9, color: "#5b6475", "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8 } },
  { selector: "node:selected", style: { "border-width": 3, "border-color": "#1d2330" } },
];

function drawGraph() {
  const r = state.last;
  if (state.cy) { state.cy.destroy(); state.cy = null; }
  if (!r) return;
  const els = graphElements(r, traversals(state.lastText), bindings(state.lastText), state.schema);
  state.cy = cytoscape({ container: $("cy"), elements: els, style: cyStyle, layout: { name: "cose", animate: false, padding: 20 }, maxZoom: 1.6, wheelSensitivity: 0.3 });
  $("cy").setAttribute("aria-label", `Result graph: ${state.cy.nodes().length} nodes, ${state.cy.edges().length} edges`);
  state.cy.on("tap", "node", (ev) => { focusNode(ev.target); expand(ev.target); });
  state.focused = null;
  $("graph-focus").textContent = "";
}

// Keyboard use of the drawing: it is one tab stop; the arrow keys (Home, End) move a focus
// ring over its nodes in label order, and Enter (or Space) expands the focused node as a
// click does.  The focused node is announced in a status line.
const graphNodes = (cy) => cy.nodes().toArray().sort((a, b) => `${a.data("type")}\u0000${a.data("label")}`.localeCompare(`${b.data("type")}\u0000${b.data("label")}`));

function focusNode(node) {
  const cy = state.cy;
  if (!cy || !node) return;
  cy.nodes().unselect();
  node.select();
  state.focused = node.id();
  const list = graphNodes(cy);
  const i = list.findIndex((n) => n.id() === node.id());
  const d = node.data();
  $("graph-focus").textContent = `${d.type} ${d.label} (${i + 1} of ${list.length}); Enter expands its neighbours`;
}

$("cy").addEventListener("keydown", (e) => {
  const cy = state.cy;
  if (!cy || !cy.nodes().length) return;
  const list = graphNodes(cy);
  let i = list.findIndex((n) => n.id() === state.focused);
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  if (step) i = i < 0 ? (step > 0 ? 0 : list.length - 1) : (i + step + list.length) % list.length;
  else if (e.key === "Home") i = 0;
  else if (e.key === "End") i = list.length - 1;
  else if ((e.key === "Enter" || e.key === " ") && i >= 0) { e.preventDefault(); expand(list[i]); return; }
  else return;
  e.preventDefault();
  focusNode(list[i]);
});

// A node's id for a query: its `@id` (a `return { $v }` object), or its key property's value
// when the rows hold that column (a keyed type's id is its key).
function nodeId(d) {
  if (d.props["@id"] !== undefined) return d.props["@id"];
  const t = state.schema.nodes.find((n) => n.name === d.type);
  const key = t && t.props.find((p) => /@key\b/.test(p.type));
  return key && d.props[key.name] !== undefined ? d.props[key.name] : null;
}

// Click a node: its properties in the status line, and its neighbours over every edge type
// of the schema that touches its type, drawn into the same picture (at most 25 per edge type
// and direction), read at the branch or commit the pickers show.
async function expand(node) {
  const d = node.data();
  $("status").textContent = `${d.type} ${d.label}: ${toJson(d.props)}`;
  const id = nodeId(d);
  if (id === null || !state.schema.nodes.some((n) => n.name === d.type)) return;
  const cy = state.cy;
  let added = 0;
  try {
    for (const e of state.schema.edges) {
      for (const dir of ["out", "in"]) {
        if ((dir === "out" ? e.from : e.to) !== d.type) continue;
        const trav = traversalName(e.name);
        const other = dir === "out" ? e.to : e.from;
        const pat = dir === "out" ? `$a ${trav} $b` : `$b ${trav} $a`;
        const body = { query: `query expand($id: String) { match { $a: ${d.type}  $a.@id = $id  ${pat} } return { $b } limit 25 }`, params: { id: String(id) } };
        if (state.commit) body.snapshot = state.commit; else body.branch = state.branch;
        const r = await api(g(state.graph, "query"), { method: "POST", body });
        if (state.cy !== cy) return; // redrawn meanwhile
        for (const row of r.rows) {
          const b = row.b || {};
          const key = `${other}/${b["@id"]}`;
          if (cy.getElementById(key).empty()) {
            cy.add({ data: { id: key, label: labelOf(b), type: other, props: b, color: typeColor(other) } });
            added++;
          }
          const [src, dst] = dir === "out" ? [d.id, key] : [key, d.id];
          const eid = `${src}→${dst}:${trav}`;
          if (cy.getElementById(eid).empty() && !cy.edges().some((x) => x.source().id() === src && x.target().id() === dst)) {
            cy.add({ data: { id: eid, source: src, target: dst, label: trav } });
          }
        }
      }
    }
  } catch (err) {
    showError("error", err);
    return;
  }
  if (added) cy.layout({ name: "cose", animate: false, padding: 20 }).run();
  $("cy").setAttribute("aria-label", `Result graph: ${cy.nodes().length} nodes, ${cy.edges().length} edges`);
  $("status").textContent = `${d.type} ${d.label}: ${added} neighbour${added === 1 ? "" : "s"} added`;
}

function download(name, type, text) {
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
}
$("dl-json").addEventListener("click", () => download("result.json", "application/json", toJson(state.last, 2)));
$("dl-csv").addEventListener("click", () => download("result.csv", "text/csv", toCsv(tableOf(state.last))));
// "Copy": the table as tab-separated text, which pastes into a spreadsheet as cells
$("copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(toTsv(tableOf(state.last)));
    $("status").textContent = `${state.last.rows.length} row${state.last.rows.length === 1 ? "" : "s"} copied as tab-separated text`;
  } catch (e) {
    showError("error", new Error(`The browser refused the clipboard (${e.message}); select the table and copy it instead.`));
  }
});

// ---- schema ------------------------------------------------------------------------------

function renderSchema() {
  $("schema-src").textContent = state.schemaSource || "";
  const s = state.schema;
  const typeTable = (t) => el("table", { class: "schema-type", "aria-label": `${t.kind} ${t.name}` },
    el("caption", {}, el("span", { class: "swatch", "data-color": t.name }), `${t.kind} ${t.name}${t.from ? `: ${t.from} → ${t.to}` : ""}`),
    el("tbody", {}, ...t.props.map((p) => el("tr", {}, el("th", { scope: "row", text: p.name }), el("td", { text: p.type })))));
  $("schema-types").replaceChildren(...s.nodes.map(typeTable), ...s.edges.map(typeTable));
  for (const sw of document.querySelectorAll(".swatch")) sw.style.backgroundColor = typeColor(sw.dataset.color);
  if (!$("panel-schema").hidden) drawSchema();
}

function drawSchema() {
  if (state.schemaCy) state.schemaCy.destroy();
  const s = state.schema;
  const els = [
    ...s.nodes.map((t) => ({ data: { id: t.name, label: t.name, color: typeColor(t.name) } })),
    ...s.edges.filter((e) => s.nodes.some((n) => n.name === e.from) && s.nodes.some((n) => n.name === e.to))
      .map((e) => ({ data: { id: `e:${e.name}`, source: e.from, target: e.to, label: e.name } })),
  ];
  state.schemaCy = cytoscape({ container: $("schema-cy"), elements: els, style: cyStyle, layout: { name: "circle", padding: 30 } });
}

// ---- commits -----------------------------------------------------------------------------

function renderTimeline() {
  const items = state.commits.map((c) => el("li", { class: c.graph_commit_id === state.commit ? "current" : "" },
    el("div", { class: "commit-head" },
      el("code", { text: c.graph_commit_id.slice(0, 12) }),
      el("span", { class: "when", text: when(c) }),
      el("span", { class: "actor", text: c.actor_id || "omnigraph" }),
      c.merged_parent_commit_id ? el("span", { class: "tag", text: "merge" }) : null,
      c.message ? el("span", { class: "msg", text: c.message }) : null),
    el("div", { class: "commit-actions" },
      el("button", { type: "button", text: "Changes", "aria-label": `Changes of ${c.graph_commit_id.slice(0, 12)}`, onclick: () => showChanges(c) }),
      el("button", { type: "button", text: "Read here", "aria-label": `Read at ${c.graph_commit_id.slice(0, 12)}`, onclick: () => { travel(c.graph_commit_id); renderTimeline(); selectTab("query"); } }))));
  $("timeline").replaceChildren(...items);
  diffPickers();
}

async function showChanges(c) {
  const box = $("changes");
  $("changes-title").textContent = `Changes of ${c.graph_commit_id.slice(0, 12)}`;
  box.replaceChildren(el("p", { text: "Loading…" }));
  try {
    const r = await api(g(state.graph, `commits/${encodeURIComponent(c.graph_commit_id)}/changes?limit=200`));
    const img = (x) => (x ? toJson(x.properties ?? x) : "");
    box.replaceChildren(
      el("p", { text: `${r.changes.length} change${r.changes.length === 1 ? "" : "s"}${r.next_page_token ? " (first page)" : ""} by ${r.cause.actor_id || "omnigraph"}` }),
      el("table", { class: "results", "aria-label": "Changes" },
        el("thead", {}, el("tr", {}, ...["op", "kind", "type", "id", "before", "after"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, ...r.changes.map((ch) => el("tr", { class: `op-${ch.op}` },
          el("td", { text: ch.op }), el("td", { text: ch.kind }), el("td", { text: ch.type.name }), el("td", { text: String(ch.id) }),
          el("td", { text: img(ch.before) }), el("td", { text: img(ch.after) }))))));
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", role: "alert", text: `${e.status || ""} ${e.message}`.trim() }));
  }
}

// ---- merge -------------------------------------------------------------------------------

function mergeTargets() {
  const others = (state.branches || []).filter((b) => b !== state.branch);
  $("merge-target").replaceChildren(...others.map((b) => el("option", { value: b, text: b })));
  $("merge").disabled = !others.length;
  $("merge-result").textContent = "";
  showError("merge-error", null);
  $("merge-conflicts").replaceChildren();
}

// Merges the picked branch into the target (POST …/branches/merge): the outcome, or the
// server's refusal, with a conflict's rows listed one per entity and property.
$("merge").addEventListener("click", async () => {
  const source = state.branch, target = $("merge-target").value;
  if (!target) return;
  $("merge-result").textContent = "Merging…";
  showError("merge-error", null);
  $("merge-conflicts").replaceChildren();
  try {
    const r = await api(g(state.graph, "branches/merge"), { method: "POST", body: { source, target } });
    $("merge-result").textContent = `Merged ${r.source} into ${r.target}: ${r.outcome}${r.actor_id ? ` (by ${r.actor_id})` : ""}`;
  } catch (e) {
    $("merge-result").textContent = "";
    showError("merge-error", e);
    const list = e.body && e.body.merge_conflicts;
    if (list && list.length) $("merge-conflicts").replaceChildren(conflictTable(list));
  }
});

// One row per conflicting entity and property: a row conflict lists each property whose
// values differ with its base, source and target values; any other conflict (an orphan
// edge, a unique or cardinality violation) is one row with its message.
const show = (v) => (v === undefined ? "—" : v === null ? "null" : typeof v === "object" ? toJson(v) : String(v));
function conflictTable(list) {
  const rows = [];
  for (const c of list) {
    const head = [el("td", { text: c.entity_kind }), el("td", { text: c.type_name }), el("td", { text: c.entity_id ?? "" }), el("td", { text: c.kind })];
    const props = c.properties && c.properties.length ? c.properties : [null];
    for (const p of props) {
      rows.push(el("tr", {}, ...head.map((td) => td.cloneNode(true)),
        el("td", { text: p ? p.property : "" }), el("td", { text: p ? show(p.base) : "" }), el("td", { text: p ? show(p.source) : "" }),
        el("td", { text: p ? show(p.target) : "" }), el("td", { text: c.message ?? "" })));
    }
  }
  return el("table", { class: "results", "aria-label": "Merge conflicts" },
    el("thead", {}, el("tr", {}, ...["kind", "type", "id", "conflict", "property", "base", "source", "target", "message"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...rows));
}

// ---- diff of two commits ------------------------------------------------------------------

function diffPickers() {
  const label = (c) => `${c.graph_commit_id.slice(0, 10)} · ${when(c)}`;
  const opts = () => state.commits.map((c) => el("option", { value: c.graph_commit_id, text: label(c) }));
  const from = $("diff-from").value, to = $("diff-to").value;
  $("diff-from").replaceChildren(...opts());
  $("diff-to").replaceChildren(...opts());
  // the pair picked stays while the same branch is shown (a write adds a commit); a branch
  // switched to starts at its head against the commit before it
  const keep = state.diffBranch === `${state.graph}/${state.branch}`;
  state.diffBranch = `${state.graph}/${state.branch}`;
  const has = (id) => keep && state.commits.some((c) => c.graph_commit_id === id);
  $("diff-to").value = has(to) ? to : state.commits[0]?.graph_commit_id ?? "";
  $("diff-from").value = has(from) ? from : state.commits[1]?.graph_commit_id ?? state.commits[0]?.graph_commit_id ?? "";
  $("diff").disabled = state.commits.length < 2;
}

// What one row of a diff says: an update lists each property that changed (before → after),
// an insert or a delete the row's image.
function diffDetail(ch) {
  if (ch.op === "update") {
    const b = ch.before || {}, a = ch.after || {};
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => toJson(b[k]) !== toJson(a[k]));
    return keys.map((k) => `${k}: ${show(b[k])} → ${show(a[k])}`).join("; ");
  }
  return toJson(ch.op === "delete" ? ch.before : ch.after);
}

$("diff").addEventListener("click", async () => {
  const from = $("diff-from").value, to = $("diff-to").value;
  if (!from || !to) return;
  const box = $("changes");
  $("changes-title").textContent = `Diff ${from.slice(0, 10)} → ${to.slice(0, 10)}`;
  box.replaceChildren(el("p", { text: "Loading…" }));
  try {
    const r = await api(g(state.graph, `diff?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&limit=500`));
    const s = r.stats;
    box.replaceChildren(
      el("p", { text: `${s.inserted} inserted, ${s.updated} updated, ${s.deleted} deleted${r.next_page_token ? " (the first 500 rows shown)" : ""}` }),
      el("table", { class: "results", "aria-label": "Diff" },
        el("thead", {}, el("tr", {}, ...["op", "kind", "type", "id", "change"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, ...r.changes.map((ch) => el("tr", { class: `op-${ch.op}` },
          el("td", { text: ch.op }), el("td", { text: ch.kind }), el("td", { text: ch.type }), el("td", { text: String(ch.id) }),
          el("td", { text: diffDetail(ch) }))))));
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", role: "alert", text: `${e.status || ""} ${e.code || ""}: ${e.message}`.trim() }));
  }
});

// ---- search playground --------------------------------------------------------------------

function renderSearchForm() {
  const types = searchableTypes(state.schema);
  state.searchTypes = types;
  const prev = $("search-type").value;
  $("search-type").replaceChildren(...types.map((t) => el("option", { value: t.name, text: t.name })));
  if (types.some((t) => t.name === prev)) $("search-type").value = prev;
  $("search-note").textContent = types.length ? "" : "No node type of this schema has a String or Vector property to search.";
  $("search-run").disabled = !types.length;
  searchTypeChanged();
}

function searchTypeChanged() {
  const t = (state.searchTypes || []).find((x) => x.name === $("search-type").value);
  const fill = (sel, items) => { const prev = sel.value; sel.replaceChildren(...items); if ([...sel.options].some((o) => o.value === prev)) sel.value = prev; };
  fill($("search-mode"), (t ? modesOf(t) : []).map((m) => el("option", { value: m, text: { bm25: "bm25 (full text)", nearest: "nearest (vector)", rrf: "rrf (both, fused)" }[m] })));
  fill($("search-text-prop"), (t ? t.text : []).map((p) => el("option", { value: p.name, text: `${p.name}${/@index/.test(p.type) ? " (indexed)" : ""}` })));
  fill($("search-vec-prop"), (t ? t.vector : []).map((p) => el("option", { value: p.name, text: `${p.name} (${p.type.match(/^Vector\(\d+\)/)[0]})` })));
  searchModeChanged();
}

function searchModeChanged() {
  const m = $("search-mode").value;
  $("search-text-prop").disabled = $("search-q").disabled = m === "nearest" || !m;
  $("search-vec-prop").disabled = $("search-v").disabled = m === "bm25" || !m;
}

$("search-type").addEventListener("change", searchTypeChanged);
$("search-mode").addEventListener("change", searchModeChanged);
$("search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const type = (state.searchTypes || []).find((x) => x.name === $("search-type").value);
  if (!type || !state.graph) return;
  const { query, params } = buildSearch({ type, mode: $("search-mode").value, textProp: $("search-text-prop").value, vectorProp: $("search-vec-prop").value,
    text: $("search-q").value, vector: $("search-v").value.trim(), limit: $("search-limit").value });
  $("search-query").textContent = query;
  $("search-edit").disabled = false;
  state.searchQuery = { query, params };
  showError("search-error", null);
  $("search-results").replaceChildren();
  $("search-note").textContent = "Searching…";
  const body = { query, params };
  if (state.commit) body.snapshot = state.commit; else body.branch = state.branch;
  const t0 = performance.now();
  try {
    const r = await api(g(state.graph, "query"), { method: "POST", body });
    const { columns, rows } = tableOf(r);
    const si = columns.indexOf("score");
    const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(6)) : v === null ? "null" : typeof v === "object" ? toJson(v) : String(v));
    $("search-note").textContent = `${rows.length} ranked row${rows.length === 1 ? "" : "s"} · ${state.commit ? `commit ${state.commit.slice(0, 10)}` : state.branch} · ${Math.round(performance.now() - t0)} ms`;
    $("search-results").replaceChildren(el("table", { class: "results", "aria-label": "Search results" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "rank" }), ...columns.map((c) => el("th", { scope: "col", text: c })))),
      el("tbody", {}, ...rows.map((row, i) => el("tr", {}, el("td", { text: String(i + 1) }),
        ...row.map((v, k) => el("td", { class: k === si ? "score" : "", text: fmt(v) })))))));
  } catch (e) {
    $("search-note").textContent = "";
    showError("search-error", e);
  }
});
$("search-edit").addEventListener("click", () => {
  if (!state.searchQuery) return;
  setEditor(state.searchQuery.query);
  $("params").value = toJson(state.searchQuery.params);
  selectTab("query");
  editor.focus();
});

// ---- tabs --------------------------------------------------------------------------------

const TABS = ["query", "schema", "commits", "search"];
function selectTab(name) {
  for (const t of TABS) {
    const on = t === name;
    $(`tab-${t}`).setAttribute("aria-selected", String(on));
    $(`tab-${t}`).tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
  }
  if (name === "schema") drawSchema();
}
for (const t of TABS) {
  $(`tab-${t}`).addEventListener("click", () => selectTab(t));
  $(`tab-${t}`).addEventListener("keydown", (e) => {
    const d = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!d) return;
    const next = TABS[(TABS.indexOf(t) + d + TABS.length) % TABS.length];
    selectTab(next);
    $(`tab-${next}`).focus();
  });
}

start();
