/**
 * WebVTT and SRT transcripts. Cues are grouped into 30-second segments (segment k holds the cues
 * that start in [30k, 30k+30) s); each segment is a leaf with `timeStart` / `timeEnd` (its first
 * cue's start and last cue's end) and char offsets. A segment's text is the exact source slice
 * from its first cue's text to its last cue's text — so when a segment holds several cues the
 * cue numbers and timing lines between them are part of it, exactly as in the file.
 * NOTE / STYLE / REGION blocks are skipped; a block without a valid timing line is reported.
 */

import type { DraftDocument, DraftNode, ParseWarning } from '../parsedDocument';
import { TextAnchorer } from '../textAnchors';
import { blankLineBlocks } from './plainText';
import { titleFromPath } from './titles';

export const segmentSeconds = 30;

interface Cue {
  start: number;
  end: number;
  textStart: number;
  textEnd: number;
}

const timing = /^\s*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})\s*-->\s*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})/;

/** "01:02:03.500" / "02:03,5" → seconds. */
export function parseTimestamp(s: string): number {
  const [clock, frac = '0'] = s.split(/[.,]/);
  const parts = clock!.split(':').map(Number);
  let secs = 0;
  for (const p of parts) secs = secs * 60 + p;
  return secs + Number(`0.${frac}`);
}

export function parseSubtitles(file: string, text: string): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const warnings: ParseWarning[] = [];
  const cues: Cue[] = [];
  let bad = 0;
  for (const [bs, be] of blankLineBlocks(text)) {
    const block = text.slice(bs, be);
    if (/^\s*(WEBVTT|NOTE|STYLE|REGION)\b/.test(block)) continue;
    // Line spans within the block.
    const lines: Array<[number, number]> = [];
    const re = /\r\n|\n|\r/g;
    let ls = bs;
    for (let m = re.exec(block); m; m = re.exec(block)) {
      lines.push([ls, bs + m.index]);
      ls = bs + m.index + m[0].length;
    }
    lines.push([ls, be]);
    const t = lines.findIndex(([s, e]) => timing.test(text.slice(s, e)));
    if (t < 0 || t > 1) {
      bad++;
      continue;
    }
    const match = timing.exec(text.slice(lines[t]![0], lines[t]![1]))!;
    const textLines = lines.slice(t + 1).filter(([s, e]) => text.slice(s, e).trim().length > 0);
    if (textLines.length === 0) continue;
    let textStart = textLines[0]![0];
    while (/\s/.test(text[textStart]!)) textStart++;
    let textEnd = textLines[textLines.length - 1]![1];
    while (textEnd > textStart && /\s/.test(text[textEnd - 1]!)) textEnd--;
    cues.push({ start: parseTimestamp(match[1]!), end: parseTimestamp(match[2]!), textStart, textEnd });
  }
  if (bad > 0) warnings.push({ file, code: 'badCue', message: `${file}: ${bad} block(s) without a valid cue timing line were skipped.` });
  const segments: DraftNode[] = [];
  let current: Cue[] = [];
  const flush = (): void => {
    if (current.length === 0) return;
    const first = current[0]!;
    const last = current[current.length - 1]!;
    const anchor = anchorer.anchor(first.textStart, last.textEnd);
    anchor.timeStart = first.start;
    anchor.timeEnd = Math.max(...current.map((c) => c.end));
    segments.push({ kind: 'segment', modality: 'transcript', text: text.slice(first.textStart, last.textEnd), anchor, children: [] });
    current = [];
  };
  for (const cue of cues) {
    const prev = current[0];
    if (prev && Math.floor(cue.start / segmentSeconds) !== Math.floor(prev.start / segmentSeconds)) flush();
    current.push(cue);
  }
  flush();
  return {
    file,
    format: 'subtitles',
    title: titleFromPath(file),
    root: { kind: 'document', modality: 'transcript', text: '', anchor: { file }, children: segments },
    warnings,
  };
}
