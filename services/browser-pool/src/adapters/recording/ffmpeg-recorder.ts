import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { recordingSize } from "../../domain/recording";
import { devtoolsSocketOf } from "../../domain/events";
import type { RecordedVideo, ScreenRecorder, ScreenRecording } from "../../app/ports";
import { type CdpConnection, connectCdp } from "../cdp/cdp-connection";
import { devtoolsUpstream } from "../cdp/devtools-json";
import { followScreencast, type ScreencastFollower } from "../cdp/screencast-follower";
import { canRun } from "../program-path";
import { createMatroskaFrames, matroskaHeader } from "./matroska-stream";

export interface FfmpegRecorderOptions {
  /** FFMPEG_PATH: a path, or a name on PATH. */
  ffmpegPath: string;
  /** Where recordings are written while they are made; emptied at start (an earlier run's are unusable). */
  dir: string;
  log: { warn(o: object, msg: string): void };
}

/** A busy page is recorded at up to 10 frames a second: smooth enough to follow, cheap enough to encode. */
const MIN_FRAME_INTERVAL_MS = 100;
/** How long ffmpeg may take to finish the file once the browser stopped. */
const ENCODE_TIMEOUT_MS = 120_000;

/**
 * Records browsers to MP4: a CDP connection of its own follows the browser's newest tab (as the live view does) and
 * pipes its screencast frames, stamped with the time they arrived, into ffmpeg, which encodes H.264. A screencast
 * sends frames only when the page changes, so a still page costs nothing.
 */
export function createFfmpegRecorder(options: FfmpegRecorderOptions): ScreenRecorder {
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });

  return {
    problem() {
      if (canRun(options.ffmpegPath)) return undefined;
      return (
        `Recording is not available: ffmpeg was not found (FFMPEG_PATH=${options.ffmpegPath}). Install it ` +
        "(Debian/Ubuntu: apt-get install -y ffmpeg) or set FFMPEG_PATH, or create the browser without recording."
      );
    },
    start(id, launched, settings) {
      const { handle } = launched.running;
      const upstream = devtoolsUpstream(handle.devtoolsUrl, devtoolsSocketOf(handle));
      const size = recordingSize(settings.screenWidth, settings.screenHeight);
      return record(join(options.dir, `${id}-${Date.now()}.mp4`), size, () => connectCdp(upstream), options);
    },
  };
}

function ffmpegArgs(file: string, { width, height }: { width: number; height: number }): string[] {
  // Frames keep their own size (a tab of another size, a resized window): each is fitted into the video's.
  const fit = `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2`;
  return [
    ...["-hide_banner", "-loglevel", "error", "-nostdin"],
    ...["-f", "matroska", "-i", "pipe:0"],
    ...["-vf", `${fit},format=yuv420p`],
    // Frames keep the times they were shown at (variable frame rate): nothing is encoded while the page is still.
    ...["-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-fps_mode", "vfr"],
    ...["-movflags", "+faststart", "-y", file],
  ];
}

function record(
  file: string,
  size: { width: number; height: number },
  connect: () => Promise<CdpConnection>,
  options: FfmpegRecorderOptions,
): ScreenRecording {
  // ffmpeg starts with the first frame: a browser that never paints costs no encoder, and the fork of browser-pool
  // that spawning takes stays off the hand-out, which the caller's first CDP command follows at once.
  let encoder: ReturnType<typeof startEncoder> | undefined;
  const encoderOf = () => {
    encoder ??= startEncoder(options.ffmpegPath, ffmpegArgs(file, size));
    return encoder;
  };

  const frames = createMatroskaFrames();
  const startedAt = performance.now();
  let last: { ms: number; jpeg: Buffer } | undefined;
  let cdp: CdpConnection | undefined;
  let screencast: ScreencastFollower | undefined;

  // After the hand-out's answer has gone: the recording's connection and first frame wait for it.
  const started = new Promise((resolve) => setImmediate(resolve))
    .then(connect)
    .then(async (connection) => {
      cdp = connection;
      screencast = followScreencast(connection, {
        quality: 60,
        maxWidth: size.width,
        maxHeight: size.height,
        onFrame({ data, ack }) {
          const now = performance.now();
          // The first picture stands for the moments before it too: the video lasts as long as the browser ran.
          const { stdin } = encoderOf().ffmpeg;
          if (!last) stdin.write(matroskaHeader(size.width, size.height));
          const ms = last ? Math.max(Math.round(now - startedAt), last.ms + 1) : 0;
          last = { ms, jpeg: Buffer.from(data, "base64") };
          // The next frame once ffmpeg took this one and the interval passed: a busy page cannot outrun the encoder.
          stdin.write(frames.frame(ms, last.jpeg), () => {
            setTimeout(ack, Math.max(0, MIN_FRAME_INTERVAL_MS - (performance.now() - now))).unref();
          });
        },
      });
      await screencast.start();
    })
    .catch((err) => options.log.warn({ err, file }, "recording could not watch the browser"));

  return {
    async finish(): Promise<RecordedVideo | undefined> {
      const stoppedAt = performance.now();
      await started;
      screencast?.stop();
      cdp?.close();
      if (!last || !encoder) return undefined;
      const { ffmpeg, exited, stderr } = encoder;
      // The last picture lasts until the browser stopped, and the video ends then.
      const durationMs = Math.max(Math.round(stoppedAt - startedAt), last.ms + 2);
      ffmpeg.stdin.write(frames.last(durationMs - 1, last.jpeg, 1));
      ffmpeg.stdin.end();
      const timer = setTimeout(() => ffmpeg.kill("SIGKILL"), ENCODE_TIMEOUT_MS);
      const code = await exited.finally(() => clearTimeout(timer));
      if (code !== 0) {
        await rm(file, { force: true });
        throw new Error(`ffmpeg could not encode the recording (exit ${code}): ${stderr().trim().slice(-500)}`);
      }
      const { size: bytes } = await stat(file);
      return { file, durationMs, bytes, dispose: () => rm(file, { force: true }) };
    },
  };
}

/** ffmpeg reading frames on its standard input; `stderr` is the last of what it printed. */
function startEncoder(ffmpegPath: string, args: string[]) {
  const ffmpeg = spawn(ffmpegPath, args, { stdio: ["pipe", "ignore", "pipe"] });
  let printed = "";
  ffmpeg.stderr.on("data", (chunk) => {
    printed = (printed + chunk).slice(-2_000);
  });
  // A pipe ffmpeg stopped reading (it failed) is reported by its exit status, not by a write error.
  ffmpeg.stdin.on("error", () => undefined);
  const exited = new Promise<number | null>((resolve) => {
    ffmpeg.once("error", (err) => {
      printed += String(err);
      resolve(null);
    });
    ffmpeg.once("close", (code) => resolve(code));
  });
  return { ffmpeg, exited, stderr: () => printed };
}
