import { describe, expect, it } from 'vitest';
import {
  ProcessSampler,
  cpuSecondsFromStat,
  machineBusySecondsFromStat,
  peakRssBytesFromStatus,
  readCpuSeconds,
  readMachineBusySeconds,
  readPeakRssBytes,
  readRssBytes,
  resetPeakRss,
  rssBytesFromStatus,
} from './proc-stats.js';

describe('/proc readings', () => {
  it('counts stat fields from the last parenthesis, whatever the command name holds', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const stat = '4242 (node (fleetsim) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 11 0 123';
    expect(cpuSecondsFromStat(stat, 100)).toBe(3);
  });

  it('reads the CPU time of ended children (cutime, cstime) apart from the process’s own', () => {
    const stat = '4242 (node) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 70 30 20 0 11 0 123';
    expect(cpuSecondsFromStat(stat, 100)).toBe(3);
    expect(cpuSecondsFromStat(stat, 100, true)).toBe(1);
  });

  it('reads VmRSS in bytes', () => {
    expect(rssBytesFromStatus('Name:\tnode\nVmPeak:\t 9 kB\nVmRSS:\t   2048 kB\n')).toBe(2048 * 1024);
    expect(() => rssBytesFromStatus('Name:\tnode\n')).toThrow(/VmRSS/);
  });

  it('reads the peak, and starts it over from the present size', () => {
    expect(peakRssBytesFromStatus('Name:\tnode\nVmHWM:\t   4096 kB\nVmRSS:\t   2048 kB\n')).toBe(4096 * 1024);
    expect(() => peakRssBytesFromStatus('Name:\tnode\n')).toThrow(/VmHWM/);
    // A peak well above the present size, then a reset brings it back down to about the present size.
    let block: Buffer | undefined = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(block[0]).toBe(1);
    block = undefined;
    if (!resetPeakRss(process.pid)) return;
    expect(readPeakRssBytes(process.pid)).toBeLessThanOrEqual(readRssBytes(process.pid) + 8 * 1024 * 1024);
  });

  it('counts the machine busy in every state but idle and iowait', () => {
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const stat = 'cpu  100 10 50 9000 40 5 5 30 0 0\ncpu0 50 5 25 4500 20 2 3 15 0 0\n';
    expect(machineBusySecondsFromStat(stat, 100)).toBe(2);
    expect(readMachineBusySeconds()).toBeGreaterThan(0);
  });

  it('reads a live process (this one)', () => {
    expect(readCpuSeconds(process.pid)).toBeGreaterThan(0);
    expect(readRssBytes(process.pid)).toBeGreaterThan(1024 * 1024);
  });

  it('samples memory and CPU used between start and stop', () => {
    const sampler = new ProcessSampler(process.pid, 10);
    sampler.start();
    let x = 0;
    const until = Date.now() + 50;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const { cpuSeconds, memory } = sampler.stop();
    expect(x).toBeGreaterThan(0);
    expect(cpuSeconds).toBeGreaterThanOrEqual(0);
    expect(memory.length).toBeGreaterThanOrEqual(2);
    expect(memory[0]![1]).toBeGreaterThan(0);
  });
});
