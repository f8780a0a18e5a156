/**
 * A Matroska stream of JPEG frames (codec V_MJPEG), each with the time it was shown: what ffmpeg reads from a pipe to
 * encode a recording. A screencast sends a frame only when the page changes, so frames come at uneven times; plain
 * JPEGs on a pipe carry no time, and ffmpeg would have to be fed copies of the last frame at a fixed rate to keep the
 * clock right. With the times in the container, ffmpeg does nothing while the page does not change.
 *
 * Live-stream form: the segment and the clusters have "unknown" sizes, so nothing is ever rewritten.
 */
export function matroskaHeader(width: number, height: number): Buffer {
  return Buffer.concat([
    element(0x1a45dfa3, [
      uint(0x4286, 1), // EBMLVersion
      uint(0x42f7, 1), // EBMLReadVersion
      uint(0x42f2, 4), // EBMLMaxIDLength
      uint(0x42f3, 8), // EBMLMaxSizeLength
      text(0x4282, "matroska"), // DocType
      uint(0x4287, 4), // DocTypeVersion
      uint(0x4285, 2), // DocTypeReadVersion
    ]),
    id(0x18538067),
    UNKNOWN_SIZE, // Segment
    element(0x1549a966, [
      uint(0x2ad7b1, 1_000_000), // TimestampScale: milliseconds
      text(0x4d80, "bas-browser-pool"), // MuxingApp
      text(0x5741, "bas-browser-pool"), // WritingApp
    ]),
    element(0x1654ae6b, [
      element(0xae, [
        uint(0xd7, 1), // TrackNumber
        uint(0x73c5, 1), // TrackUID
        uint(0x83, 1), // TrackType: video
        text(0x86, "V_MJPEG"), // CodecID
        element(0xe0, [uint(0xb0, width), uint(0xba, height)]), // Video: PixelWidth, PixelHeight
      ]),
    ]),
  ]);
}

/** A block's time is relative to its cluster's, as a signed 16-bit number of milliseconds. */
const MAX_BLOCK_OFFSET_MS = 32_767;

/** Writes frames in order; `ms` is a frame's time since the recording began and must not go back. */
export function createMatroskaFrames() {
  let clusterMs: number | undefined;

  function block(ms: number, jpeg: Buffer): { cluster: Buffer[]; block: Buffer[] } {
    const cluster: Buffer[] = [];
    if (clusterMs === undefined || ms - clusterMs > MAX_BLOCK_OFFSET_MS) {
      clusterMs = ms;
      cluster.push(id(0x1f43b675), UNKNOWN_SIZE, uint(0xe7, ms)); // Cluster, its Timestamp
    }
    const head = Buffer.alloc(4);
    head[0] = 0x81; // track 1
    head.writeInt16BE(ms - clusterMs, 1);
    head[3] = 0x80; // keyframe
    return { cluster, block: [size(head.length + jpeg.length), head, jpeg] };
  }

  return {
    /** A frame shown from `ms` until the next one. */
    frame(ms: number, jpeg: Buffer): Buffer {
      const { cluster, block: body } = block(ms, jpeg);
      return Buffer.concat([...cluster, id(0xa3), ...body]); // SimpleBlock
    },
    /** The last frame, shown from `ms` for `durationMs`: without a duration the encoder guesses how long it lasts. */
    last(ms: number, jpeg: Buffer, durationMs: number): Buffer {
      const { cluster, block: body } = block(ms, jpeg);
      const blockElement = Buffer.concat([id(0xa1), ...body]); // Block
      return Buffer.concat([...cluster, element(0xa0, [blockElement, uint(0x9b, durationMs)])]); // BlockGroup
    },
  };
}

const UNKNOWN_SIZE = Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

function id(value: number): Buffer {
  const bytes: number[] = [];
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from(bytes);
}

/** An element size, always in eight bytes (a marker byte then seven of value). */
function size(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUIntBE(n, 2, 6);
  b[0] = 0x01;
  return b;
}

function element(elementId: number, children: Buffer[]): Buffer {
  const body = Buffer.concat(children);
  return Buffer.concat([id(elementId), size(body.length), body]);
}

function uint(elementId: number, value: number): Buffer {
  const bytes: number[] = [];
  for (let v = value; v > 0 || bytes.length === 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return element(elementId, [Buffer.from(bytes)]);
}

const text = (elementId: number, value: string) => element(elementId, [Buffer.from(value, "utf8")]);
