// import.meta.url inside the CommonJS bundle of scripts/bundle-entry.mjs: the bundle's own file URL
export const import_meta_url = require('node:url').pathToFileURL(__filename).href;
