import t from 'tap';
import { FOREIGN_RFC, PUBLIC_RFC, isValidRfc, normalizeRfc, taxpayerKind } from '../../lib/tax/rfc.ts';

t.test('RFC shape', async (t) => {
  t.ok(isValidRfc('TRA010101AB1'), 'company: 3 letters + YYMMDD + homoclave');
  t.ok(isValidRfc('PEGJ800101AB3'), 'person: 4 letters');
  t.ok(isValidRfc('ÑA&010101AB1'), 'Ñ and & allowed in the name part');
  t.ok(isValidRfc(' tra010101ab1 '), 'normalised: trimmed, upper-cased');
  t.ok(isValidRfc(PUBLIC_RFC));
  t.notOk(isValidRfc('TRA011301AB1'), 'month 13');
  t.notOk(isValidRfc('TRA010132AB1'), 'day 32');
  t.notOk(isValidRfc('TR0101011AB1'), 'only 2 letters');
  t.notOk(isValidRfc('TRA010101AB'), 'short homoclave');
  t.notOk(isValidRfc('TRA010101ABZ'), 'check digit must be 0-9 or A');
  t.notOk(isValidRfc(''));
  t.equal(normalizeRfc(' abc010101ab1'), 'ABC010101AB1');
});

t.test('taxpayer kind', async (t) => {
  t.equal(taxpayerKind('TRA010101AB1'), 'company');
  t.equal(taxpayerKind('PEGJ800101AB3'), 'person');
  t.equal(taxpayerKind(PUBLIC_RFC), 'public');
  t.equal(taxpayerKind(FOREIGN_RFC), 'public', 'foreign generic treated as public');
  t.equal(taxpayerKind('xaxx010101000'), 'public');
  t.equal(taxpayerKind('XYZ'), 'unknown');
});
