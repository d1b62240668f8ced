import client from 'prom-client';

/**
 * Counters and histograms whose observations are plain numbers in fleetsim's own structures,
 * handed to prom-client's registry as finished values when it is scraped. On the hot paths
 * (every state change, allocation, request) an observation is then a few additions: a
 * prom-client child hashes its label values again on every `inc`/`observe`, which cost
 * allocation throughput under churn. prom-client still formats the exposition.
 *
 * A series is found through one map per label (`series(a, b, c)`), keyed by the label values
 * as they already are, so no key string is built and hashed per observation.
 */

/** One histogram series: a count per bucket (the last one is +Inf), the sum and the count. */
export class HistogramTally {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** One counter or gauge series. */
export class ValueTally {
  value = 0;
}

type Tree<S> = Map<string, Tree<S> | S>;

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A sample as prom-client's registry formats it (its own types for this are not exported). */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

abstract class TalliedMetric<S> {
  readonly type: 'counter' | 'histogram' | 'gauge';
  readonly aggregator = 'sum' as const;
  private readonly root: Tree<S> = new Map();
  private readonly all: Array<{ labels: Record<string, string>; tally: S }> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    type: 'counter' | 'histogram' | 'gauge',
    private readonly labelNames: readonly string[],
    registers: readonly client.Registry[],
  ) {
    this.type = type;
    // The registry takes any metric with `get()`; its types name only its own classes.
    for (const registry of registers) registry.registerMetric(this as unknown as client.Metric);
  }

  protected abstract create(): S;

  /** The series found last, and its label values: a hot path asks for the same one again and again. */
  private lastValues: string[] = [];
  private lastTally: S | undefined;

  /** The series with these label values (in `labelNames` order), created at its first use. */
  series(...values: string[]): S {
    if (this.lastTally !== undefined && sameValues(values, this.lastValues)) return this.lastTally;
    const tally = this.find(values);
    this.lastValues = values;
    this.lastTally = tally;
    return tally;
  }

  private find(values: string[]): S {
    let node: Tree<S> = this.root;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i]!;
      let next = node.get(value) as Tree<S> | undefined;
      if (!next) node.set(value, (next = new Map()));
      node = next;
    }
    const leaf = values[last]!;
    let tally = node.get(leaf) as S | undefined;
    if (tally === undefined) {
      tally = this.create();
      node.set(leaf, tally);
      this.all.push({ labels: Object.fromEntries(this.labelNames.map((label, i) => [label, values[i]!])), tally });
    }
    return tally;
  }

  /** Every series since the start (or the last reset). */
  protected get entries(): ReadonlyArray<{ labels: Record<string, string>; tally: S }> {
    return this.all;
  }

  reset(): void {
    this.root.clear();
    this.all.length = 0;
    this.lastTally = undefined;
  }

  protected abstract values(): Sample[];

  /** What the registry asks for at a scrape. */
  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: 'sum' }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator });
  }
}

type ValueOptions = { name: string; help: string; labelNames: readonly string[]; registers: readonly client.Registry[] };

export class TalliedCounter extends TalliedMetric<ValueTally> {
  constructor(options: ValueOptions, type: 'counter' | 'gauge' = 'counter') {
    super(options.name, options.help, type, options.labelNames, options.registers);
  }

  protected create(): ValueTally {
    return new ValueTally();
  }

  protected values(): Sample[] {
    return this.entries.map(({ labels, tally }) => ({ labels, value: tally.value, metricName: this.name }));
  }
}

/** A gauge whose series are set on the hot path (a queue's depth), read at the scrape. */
export class TalliedGauge extends TalliedCounter {
  constructor(options: ValueOptions) {
    super(options, 'gauge');
  }
}

export class TalliedHistogram extends TalliedMetric<HistogramTally> {
  private readonly buckets: readonly number[];

  constructor(options: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[]; registers: readonly client.Registry[] }) {
    super(options.name, options.help, 'histogram', options.labelNames, options.registers);
    this.buckets = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(): HistogramTally {
    return new HistogramTally(this.buckets);
  }

  protected values(): Sample[] {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, tally } of this.entries) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += tally.counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: tally.count, metricName: bucket });
      values.push({ labels, value: tally.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: tally.count, metricName: `${this.name}_count` });
    }
    return values;
  }
}
