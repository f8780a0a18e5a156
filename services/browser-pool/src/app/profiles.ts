import { type EventStore, handleCommand, type Handled } from "@bas/event-store";
import { IllegalStateError, NotFoundError } from "@bas/errors";
import { PROFILE_AGGREGATE, type ProfileCommand, profileDecider, type ProfileEvent } from "../domain/profile";
import type { ProfileView, SavedProfile } from "./ports";

/** The profiles read model. */
export interface ProfileReadModel {
  /** One profile of a project; deleted ones and another project's are absent. */
  find(projectId: string, profileId: string): Promise<ProfileView | undefined>;
  list(projectId: string, page: { number: number; size: number }): Promise<{ views: ProfileView[]; total: number }>;
}

export interface ProfilesDeps {
  store: EventStore;
  readModel: ProfileReadModel;
  /** Waits until the read model has applied the event at `sequence`. */
  settle(sequence: number): Promise<void>;
  /** Whether a browser is recorded as stopped (its profile can be taken over). */
  isStopped(projectId: string, browserId: string): Promise<boolean>;
  now(): Date;
  newId(): string;
}

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

  async function get(projectId: string, profileId: string): Promise<ProfileView> {
    const view = await deps.readModel.find(projectId, profileId);
    if (!view) throw new NotFoundError("Profile not found");
    return view;
  }

  return {
    get,
    list: (projectId: string, page: { number: number; size: number }) => deps.readModel.list(projectId, page),

    async create(projectId: string, fields: ProfileFields): Promise<ProfileView> {
      const id = deps.newId();
      const command: ProfileCommand = {
        type: "CreateProfile",
        projectId,
        name: fields.name ?? null,
        userId: fields.userId ?? null,
      };
      await settled(await decide(id, command));
      return get(projectId, id);
    },

    async update(projectId: string, profileId: string, fields: ProfileFields): Promise<ProfileView> {
      await settled(await decide(profileId, { type: "UpdateProfile", projectId, ...fields }));
      return get(projectId, profileId);
    },

    async delete(projectId: string, profileId: string): Promise<void> {
      await settled(await decide(profileId, { type: "DeleteProfile", projectId }));
    },

    /**
     * Opens the profile for a browser about to start; answers the saved state to start from (null: a fresh one).
     * A profile still held by a browser that stopped without closing it (its node died) is taken over.
     */
    async open(projectId: string, profileId: string, browserId: string): Promise<string | null> {
      for (let attempt = 1; ; attempt++) {
        try {
          const handled = await decide(profileId, { type: "OpenProfile", projectId, browserId });
          await settled(handled);
          return handled.state.status === "none" ? null : handled.state.stateRef;
        } catch (err) {
          const holder = err instanceof IllegalStateError && (await deps.readModel.find(projectId, profileId))?.openBy;
          if (attempt > 1 || !holder || !(await deps.isStopped(projectId, holder))) throw err;
          await decide(profileId, { type: "CloseProfile", browserId: holder, stateRef: null, cookieDomains: null });
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
      await settled(await decide(profileId, command));
    },
  };
}

export type Profiles = ReturnType<typeof createProfiles>;
