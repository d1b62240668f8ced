import type { SeededRandom } from '../clock.js';

/**
 * Dynamic host ports, as Agones's port allocator hands them out: one table of the range per
 * node, the fullest table first, a random free port within it, and a new table when every one
 * is full (so it never runs out; the scheduler would be what limits a real cluster).
 */
export class PortAllocator {
  private readonly tables: Uint8Array[] = [];
  private readonly used: number[] = [];
  /** Where each GameServer's ports were taken: key -> [table, port][]. */
  private readonly owners = new Map<string, Array<[number, number]>>();
  /** The fullest table with room, while nothing has been released (then it is looked up again). */
  private filling: number | undefined;

  constructor(
    readonly min: number,
    readonly max: number,
    private readonly rng: SeededRandom,
    initialTables = 1,
    /** False: one table only, so every port is unique in the cluster (for processes that listen on 127.0.0.1). */
    private readonly growable = true,
  ) {
    if (!(min > 0 && max >= min && max <= 65535)) throw new Error(`invalid port range ${min}-${max}`);
    for (let i = 0; i < Math.max(1, initialTables); i++) this.addTable();
  }

  get size(): number {
    return this.max - this.min + 1;
  }

  /** Free ports left in the first table. */
  get free(): number {
    return this.size - this.used[0]!;
  }

  /**
   * Takes `count` ports for a GameServer; the same key keeps what it already has. Undefined when
   * the allocator may not grow and too few ports are free.
   */
  allocate(key: string, count: number): number[] | undefined {
    const existing = this.owners.get(key);
    if (existing) return existing.map(([, port]) => port);
    if (!this.growable && this.free < count) return undefined;
    const taken: Array<[number, number]> = [];
    // The table being filled is the fullest with room until something is released elsewhere.
    const f = this.filling;
    if (f !== undefined && this.used[f]! + count <= this.size) {
      while (taken.length < count) taken.push([f, this.takeFrom(f)]);
      this.owners.set(key, taken);
      return taken.map(([, port]) => port);
    }
    // Fullest tables first, as Agones orders them, so ports pack onto few nodes.
    const order = this.tables.map((_, i) => i).sort((a, b) => this.used[b]! - this.used[a]! || a - b);
    this.filling = order.find((t) => this.used[t]! < this.size);
    for (const t of order) {
      while (taken.length < count && this.used[t]! < this.size) taken.push([t, this.takeFrom(t)]);
      if (taken.length === count) break;
    }
    while (taken.length < count) {
      const t = this.addTable();
      taken.push([t, this.takeFrom(t)]);
    }
    this.owners.set(key, taken);
    return taken.map(([, port]) => port);
  }

  /** Marks a port as taken (a GameServer restored from the log). */
  claim(key: string, ports: number[]): void {
    if (this.owners.has(key)) return;
    this.filling = undefined;
    const taken: Array<[number, number]> = [];
    for (const port of ports) {
      if (port < this.min || port > this.max) continue;
      let t = this.tables.findIndex((table) => table[port - this.min] === 0);
      if (t < 0) t = this.addTable();
      this.tables[t]![port - this.min] = 1;
      this.used[t]!++;
      taken.push([t, port]);
    }
    this.owners.set(key, taken);
  }

  release(key: string): void {
    if (this.owners.has(key)) this.filling = undefined;
    for (const [t, port] of this.owners.get(key) ?? []) {
      this.tables[t]![port - this.min] = 0;
      this.used[t]!--;
    }
    this.owners.delete(key);
  }

  private addTable(): number {
    this.tables.push(new Uint8Array(this.size));
    this.used.push(0);
    return this.tables.length - 1;
  }

  private takeFrom(t: number): number {
    const table = this.tables[t]!;
    let i = this.rng.int(this.size);
    while (table[i] !== 0) i = (i + 1) % this.size;
    table[i] = 1;
    this.used[t]!++;
    return this.min + i;
  }
}
