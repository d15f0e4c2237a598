/**
 * What a CLI command may touch: its output streams and the environment. Passing these in
 * (instead of writing to process.stdout directly) lets tests run commands in-process.
 */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** Whether stderr is an interactive terminal (progress bars only then). */
  isTTY: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
}

export function processIO(): CliIO {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    isTTY: Boolean(process.stderr.isTTY),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** A usage error: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A UsageError, also one thrown by the research commands' own bundle (dist/cliTools.js), whose class is a copy. */
export function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || (err instanceof Error && err.name === 'UsageError');
}
