import type { ProfileStates } from "./ports";

export interface DeletedProfileCopiesDeps {
  states: Pick<ProfileStates, "dropCopies" | "profilesWithCopies">;
  /** Those of `profileIds` that exist and are not deleted (read model). */
  live(profileIds: readonly string[]): Promise<Set<string>>;
  /** Calls `deleted` with each profile deleted anywhere from now on, none missed while this node runs. */
  watchDeletions(deleted: (profileId: string) => void): Promise<{ close(): Promise<void> }>;
  log: { warn(o: object, msg: string): void };
}

/**
 * A deleted profile's cookies and storage must not outlive it on any node. The node that handles the delete drops
 * its own unpacked copies with the blob; every other node drops its copies when it hears of the delete, and, for a
 * delete it did not hear (it was not running), when it starts: the copies of every profile the read model no longer
 * lists go. Call once the profiles read model has caught up.
 */
export async function dropCopiesOfDeletedProfiles(deps: DeletedProfileCopiesDeps): Promise<{ close(): Promise<void> }> {
  const drop = (profileId: string) =>
    deps.states
      .dropCopies(profileId)
      .catch((err) =>
        deps.log.warn({ err, profileId }, "a deleted profile's copies on this node could not be removed"),
      );
  // Listening first: a profile deleted during the sweep is heard.
  const watching = await deps.watchDeletions((profileId) => void drop(profileId));
  const held = await deps.states.profilesWithCopies();
  const live = await deps.live(held);
  await Promise.all(held.filter((profileId) => !live.has(profileId)).map(drop));
  return watching;
}
