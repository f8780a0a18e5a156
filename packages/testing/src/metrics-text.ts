/** One sample of the Prometheus text format: `name{label="value",...} value`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const VALUES: Record<string, number> = { "+Inf": Infinity, "-Inf": -Infinity, NaN: Number.NaN };
const unescapeLabel = (v: string) => v.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));

/** The samples of a `/metrics` answer (comments and blank lines skipped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    const match = SAMPLE.exec(line.trim());
    if (!match || line.startsWith("#")) continue;
    const labels = Object.fromEntries([...(match[2] ?? "").matchAll(LABEL)].map((l) => [l[1], unescapeLabel(l[2])]));
    samples.push({ name: match[1], labels, value: VALUES[match[3]] ?? Number(match[3]) });
  }
  return samples;
}

/**
 * The sum of the samples named `name` whose labels include `labels` (all of a histogram's series of one route, say);
 * undefined when none matches, so that a missing series never passes for a zero.
 */
export function sumOf(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}) {
  const matching = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

/** Scrapes `GET /metrics` on 127.0.0.1:`port`. */
export async function scrapeMetrics(port: number): Promise<MetricSample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}
