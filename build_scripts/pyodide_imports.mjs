// Which modules a lesson makes the reader's Python import: boot the offline Pyodide in Node the way the site's worker
// does, import explainer's entry points, draw every sandbox at its defaults and open the training lab's stream, then
// print the file of every module Python loaded (as paths inside Pyodide's file system), one JSON list on stdout.
//
//   node build_scripts/pyodide_imports.mjs <runtime dir with a trailing slash> <explainer wheel>
//
// Used by build_scripts/precompiled.py: those modules get bytecode in the archives the site serves.

import {readFileSync} from "node:fs";
import {pathToFileURL} from "node:url";

const [indexURL, wheelPath] = process.argv.slice(2);
const {loadPyodide} = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
const pyodide = await loadPyodide({indexURL, stdout: () => {}, stderr: (line) => console.error(line)});
const problems = [];
await pyodide.loadPackage("numpy", {messageCallback: () => {}, errorCallback: (m) => problems.push(m)});
if (problems.length) throw new Error(problems.join("; "));
const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
pyodide.unpackArchive(new Uint8Array(readFileSync(wheelPath)), "wheel", {extractDir: sitePackages});
const files = pyodide.runPython(`
import importlib, json, sys
importlib.invalidate_caches()
import explainer.live, explainer.sandbox, explainer.idle
for name in explainer.sandbox.registry():
    reply = json.loads(explainer.sandbox.render_json(name, "{}"))
    if not reply["ok"]:
        raise RuntimeError(f"{name}: {reply['error']['message']}")
for name in ("train",):
    importlib.import_module(f"explainer.streams.{name}")
json.dumps(sorted({m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)}))
`);
process.stdout.write(files);
