/**
 * Numbers from a fixed range handed out one per browser and taken back when it ends: the unprivileged user each
 * local browser runs as, the egress port each browser pod is allowed to reach.
 */
export interface NumberPool {
  /** A free number, now taken. Throws when every number of the range is in use. */
  take(): number;
  /** Marks a number as taken (a browser adopted after a restart keeps its own). */
  hold(value: number): void;
  release(value: number): void;
}

export function createNumberPool(range: { first: number; count: number; what: string }): NumberPool {
  const taken = new Set<number>();
  return {
    take() {
      for (let value = range.first; value < range.first + range.count; value++) {
        if (!taken.has(value)) {
          taken.add(value);
          return value;
        }
      }
      throw new Error(`all ${range.count} ${range.what} from ${range.first} are in use`);
    },
    hold: (value) => void taken.add(value),
    release: (value) => void taken.delete(value),
  };
}
