/**
 * Canopy's settings as the core sees them: one typed object with defaults. The extension reads
 * `canopy.*` from the VS Code configuration and the CLI reads flags; both produce this shape.
 * `settingKeys` names each setting's key in package.json; a unit test checks that keys, defaults
 * and ranges agree with package.json's contributes.configuration.
 */

export type LlmProviderName = 'none' | 'openai-compatible' | 'vscode-lm';

export interface CanopySettings {
  include: string[];
  exclude: string[];
  maxFileSizeMB: number;
  branchingFactor: number;
  topK: number;
  maxRounds: number;
  readerTokenCap: number;
  autoIndex: boolean;
  /** A Hugging Face-style ONNX folder (model.onnx + tokenizer.json); empty = the built-in encoder. */
  encoderModelFolder: string;
  llmProvider: LlmProviderName;
  llmBaseUrl: string;
  llmModel: string;
  llmRequestTimeoutSeconds: number;
  llmMaxRetries: number;
}

export const settingKeys: Readonly<Record<keyof CanopySettings, string>> = Object.freeze({
  include: 'canopy.include',
  exclude: 'canopy.exclude',
  maxFileSizeMB: 'canopy.maxFileSizeMB',
  branchingFactor: 'canopy.branchingFactor',
  topK: 'canopy.topK',
  maxRounds: 'canopy.maxRounds',
  readerTokenCap: 'canopy.readerTokenCap',
  autoIndex: 'canopy.autoIndex',
  encoderModelFolder: 'canopy.encoder.modelFolder',
  llmProvider: 'canopy.llm.provider',
  llmBaseUrl: 'canopy.llm.baseUrl',
  llmModel: 'canopy.llm.model',
  llmRequestTimeoutSeconds: 'canopy.llm.requestTimeoutSeconds',
  llmMaxRetries: 'canopy.llm.maxRetries',
});

export const defaultSettings: Readonly<CanopySettings> = Object.freeze({
  include: ['**/*'],
  exclude: ['**/node_modules/**', '**/.git/**', '**/dist/**', '**/out/**'],
  maxFileSizeMB: 50,
  branchingFactor: 2,
  topK: 10,
  maxRounds: 3,
  readerTokenCap: 16000,
  autoIndex: true,
  encoderModelFolder: '',
  llmProvider: 'none',
  llmBaseUrl: 'https://api.openai.com/v1',
  llmModel: '',
  llmRequestTimeoutSeconds: 60,
  llmMaxRetries: 3,
});

const providers: readonly LlmProviderName[] = ['none', 'openai-compatible', 'vscode-lm'];

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
    autoIndex: typeof partial.autoIndex === 'boolean' ? partial.autoIndex : d.autoIndex,
    encoderModelFolder: typeof partial.encoderModelFolder === 'string' ? partial.encoderModelFolder : d.encoderModelFolder,
    llmProvider: providers.includes(partial.llmProvider as LlmProviderName) ? (partial.llmProvider as LlmProviderName) : d.llmProvider,
    llmBaseUrl: typeof partial.llmBaseUrl === 'string' && partial.llmBaseUrl.trim() !== '' ? partial.llmBaseUrl.trim() : d.llmBaseUrl,
    llmModel: typeof partial.llmModel === 'string' ? partial.llmModel.trim() : d.llmModel,
    llmRequestTimeoutSeconds: clampNumber(partial.llmRequestTimeoutSeconds, d.llmRequestTimeoutSeconds, 1, 600),
    llmMaxRetries: Math.round(clampNumber(partial.llmMaxRetries, d.llmMaxRetries, 0, 10)),
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
