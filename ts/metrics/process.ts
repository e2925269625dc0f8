/**
 * The `process_*` families every Prometheus client exports (CPU time, memory, file
 * descriptors, threads, start time), read from Node and, on Linux, `/proc/self`. A value the
 * platform cannot give is left out rather than invented.
 */
import fs from 'node:fs';
import type { Exposition } from './exposition';

const startTimeSeconds = Math.floor(Date.now() / 1000 - process.uptime());

async function readOr(path: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(path, 'utf8');
  } catch {
    return null;
  }
}

export async function processMetrics(out: Exposition): Promise<void> {
  const cpu = process.cpuUsage();
  out
    .family('process_cpu_seconds_total', 'counter', 'User and system CPU time of the process, in seconds')
    .sample('process_cpu_seconds_total', [], (cpu.user + cpu.system) / 1e6);
  out
    .family('process_resident_memory_bytes', 'gauge', 'Resident memory of the process, in bytes')
    .sample('process_resident_memory_bytes', [], process.memoryUsage.rss());
  out
    .family('process_start_time_seconds', 'gauge', 'When the process started, in seconds since the Unix epoch')
    .sample('process_start_time_seconds', [], startTimeSeconds);

  const [status, limits, fds] = await Promise.all([
    readOr('/proc/self/status'),
    readOr('/proc/self/limits'),
    fs.promises.readdir('/proc/self/fd').catch(() => null),
  ]);
  const threads = status && /^Threads:\s+(\d+)/m.exec(status);
  if (threads)
    out.family('process_threads', 'gauge', 'Threads of the process').sample('process_threads', [], Number(threads[1]));
  const vm = status && /^VmSize:\s+(\d+) kB/m.exec(status);
  if (vm)
    out
      .family('process_virtual_memory_bytes', 'gauge', 'Virtual memory of the process, in bytes')
      .sample('process_virtual_memory_bytes', [], Number(vm[1]) * 1024);
  const maxFds = limits && /^Max open files\s+(\d+)/m.exec(limits);
  if (maxFds)
    out
      .family('process_max_fds', 'gauge', 'Most file descriptors the process may open')
      .sample('process_max_fds', [], Number(maxFds[1]));
  if (fds)
    out
      .family('process_open_fds', 'gauge', 'File descriptors the process has open')
      .sample('process_open_fds', [], fds.length);
}
