/** `s` cut to at most `n` characters, the cut marked with an ellipsis. */
export const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
