import { UnavailableError } from "@bas/errors";

/** Gives the turn back; call it exactly once. */
export type Release = () => void;

/** Resolves true when `promise` settles within `ms`, false otherwise (the promise itself keeps going). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const tooLong = (what: string) =>
  new UnavailableError(`${what}: too many requests at once, nothing was done; retry shortly`);

/**
 * First come, first served turns per key on this process (different keys run freely). A waiter that runs out of
 * time leaves the line without holding up the ones behind it.
 */
export function createKeyedTurns(what: string) {
  const tails = new Map<string, Promise<void>>();
  return async function take(key: string, waitMs: number): Promise<Release> {
    const before = tails.get(key) ?? Promise.resolve();
    let release!: Release;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    if (!(await within(before, waitMs))) {
      void before.then(release);
      throw tooLong(what);
    }
    return release;
  };
}

/** At most `size` holders at once, served in order; a waiter that runs out of time leaves the line. */
export function createSemaphore(size: number, what: string) {
  let free = size;
  const waiting: Array<{ grant: () => void }> = [];
  const releaseOne: () => Release = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next.grant();
      else free++;
    };
  };
  return async function take(waitMs: number): Promise<Release> {
    if (free > 0) {
      free--;
      return releaseOne();
    }
    let granted = false;
    const entry: { grant: () => void } = { grant: () => {} };
    const turn = new Promise<void>((resolve) => {
      entry.grant = () => {
        granted = true;
        resolve();
      };
    });
    waiting.push(entry);
    if (await within(turn, waitMs)) return releaseOne();
    const index = waiting.indexOf(entry);
    if (index >= 0) waiting.splice(index, 1);
    // Granted just as the wait ran out: hand the slot on rather than lose it.
    else if (granted) releaseOne()();
    throw tooLong(what);
  };
}
