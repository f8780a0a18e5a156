import { fold } from "@bas/event-store";
import { IllegalStateError, NotFoundError } from "@bas/errors";
import { type ProfileCommand, profileDecider, type ProfileEvent, type ProfileState } from "./profile";

const context = { now: new Date("2026-11-26T00:00:00Z"), newId: () => "id" };

/** Runs commands in order on one profile; answers the state and the events of the last command. */
function run(...commands: ProfileCommand[]): { state: ProfileState; last: ProfileEvent[] } {
  let events: ProfileEvent[] = [];
  let last: ProfileEvent[] = [];
  for (const command of commands) {
    const state = fold(
      profileDecider,
      events.map((e, i) => ({ ...e, occurredAt: "", sequence: i }) as never),
    );
    last = profileDecider.decide(command, state, context);
    events = [...events, ...last];
  }
  return {
    state: fold(
      profileDecider,
      events.map((e, i) => ({ ...e, occurredAt: "", sequence: i }) as never),
    ),
    last,
  };
}

const create: ProfileCommand = { type: "CreateProfile", projectId: "p", name: null, userId: null };
const open = (browserId: string, projectId = "p"): ProfileCommand => ({ type: "OpenProfile", projectId, browserId });
const close = (browserId: string, stateRef: string | null): ProfileCommand => ({
  type: "CloseProfile",
  browserId,
  stateRef,
  cookieDomains: stateRef ? ["shop.test"] : null,
});

test("one browser at a time: a second is refused until the first closes it, with the state it saved", () => {
  expect(() => run(create, open("a"), open("b"))).toThrow(IllegalStateError);
  expect(run(create, open("a"), open("a")).last).toEqual([]);
  const { state } = run(create, open("a"), close("a", "ref-1"), open("b"));
  expect(state).toMatchObject({ openBy: "b", stateRef: "ref-1" });
});

test("a close from a browser that does not hold it changes nothing; an unsaved close keeps the state before", () => {
  expect(run(create, open("a"), close("b", "ref-x")).last).toEqual([]);
  const { state } = run(create, open("a"), close("a", "ref-1"), open("b"), close("b", null));
  expect(state).toMatchObject({ openBy: null, stateRef: "ref-1" });
});

test("a close with a new state names the state it replaces (its blob is no longer needed); an unsaved close none", () => {
  expect(run(create, open("a"), close("a", "ref-1")).last).toMatchObject([{ data: { replacedRef: null } }]);
  const replaced = run(create, open("a"), close("a", "ref-1"), open("b"), close("b", "ref-2")).last;
  expect(replaced).toMatchObject([{ type: "ProfileClosed", data: { stateRef: "ref-2", replacedRef: "ref-1" } }]);
  const unsaved = run(create, open("a"), close("a", "ref-1"), open("b"), close("b", null)).last;
  expect(unsaved).toMatchObject([{ data: { stateRef: null, replacedRef: null } }]);
});

test("another project's profile, an unknown one and a deleted one are not found; an open one cannot be deleted", () => {
  expect(() => run(create, open("a", "q"))).toThrow(NotFoundError);
  expect(() => run(open("a"))).toThrow(NotFoundError);
  expect(() => run(create, { type: "DeleteProfile", projectId: "p" }, open("a"))).toThrow(NotFoundError);
  expect(() => run(create, open("a"), { type: "DeleteProfile", projectId: "p" })).toThrow(IllegalStateError);
});

test("an update changes only the fields given, and nothing when they are the same", () => {
  const named: ProfileCommand = { type: "UpdateProfile", projectId: "p", name: "shopper" };
  expect(run(create, named).state).toMatchObject({ name: "shopper", userId: null });
  expect(run(create, named, named).last).toEqual([]);
});
