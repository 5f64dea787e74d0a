import type { FinancialDocument } from '../model/financial-document.ts';

/**
 * A stored document as version 2 answers it (`detail=full`): every field but the store's `_id`,
 * which equals `id`. Declaring both would give generated clients two fields of one name (Go's
 * `Id` twice does not compile); strict decoders reject an undeclared one (issue 39).
 */
export type FinancialDocumentView = Omit<FinancialDocument, '_id'>;

export function documentView(doc: FinancialDocument): FinancialDocumentView {
  const { _id: _storeId, ...view } = doc;
  return view;
}
