// Bundles OmniGraph Studio into one directory: index.html, app.js, app.css (docs/studio.md).
// Run by the CMake build (`node web/build.mjs OUT_DIR`); scripts/embed-assets.py then
// compiles OUT_DIR into omnigraph-server.  Everything is local: no CDN, no font service.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] || join(here, "dist");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "src/main.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outfile: join(out, "app.js"),
  legalComments: "eof",
  logLevel: "warning",
});
copyFileSync(join(here, "src/style.css"), join(out, "app.css"));
copyFileSync(join(here, "index.html"), join(out, "index.html"));
