/**
 * Query routing without an LLM (design §5): is the question an aggregate over a table (keep
 * tables whole) or a lookup (prune rows)? And which modalities may answer it? A wrong
 * "aggregate" only costs tokens while a wrong "lookup" can drop the answer row, so the rule
 * leans towards aggregate when in doubt.
 */
import type { Modality } from '../../contracts/region';
import type { TraceRouting } from '../../contracts/trace';

const aggregateCues: Array<[RegExp, string]> = [
  [/\b(sum|total|totals|altogether|combined|overall)\b/i, 'asks for a total'],
  [/\bhow many\b|\bcount\b|\bnumber of\b/i, 'asks for a count'],
  [/\b(average|mean|median)\b/i, 'asks for an average'],
  [/\b(max(imum)?|min(imum)?|highest|lowest|largest|smallest|most|least|top|bottom|rank(ed|ing)?)\b/i, 'asks for an extreme or ranking'],
  [/\b(list|all|every|each)\b/i, 'asks for a list'],
  [/\b(compare|comparison|difference|change|increase|decrease|trend|growth|ratio|percentage of)\b/i, 'compares values'],
];

const modalityCues: Array<[RegExp, Modality]> = [
  [/\b(table|row|column|spreadsheet|csv)\b/i, 'table'],
  [/\b(figure|image|picture|photo|diagram|chart)\b/i, 'image'],
  [/\b(video|recording|transcript|interview|said|says|minute|second)\b/i, 'transcript'],
];

const allModalities: Modality[] = ['text', 'table', 'image', 'transcript', 'code'];

export function routeQuestion(question: string): TraceRouting {
  const agg = aggregateCues.find(([re]) => re.test(question));
  const named = modalityCues.filter(([re]) => re.test(question)).map(([, m]) => m);
  // Named modalities widen attention but never exclude text: prose often carries the answer too.
  // Routing narrows only when the question names modalities explicitly; otherwise all answer.
  const modalities = named.length > 0 ? [...new Set<Modality>(['text', ...named])] : allModalities;
  return {
    modalities,
    aggregate: agg !== undefined,
    source: 'rule',
    reason: [
      agg ? `aggregate: ${agg[1]} (“${question.match(agg[0])![0]}”)` : 'lookup: no aggregate cue',
      named.length > 0 ? `modalities named: ${named.join(', ')}` : 'no modality named: all modalities',
    ].join('; '),
  };
}
