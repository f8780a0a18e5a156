/** Percentile of a sample (nearest-rank), in the sample's unit. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summarize(values: readonly number[]): { n: number; p50: number; p95: number; p99: number } {
  return { n: values.length, p50: percentile(values, 50), p95: percentile(values, 95), p99: percentile(values, 99) };
}

export const ms = (n: number) => `${n.toFixed(2)} ms`;
