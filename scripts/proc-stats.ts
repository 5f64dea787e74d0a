/**
 * What Linux's /proc tells the benchmarks about a process: its CPU time, resident set and peak, and
 * the engine JVM a process started. On a shared, loaded machine wall time mostly measures the queue
 * for a core; CPU time is what the work costs. Elsewhere (no /proc) every figure is null or 0.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

type Pid = number | string;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: Pid): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) `pid` has used so far; 0 when /proc cannot tell. */
export function cpuMs(pid: Pid | null | undefined): number {
  if (pid === null || pid === undefined) return 0;
  const fields = statFields(pid);
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ 100).
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : 0;
}

/** A child of `parent` whose command line contains `needle` (e.g. the engine JVM: 'embedded-mongo'), or null. */
export function childPid(parent: number, needle: string): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of entries) {
    if (Number(statFields(pid)?.[1]) !== parent) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

function statusKb(pid: Pid | null | undefined, field: 'VmRSS' | 'VmHWM'): number | null {
  if (pid === null || pid === undefined) return null;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Resident set of `pid` in MiB (not rounded), or null. */
export const rssMb = (pid: Pid | null | undefined): number | null => {
  const kb = statusKb(pid, 'VmRSS');
  return kb === null ? null : kb / 1024;
};

/** Peak resident set (VmHWM) of `pid` in MiB, rounded, or null. */
export const peakRssMb = (pid: Pid | null | undefined): number | null => {
  const kb = statusKb(pid, 'VmHWM');
  return kb === null ? null : Math.round(kb / 1024);
};

/** Resets the peak resident set of `pid` to its current one; false when the kernel does not let us. */
export function resetPeakRss(pid: Pid): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
