// Lint as you type: the editor's text is checked by the server (POST …/lint, docs/server.md)
// against the schema of the branch or commit the pickers show, and each diagnostic is
// underlined (@codemirror/lint) and listed under the editor, so it is read by a screen
// reader as well as seen.  The server answers with byte spans; the editor counts UTF-16
// units, so the spans are converted against the exact text that was sent.
import { linter, lintGutter } from "@codemirror/lint";

// The UTF-16 index of byte offset `byte` of `text` encoded as UTF-8.
export function utf16At(text, byte) {
  let b = 0, i = 0;
  while (i < text.length && b < byte) {
    const cp = text.codePointAt(i);
    b += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

// The editor's diagnostics from a lint report of `text`: a zero-width span covers one
// character (else nothing would be underlined); a finding without a place (the file as a
// whole) sits at the start.
export function toDiagnostics(report, text) {
  const out = [];
  for (const d of report.diagnostics || []) {
    let from = d.start === null || d.start === undefined ? 0 : utf16At(text, d.start);
    let to = d.end === null || d.end === undefined ? from : utf16At(text, d.end);
    if (to <= from) to = Math.min(text.length, from + 1);
    if (to <= from && from > 0) from--;
    const code = d.code && !d.message.startsWith(`${d.code}:`) ? `${d.code}: ` : "";
    out.push({ from, to, severity: d.severity === "warning" ? "warning" : "error", source: "omnigraph", message: `${code}${d.message}`, line: d.line, column: d.column });
  }
  return out;
}

// The editor extensions: `check(text)` returns the server's report (or null to show
// nothing, e.g. no graph yet or a refused request); `show(diagnostics)` lists them.
// `normalize` is what the text goes through before it is sent (it must keep UTF-16
// positions); the byte spans refer to its result.
export function gqLinter(check, show, normalize = (t) => t) {
  return [
    linter(async (view) => {
      const doc = view.state.doc.toString();
      const text = normalize(doc);
      let report = null;
      try { report = await check(text); } catch { report = null; }
      if (view.state.doc.toString() !== doc) return [];
      if (!report) { show([]); return []; }
      const diags = toDiagnostics(report, text);
      show(diags);
      return diags;
    }, { delay: 350 }),
    lintGutter(),
  ];
}
