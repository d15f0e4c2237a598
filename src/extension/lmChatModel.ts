/**
 * The ChatModel port on the VS Code Language Model API (`vscode.lm`): models the user already
 * has (e.g. through Copilot), with no key for Canopy to hold. The AbortSignal is bridged to a
 * CancellationToken, and the call settles as soon as the signal fires rather than when the
 * model's stream happens to notice. The API has no system role, so system text goes first as a
 * user message; it has no portable token limit, temperature or JSON mode, so those options are
 * ignored and callers parse replies defensively anyway. The models may run anywhere, so they
 * count as remote.
 */
import * as vscode from 'vscode';
import { CancelledError } from '../core/errors';
import { LlmError, type ChatMessage, type ChatModel, type ChatOptions, type ChatResult } from '../core/llm/llm';

const JUSTIFICATION = 'Canopy sends your question and the evidence it kept from this workspace to the model to judge the evidence and to write a cited answer.';

/** The first model matching the selector (e.g. `{ vendor: 'copilot', family: 'gpt-4o' }`), or undefined when none is available. */
export async function selectLmChatModel(selector: vscode.LanguageModelChatSelector, maxResponseChars = 200_000): Promise<LmChatModel | undefined> {
  const [model] = await vscode.lm.selectChatModels(selector);
  return model ? new LmChatModel(model, maxResponseChars) : undefined;
}

export class LmChatModel implements ChatModel {
  readonly id: string;
  readonly remote = true;
  /** The Language Model API of the VS Code versions Canopy supports takes text only. */
  readonly acceptsImages = false;

  constructor(
    private readonly model: vscode.LanguageModelChat,
    private readonly maxResponseChars = 200_000,
  ) {
    this.id = `vscode-lm:${model.vendor}/${model.id}`;
  }

  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    const { signal } = options;
    if (signal?.aborted) throw new CancelledError();
    const started = Date.now();
    const source = new vscode.CancellationTokenSource();
    let rejectAbort: ((err: Error) => void) | undefined;
    const aborted = new Promise<never>((_, reject) => (rejectAbort = reject));
    const onAbort = () => {
      source.cancel();
      rejectAbort?.(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const work = this.run(messages, options, source.token);
    work.catch(() => undefined); // settled by the race when cancelled; nobody listens then
    try {
      const text = await Promise.race([work, aborted]);
      return { text, model: this.model.id, attempts: 1, ms: Date.now() - started };
    } catch (err) {
      if (err instanceof CancelledError || signal?.aborted) throw new CancelledError();
      if (err instanceof LlmError) throw err;
      if (err instanceof vscode.LanguageModelError) {
        throw new LlmError('refused', `The language model ${this.model.name} (${this.model.vendor}) refused the request (${err.code}): ${err.message}`);
      }
      throw new LlmError('connection', `The language model ${this.model.name} (${this.model.vendor}) failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      source.dispose();
    }
  }

  private async run(messages: ChatMessage[], options: ChatOptions, token: vscode.CancellationToken): Promise<string> {
    const lmMessages = messages.map((m) =>
      m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(m.content) : vscode.LanguageModelChatMessage.User(m.content),
    );
    const response = await this.model.sendRequest(lmMessages, { justification: JUSTIFICATION }, token);
    let text = '';
    for await (const piece of response.text) {
      if (token.isCancellationRequested) break;
      text += piece;
      if (text.length > this.maxResponseChars) {
        throw new LlmError('size', `The answer of ${this.model.name} passed the limit of ${this.maxResponseChars} characters and was cut off.`);
      }
      options.onDelta?.(piece);
    }
    return text;
  }
}
