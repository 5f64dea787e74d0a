import type { TripDocument } from '../model/trip-document.ts';

/**
 * A stored trip as version 2 answers it (`detail=full`): its key named `id`, as in the summary
 * form, instead of the store's `_id`. A union of the two forms that named it both ways gave
 * generated clients two members of one name (openapi-generator java's `idTest()` twice in
 * ShipmentResponseTest, which does not compile), and one schema cannot declare both (Go's `Id`
 * twice); the deprecated version 1 list keeps `_id` as the earlier shape had it (issue 39).
 */
export type TripDocumentView = Omit<TripDocument, '_id'> & { id: string };

export function tripView(trip: TripDocument): TripDocumentView {
  const { _id: id, ...rest } = trip;
  return { id, ...rest };
}
