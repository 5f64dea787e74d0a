/**
 * Which driver errors mean "the database is not there right now" (503 database_unavailable) and
 * which are the request's or the data's (lib/db/unavailable.ts). Codes from MongoDB's
 * src/mongo/base/error_codes.yml.
 */
import t from 'tap';
import { isDatabaseUnavailable, isOverTime } from '../../lib/db/unavailable.ts';

const serverError = (code: number, message: string) => Object.assign(new Error(message), { name: 'MongoServerError', code });

t.test('a restarted server: network errors, shutdown codes, a cursor it no longer has', async (t) => {
  t.ok(isDatabaseUnavailable(Object.assign(new Error('connection 5 to 127.0.0.1:40187 closed'), { name: 'MongoNetworkError' })));
  t.ok(isDatabaseUnavailable(serverError(91, 'The server is in quiesce mode and will shut down')), 'ShutdownInProgress');
  t.ok(isDatabaseUnavailable(serverError(43, 'cursor id 7340032 not found')), 'CursorNotFound: the engine restarted under a read');
  t.ok(isDatabaseUnavailable(Object.assign(new Error('read failed'), { cause: serverError(43, 'cursor id 1 not found') })), 'wrapped');
});

t.test("the request's or the data's errors are not an outage", async (t) => {
  t.notOk(isDatabaseUnavailable(serverError(11000, 'E11000 duplicate key error')), 'DuplicateKey');
  t.notOk(isDatabaseUnavailable(serverError(2, 'unknown operator: $foo')), 'BadValue');
  t.notOk(isDatabaseUnavailable(serverError(50, 'operation exceeded time limit')), 'MaxTimeMSExpired is not an outage');
  t.ok(isOverTime(serverError(50, 'operation exceeded time limit')), 'but over time');
  t.notOk(isDatabaseUnavailable(new TypeError('x is undefined')));
});
