/**
 * Stream and subject names of one deployment. Everything is derived from a namespace so that tests (and several
 * deployments on one NATS) can never see each other's data.
 */
export interface StreamNames {
  namespace: string;
  /** Domain events, one subject per aggregate instance: `<ns>.events.<type>.<id>`. */
  events: { stream: string; subjects: string; subject(type: string, id: string): string; ofType(type: string): string };
  /** Dispatched work (work-queue retention): `<ns>.work.<queue>`. */
  work: { stream: string; subjects: string; subject(queue: string): string };
  /** Usage facts for billing: `<ns>.usage.<kind>`. */
  usage: { stream: string; subjects: string; subject(kind: string): string };
  /**
   * Core NATS (no stream): "this read model changed" notices, `<ns>.changes.<kind>.<id>`, published after the
   * projection's commit so that caches can drop the entry and event streams wake.
   */
  changes: { subject(type: string, id: string): string; ofType(type: string): string };
  /** Write probes for health checks; keeps one message. */
  health: { stream: string; subject: string };
}

export function streamNames(namespace: string): StreamNames {
  if (!/^[a-zA-Z0-9_-]+$/.test(namespace)) throw new Error(`invalid namespace ${JSON.stringify(namespace)}`);
  const upper = namespace.toUpperCase().replace(/-/g, "_");
  return {
    namespace,
    events: {
      stream: `${upper}_EVENTS`,
      subjects: `${namespace}.events.>`,
      subject: (type, id) => `${namespace}.events.${type}.${id}`,
      ofType: (type) => `${namespace}.events.${type}.*`,
    },
    work: {
      stream: `${upper}_WORK`,
      subjects: `${namespace}.work.>`,
      subject: (queue) => `${namespace}.work.${queue}`,
    },
    usage: {
      stream: `${upper}_USAGE`,
      subjects: `${namespace}.usage.>`,
      subject: (kind) => `${namespace}.usage.${kind}`,
    },
    changes: {
      subject: (type, id) => `${namespace}.changes.${type}.${id}`,
      ofType: (type) => `${namespace}.changes.${type}.*`,
    },
    health: { stream: `${upper}_HEALTH`, subject: `${namespace}.health` },
  };
}
