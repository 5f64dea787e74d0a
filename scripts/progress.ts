/** A progress bar on stderr for a TTY, a line every 10% otherwise (CI logs). */
export function progressReporter(label: string): (done: number, total: number) => void {
  let lastDecile = -1;
  return (done, total) => {
    const ratio = total === 0 ? 1 : Math.min(1, done / total);
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(ratio * width);
      process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(ratio * 100)}% ${done}/${total}`);
      if (done >= total) process.stderr.write('\n');
    } else {
      const decile = Math.floor(ratio * 10);
      if (decile !== lastDecile) {
        lastDecile = decile;
        process.stderr.write(`${label}: ${Math.round(ratio * 100)}% (${done}/${total})\n`);
      }
    }
  };
}
