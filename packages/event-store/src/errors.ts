/** Another writer appended to the aggregate since it was loaded; reload, decide again and retry. */
export class ConcurrencyError extends Error {
  override name = "ConcurrencyError";
  readonly retryable = true;
  constructor(
    readonly aggregate: string,
    readonly expectedVersion: number,
    options?: ErrorOptions,
  ) {
    super(`${aggregate} is no longer at version ${expectedVersion}`, options);
  }
}

/** The event store could not be reached or refused the write for a reason other than concurrency. */
export class EventStoreUnavailableError extends Error {
  override name = "EventStoreUnavailableError";
  readonly retryable = true;
}
