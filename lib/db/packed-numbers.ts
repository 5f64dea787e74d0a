/**
 * Numbers stored as packed little-endian binary (BSON binary subtype 0): a kept form's rows are
 * then one buffer for the engine and the driver to decode, not thousands of BSON array elements.
 * NaN stands for null where a row allows it.
 */
import { Binary } from 'mongodb';

/** Typed arrays use the platform's byte order: every platform Node runs the service on is little-endian (else element by element). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Doubles (null as NaN). */
export function packDoubles(values: ArrayLike<number | null>): Binary {
  const view = new DataView(new ArrayBuffer(values.length * 8));
  for (let i = 0; i < values.length; i += 1) view.setFloat64(i * 8, values[i] ?? NaN, true);
  return new Binary(new Uint8Array(view.buffer));
}

/** The doubles of a packed binary, copied into an aligned buffer of their own. */
export function unpackDoubles(b: Binary): Float64Array {
  const bytes = b.buffer.subarray(0, b.position);
  if (bytes.byteLength % 8) throw new Error(`a packed array of ${bytes.byteLength} bytes is not made of doubles`);
  // new Uint8Array(x) copies (a Buffer's slice() would share the pool's memory).
  if (LITTLE_ENDIAN) return new Float64Array(new Uint8Array(bytes).buffer);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(bytes.byteLength / 8);
  for (let i = 0; i < out.length; i += 1) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/** 32-bit integers. */
export function packInts(values: ArrayLike<number>): Binary {
  const view = new DataView(new ArrayBuffer(values.length * 4));
  for (let i = 0; i < values.length; i += 1) view.setInt32(i * 4, values[i] as number, true);
  return new Binary(new Uint8Array(view.buffer));
}

export function unpackInts(b: Binary): number[] {
  const bytes = b.buffer.subarray(0, b.position);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i + 4 <= bytes.byteLength; i += 4) out.push(view.getInt32(i, true));
  return out;
}
