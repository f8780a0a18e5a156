import { endsMidCommit, inOrder } from "./commit-boundary";
import type { StoredEvent } from "./envelope";

/** The `index`th of `size` events of one append to aggregate `id`, at stream sequence `sequence`. */
const event = (sequence: number, id: string, index?: number, size?: number) =>
  ({
    id: `e${sequence}`,
    type: "Ticked",
    data: {},
    aggregateType: "counter",
    aggregateId: id,
    occurredAt: "2026-11-28T00:00:00.000Z",
    sequence,
    ...(size ? { commit: { index, size } } : {}),
  }) as StoredEvent;

test("a batch is in stream order, each event once, however redeliveries mixed it", () => {
  const batch = [event(3, "a"), event(1, "a"), event(2, "b"), event(1, "a")];
  expect(inOrder(batch).map((e) => e.sequence)).toEqual([1, 2, 3]);
});

test("an append is open while its aggregate's last event in the batch is not its last, whatever interleaves", () => {
  // a: 3 events at 1, 3, 5; b: 2 events at 2, 4.
  const interleaved = [event(1, "a", 0, 3), event(2, "b", 0, 2), event(3, "a", 1, 3), event(4, "b", 1, 2)];
  expect(endsMidCommit(interleaved, 0)).toBe(true);
  expect(endsMidCommit([...interleaved, event(5, "a", 2, 3)], 0)).toBe(false);
  // Single events are whole appends.
  expect(endsMidCommit([event(6, "c"), event(7, "d")], 0)).toBe(false);
});

test("a late redelivery of an applied append's first event leaves nothing open: the rest of it may never come again", () => {
  // a's append (1, 2, 3) was applied and acked; only its first event's ack came too late, so it is delivered again.
  const batch = [event(1, "a", 0, 3), event(4, "b")];
  expect(endsMidCommit(batch, 3)).toBe(false);
  // Before it was applied, the same batch would wait for the rest.
  expect(endsMidCommit(batch, 0)).toBe(true);
});
