import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { mockApi } from './dev/mockApi.ts';

// Two pages, built together: the worker page (index.html, served by Flask at "/") and the
// requester dashboard (dashboard.html, served at "/dashboard"); their assets under "/assets/".
// `npm run dev` serves a mock API (dev/mockApi.ts) unless CEP_API points at a running server,
// e.g. CEP_API=http://127.0.0.1:3000 npm run dev
const apiTarget = process.env.CEP_API;

export default defineConfig({
  plugins: [react(), ...(apiTarget ? [] : [mockApi()])],
  base: '/',
  build: {
    outDir: '../collection_and_annotations/server/static',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2020',
    sourcemap: false,
    // `rolldownOptions` is Vite 8's name for `rollupOptions`.
    rolldownOptions: {
      input: {
        index: fileURLToPath(new URL('./index.html', import.meta.url)),
        dashboard: fileURLToPath(new URL('./dashboard.html', import.meta.url)),
      },
    },
  },
  server: apiTarget ? { proxy: { '/api': { target: apiTarget, changeOrigin: false } } } : {},
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.{ts,tsx}'],
    setupFiles: ['tests/setup.ts'],
    css: false,
    // One jsdom per worker, not per file: the suite's own cleanup (tests/setup.ts) resets the
    // page between tests, and setting up jsdom per file was most of the run's time.
    isolate: false,
    // A test of many clicks can pass 5 s (Vitest's default) on a busy 2-core machine; a real
    // hang still fails.
    testTimeout: 30_000,
  },
});
