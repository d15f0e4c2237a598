// ESLint flat config. Besides the usual TypeScript checks it enforces the layer boundaries:
//   src/core, src/protocol and webview/ never import 'vscode' (not even types);
//   webview/ never imports Node built-ins (it runs in a browser sandbox).
// test/unit/lintBoundaries.test.ts proves these rules fail the lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

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
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/protocol/**/*.ts'],
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
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly', module: 'writable', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', fetch: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
