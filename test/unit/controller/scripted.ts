/**
 * Drives the controller from a test: a scripted evaluator whose decisions pick candidates by a
 * predicate (so a test says "open the cash-flow table", not "index 7"), and a helper that runs
 * the controller over the fixture document with given options.
 */
import assert from 'node:assert/strict';
import type { Candidate } from '../../../src/core/controller/candidates';
import { runController, type ControllerRun } from '../../../src/core/controller/controller';
import { DocumentView } from '../../../src/core/controller/documentView';
import type { CandidatePick, ControllerEvaluator, EvaluatorDecision, EvaluatorInput, SearchRequest } from '../../../src/core/controller/evaluator';
import { groundPages } from '../../../src/core/controller/grounding';
import { resolveControllerOptions, type ControllerOptions } from '../../../src/core/controller/options';
import { RelevanceModel } from '../../../src/core/controller/relevance';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import { buildFixtureDoc, hashDeps } from './fixtureDoc';

export type Turn = (input: EvaluatorInput) => { picks?: CandidatePick[]; search?: SearchRequest; stop?: { reason: string } };

/** The first candidate that satisfies `pred`, as a pick; fails the test when there is none. */
export function pick(input: EvaluatorInput, pred: (c: Candidate) => boolean, utility = 0.9): CandidatePick {
  const c = input.candidates.find(pred);
  assert.ok(c, `iteration ${input.iteration}: no candidate matches ${pred.toString()}`);
  return { index: c.index, utility, why: 'scripted' };
}

export class ScriptedEvaluator implements ControllerEvaluator {
  readonly kind = 'rule' as const;
  readonly inputs: EvaluatorInput[] = [];

  constructor(private readonly turns: Turn[]) {}

  async decide(input: EvaluatorInput): Promise<EvaluatorDecision> {
    this.inputs.push(input);
    const turn = this.turns[this.inputs.length - 1];
    const d = turn ? turn(input) : { stop: { reason: 'the script ended' } };
    return {
      ok: true,
      picks: d.picks ?? [],
      ...(d.search ? { search: d.search } : {}),
      ...(d.stop ? { stop: d.stop } : {}),
      problems: [],
      call: { evaluator: 'rule', candidates: input.candidates.length, outcome: 'ok', ms: 0 },
    };
  }
}

export const QUESTION = 'What was the capital expenditure (purchases of property, plant and equipment) in 2023?';

export interface Setup {
  doc: ParsedDocument;
  view: DocumentView;
  relevance: RelevanceModel;
  options: ControllerOptions;
}

export async function setup(options: Partial<ControllerOptions> = {}, doc?: ParsedDocument, question = QUESTION): Promise<Setup> {
  const d = doc ?? (await buildFixtureDoc());
  const view = await DocumentView.of(d);
  const relevance = await RelevanceModel.create(question, view, hashDeps());
  return { doc: d, view, relevance, options: resolveControllerOptions(options) };
}

export async function runScripted(s: Setup, evaluator: ControllerEvaluator, question = QUESTION, signal?: AbortSignal): Promise<ControllerRun> {
  return runController(question, s.view, s.relevance, groundPages(s.view, s.relevance), s.options, { embedQuery: hashDeps().embedQuery, evaluator }, signal);
}
