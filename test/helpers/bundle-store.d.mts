/** Types of test/helpers/bundle-store.mjs (plain JavaScript: the loader's hooks thread imports it). */
export interface BundleManifest {
  key: string;
  /** The build's directory, in the store. */
  out: string;
  /** Input file (relative to the checkout) -> [mtimeMs, size] when it was built. */
  inputs: Record<string, [number, number]>;
}
export interface BundleStore {
  fresh(): BundleManifest | null;
  build(): BundleManifest | { changed: string };
  output(manifest: BundleManifest, entry: string): string;
}
export function bundleStore(name: string, entries: readonly string[]): BundleStore;
