// prom-client counters and gauges whose values a recorder holds: each is emptied and refilled from it by its
// collect() before every scrape, so the hot path records into plain fields and prom-client only reads them. The
// companion's exposition (registry.ts) and the webhook's (webhook/metrics/exposition.ts) both make theirs here.

import { Counter, Gauge, type Registry } from 'prom-client';

type Labels = Record<string, string | number>;
type Read = () => readonly { labels: Labels; value: number }[];

export function refilledMetrics(registers: Registry[], prefix: string) {
  return {
    counter: (name: string, help: string, labelNames: string[], read: Read) =>
      new Counter({
        name: `${prefix}${name}`,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { labels, value } of read()) this.inc(labels, value);
        },
      }),
    gauge: (name: string, help: string, labelNames: string[], read: Read) =>
      new Gauge({
        name: `${prefix}${name}`,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { labels, value } of read()) this.set(labels, value);
        },
      }),
  };
}
