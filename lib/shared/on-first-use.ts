/**
 * A module (or anything costly) loaded when first asked for, then kept: `const pdf = onFirstUse(() => import('pdfkit'))`,
 * `(await pdf()).default`. Every process that builds the app imports it (each test file, each spawned service), and
 * most never print a PDF, write a zip or trace: loading such libraries up front cost them ~1 CPU-s each (issue 39).
 * A failed load is forgotten, so the next caller tries again instead of inheriting the failure for ever.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}
