/**
 * S10 bounded, as far as the process's start is concerned: the binary's first line gives Node a
 * small young generation, a slowly growing heap and one malloc arena (docs/deploy.md "Memory",
 * bench/RESULTS.md (n)), and every other way govtrail is started takes the same settings from it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseShebang } from '../../src/runtime/launch.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const shebang = read('src/main.ts').split('\n')[0] as string;

describe('how govtrail is started (S10 bounded)', () => {
  it("the binary's first line bounds the heap and the malloc arenas", () => {
    const launch = parseShebang(shebang);
    expect(launch.env).toEqual({ MALLOC_ARENA_MAX: '1' });
    expect(launch.nodeArgs).toContain('--max-semi-space-size=4');
    expect(launch.nodeArgs).toContain('--heap-growing-percent=50');
  });

  it('this Node accepts every flag of it (a dropped V8 flag would stop the binary from starting)', () => {
    const { nodeArgs } = parseShebang(shebang);
    const r = spawnSync(process.execPath, [...nodeArgs, '-e', '0'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the image runs the binary itself, executable, so that its first line applies', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/app\/dist\/src\/main\.js"\]$/m);
    expect(dockerfile).toMatch(/chmod 755 dist\/src\/main\.js/);
    expect(dockerfile).not.toMatch(/^ENTRYPOINT \["node"/m);
  });

  it('npm start and the package bin start it the same way', () => {
    expect(read('scripts/start.mjs')).toMatch(/launchOf\('dist\/src\/main\.js'\)/);
    expect(JSON.parse(read('package.json')).bin).toEqual({ govtrail: 'dist/src/main.js' });
  });

  it('reads the assignments before node and the flags after it', () => {
    expect(parseShebang('#!/usr/bin/env -S A=1 B=x node --f=1 --g')).toEqual({
      env: { A: '1', B: 'x' },
      nodeArgs: ['--f=1', '--g'],
    });
    expect(parseShebang('#!/usr/bin/env node')).toEqual({ env: {}, nodeArgs: [] });
    expect(() => parseShebang('#!/bin/sh')).toThrow(/not an env -S shebang/);
    expect(() => parseShebang('#!/usr/bin/env -S deno run')).toThrow(/does not run node/);
  });
});
