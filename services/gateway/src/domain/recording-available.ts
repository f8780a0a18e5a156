/**
 * How long after its stop a recorded browser's MP4 may still be on its way. It is encoded while the browser runs, so
 * storing it takes seconds; a recording missing this long after the stop failed or was lost with its node.
 */
export const RECORDING_GRACE_MS = 10 * 60_000;

export interface RecordedBrowser {
  recorded: boolean;
  recordingRef?: string;
  finishedAt?: Date;
}

/**
 * The official clients' `recordingAvailable`: false only when a recording can no longer appear (it was not asked for,
 * or the browser stopped longer than the grace ago without one), so that a client polling for `recordingUrl` stops.
 */
export function recordingAvailable(b: RecordedBrowser, now = Date.now()): boolean {
  if (!b.recorded) return false;
  if (b.recordingRef || !b.finishedAt) return true;
  return now - b.finishedAt.getTime() < RECORDING_GRACE_MS;
}
