import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { createSecureContext } from "node:tls";

/** The PEM files of the receiver's certificate (its chain first) and private key, as a renewal leaves them. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

/** Reads the pair and checks that it makes a TLS context (readable, PEM, the key the certificate's); else says why. */
export function readTlsPair(files: TlsFiles): TlsPair {
  const read = (path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const pair = { cert: read(files.certFile), key: read(files.keyFile) };
  try {
    createSecureContext(pair);
  } catch (err) {
    throw new Error(
      `${files.certFile} and ${files.keyFile} are not a certificate and its key: ${(err as Error).message}`,
    );
  }
  return pair;
}

/**
 * Calls `onRenewed` with the pair each time its files change (a renewal: cert-manager rewrites a Secret's volume,
 * certbot the live folder), so a long-running receiver never offers an expired certificate. A pair caught half
 * written is reported to `onError` and taken at the next change. Returns the stop.
 */
export function watchTlsPair(
  files: TlsFiles,
  intervalMs: number,
  onRenewed: (pair: TlsPair) => void,
  onError: (err: Error) => void,
): () => void {
  const changed = () => {
    let pair: TlsPair;
    try {
      pair = readTlsPair(files);
    } catch (err) {
      onError(err as Error);
      return;
    }
    onRenewed(pair);
  };
  // Polling (stat) follows symlinks, as a Kubernetes Secret volume's files are, where inotify on the path would not.
  const paths = [files.certFile, files.keyFile];
  for (const path of paths) watchFile(path, { interval: intervalMs, persistent: false }, changed);
  return () => {
    for (const path of paths) unwatchFile(path, changed);
  };
}
