/**
 * Maps an HTML text node's decoded value (what parse5 gives: entities decoded, CRLF → LF) back
 * to its raw source, character by character, by walking both strings side by side: a character
 * reference maps to its whole `&…;` sequence, CRLF to both characters. When the two cannot be
 * aligned (an exotic legacy entity), the rest of the node maps to its remaining raw range as a
 * whole and the caller is told the anchors became coarse.
 */

import { MappedText, MappedTextBuilder } from './textAnchors';

const entityPattern = /^&(#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,7};?|[A-Za-z][A-Za-z0-9]{1,31};?)/;

/** Windows-1252 remapping of numeric references 0x80–0x9F, as the HTML spec requires. */
const c1Remap: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x02c6,
  0x89: 0x2030, 0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201c,
  0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc, 0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a,
  0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};

/** What a numeric character reference decodes to, per the HTML spec's replacements. */
function numericDecoded(ref: string): string {
  const hex = ref[1] === 'x' || ref[1] === 'X';
  let cp = parseInt(ref.slice(hex ? 2 : 1).replace(/;$/, ''), hex ? 16 : 10);
  if (c1Remap[cp] !== undefined) cp = c1Remap[cp]!;
  if (!Number.isFinite(cp) || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(cp);
}

export interface AlignedText {
  mapped: MappedText;
  /** False when part of the text could only be mapped to a coarse range. */
  exact: boolean;
}

export function alignDecoded(raw: string, rawStart: number, decoded: string): AlignedText {
  const b = new MappedTextBuilder();
  let i = 0;
  let j = 0;
  while (j < decoded.length) {
    if (i >= raw.length) break;
    const r = raw[i]!;
    const d = decoded[j]!;
    if (i === 0 && j === 0 && (r === '\n' || r === '\r') && d !== '\n') {
      // The newline right after <pre>/<textarea>/<listing> is dropped by the parser.
      i += r === '\r' && raw[1] === '\n' ? 2 : 1;
      continue;
    }
    if (r === '&') {
      const m = entityPattern.exec(raw.slice(i, i + 40));
      let done = false;
      if (m && decoded.startsWith(m[0], j)) {
        // Not a reference the parser knows (e.g. "&unknown;"): kept literally.
        b.pushVerbatim(m[0], rawStart + i);
        i += m[0].length;
        j += m[0].length;
        continue;
      }
      if (m) {
        const body = m[1]!;
        if (body.startsWith('#')) {
          const expected = numericDecoded(body);
          if (decoded.startsWith(expected, j)) {
            b.pushDecoded(expected, rawStart + i, rawStart + i + m[0].length);
            i += m[0].length;
            j += expected.length;
            done = true;
          }
        } else {
          // Named: the longest prefix that, decoded to 1 or 2 chars, keeps both strings aligned after it.
          for (let len = m[0].length; len >= 2 && !done; len--) {
            for (const k of [1, 2]) {
              if (j + k > decoded.length) continue;
              const rNext = raw[i + len];
              const dNext = decoded[j + k];
              const aligned = (rNext === undefined && dNext === undefined) || (rNext !== undefined && rNext === dNext) || (rNext === '\r' && dNext === '\n') || (rNext === '&' && dNext !== undefined);
              if (aligned) {
                b.pushDecoded(decoded.slice(j, j + k), rawStart + i, rawStart + i + len);
                i += len;
                j += k;
                done = true;
                break;
              }
            }
          }
        }
      }
      if (done) continue;
      if (d === '&') {
        b.pushVerbatim('&', rawStart + i);
        i++;
        j++;
        continue;
      }
    } else if (r === '\r' && d === '\n') {
      const len = raw[i + 1] === '\n' ? 2 : 1;
      b.pushDecoded('\n', rawStart + i, rawStart + i + len);
      i += len;
      j++;
      continue;
    } else if (r === d) {
      b.pushVerbatim(d, rawStart + i);
      i++;
      j++;
      continue;
    }
    break;
  }
  if (j < decoded.length) {
    // Could not align the rest: map it to the remaining raw range as a whole.
    const s = rawStart + Math.min(i, raw.length);
    b.pushDecoded(decoded.slice(j), s, rawStart + raw.length);
    return { mapped: b.build(), exact: false };
  }
  return { mapped: b.build(), exact: true };
}
