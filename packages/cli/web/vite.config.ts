/**
 * Builds the `cairn ui` page into the CLI's `dist/web/` (served by src/web/static.ts). Every
 * asset is emitted as a file beside index.html: the page loads nothing from the network.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Nothing inlined as a data URL beyond what the CSP allows (images only).
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
  },
});
