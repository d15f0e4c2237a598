/** Record files for the records-as-records tests (issue 33, finding 2). */

/** 361 inventory records without a space in them: the JSONL (~30k tokens as one blob). */
export function inventoryLines(n = 361): string[] {
  return Array.from(
    { length: n },
    (_, i) =>
      `{"sku":"FX-${String(i).padStart(5, '0')}","warehouse":"north-${i % 7}","bin":"R${i % 13}-S${i % 5}","qty":${(i * 37) % 500},"unit_cost":${((i * 13) % 900) / 10},"supplier":"acme-rotor-works-${i % 11}","tags":["spare","rotor","class-${i % 3}"],"last_audit":"2024-0${1 + (i % 9)}-1${i % 10}"}`,
  );
}
