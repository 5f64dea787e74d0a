/**
 * Every document of a cursor as an array, without the driver's `toArray()` stack limit: it
 * appends each batch with `push(...batch)`, and a batch of small documents can hold hundreds of
 * thousands (real MongoDB fills a getMore up to 16 MiB; the embedded engine returns the rest in
 * one), past the number of arguments a call may take (RangeError: Maximum call stack size
 * exceeded). Here a batch is appended one document at a time.
 */
import type { AbstractCursor } from 'mongodb';

export async function readAll<T>(cursor: AbstractCursor<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const first of cursor) {
    out.push(first);
    for (const doc of cursor.readBufferedDocuments()) out.push(doc);
  }
  return out;
}
