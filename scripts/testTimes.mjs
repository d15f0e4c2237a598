// A reporter for Node's test runner that writes one JSON object to its destination: each test
// file's wall time in milliseconds, start-up included (Node 20 reports it as a top-level
// `test:complete` named by the file). scripts/test.mjs uses it to start the slowest files first
// on the next run and to name the slowest files at the end of this one.
export default async function* testTimes(source) {
  const times = {};
  for await (const event of source) {
    const data = event.data;
    if (event.type === 'test:complete' && data?.nesting === 0 && data.file && data.name === data.file) {
      times[data.file] = Math.round(data.details?.duration_ms ?? 0);
    }
  }
  yield `${JSON.stringify(times, null, 1)}\n`;
}
