// A reporter for Node's test runner that writes one JSON object to its destination: each test
// file's wall time in milliseconds, start-up included (Node 20 reports it as a top-level
// `test:complete` named by the file). scripts/test.mjs uses it to start the slowest files first
// on the next run and to name the slowest files at the end of this one. A shared-process batch
// (test-results/shared/batch-N.test.cjs or batch-browser-N.test.cjs, see scripts/test.mjs) wraps each of its files in a
// top-level describe named by the file's path: each of those is recorded under that path, as the
// file's time inside the batch (its tests, without its imports, which run when the batch builds
// its suites, and without the process start-up the batch shares); the batch is not recorded.
const batch = /[\\/]shared[\\/]batch-(browser-)?\d+\.test\.cjs$/;
export default async function* testTimes(source) {
  const times = {};
  for await (const event of source) {
    const data = event.data;
    if (event.type !== 'test:complete' || data?.nesting !== 0 || !data.file) continue;
    if (batch.test(data.file)) {
      if (data.name !== data.file && data.name.endsWith('.test.ts')) times[data.name] = Math.round(data.details?.duration_ms ?? 0);
    } else if (data.name === data.file) {
      times[data.file] = Math.round(data.details?.duration_ms ?? 0);
    }
  }
  yield `${JSON.stringify(times, null, 1)}\n`;
}
