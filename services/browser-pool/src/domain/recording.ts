/** Recordings are at most this size; a larger screen is scaled down (aspect kept) to keep encoding cheap. */
export const MAX_RECORDING_SIZE = { width: 1280, height: 720 } as const;

/** The video size for a screen: fits in MAX_RECORDING_SIZE, aspect kept, both even (what H.264 in yuv420p needs). */
export function recordingSize(screenWidth: number, screenHeight: number): { width: number; height: number } {
  const scale = Math.min(1, MAX_RECORDING_SIZE.width / screenWidth, MAX_RECORDING_SIZE.height / screenHeight);
  const even = (n: number) => Math.max(2, Math.round((n * scale) / 2) * 2);
  return { width: even(screenWidth), height: even(screenHeight) };
}

/** One recording per browser: a retried upload overwrites instead of storing a second copy. */
export const recordingRefFor = (browserId: string) => `recording-${browserId}.mp4`;
