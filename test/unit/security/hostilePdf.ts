/**
 * Hostile-but-valid PDFs for the resource-limit tests: a page whose content stream, FlateDecode
 * compressed, holds `runs` text-show operators. The file is small (about 4.5 bytes per run) and
 * well-formed, yet pdf.js needs seconds to minutes to extract its text — the kind of file that
 * would stall indexing without a per-file time limit.
 */
import { deflateSync } from 'node:zlib';

/** One page per entry: the number of text runs on that page. */
export function hostilePdf(pages: number[]): Uint8Array {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (b: Buffer | string) => {
    const x = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(x);
    length += x.length;
  };
  const object = (id: number, body: string, stream?: Buffer) => {
    offsets[id] = length;
    push(`${id} 0 obj\n${body}\n`);
    if (stream) {
      push('stream\n');
      push(stream);
      push('\nendstream\n');
    }
    push('endobj\n');
  };
  push('%PDF-1.4\n');
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`);
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  pages.forEach((runs, i) => {
    const ops: string[] = [];
    if (runs <= 50) {
      // An ordinary page: a few readable sentences.
      for (let r = 0; r < runs; r++) ops.push(`BT /F1 11 Tf 72 ${720 - 14 * r} Td (Page ${i + 1} line ${r + 1} holds ordinary readable text.) Tj ET`);
    } else {
      for (let r = 0; r < runs; r++) ops.push(`BT /F1 1 Tf ${(r * 7) % 600} ${(r * 13) % 780} Td (w${r % 97}) Tj ET`);
    }
    const content = deflateSync(Buffer.from(ops.join('\n'), 'latin1'));
    object(pageIds[i]!, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`);
    object(pageIds[i]! + 1, `<< /Length ${content.length} /Filter /FlateDecode >>`, content);
  });
  const size = 4 + 2 * pages.length;
  const xref = length;
  push(`xref\n0 ${size}\n0000000000 65535 f \n`);
  for (let id = 1; id < size; id++) push(`${String(offsets[id]).padStart(10, '0')} 00000 n \n`);
  push(`trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return new Uint8Array(Buffer.concat(parts));
}
