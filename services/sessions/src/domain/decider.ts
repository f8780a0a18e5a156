import type { Decider } from "@bas/event-store";
import type { SessionCommand } from "./commands";
import { decide } from "./decide";
import type { SessionEvent } from "./events";
import { evolve, initialState, type SessionState } from "./state";

/** The session aggregate as the event store's command handler runs it. */
export const sessionDecider: Decider<SessionCommand, SessionEvent, SessionState> = { initialState, evolve, decide };
