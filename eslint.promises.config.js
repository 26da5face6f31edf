import tseslint from 'typescript-eslint';

/**
 * The typed pass `npm run lint` runs after the plain one: promises in src/ that nothing awaits, or that are
 * used where a value is expected (`if (promise)`, `ids.filter((id) => lookup(id))`). The compiler accepts both;
 * issue 34 turns synchronous repositories async one module at a time, and each such use found so far would have
 * been a silent fault (a skipped scope check, a prune judging every snapshot forgotten). Separate from
 * eslint.config.js because type-aware rules build a TypeScript program: about 35 s of CPU for src/.
 */
export default tseslint.config({
  files: ['src/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { project: './tsconfig.build.json', tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
  },
});
