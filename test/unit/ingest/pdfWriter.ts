/**
 * A tiny PDF writer for tests: pages of positioned text runs in Helvetica / Helvetica-Bold (the
 * standard 14 fonts, so no font program is embedded and pdfjs uses its built-in metrics). Lets
 * a test lay out two columns, a table or a heading at known coordinates.
 */

export interface TextRun {
  x: number;
  y: number;
  size: number;
  text: string;
  bold?: boolean;
}

function escapePdfString(s: string): string {
  return s.replace(/[()\\]/g, (m) => `\\${m}`);
}

/** Builds a valid PDF (Latin-1 text) with one content stream per page; `info.title` sets the metadata Title. */
export function writePdf(pages: TextRun[][], pageSize: [number, number] = [612, 792], info: { title?: string } = {}): Uint8Array {
  const objects: string[] = [];
  const add = (body: string): number => {
    objects.push(body);
    return objects.length;
  };
  const catalog = add('');
  const pagesId = add('');
  const regular = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const bold = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>');
  const kids: number[] = [];
  for (const runs of pages) {
    const content = runs.map((r) => `BT /${r.bold ? 'F2' : 'F1'} ${r.size} Tf ${r.x} ${r.y} Td (${escapePdfString(r.text)}) Tj ET`).join('\n');
    const stream = add(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 ${pageSize[0]} ${pageSize[1]}] /Resources << /Font << /F1 ${regular} 0 R /F2 ${bold} 0 R >> >> /Contents ${stream} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R >>`;
  const infoId = info.title !== undefined ? add(`<< /Title (${escapePdfString(info.title)}) >>`) : undefined;
  objects[pagesId - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${infoId ? ` /Info ${infoId} 0 R` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}
