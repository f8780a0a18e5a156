import { type EventEnvelope, type EventStore, fold, type Handled, handleCommand } from "@bas/event-store";
import type { SessionCommand } from "../domain/commands";
import { sessionDecider } from "../domain/decider";
import { SESSION_AGGREGATE, type SessionEvent } from "../domain/events";
import type { SessionState } from "../domain/state";
import type { ReadYourWrites } from "./ports";

export interface SessionCommandsDeps {
  store: EventStore;
  readModels: ReadYourWrites;
  now: () => Date;
  newId: () => string;
  /** Gets the command's type and the event types only: payloads may hold what callers typed. */
  log?: { debug(o: object, msg: string): void };
}

export interface SessionCommands {
  /**
   * Load, decide, append; resolves once the read models include what was appended, or once `readModelsWaitMs` has
   * passed (0: at once; default: the configured wait).
   */
  execute(
    sessionId: string,
    command: SessionCommand,
    options?: { readModelsWaitMs?: number },
  ): Promise<Handled<SessionEvent, SessionState>>;
  /** Waits until the read models include `version` (an append's last sequence); false when `timeoutMs` ran out. */
  readModelsReach(version: number, timeoutMs: number): Promise<boolean>;
  /**
   * Waits (bounded, as `execute` does) until the read models include every event this replica has appended: a list
   * read after a write on this replica shows that write, even when the write's own wait ran out.
   */
  readModelsCaughtUp(): Promise<boolean>;
  /** The aggregate's current state, straight from the event store. */
  load(sessionId: string): Promise<SessionState>;
  /** The aggregate's events, oldest first, straight from the event store. */
  events(sessionId: string): Promise<EventEnvelope<SessionEvent>[]>;
}

export function createSessionCommands(deps: SessionCommandsDeps): SessionCommands {
  const aggregate = (id: string) => ({ type: SESSION_AGGREGATE, id });
  /** The last stream sequence this replica appended. */
  let lastAppended = 0;
  return {
    async execute(sessionId, command, options = {}) {
      const handled = await handleCommand(deps.store, sessionDecider, aggregate(sessionId), command, {
        now: deps.now,
        newId: deps.newId,
      });
      deps.log?.debug(
        { sessionId, command: command.type, events: handled.events.map((e) => e.type), version: handled.version },
        "session command handled",
      );
      lastAppended = Math.max(lastAppended, handled.version);
      if (options.readModelsWaitMs !== 0) {
        await deps.readModels.waitFor(handled.version, options.readModelsWaitMs);
      }
      return handled;
    },
    readModelsReach: async (version, timeoutMs) => timeoutMs > 0 && deps.readModels.waitFor(version, timeoutMs),
    readModelsCaughtUp: () => deps.readModels.waitFor(lastAppended),
    async load(sessionId) {
      const loaded = await deps.store.load<SessionEvent>(aggregate(sessionId));
      return fold(sessionDecider, loaded.events);
    },
    async events(sessionId) {
      return (await deps.store.load<SessionEvent>(aggregate(sessionId))).events as EventEnvelope<SessionEvent>[];
    },
  };
}
