/** What `removeEach` did: the refs removed, and the first failure with how many there were. */
export interface Removal {
  removed: string[];
  failure?: { err: unknown; ref: string; count: number };
}

/**
 * Removes each released blob (its delete, and whatever goes with it), going on past a failure: a caller forgets what
 * was removed and keeps the rest for its next sweep. One failure is reported for the lot, so that a blob store that is
 * away logs one line per sweep, not one per blob.
 */
export async function removeEach(refs: readonly string[], remove: (ref: string) => Promise<void>): Promise<Removal> {
  const removed: string[] = [];
  let failure: Removal["failure"];
  for (const ref of refs) {
    try {
      await remove(ref);
      removed.push(ref);
    } catch (err) {
      failure = { err: failure?.err ?? err, ref: failure?.ref ?? ref, count: (failure?.count ?? 0) + 1 };
    }
  }
  return failure ? { removed, failure } : { removed };
}
