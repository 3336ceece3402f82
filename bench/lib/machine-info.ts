/**
 * Machine description printed at the top of every benchmark, so figures are never read without
 * the hardware and runtime they were measured on.
 */
import os from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  date: string;
  loadAverage: number[];
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Prints the machine block; `title` names the benchmark. */
export function printMachineInfo(title: string): MachineInfo {
  const m = machineInfo();
  console.log(`# ${title}`);
  console.log(`date      ${m.date}`);
  console.log(`cpu       ${m.cpu} × ${m.cores} cores`);
  console.log(`memory    ${m.memoryGiB} GiB`);
  console.log(`node      ${m.node} on ${m.platform}`);
  console.log(`load avg  ${m.loadAverage.join(' ')} (other work on the machine skews figures)`);
  console.log('');
  return m;
}
