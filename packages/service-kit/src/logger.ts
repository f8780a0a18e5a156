import pino, { type Logger } from "pino";

export type { Logger };

/** Structured JSON logs, one line per entry, with the service name on each. */
export function createLogger(service: string, level = "info"): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ["*.apiKey", "*.plainKey", "*.sensitiveData", "*.password", "headers.authorization"],
      censor: "[redacted]",
    },
  });
}
