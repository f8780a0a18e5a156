/** PromQL words that are not metric names: operators and modifiers (functions are recognised by their `(`). */
const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
]);

/**
 * The metric names a PromQL expression (or a Grafana `label_values(metric, label)` query) reads, as they appear in
 * it (`x_bucket` for a histogram's buckets). Strings, label matchers, ranges, offsets, numbers, grouping clauses,
 * function and aggregation names are taken away first; what is left of the identifiers are the metrics.
 */
export function promqlMetricNames(expr: string): string[] {
  const labelValues = /^\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,/.exec(expr);
  if (labelValues) return [labelValues[1]];
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\boffset\s+-?\w+/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/(?<![a-zA-Z0-9_:])\d+(\.\d+)?(e[+-]?\d+)?/gi, " ");
  const names = new Set<string>();
  for (const match of bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (!match[2] && !KEYWORDS.has(match[1])) names.add(match[1]);
  }
  return [...names];
}
