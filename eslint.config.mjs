// ESLint flat config. Besides the usual TypeScript checks it enforces the layers
// (docs/architecture.md, "Layers"):
//   - src/core, src/contracts, src/protocol and webview/ never import 'vscode' (not even types);
//   - webview/ never imports Node built-ins (it runs in a browser sandbox);
//   - every folder imports only from the layers below it (LAYERS, below), and nothing imports in a cycle;
//   - a src/core folder missing from CORE_LAYERS fails the lint (it would escape the layer rules).
// test/unit/lintBoundaries.test.ts proves these rules fail the lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

/**
 * The core's folders from the bottom up: a folder may import its own files and those of the
 * folders before it, never one after it. `(root)` is the core's own files (errors, ports, …).
 */
export const CORE_LAYERS = [
  '(root)',
  'text',
  'profiles',
  'store',
  'config',
  'trace',
  'llm',
  'export',
  'encode',
  'ingest',
  'index',
  'retrieve',
  'compress',
  'critic',
  'judge',
  'read',
  'controller',
  'topics',
  'annotate',
  'train',
  'engine',
  'app',
  'agent',
];

/** Outside the core: who may import whom (every one may also import itself). */
export const OUTER_LAYERS = {
  'src/contracts': [],
  'src/protocol': ['src/contracts'],
  webview: ['src/contracts', 'src/protocol'],
  'src/core': ['src/contracts'],
  'src/eval': ['src/contracts', 'src/core'],
  'src/cli': ['src/contracts', 'src/core', 'src/eval'],
  'src/extension': ['src/contracts', 'src/core', 'src/protocol'],
};

/** The import-x plugin, its resolver and the cycle rule, shared with the probe test. */
export const importXPlugins = { 'import-x': importX };
export const importXSettings = {
  'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json'] })],
  // Without these, import-x reads no TypeScript dependency, and no-cycle sees no edge at all.
  'import-x/extensions': ['.ts', '.js', '.mjs'],
  'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
};
export const cycleRule = { 'import-x/no-cycle': ['error', { ignoreExternal: true }] };

const outerNames = Object.keys(OUTER_LAYERS);
const coreFolder = (name) => (name === '(root)' ? './src/core/*.ts' : `./src/core/${name}`);
const layerZones = [
  ...outerNames.map((target) => ({
    target: `./${target}`,
    from: outerNames.filter((other) => other !== target && !OUTER_LAYERS[target].includes(other) && !(target === 'src/core' && other === 'src/core')).map((o) => `./${o}`),
    message: `${target} may import only ${['itself', ...OUTER_LAYERS[target]].join(', ')} (docs/architecture.md, "Layers").`,
  })),
  ...CORE_LAYERS.map((name, i) => ({
    target: coreFolder(name),
    from: CORE_LAYERS.slice(i + 1).map(coreFolder),
    message: `src/core/${name} sits below ${CORE_LAYERS.slice(i + 1).join(', ')} and may not import them (docs/architecture.md, "Layers").`,
  })),
].filter((zone) => zone.from.length > 0);

/** The syntax no TypeScript file may use (shared by the block below and the unlisted-folder block, which must keep it). */
const restrictedSyntax = [
  { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
  {
    // The tests load TypeScript through tsx's CommonJS hook (scripts/test.mjs), which compiles
    // static imports to require() but leaves import() to Node's ESM loader, which cannot find
    // an extensionless .ts module.
    selector: "ImportExpression[source.type='Literal'][source.value=/^\\./]",
    message: 'Import project modules statically: npm test runs TypeScript through tsx/cjs, where import() of a relative .ts path fails.',
  },
];

/**
 * A core folder that is not in CORE_LAYERS has no zone, so its imports would go unchecked: every
 * file in one fails the lint until the folder takes its place in the order.
 */
const unlistedCoreFolder = {
  files: ['src/core/*/**/*.ts'],
  ignores: CORE_LAYERS.filter((name) => name !== '(root)').map((name) => `src/core/${name}/**`),
  rules: {
    'no-restricted-syntax': [
      'error',
      ...restrictedSyntax,
      {
        selector: 'Program',
        message: 'This src/core folder is not in CORE_LAYERS (eslint.config.mjs), so no layer rule checks its imports: add it where it belongs in the order (and to docs/architecture.md, "Layers").',
      },
    ],
  },
};

const vscodeBan = {
  name: 'vscode',
  message: 'Only src/extension may import vscode: the core, the protocol and the webview stay host-independent.',
};

const nodeBuiltins = builtinModules.filter((m) => !m.startsWith('_'));
const nodeBan = nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({
  name,
  message: 'The webview runs in a browser: no Node built-ins.',
}));

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'out/**',
      'media/**',
      '.e2e-host/**',
      'test/fixtures/**',
      'test-results/**',
      '**/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-restricted-syntax': ['error', ...restrictedSyntax],
    },
  },
  unlistedCoreFolder,
  {
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    plugins: importXPlugins,
    settings: importXSettings,
    rules: { 'import-x/no-restricted-paths': ['error', { zones: layerZones }], ...cycleRule },
  },
  {
    files: ['src/core/**/*.ts', 'src/contracts/**/*.ts', 'src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [vscodeBan] }],
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ ...vscodeBan, allowTypeImports: false }] }],
    },
  },
  {
    files: ['webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [vscodeBan, ...nodeBan] }],
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ ...vscodeBan, allowTypeImports: false }] }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly', module: 'writable', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', fetch: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
