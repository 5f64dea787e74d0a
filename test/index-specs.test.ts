/** The index mechanism of lib/db: areas' specs joined in order, a collection declared by two areas refused. */
import t from 'tap';
import { joinIndexSpecs } from '../lib/db/indexes.ts';

const a = { one: [{ key: { tenant: 1 }, name: 'tenant' }], two: [] };
const b = { three: [{ key: { tenant: 1, at: -1 }, name: 'tenant_at' }] };

t.test('specs are joined in argument order, each collection with its own indexes', async (t) => {
  const joined = joinIndexSpecs(b, a);
  t.same(Object.keys(joined), ['three', 'one', 'two']);
  t.same(joined.one, [{ key: { tenant: 1 }, name: 'tenant' }]);
  t.same(joined.three, [{ key: { tenant: 1, at: -1 }, name: 'tenant_at' }]);
});

t.test('a collection declared twice is refused, not silently replaced', async (t) => {
  t.throws(() => joinIndexSpecs(a, { one: [{ key: { other: 1 }, name: 'other' }] }), { message: 'the indexes of one are declared twice' });
});
