import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { loadService } from './load.js';
import { loadClient } from '../client/load.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');

describe('user modules in an ordinary project', () => {
  it('a .ts service and a .ts client load from a folder whose package.json has no "type": "module" (npm init\'s default)', async () => {
    const d = tmp('rs-cjs-');
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0' }));
    copyFileSync(join(root, 'examples', 'payments-atomic', 'service.ts'), join(d, 'service.ts'));
    copyFileSync(join(root, 'examples', 'fetch-retry-client', 'client.ts'), join(d, 'client.ts'));
    expect((await loadService(join(d, 'service.ts'))).name).toBe('payments-atomic');
    // The default export, not "2 clients and no default".
    expect((await loadClient(join(d, 'client.ts'))).name).toBe('fetch-retry-client');
    expect((await loadClient(join(d, 'client.ts'), 'fetch-retry-client-fixed')).name).toBe('fetch-retry-client-fixed');
  });
});
