/** The two cells of a quotient field (`{ value, reason }`: value null with a reason when the denominator is 0). */
import type { ExportColumn } from '../export-dataset.ts';
import { col } from './tabulate.ts';

export const quotient = (path: string, what: string): ExportColumn[] => [
  col(`${path}.value`, what),
  col(`${path}.reason`, `Why ${path} is empty (denominator 0)`),
];
