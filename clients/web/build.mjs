// Build the web app with esbuild into OUTDIR (default dist/): app.js (the app, an ES module),
// app.css (the app's look, table.css included), table.css (the table's look) and cards.js
// (the card faces as a classic script) for the HTML replay that cardarena replay --html
// writes. Deterministic: the tests rebuild and compare. The names stay fixed (the wheel and
// an editable install carry these files by name); the gateway serves each under a name
// with its content's hash, which index.html is given (server/api/grpcweb/assets.py).
import { build } from "esbuild";

const outdir = process.argv[2] || "dist";
const common = { bundle: true, minify: true, legalComments: "none", target: "es2020", logLevel: "warning" };
await build({ ...common, entryPoints: ["src/app.js"], format: "esm", outfile: `${outdir}/app.js` });
await build({ ...common, entryPoints: ["src/cards-global.js"], format: "iife", outfile: `${outdir}/cards.js` });
await build({ ...common, entryPoints: ["src/table.css"], outfile: `${outdir}/table.css` });
