/**
 * A fault-injecting TCP proxy between the MongoDB driver and the embedded
 * engine, speaking just enough of the wire protocol (OP_MSG framing) to see
 * every command and, when asked, answer one itself:
 *
 *   mode 'pass'       forward everything (commands are recorded)
 *   mode 'delay'      forward, with `delayMs` added before each reply
 *   mode 'blackhole'  accept and read, never answer (a database that hangs)
 *   mode 'refuse'     drop every connection, refuse new ones (a database that is gone)
 *   intercept(cmd)    return a reply document to answer a command without the engine,
 *                     e.g. {ok: 0, code: 50, codeName: 'MaxTimeMSExpired'}
 */
import net from 'node:net';
import { BSON } from 'mongodb';

export type ProxyMode = 'pass' | 'delay' | 'blackhole' | 'refuse';

export interface RecordedCommand {
  name: string;
  collection: unknown;
  doc: Record<string, unknown>;
}

export interface MongoProxy {
  uri: string;
  port: number;
  mode: ProxyMode;
  delayMs: number;
  commands: RecordedCommand[];
  intercept: ((cmd: RecordedCommand) => Record<string, unknown> | null) | null;
  /** Destroys every open connection (both sides). */
  dropConnections(): void;
  close(): Promise<void>;
}

const OP_MSG = 2013;

export async function startMongoProxy(target: { host?: string; port: number }): Promise<MongoProxy> {
  const sockets = new Set<net.Socket>();
  let nextRequestId = 1_000_000;
  const proxy: MongoProxy = {
    uri: '',
    port: 0,
    mode: 'pass',
    delayMs: 0,
    commands: [],
    intercept: null,
    dropConnections: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = net.createServer((client) => {
    if (proxy.mode === 'refuse') {
      client.destroy();
      return;
    }
    sockets.add(client);
    const upstream = net.connect(target.port, target.host ?? '127.0.0.1');
    sockets.add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);

    upstream.on('data', (chunk) => {
      if (proxy.mode === 'blackhole') return;
      if (proxy.mode === 'delay' && proxy.delayMs > 0) setTimeout(() => client.writable && client.write(chunk), proxy.delayMs);
      else client.write(chunk);
    });

    let buffered = Buffer.alloc(0);
    client.on('data', (chunk) => {
      if (proxy.mode === 'refuse') return closeBoth();
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4) {
        const length = buffered.readInt32LE(0);
        if (buffered.length < length) break;
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        if (proxy.mode === 'blackhole') continue;
        const answer = inspect(message);
        if (answer) client.write(answer);
        else upstream.write(message);
      }
    });
  });

  /** Records an OP_MSG command; returns a synthesized reply when intercepted. */
  function inspect(message: Buffer): Buffer | null {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode !== OP_MSG) return null;
    const kind = message.readUInt8(20);
    if (kind !== 0) return null;
    const docLength = message.readInt32LE(21);
    let doc: Record<string, unknown>;
    try {
      doc = BSON.deserialize(message.subarray(21, 21 + docLength));
    } catch {
      return null;
    }
    const name = Object.keys(doc)[0] ?? '';
    const cmd: RecordedCommand = { name, collection: doc[name], doc };
    proxy.commands.push(cmd);
    if (proxy.commands.length > 10_000) proxy.commands.splice(0, 5_000);
    const reply = proxy.intercept?.(cmd);
    if (!reply) return null;
    const body = BSON.serialize(reply);
    const out = Buffer.alloc(16 + 4 + 1 + body.length);
    out.writeInt32LE(out.length, 0);
    out.writeInt32LE(nextRequestId++, 4);
    out.writeInt32LE(requestId, 8);
    out.writeInt32LE(OP_MSG, 12);
    out.writeUInt32LE(0, 16);
    out.writeUInt8(0, 20);
    out.set(body, 21);
    return out;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.uri = `mongodb://127.0.0.1:${proxy.port}/?directConnection=true`;
  return proxy;
}
