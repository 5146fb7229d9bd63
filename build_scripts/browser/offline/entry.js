/* The site's service worker (mkdocs.yml: `offline: true` under the explainer plugin): keeps what a reader has used, so
 * a second visit works without a network. Bundled at build time by esbuild (build_scripts/editor_bundle.py) with
 * Workbox's precaching, routing and strategies into `sw.js` at the site's root; the build writes, in front of the
 * bundle, the lists below (build_scripts/pipeline/offline.py), so every build is a new service worker.
 *
 *   self.__EXPLAINER_OFFLINE = {version, shell: [entry], runtime: [entry]}    entry: {url, revision, integrity}
 *
 * Three caches, each named after this worker's scope (several sites may share an origin):
 * - shell: the files every page loads (theme, our page code, KaTeX, the search index), fetched when the worker
 *   installs, each checked against its integrity.
 * - runtime: Pyodide's files, numpy, our wheel, runtime.json and the code editor: 20 MB a reader downloads only by
 *   using a live figure or cell, so they are kept only then (the page says so once the runtime booted; a later build's
 *   worker keeps them again if the reader had them). Each is checked against its integrity before it is kept.
 * - visited: the pages a reader opened and the figures on them, network first (a page is always fresh online).
 * A new build replaces what changed and deletes the rest: shell and runtime entries no longer listed go when the new
 * worker activates, and the old visited cache is fetched afresh into the new one, then deleted.
 *
 * Whatever a static host says about caching (GitHub Pages: max-age=600), nothing this worker fetches comes from the
 * previous build: a file whose address does not carry its version is asked of the server afresh (`reload` when it is
 * kept, `no-cache` otherwise, which costs a 304 when it did not change); only a versioned address is read through the
 * browser's HTTP cache. offline.js turns the next navigation of a page the previous build's worker served into a full
 * page load, so the reader gets the new scripts too.
 */
import {PrecacheController, PrecacheRoute} from "workbox-precaching";
import {Route, Router} from "workbox-routing";
import {CacheFirst, NetworkFirst} from "workbox-strategies";

const BUILD = self.__EXPLAINER_OFFLINE;
const SCOPE = self.registration.scope;
const VISITED_PREFIX = "explainer-visited-";
const NAMES = {
  shell: `explainer-shell ${SCOPE}`,
  runtime: `explainer-runtime ${SCOPE}`,
  visited: `${VISITED_PREFIX}${BUILD.version} ${SCOPE}`,
};

// Files whose address carries their version (no revision): Pyodide's folder, the archives' digest folder, the wheels.
const VERSIONED = new Set([...BUILD.shell, ...BUILD.runtime].filter((entry) => !entry.revision)
  .map((entry) => new URL(entry.url, SCOPE).href));

/** A Workbox plugin: the network requests of a strategy ask the server, not the HTTP cache, for any address that does
 * not carry its version (a page, runtime.json, a script the precache has not kept yet). An explicit mode stays. */
const revalidate = {
  requestWillFetch: async ({request}) => (request.cache === "default" && !VERSIONED.has(request.url)
    ? new Request(request, {cache: "no-cache"}) : request),
};

const shell = new PrecacheController({cacheName: NAMES.shell, plugins: [revalidate]});
shell.addToCacheList(BUILD.shell);
const runtime = new PrecacheController({cacheName: NAMES.runtime, plugins: [revalidate]});
runtime.addToCacheList(BUILD.runtime);

// ---- the runtime, kept on request ----------------------------------------------------------------------------------

/** Whether every file of a precache list is in its cache. */
async function complete(controller) {
  const cache = await caches.open(controller.strategy.cacheName);
  for (const cacheKey of controller.getURLsToCacheKeys().values()) {
    if (!(await cache.match(cacheKey))) return false;
  }
  return true;
}

/** Keep every runtime file not kept yet. Files whose address carries their version (Pyodide's, our hashed wheel) are
 * read through the HTTP cache, so the boot that just downloaded them pays nothing twice; each must match its
 * integrity, or nothing of it is kept. */
async function keepRuntime() {
  const cache = await caches.open(NAMES.runtime);
  for (const [url, cacheKey] of runtime.getURLsToCacheKeys()) {
    if (await cache.match(cacheKey)) continue;
    const integrity = runtime.getIntegrityForCacheKey(cacheKey);
    const response = await fetch(new Request(url, {integrity, cache: VERSIONED.has(url) ? "default" : "reload",
      credentials: "same-origin"}));
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    await cache.put(cacheKey, response);
  }
}

async function status() {
  return {version: BUILD.version, offline: (await complete(shell)) && (await complete(runtime))};
}

// ---- lifecycle ---------------------------------------------------------------------------------------------------------

self.addEventListener("install", (event) => {
  self.skipWaiting();  // a new build's files replace the old ones at once, not when every tab is closed
  event.waitUntil((async () => {
    await shell.install(event);
    const previous = await caches.open(NAMES.runtime);
    if ((await previous.keys()).length) await keepRuntime();  // the reader had the runtime: keep this build's
  })());
});

/** The visited pages of older builds, fetched afresh into this build's cache (kept as they were when that fails). */
async function carryOverVisited() {
  const current = await caches.open(NAMES.visited);
  for (const name of await caches.keys()) {
    if (!name.startsWith(VISITED_PREFIX) || !name.endsWith(` ${SCOPE}`) || name === NAMES.visited) continue;
    const old = await caches.open(name);
    for (const request of await old.keys()) {
      let response = null;
      try {
        response = await fetch(request, {cache: "no-cache"});
      } catch (error) {
        // offline while the new worker activates: keep the old copy
      }
      if (!response || !response.ok) response = await old.match(request);
      if (response) await current.put(request, response);
    }
    await caches.delete(name);
  }
}

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    await shell.activate(event);
    await runtime.activate(event);
    await carryOverVisited();
    await self.clients.claim();
  })());
});

// ---- requests ----------------------------------------------------------------------------------------------------------

function inScope(url) {
  return url.href.startsWith(SCOPE);
}

function isPage({url, request}) {
  return inScope(url) && (request.mode === "navigate" || url.pathname.endsWith("/") || url.pathname.endsWith(".html"));
}

// The worker asking why a download failed wants the server's answer, not a kept copy: `cache: "no-store"` requests go to
// the network untouched (registered before the router's listener, which then never sees them).
self.addEventListener("fetch", (event) => {
  if (event.request.cache === "no-store") event.stopImmediatePropagation();
});

const router = new Router();
router.registerRoute(new PrecacheRoute(shell));
router.registerRoute(new PrecacheRoute(runtime));  // not kept yet: from the network, kept when it matches its integrity
router.registerRoute(new Route(isPage, new NetworkFirst({cacheName: NAMES.visited, plugins: [revalidate]})));
// Anything else of the site a visited page loads (its figures, whose names carry their hash; a font): kept as read.
router.registerRoute(new Route(({url}) => inScope(url), new CacheFirst({cacheName: NAMES.visited,
  plugins: [revalidate]})));
router.addFetchListener();
router.addCacheListener();  // {type: "CACHE_URLS"}: a page loaded before this worker controlled it sends its address

// ---- messages from offline.js --------------------------------------------------------------------------------------

self.addEventListener("message", (event) => {
  const type = event.data && event.data.type;
  const port = event.ports && event.ports[0];
  const reply = (value) => port && port.postMessage(value);
  if (type === "explainer:keep-runtime") {
    event.waitUntil(keepRuntime().then(status).then(reply, (error) => reply({offline: false, error: String(error)})));
  } else if (type === "explainer:status") {
    event.waitUntil(status().then(reply));
  } else if (type === "explainer:skip-waiting") {
    self.skipWaiting();  // offline.js, to a new build's worker left waiting: see the note there
  }
});
