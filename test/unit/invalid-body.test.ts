import t from 'tap';
import { invalidBody } from '../../lib/http/api-error.ts';

t.test('domain body problems: one detail per field, fields parallel to details', async (t) => {
  const err = invalidBody([
    'url: a host is required',
    'userIds must be distinct; repeated: a',
    'url: localhost is a loopback name',
    'extraData.x must be short',
  ]);
  t.equal(err.statusCode, 400);
  t.equal(err.reason, 'invalid_body');
  t.same(
    err.fields?.map((f) => f.name),
    ['url', 'userIds', 'extraData.x'],
  );
  t.equal(err.details[0], 'url: a host is required; url: localhost is a loopback name', 'problems of one field joined, in order');
  t.same(
    err.fields?.map((f) => f.detail),
    err.details,
  );
});

t.test('a field with many problems: the first three and a count', async (t) => {
  const err = invalidBody(Array.from({ length: 1000 }, (_, i) => `userIds entries must be short (got "u${i}")`));
  t.equal(err.details.length, 1);
  t.match(err.details[0], /^userIds entries must be short \(got "u0"\); .*"u2"\); and 997 more$/);
});
