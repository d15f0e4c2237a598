/**
 * The @canopy chat participant (contributes.chatParticipants): VS Code's chat request, response
 * stream and locations adapted to the host-free handler in chat/chatHandler.ts. The chat's own
 * language model (request.model) writes the answer when the workspace may send it documents
 * (Workspace Trust); the extractive reader answers otherwise.
 */
import * as vscode from 'vscode';
import { llmMayReceiveDocuments } from '../core/config/trust';
import { handleChatRequest } from './chat/chatHandler';
import { signalOf, type AgentHost } from './agentHost';
import { LmChatModel } from './lmChatModel';

export const chatParticipantId = 'canopy.chat';

export function registerChatParticipant(context: vscode.ExtensionContext, host: AgentHost): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(chatParticipantId, async (request, _context, stream, token) => {
    const { signal, dispose } = signalOf(token);
    try {
      return await handleChatRequest(
        { prompt: request.prompt, command: request.command, model: request.model },
        stream,
        {
          agent: host.agent,
          index: () => host.session.index(),
          llmFor(model: vscode.LanguageModelChat | undefined) {
            if (!model) return { note: 'the chat gave no language model' };
            const gate = llmMayReceiveDocuments('vscode-lm', true, vscode.workspace.isTrusted);
            return gate.value ? { llm: new LmChatModel(model) } : { ...(gate.note ? { note: gate.note } : {}) };
          },
          location: (citation) => host.location(citation),
        },
        signal,
      );
    } finally {
      dispose();
    }
  });
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
  host.log.info(`chat participant @canopy registered (${chatParticipantId})`);
  return participant;
}
