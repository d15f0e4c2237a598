/**
 * Bytes → the text every anchor of a text-format file indexes into. Handles byte-order marks
 * (UTF-8, UTF-16 LE/BE; the BOM is dropped, as VS Code drops it, so offsets match an open
 * editor), refuses binary content that wears a text extension, and repairs or refuses invalid
 * UTF-8. Line endings are left alone: CRLF stays two characters, exactly as in the file.
 */

import { CanopyError, ErrorCodes } from '../errors';
import type { ParseWarning } from './parsedDocument';

export interface DecodedText {
  text: string;
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
  warnings: ParseWarning[];
}

/** Control characters other than tab, LF, VT, FF, CR and ESC (ESC: ANSI colour in logs). */
function isOddControl(b: number): boolean {
  return (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1b) || b === 0x7f;
}

/**
 * Decides whether bytes are binary: any NUL byte, or more than 10% odd control characters, in
 * the first 64 KiB. UTF-16 text (which is full of NULs) must be recognised by its BOM first.
 */
export function looksBinary(bytes: Uint8Array): string | undefined {
  const n = Math.min(bytes.length, 65536);
  let odd = 0;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === 0) return `NUL byte at offset ${i}`;
    if (isOddControl(b)) odd++;
  }
  if (n > 0 && odd / n > 0.1) return `${Math.round((odd / n) * 100)}% control characters`;
  return undefined;
}

/** Counts well-formed multi-byte UTF-8 sequences and invalid bytes (a cheap scan, no decoding). */
function scanUtf8(bytes: Uint8Array): { multibyte: number; invalid: number; firstInvalid: number } {
  let multibyte = 0;
  let invalid = 0;
  let firstInvalid = -1;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need = 0;
    let min = 0;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    }
    let ok = need > 0;
    let cp = need === 1 ? b & 0x1f : need === 2 ? b & 0x0f : b & 0x07;
    for (let k = 1; ok && k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (c & 0x3f);
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      multibyte++;
      i += need + 1;
    } else {
      if (firstInvalid < 0) firstInvalid = i;
      invalid++;
      i++;
    }
  }
  return { multibyte, invalid, firstInvalid };
}

/**
 * Decodes a text file's bytes. Invalid UTF-8 is repaired with U+FFFD (the WHATWG decoder's
 * replacement, which is also what VS Code shows) and reported; when the file has no valid multi-byte UTF-8 at all it is far
 * more likely a Windows-1252 export (Excel CSVs), so it is decoded that way, also with a warning.
 * With `invalidUtf8: 'reject'` invalid UTF-8 is an error instead.
 */
export function decodeText(
  file: string,
  bytes: Uint8Array,
  invalidUtf8: 'replace' | 'reject' = 'replace',
): DecodedText {
  const warnings: ParseWarning[] = [];
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le', warnings };
  }
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be', warnings };
  }
  const body = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  const binary = looksBinary(body);
  if (binary !== undefined) {
    throw new CanopyError(ErrorCodes.binaryContent, `${file}: binary content in a text file (${binary}); skipped.`, { file });
  }
  const scan = scanUtf8(body);
  if (scan.invalid === 0) return { text: new TextDecoder('utf-8').decode(body), encoding: 'utf-8', warnings };
  if (invalidUtf8 === 'reject') {
    throw new CanopyError(
      ErrorCodes.invalidEncoding,
      `${file}: not valid UTF-8 (${scan.invalid} invalid byte(s), first at byte ${scan.firstInvalid}); skipped.`,
      { file },
    );
  }
  if (scan.multibyte === 0) {
    warnings.push({
      file,
      code: 'decodedAsWindows1252',
      message: `${file}: not valid UTF-8 (first invalid byte at ${scan.firstInvalid}) and no UTF-8 sequences at all; decoded as Windows-1252.`,
    });
    return { text: new TextDecoder('windows-1252').decode(body), encoding: 'windows-1252', warnings };
  }
  warnings.push({
    file,
    code: 'invalidUtf8',
    message: `${file}: ${scan.invalid} invalid UTF-8 byte(s) (first at byte ${scan.firstInvalid}) replaced with U+FFFD.`,
  });
  return { text: new TextDecoder('utf-8', { fatal: false }).decode(body), encoding: 'utf-8', warnings };
}
