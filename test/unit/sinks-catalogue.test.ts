/**
 * The sink catalogue (src/alerts/sinks/registry.ts): every sink folder is a registry line and every
 * line a folder, each type's module builds its sink, and reading settings loads no sink: what
 * src/config/settings.ts imports, followed import by import, reaches no sink module and no I/O
 * package of the sinks.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SINK_REGISTRY, SINK_TYPES } from '../../src/alerts/sinks/registry.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SINKS = path.join(ROOT, 'src/alerts/sinks');

/** The packages a sink's delivery needs and reading its settings must not load. */
const SINK_IO = ['undici', 'nodemailer', 'node:net', 'node:tls', 'node:dgram'];

/** Modules a file loads when it runs: static imports and re-exports, not `import type` nor `import()`. */
function runtimeImports(text: string): string[] {
  const re = /^(?:import|export)\s+(?!type\s)(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm;
  return [...text.matchAll(re)].map((m) => m[1] as string);
}

/** Every file and package `entry` loads, transitively. */
function loadedBy(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of runtimeImports(readFileSync(path.join(ROOT, file), 'utf8'))) {
      if (!spec.startsWith('.')) {
        packages.add(spec);
        continue;
      }
      visit(path.posix.join(path.posix.dirname(file), spec).replace(/\.js$/, '.ts'));
    }
  };
  visit(entry);
  return { files, packages };
}

describe('the sink catalogue', () => {
  it('has a folder with settings.ts and sink.ts for every type, and a type for every folder', () => {
    const folders = readdirSync(SINKS, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(folders).toEqual(SINK_TYPES.map((t) => t.replaceAll('_', '-')).sort());
    for (const folder of folders) {
      expect(existsSync(path.join(SINKS, folder, 'settings.ts')), `${folder}/settings.ts`).toBe(true);
      expect(existsSync(path.join(SINKS, folder, 'sink.ts')), `${folder}/sink.ts`).toBe(true);
    }
  });

  it("loads each type's module, which exports the factory", async () => {
    for (const type of SINK_TYPES) {
      const module = await SINK_REGISTRY[type].load();
      expect(typeof module.fromConfig, type).toBe('function');
    }
  });

  it('is read by the settings without loading a sink or its I/O packages', () => {
    const { files, packages } = loadedBy('src/config/settings.ts');
    expect(files).toContain('src/alerts/sinks/registry.ts');
    expect([...files].filter((f) => f.startsWith('src/alerts/sinks/') && f.endsWith('/sink.ts'))).toEqual([]);
    expect([...packages].filter((p) => SINK_IO.includes(p))).toEqual([]);
  });

  it('would notice a settings file that loads a sink or its I/O', () => {
    const text =
      "import { request } from 'undici';\nimport type { X } from 'nodemailer';\nimport './sink.js';";
    expect(runtimeImports(text)).toEqual(['undici', './sink.js']);
  });
});
