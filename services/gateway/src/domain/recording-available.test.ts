import { RECORDING_GRACE_MS, recordingAvailable } from "./recording-available";

const stoppedAt = new Date("2026-11-27T12:00:00Z");
const after = (ms: number) => stoppedAt.getTime() + ms;

test("a browser that was not recorded never has a recording", () => {
  expect(recordingAvailable({ recorded: false })).toBe(false);
  expect(recordingAvailable({ recorded: false, finishedAt: stoppedAt }, after(1))).toBe(false);
});

test("a recorded browser's may come while it runs and within the grace after its stop; a stored one stays", () => {
  expect(recordingAvailable({ recorded: true })).toBe(true);
  expect(recordingAvailable({ recorded: true, finishedAt: stoppedAt }, after(RECORDING_GRACE_MS - 1))).toBe(true);
  expect(recordingAvailable({ recorded: true, finishedAt: stoppedAt }, after(RECORDING_GRACE_MS))).toBe(false);
  const stored = { recorded: true, finishedAt: stoppedAt, recordingRef: "recording-x.mp4" };
  expect(recordingAvailable(stored, after(24 * 3_600_000))).toBe(true);
});
