/**
 * Compile-time check that a hand-written answer shape fits the spec's schema
 * (`components['schemas'][…]` from generated/api.d.ts): `Conforms<Shape, Schema>` is
 * `Shape` itself and fails type-checking when `Shape` is not assignable to `Schema`.
 * Domain types keep their own, narrower form; a spec change the code does not follow
 * then fails `npm run typecheck` where the shape is written, not only in a handler.
 */
export type Conforms<Shape extends Schema, Schema> = Shape;
