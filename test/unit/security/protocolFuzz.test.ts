// Fuzzed and malformed webview messages (fast-check): the host validates every message before
// anything happens, so no handler runs for an invalid message, every malformed request with a
// readable id gets exactly one error response, and nothing throws.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { HostToWebviewMessage } from '../../../src/protocol/messages';
import { HostEndpoint, WebviewClient } from '../../../src/protocol/rpc';
import { validateWebviewToHost } from '../../../src/protocol/validate';

const methods = ['inspector/getView', 'source/open', 'webview/ready', 'webview/error', 'fs/readFile', '__proto__', 'constructor'];

/** Messages near the protocol's shape, so the fuzzer explores the validator's branches. */
const nearMiss = fc.record(
  {
    kind: fc.oneof(fc.constantFrom('request', 'notify', 'response', 'REQUEST'), fc.string()),
    id: fc.oneof(fc.nat(), fc.integer(), fc.double(), fc.string(), fc.constant(null)),
    method: fc.oneof(fc.constantFrom(...methods), fc.string()),
    params: fc.oneof(
      fc.anything(),
      fc.record({ file: fc.oneof(fc.string(), fc.constantFrom('../../etc/passwd', '\\\\server\\share\\x', '/etc/shadow')), startLine: fc.anything() }, { requiredKeys: [] }),
      fc.record({ protocolVersion: fc.anything() }, { requiredKeys: [] }),
    ),
  },
  { requiredKeys: [] },
);

describe('protocol fuzzing', () => {
  it('validation never throws and accepts only messages of the closed protocol', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), nearMiss), (raw) => {
        const r = validateWebviewToHost(raw);
        if (r.ok) {
          const m = r.value as { kind: string; method: string };
          assert.ok(['request', 'notify'].includes(m.kind));
          assert.ok(['inspector/getView', 'source/open', 'webview/ready', 'webview/error'].includes(m.method));
        } else {
          assert.equal(r.error.code, 'E_PROTOCOL');
        }
      }),
      { numRuns: 3000, seed: 20261129 },
    );
  });

  it('an invalid message has no side effect and a malformed request gets one error response', async () => {
    await fc.assert(
      fc.asyncProperty(nearMiss, async (raw) => {
        const posted: HostToWebviewMessage[] = [];
        const calls: string[] = [];
        const host = new HostEndpoint(
          (m) => posted.push(m),
          {
            'inspector/getView': async () => {
              calls.push('getView');
              return { title: 't', message: 'm' };
            },
            'source/open': async ({ file }) => {
              calls.push(`open:${file}`);
              return { opened: true };
            },
          },
          (n) => calls.push(`notify:${n.method}`),
        );
        await host.receive(raw);
        const valid = validateWebviewToHost(raw).ok;
        if (!valid) {
          assert.deepEqual(calls, [], 'a handler ran for an invalid message');
          const m = raw as { kind?: unknown; id?: unknown };
          const answerable = m.kind === 'request' && Number.isSafeInteger(m.id) && (m.id as number) >= 0;
          assert.equal(posted.length, answerable ? 1 : 0);
          if (answerable) assert.equal(posted[0]!.kind === 'response' && posted[0]!.ok, false);
        } else {
          assert.equal(calls.length, 1);
        }
      }),
      { numRuns: 1500, seed: 7 },
    );
  });

  it('the webview side rejects fuzzed host messages without throwing', () => {
    const client = new WebviewClient(() => undefined, () => assert.fail('a fuzzed message reached a handler'));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({ kind: fc.constantFrom('notify', 'response'), method: fc.string(), params: fc.anything(), id: fc.anything(), ok: fc.anything() }, { requiredKeys: [] }),
        ),
        (raw) => {
          const problem = client.receive(raw);
          assert.ok(problem === undefined || problem.code === 'E_PROTOCOL');
        },
      ),
      { numRuns: 3000, seed: 11 },
    );
  });
});
