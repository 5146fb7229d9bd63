// Typesets TeX with the KaTeX of node_modules, for the build (build_scripts/markdown/math.py starts one per build).
//
//   node build_scripts/katex_server.mjs '<KaTeX options as JSON>'
//
// First line out: {"version": "<KaTeX version>"}. Then one JSON request per line in, {"tex": "...", "display": bool},
// and one JSON answer per line out, in order: {"html": "..."} or {"error": "...", "position": <offset in tex>|null}.
// A formula KaTeX would only warn about (its `strict` checks) is answered as an error too: the build names its line.
// Ends when stdin closes.
import readline from "node:readline";

import katex from "katex";

const options = JSON.parse(process.argv[2] || "{}");

function typeset({tex, display}) {
  const warnings = [];
  // `strict` as a function sees each LaTeX incompatibility; "ignore" keeps KaTeX from printing it to stderr.
  const strict = (code, message) => {
    warnings.push(message);
    return "ignore";
  };
  try {
    const html = katex.renderToString(tex, {...options, displayMode: display, throwOnError: true, strict});
    if (warnings.length) return {error: `LaTeX-incompatible input: ${warnings[0]}`, position: null};
    return {html};
  } catch (error) {
    if (error instanceof katex.ParseError) {
      return {error: error.rawMessage || error.message, position: error.position ?? null};
    }
    return {error: `KaTeX failed: ${error && error.message ? error.message : error}`, position: null};
  }
}

process.stdout.write(JSON.stringify({version: katex.version}) + "\n");
const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
lines.on("line", (line) => {
  let answer;
  try {
    answer = typeset(JSON.parse(line));
  } catch (error) {
    answer = {error: `unreadable request: ${error.message}`, position: null};
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
