/// <reference types="vitest/config" />
import { defineConfig } from 'vite';

// Preact through the automatic JSX runtime; no preset plugin needed.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // Relative asset URLs: the same dist is served at / by `quotagate serve`
  // and by the Wails asset server.
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true, // public/.gitkeep puts dist/.gitkeep back
    target: 'es2022',
    modulePreload: { polyfill: false }, // every target webview supports modulepreload
    reportCompressedSize: true,
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}'],
    env: { TZ: 'UTC' },
  },
});
