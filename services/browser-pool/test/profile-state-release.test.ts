import { createNatsEventStore, fold } from "@bas/event-store";
import { createTestInfra, type TestInfra } from "@bas/testing";
import { randomUUID } from "node:crypto";
import { type ProfileReadModel, createProfiles } from "../src/app/profiles";
import { PROFILE_AGGREGATE, type ProfileEvent, profileDecider } from "../src/domain/profile";

/**
 * Which saved states a profile lets go, on the real event store: the one a recorded save replaces, and a save the
 * close did not record, but never the state the profile points at.
 */
let infra: TestInfra;
beforeAll(async () => {
  infra = await createTestInfra();
});
afterAll(() => infra?.close());

test("a taken-over browser's save is let go, the replaced state too, and a retried close never lets go the current one", async () => {
  const store = createNatsEventStore(infra);
  // The read model's answers, folded straight from the aggregate.
  const readModel: ProfileReadModel = {
    async find(projectId, profileId) {
      const { events } = await store.load<ProfileEvent>({ type: PROFILE_AGGREGATE, id: profileId });
      const state = fold(profileDecider, events);
      if (state.status !== "live" || state.projectId !== projectId) return undefined;
      const at = new Date();
      const view = { id: profileId, projectId, name: state.name, userId: state.userId, cookieDomains: [] };
      return { ...view, lastUsedAt: null, createdAt: at, updatedAt: at, openBy: state.openBy };
    },
    list: async () => ({ views: [], total: 0 }),
  };
  const discarded: string[] = [];
  const profiles = createProfiles({
    store,
    readModel,
    // The limit is not what this test is about.
    creations: { reserve: async () => true, done: async () => undefined },
    maxPerProject: 1,
    states: { discard: async (ref) => void discarded.push(ref), forget: async () => undefined },
    released: { list: async () => [], forget: async () => undefined },
    log: { warn: () => undefined },
    settle: async () => undefined,
    // Every holder is recorded as stopped, and an open takes over at once.
    isStopped: async () => true,
    saveWaitMs: 0,
    now: () => new Date(),
    newId: randomUUID,
  });
  const saved = (ref: string) => ({ ref, cookieDomains: [] });
  const { id } = await profiles.create("p", {});

  expect((await profiles.open("p", id, "a")).stateRef).toBeNull();
  await profiles.close(id, "a", saved("r1"));
  expect((await profiles.open("p", id, "b")).stateRef).toBe("r1");
  // b's node is slow to save: c takes the profile over, from r1.
  expect((await profiles.open("p", id, "c")).stateRef).toBe("r1");
  await profiles.close(id, "b", saved("r2"));
  expect(discarded).toEqual(["r2"]);
  await profiles.close(id, "c", saved("r3"));
  expect(discarded).toEqual(["r2", "r1"]);
  // The same close again (a retry after a lost answer) changes nothing and keeps r3, the state the profile has.
  await profiles.close(id, "c", saved("r3"));
  expect(discarded).toEqual(["r2", "r1"]);
  expect((await profiles.open("p", id, "d")).stateRef).toBe("r3");
});
