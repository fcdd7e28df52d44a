// Builds the panel and the card into the integration's frontend folder: one ES module
// each, minified, with no timestamps or absolute paths, so the same sources always give
// the same bytes (scripts/test compares the shipped files with a fresh build).
import { build } from "esbuild";

const common = {
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2021",
  legalComments: "none",
  charset: "utf8",
  sourcemap: false,
  logLevel: "warning",
};

const outdir = process.env.OUT_DIR ?? "../custom_components/opennvr_workflows/frontend";

await build({
  ...common,
  entryPoints: {
    "opennvr-workflows-panel": "src/panel.ts",
    "opennvr-workflows-card": "src/card.ts",
  },
  outdir,
});
