/**
 * The Node arguments that load this repository's TypeScript the way `npm test` does
 * (scripts/tsHook.cjs: tsx's CommonJS hook for the repository's own files), for the child
 * processes a test starts: `spawn(process.execPath, [...tsNode, script, ...args])`.
 */
import { join } from 'node:path';

export const tsHook = join(__dirname, '..', '..', 'scripts', 'tsHook.cjs');
export const tsNode: readonly string[] = ['--require', tsHook];
