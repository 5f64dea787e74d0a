/**
 * Every dataset an export can hold (docs/exports.md): the lists (list-datasets.ts), the reports
 * (report-datasets.ts) and the originals of a period (originals-zip.ts, the one zip).
 */
import type { ExportDataset } from './export-dataset.ts';
import { LIST_DATASETS } from './list-datasets.ts';
import { REPORT_DATASETS } from './report-datasets.ts';
import { ORIGINALS_DATASET } from './originals-zip.ts';

export const TABLE_DATASETS: readonly ExportDataset[] = [...LIST_DATASETS, ...REPORT_DATASETS];

export const datasetNamed = (name: string): ExportDataset | undefined => TABLE_DATASETS.find((d) => d.name === name);

/** Every dataset's name, the zip's last. */
export const DATASET_NAMES: readonly string[] = [...TABLE_DATASETS.map((d) => d.name), ORIGINALS_DATASET];
