/**
 * A ten-page annual report written with the test PDF writer, long enough for the MAGE
 * controller (the default threshold is 8 pages). Every page has a heading and two short
 * paragraphs on its own subject; the capital-expenditure figure sits on page 7 (index 6), its
 * commitments for next year on page 8 (index 7). Tests that need a long PDF fixture generate it
 * here, so no benchmark document is ever copied into the repository.
 */
import { type TextRun, writePdf } from '../unit/ingest/pdfWriter';

export const longReportQuestion = 'How much was the capital expenditure on property, plant and equipment in 2023?';
/** 0-based page of the capital-expenditure evidence. */
export const longReportEvidencePage = 6;

const pages: Array<{ heading: string; lines: string[] }> = [
  { heading: 'Northwind Annual Report 2023', lines: ['This report covers the fiscal year that ended on 31 December 2023.', 'The board approved it in March 2024 after the audit.'] },
  { heading: 'Letter from the Chair', lines: ['Our teams served more customers than in any year before.', 'We thank the staff for a demanding and successful year.'] },
  { heading: 'Revenue', lines: ['Revenue grew to 120 million euros in 2023.', 'Growth came mainly from the services segment in Europe.'] },
  { heading: 'Operating Costs', lines: ['Operating costs rose to 88 million euros with higher wages.', 'Energy prices fell in the second half of the year.'] },
  { heading: 'Employees', lines: ['The company employed 1,240 people at the end of 2023.', 'Staff turnover fell to nine percent after the new training plan.'] },
  { heading: 'Sustainability', lines: ['Emissions per unit of output fell by twelve percent.', 'All warehouses now run on renewable electricity.'] },
  {
    heading: 'Consolidated Statement of Cash Flows',
    lines: [
      'Capital expenditure on property, plant and equipment was 1,577 million in 2023.',
      'Purchases of property, plant and equipment were 1,373 million in 2022.',
      'Cash from investing activities also includes the sale of two businesses.',
    ],
  },
  { heading: 'Commitments', lines: ['Capital expenditure commitments for 2024 amount to 1,700 million.', 'Most commitments concern the new distribution centre.'] },
  { heading: 'Risk Factors', lines: ['Interest rates may raise the cost of new borrowing.', 'Supply chains remain exposed to disruption at ports.'] },
  { heading: 'Outlook', lines: ['We expect revenue to grow by five percent in 2024.', 'The dividend policy remains unchanged.'] },
];

/** The report's bytes (a valid PDF, standard fonts only). */
export function longReportPdf(): Uint8Array {
  return writePdf(
    pages.map(({ heading, lines }) => {
      const runs: TextRun[] = [{ x: 72, y: 720, size: 16, text: heading, bold: true }];
      lines.forEach((text, i) => runs.push({ x: 72, y: 690 - 18 * i, size: 11, text }));
      return runs;
    }),
  );
}

export const longReportPageCount = pages.length;
