// The platforms Canopy's VSIXes are built for, and the native runtime each one ships: the table
// scripts/package.mjs stages from and test/package/vsix.test.ts checks every archive against.
//
// onnxruntime-node 1.30 ships CPU binaries for linux-x64/arm64, darwin-arm64 and win32-x64/arm64
// but none for darwin-x64: ONNX Runtime stopped publishing Intel-macOS builds after the 1.23
// releases. The darwin-x64 VSIX therefore ships onnxruntime-node 1.23.2 (the last release with a
// darwin/x64 binary, N-API like 1.30, same JS API for what Canopy uses), fetched from the npm
// registry at package time and checked against the integrity pinned below. The built-in model is
// ONNX opset 13, which 1.23 runs; on this machine 1.23.2's linux-x64 binary reproduces 1.30's
// vectors for the reference sentences (test/package/vsix.test.ts checks it on every run).

export const ORT_DARWIN_X64 = {
  name: 'onnxruntime-node',
  version: '1.23.2',
  integrity: 'sha512-OBTsG0W8ddBVOeVVVychpVBS87A9YV5sa2hJ6lc025T97Le+J4v++PwSC4XFs1C62SWyNdof0Mh4KvnZgtt4aw==',
  common: {
    name: 'onnxruntime-common',
    version: '1.23.2',
    integrity: 'sha512-5LFsC9Dukzp2WV6kNHYLNzp8sT6V02IubLCbzw2Xd6X5GOlr65gAX6xiJwyi2URJol/s71gaQLC5F2C25AAR2w==',
  },
};

/**
 * Per target: the OS and CPU its binaries must be built for (as ELF e_machine, Mach-O cputype or
 * PE machine names), where onnxruntime-node comes from, files of its folder not shipped (with the
 * reason), and the @napi-rs/canvas native package.
 */
export const TARGETS = {
  'linux-x64': { os: 'linux', cpu: 'x64', format: 'elf', ort: 'installed', canvas: 'linux-x64-gnu' },
  'linux-arm64': { os: 'linux', cpu: 'arm64', format: 'elf', ort: 'installed', canvas: 'linux-arm64-gnu' },
  'darwin-x64': { os: 'darwin', cpu: 'x64', format: 'macho', ort: ORT_DARWIN_X64, canvas: 'darwin-x64' },
  'darwin-arm64': {
    os: 'darwin',
    cpu: 'arm64',
    format: 'macho',
    ort: 'installed',
    // npm tarballs hold no symlinks, so the package carries the dylib twice; the binding loads
    // @rpath/libonnxruntime.1.dylib (its Mach-O load command), so the versioned copy stays out.
    skip: [/^libonnxruntime\.\d+\.\d+\.\d+\.dylib$/],
    canvas: 'darwin-arm64',
  },
  'win32-x64': { os: 'win32', cpu: 'x64', format: 'pe', ort: 'installed', canvas: 'win32-x64-msvc' },
};

export const TARGET_NAMES = Object.keys(TARGETS);
