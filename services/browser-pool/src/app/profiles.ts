import { removeEach } from "@bas/blobs";
import { setTimeout as sleep } from "node:timers/promises";
import { type EventStore, fold, handleCommand, type Handled } from "@bas/event-store";
import { IllegalStateError, NotFoundError, PlanLimitError } from "@bas/errors";
import { PROFILE_AGGREGATE, type ProfileCommand, profileDecider, type ProfileEvent } from "../domain/profile";
import type { ProfileStates, ProfileView, SavedProfile } from "./ports";

/** The profiles read model. */
export interface ProfileReadModel {
  /** One profile of a project; deleted ones and another project's are absent. */
  find(projectId: string, profileId: string): Promise<ProfileView | undefined>;
  /** A project's profiles, newest first; with `query`, those whose name or user id contains it, ignoring case. */
  list(
    projectId: string,
    page: { number: number; size: number },
    query?: string,
  ): Promise<{ views: ProfileView[]; total: number }>;
}

/** A project's profiles against its limit, across every node (Postgres). */
export interface ProfileCreations {
  /** Counts the project's profiles, those being created too, and reserves one more if it stays within `limit`. */
  reserve(creation: { projectId: string; profileId: string; limit: number }): Promise<boolean>;
  /** The creation is over: recorded and shown by the read model, or failed. */
  done(profileId: string): Promise<void>;
}

export interface ProfilesDeps {
  store: EventStore;
  readModel: ProfileReadModel;
  creations: ProfileCreations;
  /** Most profiles a project may keep (MAX_PROFILES_PER_PROJECT). */
  maxPerProject: number;
  /** Profiles' saved states: those no longer needed go. */
  states: Pick<ProfileStates, "discard" | "forget">;
  /** Saved states released (replaced, or their profile deleted) that may still be in the blob store. */
  released: { list(limit: number): Promise<string[]>; forget(refs: readonly string[]): Promise<void> };
  log: { warn(o: object, msg: string): void };
  /** Waits until the read model has applied the event at `sequence`. */
  settle(sequence: number): Promise<void>;
  /**
   * Whether a browser is recorded as stopped (its profile can be taken over), from its events, not a read model: the
   * stop may have been decided on another node a moment ago.
   */
  isStopped(projectId: string, browserId: string): Promise<boolean>;
  now(): Date;
  newId(): string;
  /** How long an open waits for a stopped browser's save before it takes the profile over (PROFILE_SAVE_WAIT_MS). */
  saveWaitMs?: number;
}

/**
 * The longest an open waits for the stopped holder's save: its `Browser.close` takes at most 5 s, its archive far
 * less, and a create behind it must still answer within the gateway's deadline (GRPC_DEADLINE_MS, 10 s).
 */
const PROFILE_SAVE_WAIT_MS = 6_000;
const SAVE_POLL_MS = 50;

export interface ProfileFields {
  name?: string | null;
  userId?: string | null;
}

/**
 * Profiles: a browser's state (cookies, storage) saved when it stops, for the next browser started with the profile.
 * One browser at a time may have a profile open; the aggregate's version makes that hold across nodes.
 */
export function createProfiles(deps: ProfilesDeps) {
  const decide = (id: string, command: ProfileCommand) =>
    handleCommand(deps.store, profileDecider, { type: PROFILE_AGGREGATE, id }, command, {
      now: deps.now,
      newId: deps.newId,
    });

  async function settled(handled: Handled<ProfileEvent, unknown>) {
    const last = handled.events.at(-1);
    if (last) await deps.settle(last.sequence);
  }

  /**
   * The browser that has the profile open, from its events: a read model may not show an open or close yet that
   * another node decided a moment ago.
   */
  async function holderOf(profileId: string): Promise<string | null> {
    const { events } = await deps.store.load<ProfileEvent>({ type: PROFILE_AGGREGATE, id: profileId });
    const state = fold(profileDecider, events);
    return state.status === "live" ? state.openBy : null;
  }

  async function get(projectId: string, profileId: string): Promise<ProfileView> {
    const view = await deps.readModel.find(projectId, profileId);
    if (!view) throw new NotFoundError("Profile not found");
    return view;
  }

  return {
    get,
    list: (projectId: string, page: { number: number; size: number }, query?: string) =>
      deps.readModel.list(projectId, page, query),

    async create(projectId: string, fields: ProfileFields): Promise<ProfileView> {
      const id = deps.newId();
      const limit = deps.maxPerProject;
      if (!(await deps.creations.reserve({ projectId, profileId: id, limit }))) {
        // The hosted service's words for a plan that allows no more profiles (402).
        throw new PlanLimitError(
          `Subscription required for additional profiles: this project has reached its limit of ${limit} profiles. Delete one to create another.`,
        );
      }
      const name = fields.name ?? null;
      const userId = fields.userId ?? null;
      const command: ProfileCommand = { type: "CreateProfile", projectId, name, userId };
      let created: Handled<ProfileEvent, unknown>;
      try {
        created = await decide(id, command);
        await settled(created);
      } finally {
        // Shown by the read model now (or never recorded): the reservation has done its work.
        deps.creations
          .done(id)
          .catch((err) =>
            deps.log.warn({ err, profileId: id }, "a profile's creation could not be cleared; it expires"),
          );
      }
      // What the creation recorded, not the read model's row: a read model that lags must not make the answer a 404.
      const at = new Date(created.events[0].occurredAt);
      return {
        id,
        projectId,
        name,
        userId,
        createdAt: at,
        updatedAt: at,
        lastUsedAt: null,
        cookieDomains: [],
        openBy: null,
      };
    },

    async update(projectId: string, profileId: string, fields: ProfileFields): Promise<ProfileView> {
      await settled(await decide(profileId, { type: "UpdateProfile", projectId, ...fields }));
      return get(projectId, profileId);
    },

    async delete(projectId: string, profileId: string): Promise<void> {
      const handled = await decide(profileId, { type: "DeleteProfile", projectId });
      await settled(handled);
      const stateRef = handled.state.status === "none" ? null : handled.state.stateRef;
      await deps.states
        .forget(profileId, stateRef)
        .catch((err) => deps.log.warn({ err, profileId }, "a deleted profile's saved state could not be removed"));
    },

    /**
     * Opens the profile for a browser about to start; answers the saved state to start from (null: a fresh one) once
     * the open is decided, and `shown`, which resolves once the read model shows it: the browser launches meanwhile.
     * A profile held by a browser that has stopped is being saved by that browser's node, which closes it then: the
     * open waits for that, so the new browser starts from what the last one saved. One still held after
     * `saveWaitMs` (its node died, or the save hangs) is taken over, from the state before.
     */
    async open(
      projectId: string,
      profileId: string,
      browserId: string,
    ): Promise<{ stateRef: string | null; shown: Promise<void> }> {
      const takeOverAt = Date.now() + (deps.saveWaitMs ?? PROFILE_SAVE_WAIT_MS);
      for (let takenOver = false; ; ) {
        try {
          const handled = await decide(profileId, { type: "OpenProfile", projectId, browserId });
          const stateRef = handled.state.status === "none" ? null : handled.state.stateRef;
          return { stateRef, shown: settled(handled) };
        } catch (err) {
          if (!(err instanceof IllegalStateError)) throw err;
          const holder = await holderOf(profileId);
          // Closed since the open was refused (the holder's save just landed): open it now.
          if (holder === null && !takenOver) continue;
          if (takenOver || !holder || !(await deps.isStopped(projectId, holder))) throw err;
          if (Date.now() < takeOverAt) {
            await sleep(SAVE_POLL_MS);
            continue;
          }
          await decide(profileId, { type: "CloseProfile", browserId: holder, stateRef: null, cookieDomains: null });
          takenOver = true;
        }
      }
    },

    /** The browser stopped: the profile is free again, with the state it saved (if it could). */
    async close(profileId: string, browserId: string, saved: SavedProfile | undefined): Promise<void> {
      const command: ProfileCommand = {
        type: "CloseProfile",
        browserId,
        stateRef: saved?.ref ?? null,
        cookieDomains: saved?.cookieDomains ?? null,
      };
      const handled = await decide(profileId, command);
      await settled(handled);
      // The state nobody will start from any more: the one this save replaced, or this save itself when the close
      // changed nothing (the profile was taken over meanwhile) and the profile does not point at it.
      const closed = handled.events.find((e) => e.type === "ProfileClosed");
      const current = handled.state.status === "none" ? null : handled.state.stateRef;
      const unused = closed ? closed.data.replacedRef : saved?.ref !== current ? saved?.ref : undefined;
      if (unused) {
        await deps.states
          .discard(unused)
          .catch((err) =>
            deps.log.warn({ err, profileId, ref: unused }, "an unused profile state could not be removed"),
          );
      }
    },

    /**
     * Deletes released states again until it works: one whose delete failed when it was let go (the blob store was
     * away, or the node died first) would otherwise stay, a deleted profile's cookies included.
     */
    async sweepReleasedStates(): Promise<number> {
      const { removed, failure } = await removeEach(await deps.released.list(100), (ref) => deps.states.discard(ref));
      if (failure) deps.log.warn(failure, "released profile states could not be removed; the next sweep tries again");
      await deps.released.forget(removed);
      return removed.length;
    },
  };
}

export type Profiles = ReturnType<typeof createProfiles>;
