/** Types of test/helpers/test-bundle.mjs (plain JavaScript: the loader's hooks thread imports it). */
export interface TestBundleBuild {
  built: boolean;
  entries: number;
  inputs?: number;
  /** A source changed while it was bundled: no manifest names the build. */
  changed?: string;
}
export function buildTestBundle(): TestBundleBuild;
export function bundledTest(fileUrl: string): string | null;
