/**
 * Canopy's settings as the core sees them: one typed object with defaults. The extension reads
 * `canopy.*` from the VS Code configuration and the CLI reads flags; both produce this shape.
 * A unit test checks that these keys and defaults agree with package.json's contributes.
 */

export interface CanopySettings {
  include: string[];
  exclude: string[];
  maxFileSizeMB: number;
  branchingFactor: number;
  topK: number;
  maxRounds: number;
  readerTokenCap: number;
}

export const defaultSettings: Readonly<CanopySettings> = Object.freeze({
  include: ['**/*'],
  exclude: ['**/node_modules/**', '**/.git/**', '**/dist/**', '**/out/**'],
  maxFileSizeMB: 50,
  branchingFactor: 2,
  topK: 10,
  maxRounds: 3,
  readerTokenCap: 16000,
});

/** Merge a partial, untrusted settings object over the defaults, clamping numbers to their ranges. */
export function resolveSettings(partial: Partial<Record<keyof CanopySettings, unknown>>): CanopySettings {
  const d = defaultSettings;
  return {
    include: stringList(partial.include, d.include),
    exclude: stringList(partial.exclude, d.exclude),
    maxFileSizeMB: clampNumber(partial.maxFileSizeMB, d.maxFileSizeMB, 0.01, Number.MAX_SAFE_INTEGER),
    branchingFactor: Math.round(clampNumber(partial.branchingFactor, d.branchingFactor, 2, 4)),
    topK: Math.round(clampNumber(partial.topK, d.topK, 1, 100)),
    maxRounds: Math.round(clampNumber(partial.maxRounds, d.maxRounds, 1, 10)),
    readerTokenCap: Math.round(clampNumber(partial.readerTokenCap, d.readerTokenCap, 256, Number.MAX_SAFE_INTEGER)),
  };
}

function stringList(value: unknown, fallback: readonly string[]): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [...value];
  return [...fallback];
}

function clampNumber(value: unknown, fallback: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, value));
}
