/**
 * Workspace Trust policy (one place, pure, so the extension and the tests share it). In an
 * untrusted workspace Canopy still indexes and answers, with its built-in encoder, its extractive
 * reader and rule critic, and:
 *   - sends no document text to an LLM that is not on this machine (a remote OpenAI-compatible
 *     endpoint, or a VS Code language model, which may be a cloud model);
 *   - loads no user-supplied model: neither an ONNX encoder folder nor an adapter checkpoint
 *     (a folder's settings could point them at files an attacker put in the repository);
 *   - keeps the index in the local store: a folder's `canopy.store` could name a database
 *     server that indexing would send every document's text to.
 * The extension passes `vscode.workspace.isTrusted`; package.json declares the same settings as
 * `restrictedConfigurations`, so VS Code also ignores their workspace-level values.
 */

export interface TrustGate<T> {
  value: T;
  /** Why a configured value is not used, when it is not. */
  note?: string;
}

/** The user's ONNX encoder folder to load, or '' for the built-in encoder. */
export function userEncoderFolder(configured: string, trusted: boolean): TrustGate<string> {
  if (!configured || trusted) return { value: configured };
  return { value: '', note: 'the workspace is not trusted: the user-supplied encoder (canopy.encoder.modelFolder) is not loaded, the built-in one is used' };
}

/** The index store to use (`canopy.store`): the configured one, or `local` in an untrusted workspace. */
export function userStore(configured: string, trusted: boolean): TrustGate<string> {
  if (trusted || configured === 'local' || configured.startsWith('local?')) return { value: configured };
  return { value: 'local', note: 'the workspace is not trusted: the index store (canopy.store) is not used, the local store is' };
}

/** The adapter checkpoint to load, or '' for none. */
export function userAdapterCheckpoint(configured: string, trusted: boolean): TrustGate<string> {
  if (!configured || trusted) return { value: configured };
  return { value: '', note: 'the workspace is not trusted: the adapter checkpoint (canopy.adapter.checkpoint) is not loaded' };
}

/**
 * Whether an LLM may receive document text. `remote` is the model's own judgement of its endpoint
 * (loopback hosts are local); a VS Code language model counts as remote.
 */
export function llmMayReceiveDocuments(provider: 'openai-compatible' | 'vscode-lm', remote: boolean, trusted: boolean): TrustGate<boolean> {
  if (trusted) return { value: true };
  if (provider === 'vscode-lm') return { value: false, note: 'the workspace is not trusted, so no document text is sent to a language model' };
  if (remote) return { value: false, note: 'the workspace is not trusted, so no document text is sent to a remote LLM' };
  return { value: true };
}
