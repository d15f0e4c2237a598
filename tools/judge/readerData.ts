/**
 * The reader model's data: the dumped questions (tools/judge/collect.ts) read back into the
 * product's own candidates and features (src/core/judge/readerFeatures.ts), labelled
 * (labels.ts), split per dataset into a training and a held-back half by a seeded hash of the
 * question id.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readQuestion } from '../../src/core/judge/questionReading';
import { readerCandidates } from '../../src/core/judge/readerFeatures';
import type { KeptRegion } from '../../src/core/critic/critic';
import { deserializeRegion, type JudgeDumpRecord } from '../../src/eval/judgeDump';
import { labelLeaves, type Label } from './labels';

export interface QuestionRows {
  dataset: string;
  record: JudgeDumpRecord;
  regions: KeptRegion[];
  split: 'train' | 'test';
  /** Quotable candidates with a label: their features and label. */
  rows: Array<{ features: Record<string, number>; label: 0 | 1; leafId: string }>;
  labels: Map<string, Label>;
  /** At least one quotable candidate is a positive. */
  answerable: boolean;
}

export function readDumps(dir: string): JudgeDumpRecord[] {
  const out: JudgeDumpRecord[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) if (line.trim()) out.push(JSON.parse(line) as JudgeDumpRecord);
  }
  return out;
}

/** A seeded split: the question's id hashed with the seed, half to each side. */
export function splitOf(id: string, seed: number, testShare = 0.5): 'train' | 'test' {
  const h = createHash('sha256').update(`${seed}\u0000${id}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < testShare ? 'test' : 'train';
}

export function questionRows(record: JudgeDumpRecord, seed: number): QuestionRows {
  // A given context's order is no retrieval: its items carry no rank, round or score.
  const regions = record.regions.map(deserializeRegion).map((r) => (record.retrieval ? r : { ...r, rank: undefined, round: undefined, retrieval: undefined }));
  const reading = readerCandidates(readQuestion(record.question), regions);
  const labels = labelLeaves(record, reading.candidates.map((c) => c.leaf));
  const rows: QuestionRows['rows'] = [];
  for (const c of reading.candidates) {
    if (!c.quotable) continue;
    const label = labels.get(c.leaf.id);
    if (label === undefined) continue;
    rows.push({ features: c.features, label, leafId: c.leaf.id });
  }
  return { dataset: record.dataset, record, regions, split: splitOf(`${record.dataset}\u0000${record.questionId}`, seed), rows, labels, answerable: rows.some((r) => r.label === 1) };
}
