import { type FollowEventsDeps, type FollowedEvents, followEvents, type StreamNames } from "@bas/event-store";

/**
 * Calls `react` with the aggregate's id for each event of `aggregateType` among `types` that any node stores after
 * sequence `after` (by default: from now on), none missed while this node runs, also across a NATS reconnect.
 * Resolves once it listens.
 */
export async function watchEvents(
  deps: FollowEventsDeps,
  streams: StreamNames,
  aggregateType: string,
  types: readonly string[],
  react: (aggregateId: string) => void,
  after?: number,
): Promise<FollowedEvents> {
  const subject = streams.events.ofType(aggregateType);
  const followed = followEvents(
    deps,
    streams.events.stream,
    subject,
    (event) => {
      if (types.includes(event.type)) react(event.aggregateId);
    },
    after,
  );
  await followed.ready;
  return followed;
}
