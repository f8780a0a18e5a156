import type { Decider, DomainEvent } from "../src";

/** A tiny aggregate for exercising the event store. */
export type CounterEvent = DomainEvent<"Incremented", { by: number }> | DomainEvent<"Reset", Record<string, never>>;
export interface CounterState {
  total: number;
  changes: number;
}
export type CounterCommand = { type: "Increment"; by: number } | { type: "Reset" };

export const counter: Decider<CounterCommand, CounterEvent, CounterState> = {
  initialState: () => ({ total: 0, changes: 0 }),
  evolve(state, event) {
    switch (event.type) {
      case "Incremented":
        return { total: state.total + event.data.by, changes: state.changes + 1 };
      case "Reset":
        return { total: 0, changes: state.changes + 1 };
    }
  },
  decide(command, state) {
    switch (command.type) {
      case "Increment":
        return [{ type: "Incremented", data: { by: command.by } }];
      case "Reset":
        return state.total === 0 ? [] : [{ type: "Reset", data: {} }];
    }
  },
};
