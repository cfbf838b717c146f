// Worker threads do not inherit the tsx loader. In the published build the
// worker is plain JavaScript next to this file; in a checkout, register tsx
// and load the TypeScript source.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('./check-worker.js', import.meta.url);
if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./check-worker.ts');
}
