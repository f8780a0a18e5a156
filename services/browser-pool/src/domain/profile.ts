import type { Decider, DomainEvent } from "@bas/event-store";
import { IllegalStateError, NotFoundError } from "@bas/errors";

/** Aggregate type of profiles on the event stream: a browser's saved state, for later browsers to start from. */
export const PROFILE_AGGREGATE = "profile";

export type ProfileEvent =
  | DomainEvent<"ProfileCreated", { projectId: string; name: string | null; userId: string | null }>
  | DomainEvent<"ProfileUpdated", { name: string | null; userId: string | null }>
  | DomainEvent<"ProfileDeleted", Record<string, never>>
  /** A browser started with the profile; nobody else may open it until it is closed. */
  | DomainEvent<"ProfileOpened", { browserId: string }>
  /**
   * The browser stopped; `stateRef` is the state it saved (null: the state before stays), `replacedRef` the state
   * before that it replaces (absent in events written before it was recorded).
   */
  | DomainEvent<
      "ProfileClosed",
      { browserId: string; stateRef: string | null; cookieDomains: string[] | null; replacedRef?: string | null }
    >;

export type ProfileState =
  | { status: "none" }
  | {
      status: "live" | "deleted";
      projectId: string;
      name: string | null;
      userId: string | null;
      /** The browser that has it open. */
      openBy: string | null;
      stateRef: string | null;
    };

export type ProfileCommand =
  | { type: "CreateProfile"; projectId: string; name: string | null; userId: string | null }
  | { type: "UpdateProfile"; projectId: string; name?: string | null; userId?: string | null }
  | { type: "DeleteProfile"; projectId: string }
  | { type: "OpenProfile"; projectId: string; browserId: string }
  | { type: "CloseProfile"; browserId: string; stateRef: string | null; cookieDomains: string[] | null };

const notFound = () => new NotFoundError("Profile not found");

/** The profile of `projectId`, or not found: another project's profile is as absent as a missing one. */
function ownProfile(state: ProfileState, projectId: string) {
  if (state.status !== "live" || state.projectId !== projectId) throw notFound();
  return state;
}

export const profileDecider: Decider<ProfileCommand, ProfileEvent, ProfileState> = {
  initialState: () => ({ status: "none" }),

  evolve(state, event) {
    switch (event.type) {
      case "ProfileCreated":
        return { status: "live", ...event.data, openBy: null, stateRef: null };
      case "ProfileUpdated":
        return state.status === "none" ? state : { ...state, ...event.data };
      case "ProfileDeleted":
        return state.status === "none" ? state : { ...state, status: "deleted" };
      case "ProfileOpened":
        return state.status === "none" ? state : { ...state, openBy: event.data.browserId };
      case "ProfileClosed":
        if (state.status === "none") return state;
        return { ...state, openBy: null, stateRef: event.data.stateRef ?? state.stateRef };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case "CreateProfile":
        if (state.status !== "none") throw new IllegalStateError("profile already exists");
        return [
          {
            type: "ProfileCreated",
            data: { projectId: command.projectId, name: command.name, userId: command.userId },
          },
        ];
      case "UpdateProfile": {
        const profile = ownProfile(state, command.projectId);
        const name = command.name === undefined ? profile.name : command.name;
        const userId = command.userId === undefined ? profile.userId : command.userId;
        if (name === profile.name && userId === profile.userId) return [];
        return [{ type: "ProfileUpdated", data: { name, userId } }];
      }
      case "DeleteProfile": {
        const profile = ownProfile(state, command.projectId);
        if (profile.openBy) {
          throw new IllegalStateError(`Profile is in use by browser ${profile.openBy}; stop that browser first`);
        }
        return [{ type: "ProfileDeleted", data: {} }];
      }
      case "OpenProfile": {
        const profile = ownProfile(state, command.projectId);
        if (profile.openBy === command.browserId) return [];
        if (profile.openBy) {
          throw new IllegalStateError(
            `Profile is in use by browser ${profile.openBy}; a profile can be open in one browser at a time`,
          );
        }
        return [{ type: "ProfileOpened", data: { browserId: command.browserId } }];
      }
      case "CloseProfile":
        if (state.status === "none" || state.openBy !== command.browserId) return [];
        return [
          {
            type: "ProfileClosed",
            data: {
              browserId: command.browserId,
              stateRef: command.stateRef,
              cookieDomains: command.cookieDomains,
              replacedRef: command.stateRef ? state.stateRef : null,
            },
          },
        ];
    }
  },
};
