/**
 * Search for a desktop app (Electron, Tauri's Node side, a VS Code extension): the app's main
 * process owns one Quarry in its user-data directory and answers the window's search box over
 * IPC, keystroke by keystroke, with `searchSync` (no thread hop: the answer is ready before the
 * next frame). In Electron:
 *
 *   // main.js
 *   const service = await openSearch(app.getPath('userData'));
 *   ipcMain.handle('search', (_event, text) => service.search(text));
 *   app.on('will-quit', () => service.close());
 *   // preload.js
 *   contextBridge.exposeInMainWorld('search', (text) => ipcRenderer.invoke('search', text));
 *
 * `demo.js` runs it without Electron.
 */
'use strict';
const path = require('node:path');

// Installed: `require('quarry-search')`; inside the repository: its build.
let Quarry;
try {
  ({ Quarry } = require('quarry-search'));
} catch {
  ({ Quarry } = require('../../dist/index.js'));
}

/** What the app lets its users find: commands, settings and recent files, each a `kind`. */
const SETTINGS = {
  searchableAttributes: ['title', 'keywords', 'path'],
  filterableAttributes: ['kind'],
  sortableAttributes: ['openedAt'],
  displayedAttributes: ['id', 'kind', 'title', 'path'],
};

/**
 * Opens (or creates) the app's index under `userDataDir` (no directory: a temporary one, gone
 * when the app quits). The writes are tasks that run beside the searches, which never wait
 * for them.
 */
async function openSearch(userDataDir) {
  const quarry = await Quarry.open(
    userDataDir ? { dbPath: path.join(userDataDir, 'search'), logLevel: 'error' } : { logLevel: 'error' },
  );
  const items = quarry.index('items');
  await items.updateSettings(SETTINGS).waitTask();
  return {
    /** Adds or replaces items (`{ id, kind, title, keywords?, path?, openedAt? }`); resolves once searchable. */
    async put(list) {
      const task = await items.addDocuments(list, { primaryKey: 'id' }).waitTask();
      if (task.status !== 'succeeded') throw new Error(task.error.message);
    },
    /** The search box's answer for `text`, in the window's shape; `kind` narrows it. */
    search(text, kind = null) {
      const { hits, estimatedTotalHits } = items.searchSync(text, {
        limit: 8,
        filter: kind ? `kind = ${JSON.stringify(kind)}` : undefined,
        attributesToHighlight: ['title'],
        highlightPreTag: '<mark>',
        highlightPostTag: '</mark>',
      });
      return {
        total: estimatedTotalHits,
        items: hits.map((h) => ({ id: h.id, kind: h.kind, title: h._formatted.title, path: h.path ?? null })),
      };
    },
    close: () => quarry.close(),
  };
}

module.exports = { openSearch };
