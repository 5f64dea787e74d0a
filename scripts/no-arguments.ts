/**
 * `npm start` and `npm run worker` take their settings from the environment (one schema,
 * lib/config-schema.ts; docs/configuration.md): `--help` prints what they do, and any other
 * argument is refused, never ignored (`npm start -- --port 4000` would otherwise listen on 3000).
 */
export function refuseArguments(command: string, usage: string): void {
  const args = process.argv.slice(2);
  if (args.length === 0) return;
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  process.stderr.write(
    `${command} takes no arguments (got ${args.map((a) => JSON.stringify(a)).join(' ')}): its settings are environment variables, e.g. PORT=4000 ${command} (docs/configuration.md)\n\n${usage}\n`,
  );
  process.exit(2);
}
