/** The embedded engine's launcher settings (scripts/embedded-mongo/settings.ts): defaults and validation. */
import t from 'tap';
import { ConfigError } from '../../lib/config.ts';
import { engineSupervisionSettings } from '../../scripts/embedded-mongo/settings.ts';

t.test('EMBEDDED_MONGO_PORT: 0 (a port the system picks) unless set, a port number validated', async (t) => {
  t.equal(engineSupervisionSettings({}).port, 0);
  t.equal(engineSupervisionSettings({ EMBEDDED_MONGO_PORT: '' }).port, 0, 'empty: unset');
  t.equal(engineSupervisionSettings({ EMBEDDED_MONGO_PORT: '27018' }).port, 27018);
  for (const raw of ['65536', '-1', 'abc', '270.18'])
    t.throws(
      () => engineSupervisionSettings({ EMBEDDED_MONGO_PORT: raw }),
      { constructor: ConfigError, message: `EMBEDDED_MONGO_PORT must be an integer between 0 and 65535 (got "${raw}")` },
      raw,
    );
});
