/** Processes as Linux shows them in /proc: a service's embedded engine, whether a pid still runs. */
import { readdirSync, readFileSync } from 'node:fs';

/** Parent pid and process group of `pid`, or null when it is gone. */
function stat(pid: number): { ppid: number; pgid: number; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** Whether `pid` runs (a zombie waiting for its parent counts as gone). */
export function isRunning(pid: number): boolean {
  const s = stat(pid);
  return s !== null && s.state !== 'Z';
}

/** Process group of `pid`, or null when it is gone. */
export const processGroup = (pid: number): number | null => stat(pid)?.pgid ?? null;

/** The embedded engine's JVM among the descendants of `root` (its command line names embedded-mongo), or null. */
export const enginePidUnder = (root: number): number | null => descendantRunning(root, 'embedded-mongo');

/** A running descendant of `root` whose command line includes `needle`, or null. */
export function descendantRunning(root: number, needle: string): number | null {
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const parents = new Map(pids.map((p) => [p, stat(p)?.ppid ?? -1]));
  const descends = (p: number): boolean => {
    for (let cur = parents.get(p), hops = 0; cur !== undefined && cur > 1 && hops < 10; cur = parents.get(cur), hops++) if (cur === root) return true;
    return false;
  };
  for (const pid of pids) {
    if (!descends(pid) || !isRunning(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return pid;
    } catch {
      /* gone meanwhile */
    }
  }
  return null;
}
