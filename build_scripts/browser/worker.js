/* The Pyodide worker: one per visit, started by boot.js or runtime.js, speaking the messages defined in protocol.js.
 *
 * boot    resolves the manifest it is sent (runtime.json's JSON and URL), then loads the runtime (pyodide.js from
 *         manifest.pyodide.indexURL), numpy's wheel and the explainer wheel (unpacked into site-packages; see
 *         loadRuntime); with cross-origin isolation it also sets Pyodide's interrupt buffer and hands it to the page,
 *         so a runaway cell can be stopped without losing the worker. Every file of the boot is checked, and a failed
 *         download is named (see "downloads" below). Its reply carries the compiled pyodide.asm.wasm and the checked
 *         bytes of Pyodide's scripts and standard library, and before the first run the worker sends the files the
 *         wheels installed; the page hands all three to the next worker of the visit, which starts from them (see
 *         "checkedBlob", "the compiled runtime" and "the installed packages" below).
 * render  explainer.sandbox.render_json(sandbox, params); the reply goes on the page's BroadcastChannel when the
 *         request names one (`channel`): Chromium holds a worker's postMessage after a key press until its next frame.
 * run     explainer.live.run_cell_json: a reader's code cell; its output streams back as progress messages.
 * reset   forgets a cell session's variables.
 * stream  opens a named explainer stream and runs it one chunk per task: between chunks the worker answers other
 *         requests (a sandbox's render, a cancel), so a long computation never blocks the page's figures.
 * cancel  drops a queued request, or stops a stream before its next chunk. A running render or cell cannot be
 *         interrupted here: the page uses the interrupt buffer, or terminates this worker and starts another.
 *
 * Liveness: the worker holds a Web Lock named after itself (its `name`) for as long as it lives. The page waits for
 * that lock, so it learns at once when the worker is gone (crashed, out of memory, closed) and can start another.
 */
"use strict";

importScripts("protocol.js");

const Protocol = self.ExplainerProtocol;
const OPS = Protocol.OPS;

// The fraction of the whole boot done at the start and end of each stage (roughly by download size).
const STAGE_SPAN = Object.freeze({runtime: [0, 0.6], numpy: [0.6, 0.85], explainer: [0.85, 1]});
// Renders go first: they are quick, and a reader is dragging a slider. Everything else waits its turn.
const URGENT_OPS = new Set([OPS.RENDER]);

let booting = null;  // the boot promise: the runtime is booted at most once per worker
let python = null;  // the explainer entry points, once booted
let interruptBuffer = null;  // Uint8Array over a SharedArrayBuffer, when the page is cross-origin isolated
const unpackedBy = {numpy: null, explainer: null};  // who unpacked each wheel (installWheel); null: files handed on
let outputTarget = null;  // the id of the run whose output the emitter is sending
// What the page already holds to hand to a next worker: installed, the files of site-packages (see "the installed
// packages"); given, whether this worker's came from the boot request
const handedOn = {installed: false, given: false};
const queue = [];  // requests not yet run (a stream's next chunk is queued as a request too)
const streams = new Map();  // request id → open stream handle
let pumpScheduled = false;
const wake = new MessageChannel();  // a zero-delay task, without setTimeout's clamping

function post(message) {
  self.postMessage(message);
}

function firstLine(error) {
  return String((error && error.message) || error).split("\n")[0].replace(/[\s.]+$/, "");
}

// Pyodide cannot go on after a fatal error (a crash inside the interpreter): every later call throws. The worker then
// closes itself, which releases its liveness lock, and the page starts a fresh one.
function isFatal(error) {
  return /fatally failed|fatal error/i.test(String((error && error.message) || error));
}

function failWith(id, error, kind = "exception") {
  const fatal = isFatal(error);  // the page then blames this request for the worker's end (runtime.js)
  post(Protocol.failure(id, {kind, message: firstLine(error), detail: String((error && error.stack) || error), fatal}));
  if (fatal) self.close();
}

// ---- downloads: every file of the boot checked, every failure named -------------------------------------------------
//
// The browser reports a download refused for its checksum, an HTTP error and a lost connection alike ("Failed to
// fetch"), and Pyodide waits forever for a .wasm that did not arrive. So every fetch goes through checkedFetch: it adds
// the integrity the manifest gives (pyodide.files for Pyodide's own files under indexURL, the lock's, and the stdlib,
// numpy and wheel entries), and during the boot a failure is asked about once more, without the check and past every
// cache (and every service worker), to say which it was. A stage ends at the first failure of one of its files,
// naming it. Pyodide's two scripts are fetched and checked the same way, then run from those bytes (a blob: URL):
// importScripts alone cannot check an integrity.

const nativeFetch = self.fetch.bind(self);
const nativeImportScripts = self.importScripts.bind(self);
const downloads = {
  indexURL: "",
  stages: new Map(),  // absolute URL → boot stage, for the manifest's own files
  integrity: new Map(),  // absolute URL → Subresource Integrity of a file the boot may fetch
  scripts: new Map(),  // absolute URL → blob: URL of a script fetched and checked, for importScripts
  failures: [],  // {url, kind, detail} of the boot's failed downloads, in order
  listeners: new Set(),
  revalidate: false,  // a retry: ask the server again instead of trusting the HTTP cache
};

function fileName(url) {
  return decodeURIComponent(new URL(url).pathname.split("/").pop());
}

/** Which boot stage a file belongs to: the manifest's files by their entry, anything else under indexURL the
 * runtime's; null for a file that is not the boot's. */
function stageOf(url) {
  if (downloads.stages.has(url)) return downloads.stages.get(url);
  return downloads.indexURL && url.startsWith(downloads.indexURL) ? "runtime" : null;
}

/** Learn the boot's files from the resolved manifest: their stages, their integrity, and whether to revalidate. */
function expectFiles(manifest, revalidate) {
  const indexURL = manifest.pyodide.indexURL;
  downloads.indexURL = indexURL;
  downloads.revalidate = Boolean(revalidate);
  for (const [name, integrity] of Object.entries(manifest.pyodide.files || {})) {
    downloads.integrity.set(new URL(name, indexURL).href, integrity);
  }
  const files = {stdlib: "runtime", lock: "runtime", numpy: "numpy", wheel: "explainer"};
  for (const [entry, stageName] of Object.entries(files)) {
    const file = manifest[entry];
    if (!file) continue;
    downloads.stages.set(file.url, stageName);
    if (file.integrity) downloads.integrity.set(file.url, file.integrity);
  }
}

function noteFailure(url, kind, detail = "") {
  if (python || !stageOf(url)) return;  // only the boot's own files
  const failure = {url, kind, detail};
  downloads.failures.push(failure);
  for (const listener of downloads.listeners) listener(failure);
}

async function digestOf(buffer) {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return "sha256-" + btoa(String.fromCharCode(...bytes));
}

/** Why a checked download failed: asked once more, without the check, bypassing the HTTP cache and service worker. */
async function whyFailed(url, integrity) {
  let response;
  try {
    response = await nativeFetch(url, {cache: "no-store"});
  } catch (error) {
    return ["network"];
  }
  if (!response.ok) return ["http", response.status];
  if (!integrity) return ["network"];
  if (self.crypto && crypto.subtle && (await digestOf(await response.arrayBuffer())) === integrity) {
    return ["network"];  // the bytes are right now: the first attempt broke off
  }
  return ["checksum"];
}

async function checkedFetch(input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
  if (url === compiledRuntime.url && compiledRuntime.given) return emptyWasm();  // instantiated from the given module
  const options = {...init};
  const integrity = options.integrity || downloads.integrity.get(url) || "";
  if (integrity) options.integrity = integrity;
  if (integrity && downloads.revalidate) options.cache = "no-cache";
  let response;
  try {
    response = await nativeFetch(input, options);
  } catch (error) {
    if (!python && stageOf(url)) noteFailure(url, ...(await whyFailed(url, integrity)));
    throw error;
  }
  const type = response.headers.get("content-type") || "";
  if (!response.ok) noteFailure(url, "http", response.status);
  else if (url.endsWith(".wasm") && !type.startsWith("application/wasm")) noteFailure(url, "type", type || "nothing");
  return response;
}
self.fetch = checkedFetch;

/** Start downloading a file of the manifest now (checkedFetch adds its integrity); the promise is of its bytes. A
 * failure is reported by the stage that needs the file, not as an unhandled rejection. `priority` is the fetch's (see
 * loadRuntime). */
function download(url, priority = "auto") {
  const bytes = fetch(url, {priority}).then((response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
    return response.arrayBuffer();
  });
  bytes.catch(() => {});
  return bytes;
}

// The bytes of Pyodide's two scripts and of the standard library, once checked, are kept as Blobs (which the page
// holds and passes on without copying them) and go to the page with the boot's reply (`checked`: {URL: Blob}); the
// next worker of the visit, given them, uses them as they are instead of reading and checking the files again.
const checkedBlobs = {given: {}, kept: {}, reused: false};

/** A file of the boot as a Blob of checked bytes: the one the boot request handed on, else downloaded now. */
async function checkedBlob(url, type = "") {
  const given = checkedBlobs.given[url];
  if (given instanceof Blob) checkedBlobs.reused = true;
  const blob = given instanceof Blob ? given : new Blob([await download(url, "high")], {type});
  if (downloads.integrity.has(url)) checkedBlobs.kept[url] = blob;  // handed on only when checked
  return blob;
}

/** A script fetched and checked by checkedFetch, as a blob: URL importScripts can run. */
async function checkedScript(url) {
  const script = URL.createObjectURL(await checkedBlob(url, "text/javascript"));
  downloads.scripts.set(url, script);
  return script;
}
self.importScripts = (...urls) => nativeImportScripts(
  ...urls.map((url) => downloads.scripts.get(new URL(url, self.location.href).href) || url));

/** A failed download as the reader reads it: what did not load, which file, why. */
function describeFailure({url, kind, detail}, label) {
  const file = fileName(url);
  if (kind === "checksum") return `${label} did not match its checksum (${file}), so it was not used`;
  if (kind === "http") return `${label} could not be downloaded: ${file} answered HTTP ${detail}`;
  if (kind === "type") return `${label} could not start: ${file} was served as ${detail}, not application/wasm`;
  return `${label} could not be downloaded: ${file} got no answer`;
}

function firstFailureOf(stageName) {
  return downloads.failures.find((failure) => stageOf(failure.url) === stageName) || null;
}

// ---- the compiled runtime, handed on within a visit ----------------------------------------------------------------
//
// Compiling pyodide.asm.wasm (10 MB) and then compiling its functions as they first run is a good part of a boot. The
// worker keeps the WebAssembly.Module Pyodide's instantiateStreaming made from the checked download and gives it to the
// page with its boot reply; when this worker is replaced (runaway code, a crash), the page hands the module to the next
// one in its boot request, which instantiates it instead of downloading and compiling the file again (and finds the
// code already compiled). A module is given out only when its bytes were checked (pyodide.files has the file's
// integrity), so a module the page hands back came from checked bytes.

const nativeInstantiateStreaming = WebAssembly.instantiateStreaming.bind(WebAssembly);
const compiledRuntime = {
  url: "",  // pyodide.asm.wasm's absolute URL
  given: null,  // the module the boot request handed on, until it has been used (or failed)
  module: null,  // the module this worker's runtime runs, to give out; null when its bytes were not checked
  reused: false,  // whether this worker's runtime was instantiated from a given module
};

function expectCompiledRuntime(indexURL, given) {
  compiledRuntime.url = indexURL + "pyodide.asm.wasm";
  compiledRuntime.given = given instanceof WebAssembly.Module ? given : null;
}

/** What the fetch of pyodide.asm.wasm answers when a module was given: nothing to download. */
function emptyWasm() {
  return new Response(new ArrayBuffer(0), {headers: {"content-type": "application/wasm"}});
}

/** Pyodide's one instantiateStreaming (of pyodide.asm.wasm) during loadPyodide: from the given module when there is
 * one, else compiled from the checked download as usual. A given module that does not fit the runtime's imports is
 * dropped, and the file downloaded after all. */
async function instantiateRuntime(source, imports) {
  const given = compiledRuntime.given;
  compiledRuntime.given = null;
  if (given) {
    try {
      const instance = await WebAssembly.instantiate(given, imports);
      Object.assign(compiledRuntime, {module: given, reused: true});
      return {module: given, instance};
    } catch (error) {
      source = fetch(compiledRuntime.url);
    }
  }
  const result = await nativeInstantiateStreaming(source, imports);
  if (downloads.integrity.has(compiledRuntime.url)) compiledRuntime.module = result.module;
  return result;
}

// ---- boot ------------------------------------------------------------------------------------------------------------

class StageError extends Error {
  constructor(stage, cause) {
    const label = Protocol.STAGE_LABELS[stage];
    const failure = firstFailureOf(stage);
    super(failure ? describeFailure(failure, label) : `loading ${label} failed (${firstLine(cause)})`);
    this.stage = stage;
    this.file = failure ? fileName(failure.url) : null;
    this.detail = String((cause && cause.stack) || cause);
  }
}

/** Rejects as soon as one of the stage's files has failed (Pyodide may otherwise wait forever). */
function failedDownload(name) {
  let listener;
  const promise = new Promise((_, reject) => {
    listener = (failure) => stageOf(failure.url) === name && reject(new Error(`${failure.url} failed`));
    if (firstFailureOf(name)) listener(firstFailureOf(name));
    downloads.listeners.add(listener);
  });
  promise.catch(() => {});
  return {promise, stop: () => downloads.listeners.delete(listener)};
}

async function stage(id, name, work) {
  const [start, end] = STAGE_SPAN[name];
  post(Protocol.stageProgress(id, name, "start", start));
  const failed = failedDownload(name);
  let result;
  try {
    result = await Promise.race([work(), failed.promise]);
  } catch (error) {
    throw new StageError(name, error);
  } finally {
    failed.stop();
  }
  post(Protocol.stageProgress(id, name, "done", end));
  return result;
}

function entryPoints(pyodide) {
  const sandbox = pyodide.pyimport("explainer.sandbox");
  const live = pyodide.pyimport("explainer.live");
  live.set_emitter((kind, text) => {
    if (outputTarget === null) return;
    post(Protocol.progress(outputTarget, kind === "figure" ? {figure: JSON.parse(text)} : {stream: kind, text}));
  });
  return {
    renderJson: sandbox.render_json,
    runCellJson: live.run_cell_json,
    resetSession: live.reset_session,
    openStream: live.open_stream,
    stepStream: live.step_stream,
    closeStream: live.close_stream,
    readInstalled: () => readInstalled(pyodide),
  };
}

function sitePackagesOf(pyodide) {
  return pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')");
}

/** Tell site-packages' finder that files arrived (only it: invalidating every finder makes the standard library's
 * zipimporter re-read its whole directory, a few hundred ms). */
function forgetListing(pyodide, sitePackages) {
  pyodide.runPython(`
import sys
finder = sys.path_importer_cache.get(${JSON.stringify(sitePackages)})
if finder is not None:
    finder.invalidate_caches()
`);
}

// ---- wheels, unpacked by the browser -------------------------------------------------------------------------------
//
// pyodide.unpackArchive unzips in Python (zipfile, and zlib compiled to WebAssembly): numpy's wheel (419 files, 14 MB)
// took 200-260 ms of every boot that had no installed files handed on, a first visit and every later one. Here the
// wheel's zip directory is read in JavaScript and each file inflated by the browser's own
// DecompressionStream("deflate-raw"), then written into site-packages (writeInstalled). The wheel's bytes were checked
// as they arrived (checkedFetch). A browser without "deflate-raw" (before 2023), or a zip this reader does not take
// (zip64, encryption, a path out of site-packages, a wheel's data files), is unpacked by Pyodide as before.

const ZIP = Object.freeze({END: 0x06054b50, CENTRAL: 0x02014b50, LOCAL: 0x04034b50, STORED: 0, DEFLATED: 8});

/** A zip's files: [{name, method, size, data}], `data` being the file's bytes as stored (compressed or not). */
function zipEntries(buffer) {
  const view = new DataView(buffer);
  let end = buffer.byteLength - 22;  // the directory's end record, which a comment of up to 65,535 bytes may follow
  while (end >= 0 && view.getUint32(end, true) !== ZIP.END) end -= 1;
  if (end < 0) throw new Error("no zip directory");
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  if (count === 0xffff || at === 0xffffffff) throw new Error("a zip64 file");
  const names = new TextDecoder("utf-8", {fatal: true});
  const entries = [];
  for (let index = 0; index < count; index += 1) {
    if (view.getUint32(at, true) !== ZIP.CENTRAL) throw new Error("a broken zip directory");
    const [flags, method] = [view.getUint16(at + 8, true), view.getUint16(at + 10, true)];
    const [stored, size] = [view.getUint32(at + 20, true), view.getUint32(at + 24, true)];
    const [nameLength, extraLength, commentLength] = [28, 30, 32].map((offset) => view.getUint16(at + offset, true));
    const local = view.getUint32(at + 42, true);
    const name = names.decode(new Uint8Array(buffer, at + 46, nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (flags & 1) throw new Error(`${name} is encrypted`);
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`${name} is outside the folder`);
    if (/^[^/]+\.data\//.test(name)) throw new Error(`${name} is a data file, installed elsewhere`);
    if (view.getUint32(local, true) !== ZIP.LOCAL) throw new Error(`${name} has no local header`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (!name.endsWith("/")) entries.push({name, method, size, data: new Uint8Array(buffer, start, stored)});
  }
  return entries;
}

/** A zip file's bytes, inflated by the browser. (Read chunk by chunk: through a Blob and a Response, numpy's official
 * wheel, 338 files and 12 MB, took 240-360 ms, three times as long.) */
async function unzipped({name, method, size, data}) {
  if (method === ZIP.STORED) return data;
  if (method !== ZIP.DEFLATED) throw new Error(`${name} uses compression method ${method}`);
  const inflate = new DecompressionStream("deflate-raw");
  const writer = inflate.writable.getWriter();
  writer.write(data).catch(() => {});  // a broken stream fails the read below
  writer.close().catch(() => {});
  const bytes = new Uint8Array(size);
  const reader = inflate.readable.getReader();
  let filled = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    if (filled + chunk.value.length > size) throw new Error(`${name} inflates to more than ${size} bytes`);
    bytes.set(chunk.value, filled);
    filled += chunk.value.length;
  }
  if (filled !== size) throw new Error(`${name} inflated to ${filled} bytes, not ${size}`);
  return bytes;
}

/** Unpack a wheel into site-packages: by the browser, else by Pyodide. Says which: "browser" or "pyodide". */
async function installWheel(pyodide, buffer) {
  const files = [];
  try {
    // One after another: numpy's official wheel took 57-87 ms so, 84-112 ms with every file inflating at once.
    for (const entry of zipEntries(buffer)) files.push([entry.name, await unzipped(entry)]);
  } catch (error) {
    // Without extractDir, unpackArchive unpacks into the working directory, not site-packages.
    const sitePackages = sitePackagesOf(pyodide);
    pyodide.unpackArchive(buffer, "wheel", {extractDir: sitePackages});
    forgetListing(pyodide, sitePackages);
    return "pyodide";
  }
  writeInstalled(pyodide, files);
  return "browser";
}

// ---- the installed packages, handed on within a visit ------------------------------------------------------------
//
// Unpacking numpy's wheel in Python (419 files, 14 MB) takes a few hundred ms of every boot; writing the same files
// into the file system takes a fraction of that. Before the first cell runs (runaway code is what gets a worker
// replaced), the worker reads back every file in site-packages, which holds nothing but what the two checked wheels
// put there since no reader's code has run yet, and sends them to the page ({event: "installed"}); the page hands
// them to its next worker in the boot request (`installed`), which writes them instead of downloading and unpacking
// the wheels.

/** Every file in site-packages: [[path relative to it, bytes], ...]. */
function readInstalled(pyodide) {
  const FS = pyodide.FS;
  const root = sitePackagesOf(pyodide);
  const files = [];
  (function walk(folder) {
    for (const name of FS.readdir(root + folder)) {
      if (name === "." || name === "..") continue;
      const path = `${folder}/${name}`;
      if (FS.isDir(FS.stat(root + path).mode)) walk(path);
      else files.push([path.slice(1), FS.readFile(root + path)]);
    }
  })("");
  return files;
}

/** Write files readInstalled gave (in an earlier worker) into site-packages. */
function writeInstalled(pyodide, files) {
  const FS = pyodide.FS;
  const root = sitePackagesOf(pyodide);
  for (const [path, bytes] of files) {
    const file = `${root}/${path}`;
    FS.mkdirTree(file.slice(0, file.lastIndexOf("/")));
    FS.writeFile(file, bytes);
  }
  forgetListing(pyodide, root);
}

/** Once per worker, before the reader's first code: send the page what it needs to skip the wheels next time. */
function sendInstalled() {
  if (handedOn.installed || !python) return;
  handedOn.installed = true;  // the page has them (it gave them, or gets them now), or never will
  let files;
  try {
    files = python.readInstalled();
  } catch (error) {
    return;  // nothing handed on: the next worker unpacks the wheels, and the reader's code runs all the same
  }
  self.postMessage({event: "installed", files}, files.map(([, bytes]) => bytes.buffer));
}

/**
 * The boot, fastest first (measured in benchmarks/boot_prototype, notes in README.md): every file starts downloading
 * at once, in parallel with the interpreter's start; the standard library and the wheels come with bytecode for what
 * the lessons import (build_scripts/precompiled.py), so Python unmarshals instead of compiling; numpy is unpacked from
 * its wheel and imported, which links the 3 of its 19 libraries that `import numpy` needs (loadPackage would link all).
 * Every file is checked by Subresource Integrity (checkedFetch): Pyodide's own by pyodide.files, numpy's by the
 * official lock's hash, ours, and the standard library and lock when the build precompiled them.
 */
async function loadRuntime(id, manifest, revalidate, {wasm, installed, checked}) {
  expectFiles(manifest, revalidate);
  const indexURL = manifest.pyodide.indexURL;
  expectCompiledRuntime(indexURL, wasm);
  checkedBlobs.given = checked && typeof checked === "object" ? checked : {};
  const files = Array.isArray(installed) && installed.length ? installed : null;  // else the wheels
  handedOn.installed = handedOn.given = files !== null;
  const stdlib = manifest.stdlib && checkedBlob(manifest.stdlib.url);
  if (stdlib) stdlib.catch(() => {});  // reported by the stage that waits for it
  // Pyodide's scripts and the standard library (checkedBlob) are what the interpreter waits for; the wheels are not
  // needed before it is up, so they ask for less. On break-the-model, 6 and 8 fresh profiles each, interleaved with
  // and without: the first live frame 84 and 120 ms sooner on a first visit, 69 and 118 ms on a repeat visit.
  const numpy = files ? null : download(manifest.numpy.url, "low");
  const wheel = files ? null : download(manifest.wheel.url, "low");
  const pyodide = await stage(id, "runtime", async () => {
    // pyodide.js loads pyodide.asm.js with importScripts: both are fetched and checked first (see "downloads").
    const [loader] = await Promise.all([checkedScript(indexURL + "pyodide.js"),
      checkedScript(indexURL + "pyodide.asm.js")]);
    const options = {indexURL};
    if (stdlib) options.stdLibURL = URL.createObjectURL(await stdlib);  // the checked bytes, not a refetch
    if (manifest.lock) options.lockFileURL = manifest.lock.url;
    WebAssembly.instantiateStreaming = instantiateRuntime;
    try {
      nativeImportScripts(loader);
      return await self.loadPyodide(options);
    } finally {
      WebAssembly.instantiateStreaming = nativeInstantiateStreaming;
      compiledRuntime.given = null;
      checkedBlobs.given = {};
      for (const script of downloads.scripts.values()) URL.revokeObjectURL(script);
      downloads.scripts.clear();
    }
  });
  await stage(id, "numpy", async () => {
    if (files) writeInstalled(pyodide, files);  // numpy's and our wheel's files at once
    else unpackedBy.numpy = await installWheel(pyodide, await numpy);
    pyodide.loadedPackages.numpy = "default channel";  // so a later loadPackage("numpy") does not install it again
    pyodide.runPython("import numpy");
  });
  return stage(id, "explainer", async () => {
    if (!files) unpackedBy.explainer = await installWheel(pyodide, await wheel);
    if (self.crossOriginIsolated && typeof SharedArrayBuffer === "function") {
      interruptBuffer = new Uint8Array(new SharedArrayBuffer(1));
      pyodide.setInterruptBuffer(checkedOnce(interruptBuffer));
    }
    return entryPoints(pyodide);
  });
}

/**
 * What Pyodide is given as its interrupt buffer: the shared byte, read and cleared so that no interrupt is lost.
 * Python checks the buffer every 50 bytecodes of a loop (CPython's _Py_CheckEmscriptenSignals_Helper, Pyodide 0.27.7)
 * with two statements: read the byte, then write 0. A SIGINT the page writes between the two is overwritten unread,
 * and the cell runs on until its grace runs out and the worker is terminated: 28 of 35,000 interrupts written while
 * Python looped (tests/browser/test_worker_protocol.py counts them). Here the read remembers the value, and the write
 * of 0 clears the byte only if it still holds that value (compare-and-exchange): an interrupt written meanwhile stays
 * for the next check. A plain read (Pyodide's checkInterrupt off the GIL) clears nothing. The cost, with isolation
 * only: a loop of bare bytecodes runs 1 to 8 % slower (an indexed getter is slower to call than a typed array).
 */
function checkedOnce(buffer) {
  let seen = 0;
  return {
    get 0() {
      seen = buffer[0];
      return seen;
    },
    set 0(value) {
      if (value !== 0) buffer[0] = value;
      else if (seen !== 0) Atomics.compareExchange(buffer, 0, seen, 0);  // a 0 read leaves nothing to clear
    },
  };
}

async function boot(id, {manifest, base, revalidate = false, ...handed}) {
  if (!booting) {
    booting = Promise.resolve()
      .then(() => loadRuntime(id, Protocol.resolveManifest(manifest, base), revalidate, handed))
      .then((entries) => {
        python = entries;
      });
  }
  try {
    await booting;
    post(Protocol.success(id, {booted: true, interrupts: interruptBuffer !== null, interruptBuffer,
      wasm: compiledRuntime.module, checked: checkedBlobs.kept, unpacked: {...unpackedBy},
      reused: {wasm: compiledRuntime.reused, installed: handedOn.given, checked: checkedBlobs.reused}}));
  } catch (error) {
    post(Protocol.failure(id, {kind: "runtime", stage: error.stage || null, file: error.file || null,
      message: firstLine(error), detail: error.detail || String(error.stack || error)}));
  }
}

// ---- requests ----------------------------------------------------------------------------------------------------------

/** Forward a Python reply ({ok, value | error}, as JSON) under the request's id. */
function reply(id, json) {
  post({id, ...JSON.parse(json)});
}

// The reply channel (README.md): after a key press Chromium holds the tasks of postMessage from this worker until it
// has drawn its next frame, so a figure computed in 2 ms would still wait up to a frame to be drawn. A message on a
// BroadcastChannel is not held. The page names its channel in each render request; without one, postMessage.
const replyChannels = new Map();  // channel name → BroadcastChannel

function replyOn(channel, id, json) {
  if (!channel || typeof BroadcastChannel !== "function") {
    reply(id, json);
    return;
  }
  if (!replyChannels.has(channel)) replyChannels.set(channel, new BroadcastChannel(channel));
  replyChannels.get(channel).postMessage({id, ...JSON.parse(json)});
}

function render(id, {sandbox, params, channel}) {
  replyOn(channel, id, python.renderJson(sandbox, JSON.stringify(params || {})));
}

function run(id, args) {
  sendInstalled();
  post(Protocol.progress(id, {started: true}));  // the page counts the cell's time limit from here (README.md)
  outputTarget = id;
  try {
    reply(id, python.runCellJson(JSON.stringify(args || {})));
  } finally {
    outputTarget = null;
  }
}

function reset(id, {session}) {
  post(Protocol.success(id, {reset: python.resetSession(String(session || "page"))}));
}

function streamStep(id, args) {
  if (!streams.has(id)) {  // the first chunk opens the stream
    const opened = JSON.parse(python.openStream(String(args.name), JSON.stringify(args.args || {})));
    if (opened.error) {
      post(Protocol.failure(id, opened.error));
      return;
    }
    streams.set(id, opened.handle);
  }
  const step = JSON.parse(python.stepStream(streams.get(id)));
  if ("progress" in step) {
    post(Protocol.progress(id, step.progress));
    queue.push({id, op: OPS.STREAM, args});  // the next chunk waits behind whatever arrived meanwhile
    return;
  }
  streams.delete(id);
  post(step.error ? Protocol.failure(id, step.error) : Protocol.success(id, step.done));
}

const HANDLERS = {[OPS.RENDER]: render, [OPS.RUN]: run, [OPS.RESET]: reset, [OPS.STREAM]: streamStep};

function perform({id, op, args}) {
  if (!python) {
    post(Protocol.failure(id, {kind: "runtime", message: "the Python runtime is not booted"}));
    return;
  }
  // An interrupt is written only while a run is under way (after its "started"): one still here was meant for a run
  // that ended as it was written, and must not stop this request.
  if (interruptBuffer) interruptBuffer[0] = 0;
  try {
    HANDLERS[op](id, args || {});
  } catch (error) {  // the entry points never raise; this is the runtime itself failing
    streams.delete(id);
    failWith(id, error);
  }
}

// One request (or one chunk of a stream) per task, so a cancel or a render that arrives meanwhile is seen in time.
function schedulePump() {
  if (pumpScheduled) return;
  pumpScheduled = true;
  wake.port2.postMessage(null);
}

function nextRequest() {
  const urgent = queue.findIndex((request) => URGENT_OPS.has(request.op));
  return queue.splice(urgent >= 0 ? urgent : 0, 1)[0];
}

wake.port1.onmessage = () => {
  pumpScheduled = false;
  if (!queue.length) return;
  if (booting && !python) {
    booting.then(schedulePump, schedulePump);  // requests wait for a boot in progress
    return;
  }
  perform(nextRequest());
  if (queue.length) schedulePump();
};

function cancel(id, target) {
  const index = queue.findIndex((request) => request.id === target);
  const handle = streams.get(target);
  if (index >= 0) queue.splice(index, 1);
  if (handle !== undefined) {
    streams.delete(target);
    python.closeStream(handle);
  }
  const cancelled = index >= 0 || handle !== undefined;
  if (cancelled) post(Protocol.failure(target, {kind: "cancelled", message: "cancelled"}));
  post(Protocol.success(id, {cancelled}));
}

self.onmessage = (event) => {
  const {id, op, args} = event.data || {};
  if (op === OPS.BOOT) {
    boot(id, args);
  } else if (op === OPS.CANCEL) {
    cancel(id, args && args.target);
  } else if (HANDLERS[op]) {
    queue.push({id, op, args});
    schedulePump();
  } else {
    post(Protocol.failure(id, {kind: "exception", message: `unknown op ${JSON.stringify(op)}`}));
  }
};

// ---- liveness ----------------------------------------------------------------------------------------------------------

if (self.name && self.navigator && self.navigator.locks) {
  // The callback's promise never settles: the lock is released only when this worker ends, however it ends.
  self.navigator.locks.request(self.name, () => {
    post({event: "ready", lock: self.name});
    return new Promise(() => {});
  });
} else {
  post({event: "ready", lock: null});
}
