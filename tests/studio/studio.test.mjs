// OmniGraph Studio as a person uses it, in Debian's chromium (driven by puppeteer-core):
// every control is found by its accessible name (docs/studio.md "Accessible names"), and
// every request the page makes is recorded: all of them must stay on the server's origin.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

const URL_AUTH = process.env.OG_STUDIO_URL;
const URL_OPEN = process.env.OG_STUDIO_OPEN_URL;
const TOKEN = process.env.OG_STUDIO_TOKEN;
const SHOTS = process.env.OG_STUDIO_SHOTS || null;
if (SHOTS) mkdirSync(SHOTS, { recursive: true });

let browser, page;
let loansOnMain = null; // C-001's loans on main, which the branch returns gave back
const requests = [];
const consoleErrors = [];

const aria = (name, role) => (role ? `::-p-aria([name="${name}"][role="${role}"])` : `::-p-aria(${name})`);
const text = (sel) => page.$eval(sel, (e) => e.textContent.trim());
const shot = async (name) => { if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) }); };

async function setQuery(q, params = "") {
  const ed = await page.waitForSelector(aria("Query", "textbox"));
  await ed.click();
  await page.keyboard.down("Control"); await page.keyboard.press("a"); await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  // typed as a person types; one line so the editor's bracket closing is overtyped, not doubled
  await page.keyboard.type(q);
  await page.keyboard.press("Escape"); // close a completion list
  const p = await page.$(aria("Parameters"));
  await p.click({ clickCount: 3 });
  await page.keyboard.press("Backspace");
  if (params) await p.type(params);
}

// Runs the editor's query with Ctrl-Enter (or the Run button) and waits for its answer.
async function run({ button = false } = {}) {
  await page.$eval("#status", (e) => { e.textContent = ""; });
  await page.$eval("#error", (e) => { e.textContent = ""; });
  if (button) await (await page.$(aria("Run", "button"))).click();
  else {
    await (await page.$(aria("Query", "textbox"))).focus();
    await page.keyboard.down("Control"); await page.keyboard.press("Enter"); await page.keyboard.up("Control");
  }
  await page.waitForFunction(() => {
    const s = document.getElementById("status").textContent, e = document.getElementById("error").textContent;
    return (s && s !== "Running…") || e;
  });
}

const tableRows = () => page.$$eval("#table-wrap table.results tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
const tableHead = () => page.$$eval("#table-wrap table.results thead th", (ths) => ths.map((t) => t.textContent.replace(/[ ▲▼]+$/, "")));

describe("OmniGraph Studio (token, policy)", () => {
  before(async () => {
    browser = await puppeteer.launch({
      executablePath: process.env.OG_CHROMIUM,
      headless: true, // --headless=new
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--lang=en-US"],
      defaultViewport: { width: 1280, height: 820 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(120000); // a loaded machine (make test -j) takes seconds to start the bundle
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.evaluateOnNewDocument(() => {
      window.__csp = [];
      document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
  });
  after(async () => { await browser?.close(); });

  it("serves the studio with a strict Content-Security-Policy", async () => {
    const resp = await page.goto(`${URL_AUTH}/ui/`, { waitUntil: "networkidle0" });
    assert.equal(resp.status(), 200);
    const csp = resp.headers()["content-security-policy"];
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /script-src[^;]*unsafe/);
    assert.equal(await page.title(), "OmniGraph Studio");
  });

  it("refuses a wrong token with the server's message, signs in with Enter", async () => {
    const field = await page.waitForSelector(aria("Token"), { visible: true });
    await field.type("not-the-token");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.getElementById("signin-error").textContent.includes("invalid bearer token"));
    assert.equal(await text("#signin-error"), "401 unauthorized: invalid bearer token");
    await shot("signin");
    await (await page.$(aria("Token"))).type(TOKEN);
    await page.keyboard.press("Enter");
    const graph = await page.waitForSelector(aria("Graph", "combobox"), { visible: true });
    assert.equal(await graph.evaluate((s) => s.value), "library");
    // the token stays in this tab only
    assert.equal(await page.evaluate(() => sessionStorage.getItem("omnigraph.studio.token")), TOKEN);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    const branches = await page.$$eval("#branch option", (o) => o.map((x) => x.value));
    assert.deepEqual(branches.sort(), ["edits", "feature", "main", "returns"]);
  });

  it("completes properties from the schema", async () => {
    const ed = await page.$(aria("Query", "textbox"));
    await ed.click();
    await page.keyboard.down("Control"); await page.keyboard.press("a"); await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await page.keyboard.type("query q() { match { $b: Book } return { $b.ye");
    await page.waitForSelector(".cm-tooltip-autocomplete li");
    const options = await page.$$eval(".cm-tooltip-autocomplete li", (li) => li.map((x) => x.querySelector(".cm-completionLabel").textContent));
    assert.ok(options.includes("year"), `completion offers year: ${options}`);
    assert.ok(!options.includes("slug"), "only Book's properties after $b.");
  });

  it("underlines a type error as you type, and clears it when fixed", async () => {
    const ed = await page.$(aria("Query", "textbox"));
    await ed.click();
    await page.keyboard.down("Control"); await page.keyboard.press("a"); await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await page.keyboard.type("query q() { match { $b: Book } return { $b.titel } }");
    await page.keyboard.press("Escape");
    // the server's diagnostic: underlined in the editor and listed under it
    await page.waitForSelector(".cm-lintRange-error");
    const underlined = await page.$$eval(".cm-lintRange-error", (els) => els.map((e) => e.textContent).join(""));
    assert.ok(underlined.includes("titel"), `underlined: ${underlined}`);
    await page.waitForFunction(() => !document.getElementById("problems").hidden);
    const problem = await text("#problems li");
    assert.match(problem, /^Line 1, column \d+ error: T\d+: .*titel/);
    // column 1-based, in characters: where `titel` (or `$b.titel`) starts
    const col = Number(problem.match(/column (\d+)/)[1]);
    const line = "query q() { match { $b: Book } return { $b.titel } }";
    assert.ok(col === line.indexOf("$b.titel") + 1 || col === line.indexOf("titel") + 1, `column ${col}`);
    await shot("lint");
    // fixed: the underline and the list go away
    for (let i = 0; i < "titel } }".length; i++) await page.keyboard.press("Backspace");
    await page.keyboard.type("name } }");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !document.querySelector(".cm-lintRange-error") && document.getElementById("problems").hidden);
  });

  it("runs a query with Ctrl-Enter and shows the rows as a table", async () => {
    await setQuery('query books_by($author: String) { match { $a: Author { slug: $author }  $a $w:wrote $b } return { $a.name, $b.name, $b.year, $w.role } order { $b.year } }',
      '{"author": "jane-austen"}');
    await run();
    assert.equal(await text("#error"), "");
    assert.deepEqual(await tableHead(), ["a.name", "b.name", "b.year", "w.role"]);
    const rows = await tableRows();
    assert.deepEqual(rows.map((r) => r[1]), ["Pride and Prejudice", "Emma"]);
    assert.deepEqual(rows[0], ["Jane Austen", "Pride and Prejudice", "1813", "author"]);
    assert.match(await text("#status"), /^2 rows · main at /);
    await shot("query-table");
    // a click on a column heading sorts by it, a second click reverses
    const heading = (name) => page.$$eval("#table-wrap th button", (bs, n) => { bs.find((b) => b.textContent === n).click(); }, name);
    await heading("b.name");
    assert.deepEqual((await tableRows()).map((r) => r[1]), ["Emma", "Pride and Prejudice"]);
    assert.equal(await page.$eval("#table-wrap th:nth-child(2)", (t) => t.getAttribute("aria-sort")), "ascending");
    await heading("b.name");
    assert.deepEqual((await tableRows()).map((r) => r[1]), ["Pride and Prejudice", "Emma"]);
    assert.equal(await page.$eval("#table-wrap th:nth-child(2)", (t) => t.getAttribute("aria-sort")), "descending");
    // "Download CSV": the table as a file, quoted where needed
    const cdp = await page.createCDPSession();
    const dl = join(process.env.TMPDIR || "/tmp", `og-studio-dl-${process.pid}`);
    mkdirSync(dl, { recursive: true });
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dl });
    await (await page.$(aria("Download CSV", "button"))).click();
    const csvPath = join(dl, "result.csv");
    for (let i = 0; i < 100 && !existsSync(csvPath); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(readFileSync(csvPath, "utf8"), "a.name,b.name,b.year,w.role\nJane Austen,Pride and Prejudice,1813,author\nJane Austen,Emma,1815,author\n");
    rmSync(dl, { recursive: true, force: true });
    // "Copy": the table as tab-separated text on the clipboard
    await browser.defaultBrowserContext().overridePermissions(new URL(URL_AUTH).origin, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
    await (await page.$(aria("Copy", "button"))).click();
    await page.waitForFunction(() => /copied/.test(document.getElementById("status").textContent));
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()),
      "a.name\tb.name\tb.year\tw.role\nJane Austen\tPride and Prejudice\t1813\tauthor\nJane Austen\tEmma\t1815\tauthor\n");
  });

  it("draws the result as a graph (Graph view)", async () => {
    await setQuery("query authors() { match { $a: Author  $a wrote $b } return { $a.name, $b.name } }");
    await run({ button: true });
    const n = (await tableRows()).length;
    assert.ok(n >= 5, `rows: ${n}`);
    await (await page.$(aria("Graph view", "button"))).click();
    await page.waitForSelector("#cy canvas");
    const label = await page.$eval("#cy", (e) => e.getAttribute("aria-label"));
    const [, nodes, edges] = label.match(/(\d+) nodes, (\d+) edges/).map(Number);
    assert.equal(edges, n, "one edge per (author, book) row");
    const authors = new Set((await page.evaluate(() => 0), []));
    assert.ok(nodes > edges / 2 && nodes <= 2 * n, `nodes ${nodes} for ${n} rows`);
    void authors;
    // the drawing is not blank: the canvas holds coloured pixels
    const painted = await page.$$eval("#cy canvas", (cs) => cs.some((c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] !== d[i + 1] || d[i + 1] !== d[i + 2])) return true;
      return false;
    }));
    assert.ok(painted, "the graph view drew something");
    await shot("graph-view");
  });

  it("expands a node's neighbours on click", async () => {
    await setQuery('query austen() { match { $a: Author { slug: "jane-austen" } } return { $a } }');
    await run();
    await page.waitForFunction(() => /1 nodes, 0 edges/.test(document.getElementById("cy").getAttribute("aria-label")));
    const box = await (await page.$("#cy")).boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2); // the one node sits in the middle
    await page.waitForFunction(() => /3 nodes, 2 edges/.test(document.getElementById("cy").getAttribute("aria-label")));
    assert.equal(await text("#status"), "Author Jane Austen: 2 neighbours added");
    await shot("graph-expand");
    await (await page.$(aria("Table", "button"))).click();
  });

  it("is usable from the keyboard: Graph view, a node focused with the arrows, Enter expands it", async () => {
    await setQuery('query austen() { match { $a: Author { slug: "jane-austen" } } return { $a } }');
    await run();
    const gv = await page.$(aria("Graph view", "button"));
    await gv.focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => /1 nodes, 0 edges/.test(document.getElementById("cy").getAttribute("aria-label")));
    // Tab from the Graph view button reaches the drawing (one tab stop) within a few presses
    let reached = false;
    for (let i = 0; i < 8 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.id === "cy");
    }
    assert.ok(reached, "Tab reaches the graph drawing");
    await page.keyboard.press("ArrowRight");
    assert.equal(await text("#graph-focus"), "Author Jane Austen (1 of 1); Enter expands its neighbours");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => /3 nodes, 2 edges/.test(document.getElementById("cy").getAttribute("aria-label")));
    assert.equal(await text("#status"), "Author Jane Austen: 2 neighbours added");
    // the arrows now walk the three nodes, in label order within each type
    await page.keyboard.press("ArrowRight");
    assert.equal(await text("#graph-focus"), "Book Emma (2 of 3); Enter expands its neighbours");
    await page.keyboard.press("ArrowRight");
    assert.equal(await text("#graph-focus"), "Book Pride and Prejudice (3 of 3); Enter expands its neighbours");
    await page.keyboard.press("ArrowRight");
    assert.match(await text("#graph-focus"), /^Author Jane Austen \(1 of 3\)/);
    await shot("graph-keyboard");
    await (await page.$(aria("Table", "button"))).click();
  });

  it("gives every control an accessible name (Query, Commits and Search tabs)", async () => {
    const ROLES = new Set(["button", "textbox", "combobox", "listbox", "checkbox", "radio", "tab", "spinbutton", "searchbox", "slider", "link", "menuitem", "switch", "application", "table", "grid"]);
    const unnamed = async () => {
      const tree = await page.accessibility.snapshot({ interestingOnly: false });
      const out = [];
      const walk = (n) => { if (ROLES.has(n.role) && !(n.name || "").trim()) out.push(n.role); (n.children || []).forEach(walk); };
      walk(tree);
      return out;
    };
    const names = async () => {
      const tree = await page.accessibility.snapshot({ interestingOnly: false });
      const out = [];
      const walk = (n) => { out.push(`${n.role}:${n.name}`); (n.children || []).forEach(walk); };
      walk(tree);
      return out;
    };
    await setQuery("query b() { match { $b: Book } return { $b.name } limit 2 }");
    await run();
    assert.deepEqual(await unnamed(), []);
    const q = await names();
    for (const want of ["textbox:Query", "button:Run", "button:Graph view", "button:Copy", "table:Results", "combobox:Graph", "combobox:Branch", "combobox:Commit", "textbox:Parameters"])
      assert.ok(q.includes(want), `${want} in ${q.join(" | ")}`);
    await (await page.$(aria("Commits", "tab"))).click();
    assert.deepEqual(await unnamed(), []);
    const c = await names();
    for (const want of ["combobox:Diff from", "combobox:Diff to", "button:Diff", "button:Merge", "combobox:Merge this branch into"])
      assert.ok(c.includes(want), `${want} in ${c.join(" | ")}`);
    await (await page.$(aria("Search", "tab"))).click();
    assert.deepEqual(await unnamed(), []);
    const s = await names();
    for (const want of ["combobox:Type", "combobox:Ranking", "combobox:Text property", "searchbox:Search text", "button:Search"])
      assert.ok(s.includes(want), `${want} in ${s.join(" | ")}`);
    await (await page.$(aria("Query", "tab"))).click();
  });

  it("switches branch: the same query reads the other branch", async () => {
    await setQuery("query loans() { match { $m: Member { card: \"C-001\" }  $m borrowed $b } return { count($b) as loans } }");
    await run();
    const onMain = Number((await tableRows())[0][0]);
    loansOnMain = onMain;
    assert.ok(onMain > 0, "C-001 has loans on main");
    await page.select("#branch", "returns");
    await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of returns");
    await run();
    assert.deepEqual(await tableRows(), [["0"]], "returns has given every book back");
    assert.match(await text("#status"), /returns at/);
  });

  it("writes on an unprotected branch and shows the receipt", async () => {
    await setQuery('query add_member($card: String, $name: String, $email: String, $joined: Date) { insert Member { card: $card, name: $name, email: $email, joined: $joined } }',
      '{"card": "C-900", "name": "Studio Person", "email": "studio@example.org", "joined": "2026-12-01"}');
    const before = await page.$$eval("#commit option", (o) => o.length);
    await run();
    assert.equal(await text("#error"), "");
    const receipt = await text("#receipt");
    assert.match(receipt, /nodes affected\s*1/);
    assert.match(receipt, /branch\s*returns/);
    assert.match(receipt, /actor\s*alice/);
    await page.waitForFunction((n) => document.querySelectorAll("#commit option").length === n + 1, {}, before);
    await shot("mutation-receipt");
  });

  it("time travels to the commit before the write", async () => {
    await setQuery('query m() { match { $m: Member { card: "C-900" } } return { $m.name } }');
    await run();
    assert.deepEqual(await tableRows(), [["Studio Person"]]);
    // the commit list is newest first: [head of returns, the write, the one before it, …]
    const previous = await page.$$eval("#commit option", (o) => o[2].value);
    await page.select("#commit", previous);
    assert.match(await text("#travel"), /^Time travel: reading commit/);
    await run();
    assert.equal(await text("#error"), "");
    assert.deepEqual(await tableRows(), [], "the member did not exist yet");
    assert.match(await text("#status"), new RegExp(`^0 rows · commit ${previous.slice(0, 10)}`));
    await shot("time-travel");
    // a write while travelling is refused before anything is sent
    await setQuery('query d() { delete Member where card = "C-900" }');
    await run();
    assert.match(await text("#error"), /return to the head/);
    await page.select("#commit", "");
  });

  it("shows the server's message for a denied write (main is protected)", async () => {
    await page.select("#branch", "main");
    await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of main");
    await setQuery('query add_member($card: String, $name: String, $email: String, $joined: Date) { insert Member { card: $card, name: $name, email: $email, joined: $joined } }',
      '{"card": "C-901", "name": "Denied", "email": "denied@example.org", "joined": "2026-12-01"}');
    await run();
    const err = await text("#error");
    assert.match(err, /^403 forbidden: /);
    assert.match(err, /alice/);
    assert.match(err, /change/);
    assert.equal(await page.$("#table-wrap table.results"), null, "the refusal replaced the previous answer");
    await shot("denied");
  });

  it("shows the schema and the commit timeline with each commit's changes", async () => {
    await (await page.$(aria("Schema", "tab"))).click();
    await page.waitForSelector("#schema-cy canvas");
    const types = await page.$$eval("#schema-types caption", (c) => c.map((x) => x.textContent));
    assert.ok(types.includes("node Book"), types.join("|"));
    assert.ok(types.includes("edge Wrote: Author → Book"), types.join("|"));
    // Book's own properties and the ones of the interface it implements (Named)
    const bookProps = await page.$$eval('#schema-types table[aria-label="node Book"] th', (t) => t.map((x) => x.textContent));
    assert.ok(bookProps.includes("isbn") && bookProps.includes("name"), bookProps.join("|"));
    await shot("schema");
    await (await page.$(aria("Commits", "tab"))).click();
    await page.select("#branch", "returns");
    await page.waitForFunction(() => document.querySelectorAll("#timeline li").length > 2);
    const first = await page.$("#timeline li .commit-actions button");
    await first.click();
    await page.waitForFunction(() => document.querySelector("#changes table"));
    const rows = await page.$$eval("#changes tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0].slice(0, 4), ["insert", "node", "Member", "C-900"]);
    await shot("commits");
  });

  it("diffs two commits of the timeline", async () => {
    // returns, newest first: the member's insert, the returns (C-001's loans deleted), the fork
    const ids = await page.$$eval("#timeline li code", (c) => c.map((x) => x.textContent));
    assert.ok(ids.length >= 3);
    const full = await page.$$eval("#diff-from option", (o) => o.map((x) => x.value));
    await page.select("#diff-from", full[2]);
    await page.select("#diff-to", full[0]);
    await page.$eval("#changes", (e) => e.replaceChildren());
    await (await page.$(aria("Diff", "button"))).click();
    await page.waitForFunction(() => document.querySelector('#changes table[aria-label="Diff"]'));
    assert.match(await text("#changes-title"), new RegExp(`^Diff ${full[2].slice(0, 10)} → ${full[0].slice(0, 10)}$`));
    assert.equal(await text("#changes p"), `1 inserted, 0 updated, ${loansOnMain} deleted`);
    const rows = await page.$$eval("#changes tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.equal(rows.length, 1 + loansOnMain);
    assert.deepEqual(rows[0].slice(0, 4), ["insert", "node", "Member", "C-900"]);
    assert.deepEqual([...new Set(rows.slice(1).map((r) => r.slice(0, 3).join(" ")))], ["delete edge Borrowed"]);
    await shot("diff");
    // reversed, the same rows with insert and delete exchanged
    await page.select("#diff-from", full[0]);
    await page.select("#diff-to", full[2]);
    await page.$eval("#changes", (e) => e.replaceChildren());
    await (await page.$(aria("Diff", "button"))).click();
    await page.waitForFunction(() => document.querySelector('#changes table[aria-label="Diff"]'));
    assert.equal(await text("#changes p"), `${loansOnMain} inserted, 0 updated, 1 deleted`);
  });

  it("merges: refused into protected main with the server's message, done into feature", async () => {
    await page.select("#merge-target", "main");
    await (await page.$(aria("Merge", "button"))).click();
    await page.waitForFunction(() => document.getElementById("merge-error").textContent);
    const err = await text("#merge-error");
    assert.match(err, /^403 forbidden: /);
    assert.match(err, /branch_merge/);
    await page.select("#merge-target", "feature");
    await (await page.$(aria("Merge", "button"))).click();
    await page.waitForFunction(() => /^Merged /.test(document.getElementById("merge-result").textContent));
    assert.match(await text("#merge-result"), /^Merged returns into feature: \S+ \(by alice\)$/);
    assert.equal(await text("#merge-error"), "");
    await shot("merge");
    // feature now holds the member written on returns
    await (await page.$(aria("Query", "tab"))).click();
    await page.select("#branch", "feature");
    await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of feature");
    await setQuery('query m() { match { $m: Member { card: "C-900" } } return { $m.name } }');
    await run();
    assert.deepEqual(await tableRows(), [["Studio Person"]]);
  });

  it("shows a merge conflict per row and property, and an update's diff", async () => {
    await (await page.$(aria("Commits", "tab"))).click();
    await page.select("#branch", "edits");
    await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of edits");
    // the update on edits, diffed against the commit before it (the default pair)
    await page.$eval("#changes", (e) => e.replaceChildren());
    await (await page.$(aria("Diff", "button"))).click();
    await page.waitForFunction(() => document.querySelector('#changes table[aria-label="Diff"]'));
    const d = await page.$$eval("#changes tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.deepEqual(d, [["update", "node", "Book", "9780000000011", "pages: 280 → 300"]]);
    await page.select("#merge-target", "feature");
    await (await page.$(aria("Merge", "button"))).click();
    await page.waitForSelector('#merge-conflicts table[aria-label="Merge conflicts"]');
    assert.match(await text("#merge-error"), /^409 conflict: /);
    const rows = await page.$$eval("#merge-conflicts tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0].slice(0, 8), ["node", "Book", "9780000000011", "divergent_update", "pages", "280", "300", "310"]);
    await shot("merge-conflict");
  });

  it("searches: bm25, nearest and rrf with their scores", async () => {
    await (await page.$(aria("Search", "tab"))).click();
    await page.select("#branch", "main");
    await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of main");
    await page.select("#search-type", "Book");
    const modes = await page.$$eval("#search-mode option", (o) => o.map((x) => x.value));
    assert.deepEqual(modes, ["bm25", "nearest", "rrf"]);
    const textProps = await page.$$eval("#search-text-prop option", (o) => o.map((x) => x.value));
    assert.equal(textProps[0], "name", "the indexed text property first");
    assert.ok(textProps.includes("blurb"));
    const search = async () => {
      await page.$eval("#search-note", (e) => { e.textContent = ""; });
      await (await page.$(aria("Search", "button"))).click();
      await page.waitForFunction(() => /ranked row|^$/.test(document.getElementById("search-note").textContent) && (document.querySelector("#search-results table") || document.getElementById("search-error").textContent));
      assert.equal(await text("#search-error"), "");
      const head = await page.$$eval("#search-results thead th", (t) => t.map((x) => x.textContent));
      const rows = await page.$$eval("#search-results tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      return { head, rows };
    };
    // bm25 over the blurbs: only Frankenstein's holds these words
    await page.select("#search-mode", "bm25");
    await page.select("#search-text-prop", "blurb");
    await (await page.$(aria("Search text"))).type("creature scientist");
    let r = await search();
    assert.deepEqual(r.head, ["rank", "d.isbn", "d.name", "d.blurb", "score"]);
    assert.equal(r.rows.length, 1);
    assert.deepEqual(r.rows[0].slice(0, 3), ["1", "9780000000011", "Frankenstein"]);
    assert.ok(Number(r.rows[0][4]) > 0, `bm25 score ${r.rows[0][4]}`);
    assert.match(await text("#search-query"), /order \{ bm25\(\$d\.blurb, \$q\) desc \}/);
    await shot("search");
    // nearest: Frankenstein's own embedding is at distance 0, then the rest by distance
    await page.select("#search-mode", "nearest");
    await (await page.$(aria("Vector"))).type("[0.9, 0.1, 0.2]");
    r = await search();
    assert.deepEqual(r.head, ["rank", "d.isbn", "d.name", "score"]);
    assert.deepEqual(r.rows[0], ["1", "9780000000011", "Frankenstein", "0"]);
    const dist = r.rows.map((x) => Number(x[3]));
    assert.deepEqual(dist, [...dist].sort((a, b) => a - b), "ascending distance");
    // rrf: first in both arms, so 1/(60+1) + 1/(60+1)
    await page.select("#search-mode", "rrf");
    r = await search();
    assert.deepEqual(r.rows[0].slice(0, 3), ["1", "9780000000011", "Frankenstein"]);
    assert.equal(r.rows[0][4], (2 / 61).toPrecision(6));
    // the generated query opens in the editor, with its parameters
    await (await page.$(aria("Open in editor", "button"))).click();
    await run();
    assert.equal(await text("#error"), "");
    assert.equal((await tableRows())[0][1], "Frankenstein");
    assert.match(await page.$eval("#params", (e) => e.value), /"v":\[0\.9,0\.1,0\.2\]/);
  });

  it("made no request outside its origin and broke no CSP rule", async () => {
    const origin = new URL(URL_AUTH).origin;
    // data: URIs (the editor's underline images) are inline, never a request to anywhere
    const foreign = requests.filter((u) => !u.startsWith("data:") && new URL(u).origin !== origin);
    assert.deepEqual(foreign, []);
    assert.ok(requests.some((u) => u.endsWith("/ui/app.js")));
    assert.ok(requests.some((u) => u.includes("/graphs/library/query")));
    assert.deepEqual(await page.evaluate(() => window.__csp), []);
    assert.deepEqual(consoleErrors.filter((e) => !/status of (401|403|400|409)/.test(e)), []);
  });
});

describe("OmniGraph Studio (a token that may not list graphs)", () => {
  it("asks for the graph id, then works on it", async () => {
    const b = await puppeteer.launch({ executablePath: process.env.OG_CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
    try {
      const p = await b.newPage();
      p.setDefaultTimeout(120000);
      await p.goto(`${process.env.OG_STUDIO_DENY_URL}/ui/`, { waitUntil: "networkidle0" });
      await (await p.waitForSelector(aria("Token"), { visible: true })).type(process.env.OG_STUDIO_DENY_TOKEN);
      await p.keyboard.press("Enter");
      const field = await p.waitForSelector(aria("Graph", "textbox"), { visible: true });
      assert.match(await p.$eval("#graph-note", (e) => e.textContent), /^Graphs cannot be listed \(.*graph_list.*\); type the graph id\.$/);
      await field.type("library");
      await p.keyboard.press("Enter");
      await p.waitForFunction(() => document.querySelectorAll("#branch option").length === 4);
      assert.deepEqual((await p.$$eval("#branch option", (o) => o.map((x) => x.value))).sort(), ["edits", "feature", "main", "returns"]);
    } finally {
      await b.close();
    }
  });
});

describe("OmniGraph Studio (--unauthenticated)", () => {
  it("needs no sign-in", async () => {
    const b = await puppeteer.launch({ executablePath: process.env.OG_CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
    try {
      const p = await b.newPage();
      p.setDefaultTimeout(120000);
      await p.goto(`${URL_OPEN}/ui/`, { waitUntil: "networkidle0" });
      await p.waitForSelector(aria("Graph", "combobox"), { visible: true });
      assert.equal(await p.$eval("#signin", (e) => e.hidden), true);
      assert.equal(await p.$eval("#who", (e) => e.textContent), "open server (no token needed)");
    } finally {
      await b.close();
    }
  });

  it("keeps every digit of a U64 beyond 2^53, in parameters and in results", async () => {
    const b = await puppeteer.launch({ executablePath: process.env.OG_CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
    const saved = page;
    try {
      page = await b.newPage(); // setQuery/run/tableRows drive `page`
      page.setDefaultTimeout(120000);
      await page.goto(`${URL_OPEN}/ui/`, { waitUntil: "networkidle0" });
      await page.waitForSelector(aria("Graph", "combobox"), { visible: true });
      await page.select("#branch", "edits");
      await page.waitForFunction(() => document.querySelector("#commit option")?.textContent === "head of edits");
      // 2^64 - 1: a JavaScript number would send and show 18446744073709552000
      await setQuery("query set_run($isbn: String, $n: U64) { update Book set { printRun: $n } where isbn = $isbn }",
        '{"isbn": "9780000000011", "n": 18446744073709551615}');
      await run();
      assert.equal(await text("#error"), "");
      assert.match(await text("#receipt"), /nodes affected\s*1/);
      await setQuery('query r() { match { $b: Book { isbn: "9780000000011" } } return { $b.printRun } }');
      await run();
      assert.equal(await text("#error"), "");
      assert.deepEqual(await tableRows(), [["18446744073709551615"]]);
    } finally {
      page = saved;
      await b.close();
    }
  });
});
