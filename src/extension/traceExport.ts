/**
 * The extension's OpenInference trace export: after every answer (the Ask command, the
 * language-model tools, the chat participant — agentIntegrations.ts subscribes it to their
 * 'answered' events) the trace goes as spans to `canopy.export.otlpEndpoint`
 * and/or `canopy.export.file`, read at each answer so a settings change applies at once. In an
 * untrusted workspace no trace leaves the machine (core/export/exportSettings.ts). A failure is
 * logged once per destination and reason, never shown as a modal or held against the answer.
 */
import * as vscode from 'vscode';
import { bpeTokenCounter } from '../core/compress/tokens';
import { exportConfigFromSettings } from '../core/export/exportSettings';
import { TraceExporter } from '../core/export/otlpExport';
import type { CanopySettings } from '../core/config/settings';
import type { AskTrace } from '../contracts/trace';

export class ExtensionTraceExport {
  private exporter: { key: string; value: TraceExporter } | undefined;
  private readonly tokens = bpeTokenCounter();
  private readonly reported = new Set<string>();

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly version: string,
    private readonly settings: () => CanopySettings,
    /** The workspace folder (a relative canopy.export.file is taken from it). */
    private readonly root: () => string | undefined,
  ) {}

  private current(): TraceExporter | undefined {
    const root = this.root();
    if (!root) return undefined;
    const gate = exportConfigFromSettings(this.settings(), root, vscode.workspace.isTrusted);
    if (gate.note) this.once(gate.note, () => this.log.warn(`trace export: ${gate.note}`));
    if (!gate.value) return undefined;
    const key = JSON.stringify(gate.value);
    if (this.exporter?.key !== key) {
      try {
        this.exporter = { key, value: new TraceExporter({ ...gate.value, version: this.version, mapping: { countTokens: (t) => this.tokens.count(t) } }) };
      } catch (err) {
        this.once(`${key} ${(err as Error).message}`, () => this.log.error(`trace export: ${(err as Error).message}`));
        return undefined;
      }
    }
    return this.exporter.value;
  }

  private once(key: string, report: () => void): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    report();
  }

  /** Exports one answer in the background. */
  exportTrace = (trace: AskTrace): void => {
    const exporter = this.current();
    if (!exporter) return;
    exporter.export(trace).then(
      ({ spans }) => this.log.info(`trace ${trace.id}: ${spans} OpenInference spans exported to ${exporter.describe()}`),
      (err: Error) => this.once(err.message.replace(/trace \S+ /, ''), () => this.log.warn(err.message)),
    );
  };
}
